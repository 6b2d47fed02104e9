/// Why a sample could not be preprocessed; [`Error::code`] is what `mlperf_preprocess` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// `-1`: the input shape is not one the module takes.
    BadShape,
    /// `-2`: the input length does not match the input shape.
    LengthMismatch,
    /// `-3`: linear memory could not grow to hold a buffer.
    OutOfMemory,
    /// A module-specific code, which must be below `-3`; any other value is reported as
    /// [`Error::INVALID_CUSTOM_CODE`], so a misused code can pass neither for an output length
    /// nor for one of the codes above.
    Custom(i32),
}

impl Error {
    /// What a [`Error::Custom`] code that is not below `-3` becomes.
    pub const INVALID_CUSTOM_CODE: i32 = i32::MIN;

    /// The negative code the host receives.
    pub const fn code(self) -> i32 {
        match self {
            Error::BadShape => -1,
            Error::LengthMismatch => -2,
            Error::OutOfMemory => -3,
            Error::Custom(code) if code < -3 => code,
            Error::Custom(_) => Self::INVALID_CUSTOM_CODE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Error;

    #[test]
    fn codes_follow_the_readme() {
        assert_eq!(Error::BadShape.code(), -1);
        assert_eq!(Error::LengthMismatch.code(), -2);
        assert_eq!(Error::OutOfMemory.code(), -3);
        assert_eq!(Error::Custom(-4).code(), -4);
        assert_eq!(Error::Custom(-1000).code(), -1000);
    }

    #[test]
    fn custom_codes_cannot_pose_as_lengths_or_standard_codes() {
        for code in [-3, -1, 0, 1, i32::MAX] {
            assert_eq!(Error::Custom(code).code(), Error::INVALID_CUSTOM_CODE);
        }
    }
}
