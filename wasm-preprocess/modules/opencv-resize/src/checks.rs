//! The size checks both resizes make before writing anything.

/// A size no resize takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SizeError {
    /// A width or height is zero.
    EmptyImage,
    /// An image has more samples than OpenCV's `int` arithmetic allows.
    DimensionTooLarge,
}

/// OpenCV keeps sizes, sample counts and table offsets in `int`: each image's samples (with
/// room for its tables) must fit.
pub(crate) fn check_dimensions(
    src_w: usize,
    src_h: usize,
    dst_w: usize,
    dst_h: usize,
    channels: usize,
) -> Result<(), SizeError> {
    if src_w == 0 || src_h == 0 || dst_w == 0 || dst_h == 0 {
        return Err(SizeError::EmptyImage);
    }
    let limit = i32::MAX as usize / 4;
    let fits = |w: usize, h: usize| {
        w.checked_mul(channels)
            .and_then(|row| row.checked_mul(h))
            .is_some_and(|total| total <= limit)
    };
    if fits(src_w, src_h) && fits(dst_w, dst_h) {
        Ok(())
    } else {
        Err(SizeError::DimensionTooLarge)
    }
}

/// `Ok` when `len == w * h * channels`, else `Err((expected, actual))`.
pub(crate) fn check_lengths(
    len: usize,
    w: usize,
    h: usize,
    channels: usize,
) -> Result<(), (usize, usize)> {
    let expected = w.saturating_mul(h).saturating_mul(channels);
    if len == expected {
        Ok(())
    } else {
        Err((expected, len))
    }
}
