//! Telling libjpeg warnings from fatal errors in TurboJPEG 2.1's report.
//!
//! OpenCV lets libjpeg warnings pass (a damaged but readable JPEG still loads), so we
//! must too. TurboJPEG 2.1 makes that awkward: `tjDecompress2` returns -1 after any
//! warning, and `tjGetErrorCode` says "warning" whenever a warning was raised during the
//! call, even if a fatal error came afterwards. The error text settles it: libjpeg prints
//! only the first warning but always prints the fatal error last, so the text is a
//! warning message exactly when no fatal error happened.
//!
//! The list is every `JWRN_*` message of libjpeg-turbo 2.1's `jerror.h` (3.1 has the same
//! set). Each entry is the message up to its first printf placeholder; none is a prefix
//! of any fatal (`JERR_*`) message.

const WARNING_PREFIXES: [&str; 12] = [
    "Unknown Adobe color transform code ",
    "Corrupt JPEG data: bad arithmetic code",
    "Inconsistent progression sequence for component ",
    "Corrupt JPEG data: ", // "%u extraneous bytes before marker 0x%02x"
    "Corrupt JPEG data: premature end of data segment",
    "Corrupt JPEG data: bad Huffman code",
    "Warning: unknown JFIF revision number ",
    "Premature end of JPEG file",
    "Corrupt JPEG data: found marker 0x",
    "Invalid SOS parameters for sequential JPEG",
    "Application transferred too many scanlines",
    "Corrupt JPEG data: bad ICC marker",
];

/// True when `text` is one of libjpeg's warning messages.
pub(crate) fn is_warning(text: &str) -> bool {
    WARNING_PREFIXES.iter().any(|p| text.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_and_errors() {
        assert!(is_warning("Premature end of JPEG file"));
        assert!(is_warning(
            "Corrupt JPEG data: 84 extraneous bytes before marker 0xd9"
        ));
        assert!(!is_warning("Premature end of input file"));
        assert!(!is_warning("Unsupported marker type 0xc8"));
        assert!(!is_warning("Application transferred too few scanlines"));
    }
}
