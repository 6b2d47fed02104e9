//! Integer conversions that behave like OpenCV's `cvFloor`, `cvCeil`,
//! `cvRound` and `saturate_cast` on x86_64.
//!
//! `core` has no `floor`/`round` for floats (they live in `std`/libm), and we
//! need OpenCV's exact semantics anyway: on x86_64 `cvRound` compiles to
//! `cvtss2si`/`cvtsd2si`, i.e. round-half-to-even under the default MXCSR
//! mode, not the half-away-from-zero of C's `round`. Every helper here is
//! exact for the value ranges the resize code feeds it (|v| < 2^31).

/// `cvFloor(double)`: largest integer not above `value`.
pub(crate) fn floor_f64(value: f64) -> i32 {
    let truncated = value as i32;
    if f64::from(truncated) > value {
        truncated - 1
    } else {
        truncated
    }
}

/// `cvCeil(double)`: smallest integer not below `value`.
pub(crate) fn ceil_f64(value: f64) -> i32 {
    let truncated = value as i32;
    if f64::from(truncated) < value {
        truncated + 1
    } else {
        truncated
    }
}

/// `cvFloor(float)`.
pub(crate) fn floor_f32(value: f32) -> i32 {
    let truncated = value as i32;
    if (truncated as f32) > value {
        truncated - 1
    } else {
        truncated
    }
}

/// `cvRound(double)`: nearest integer, ties to even.
pub(crate) fn round_half_even_f64(value: f64) -> i32 {
    let floor = floor_f64(value);
    // Exact: `value - floor(value)` never needs rounding for |value| < 2^52.
    let fraction = value - f64::from(floor);
    pick_rounded(floor, fraction > 0.5, fraction == 0.5)
}

/// `cvRound(float)`: nearest integer, ties to even.
pub(crate) fn round_half_even_f32(value: f32) -> i32 {
    let floor = floor_f32(value);
    // Exact for |value| < 2^23; above that every f32 is already an integer
    // and the fraction is 0.
    let fraction = value - floor as f32;
    pick_rounded(floor, fraction > 0.5, fraction == 0.5)
}

fn pick_rounded(floor: i32, above_half: bool, exactly_half: bool) -> i32 {
    if above_half || (exactly_half && floor & 1 == 1) {
        floor + 1
    } else {
        floor
    }
}

/// `saturate_cast<uchar>(float)`: round half to even, then clamp to 0..=255.
///
/// Clamping to [0, 255] before rounding gives the same result as OpenCV's
/// round-then-saturate. Adding 1.5 * 2^23 then lands where the f32 spacing is
/// exactly 1, so the hardware's round-to-nearest-even addition does the
/// rounding (1.5 * 2^23 is even, so ties go the same way), and the rounded
/// value sits in the low mantissa bits. Branch-free, so it vectorises.
/// (NaN, which OpenCV maps to 0, cannot arise from the resize arithmetic.)
pub(crate) fn saturate_u8_from_f32(value: f32) -> u8 {
    const ROUNDING_BIAS: f32 = 12_582_912.0;
    let biased = value.clamp(0.0, 255.0) + ROUNDING_BIAS;
    biased.to_bits() as u8
}

/// `saturate_cast<short>(float)`: round half to even, then clamp to i16.
pub(crate) fn saturate_i16_from_f32(value: f32) -> i16 {
    let bounded = value.clamp(-40_000.0, 40_000.0);
    round_half_even_f32(bounded).clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16
}

/// Floor of a double as an i64 (exact for |value| < 2^52).
fn floor_f64_wide(value: f64) -> i64 {
    let truncated = value as i64;
    if (truncated as f64) > value {
        truncated - 1
    } else {
        truncated
    }
}

/// `cvRound(double)`, and Python's `round(float)` on the exact binary value: nearest integer,
/// ties to even, as an i64 (exact for |value| < 2^52).
pub(crate) fn round_half_even_f64_wide(value: f64) -> i64 {
    let floor = floor_f64_wide(value);
    let fraction = value - floor as f64;
    if fraction > 0.5 || (fraction == 0.5 && floor & 1 == 1) {
        floor + 1
    } else {
        floor
    }
}

/// `saturate_cast<int>(double)` for the positive scales `cv::hal::resize` rounds
/// (`iscale_x`): saturates at `i32::MAX`.
pub(crate) fn saturate_i32_from_f64(value: f64) -> i32 {
    let bounded = value.clamp(-3.0e9, 3.0e9);
    round_half_even_f64_wide(bounded).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

/// `std::min` for doubles as the C++ library defines it: `(b < a) ? b : a`.
pub(crate) fn cpp_min(a: f64, b: f64) -> f64 {
    if b < a {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_rounding_is_pythons_round_and_saturates() {
        assert_eq!(round_half_even_f64_wide(2.5), 2);
        assert_eq!(round_half_even_f64_wide(3.5), 4);
        assert_eq!(round_half_even_f64_wide(-0.5), 0);
        assert_eq!(round_half_even_f64_wide(4.0e9 + 0.5), 4_000_000_000);
        assert_eq!(saturate_i32_from_f64(1.0e10), i32::MAX);
        assert_eq!(saturate_i32_from_f64(7.5), 8);
    }

    #[test]
    fn rounds_ties_to_even_like_cvtss2si() {
        assert_eq!(round_half_even_f32(0.5), 0);
        assert_eq!(round_half_even_f32(1.5), 2);
        assert_eq!(round_half_even_f32(2.5), 2);
        assert_eq!(round_half_even_f32(-0.5), 0);
        assert_eq!(round_half_even_f32(-1.5), -2);
        assert_eq!(round_half_even_f32(2.500_001), 3);
        assert_eq!(round_half_even_f64(3.5), 4);
        assert_eq!(round_half_even_f64(2.999_999_999_999_999_6), 3);
    }

    #[test]
    fn floors_and_ceils_negative_and_positive() {
        assert_eq!(floor_f64(-0.25), -1);
        assert_eq!(floor_f64(2.0), 2);
        assert_eq!(ceil_f64(2.0), 2);
        assert_eq!(ceil_f64(2.000_001), 3);
        assert_eq!(floor_f32(0.999_999_9), 0);
    }

    #[test]
    fn saturates_to_u8_range() {
        assert_eq!(saturate_u8_from_f32(-3.0), 0);
        assert_eq!(saturate_u8_from_f32(255.5), 255);
        assert_eq!(saturate_u8_from_f32(1e9), 255);
        assert_eq!(saturate_u8_from_f32(254.5), 254);
    }

    #[test]
    fn biased_u8_rounding_matches_the_general_rounding() {
        let mut value = -2.0f32;
        while value < 258.0 {
            let general = round_half_even_f32(value).clamp(0, 255) as u8;
            assert_eq!(saturate_u8_from_f32(value), general, "{value}");
            value += 1.0 / 64.0;
        }
        for value in [
            0.5f32,
            1.5,
            2.5,
            127.5,
            128.5,
            254.5,
            255.5,
            0.499_999_97,
            0.500_000_06,
        ] {
            let general = round_half_even_f32(value).clamp(0, 255) as u8;
            assert_eq!(saturate_u8_from_f32(value), general, "{value}");
        }
    }
}
