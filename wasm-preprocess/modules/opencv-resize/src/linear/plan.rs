//! Which code `cv::resize` / `cv::hal::resize` (OpenCV 5.0.0) run for
//! `INTER_LINEAR` on an 8-bit image.
//!
//! The choice depends on the four dimensions only, through the same double
//! precision expressions OpenCV evaluates:
//! * `dsize == ssize`: `cv::resize` copies (`src.copyTo(dst)`);
//! * `inv_scale = dst / src` and `scale = 1 / inv_scale` per axis; if both
//!   scales are within `DBL_EPSILON` of `saturate_cast<int>(scale)` and that
//!   integer is 2 on both axes, `hal::resize` switches to `INTER_AREA`, which
//!   then takes `resizeAreaFast_` with 2x2 blocks;
//! * everything else runs `resizeGeneric_` with the fixed-point
//!   `HResizeLinear` / `VResizeLinear` kernels.
//!
//! The IPP HAL and the in-file `ipp_resize` refuse `ipp8u` + `ippLinear`
//! unless `cv::ipp::useIPP_NotExact()` (false by default), and OpenCL only
//! runs for `UMat` outputs, so neither appears here.

use crate::rounding::saturate_i32_from_f64;

/// The OpenCV code path a resize takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinearPath {
    /// Same size: a plain copy.
    Copy,
    /// Exact 2x shrink on both axes: `INTER_AREA`'s `resizeAreaFast_` on
    /// 2x2 blocks.
    HalfBlocks,
    /// The general fixed-point bilinear resizer (`INTER_RESIZE_COEF_BITS` =
    /// 11), growing or shrinking on either axis.
    Bilinear,
}

/// Per-axis `inv_scale = dst / src` and `scale = 1 / inv_scale`, in double
/// precision as `cv::resize` and `cv::hal::resize` compute them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct AxisScales {
    pub(crate) scale_x: f64,
    pub(crate) scale_y: f64,
}

impl AxisScales {
    pub(crate) fn new(src_w: usize, src_h: usize, dst_w: usize, dst_h: usize) -> Self {
        let inv_scale_x = dst_w as f64 / src_w as f64;
        let inv_scale_y = dst_h as f64 / src_h as f64;
        Self {
            scale_x: 1.0 / inv_scale_x,
            scale_y: 1.0 / inv_scale_y,
        }
    }
}

/// Picks the path; all dimensions must be non-zero.
pub fn linear_path(src_w: usize, src_h: usize, dst_w: usize, dst_h: usize) -> LinearPath {
    if src_w == dst_w && src_h == dst_h {
        return LinearPath::Copy;
    }
    let scales = AxisScales::new(src_w, src_h, dst_w, dst_h);
    if integer_scale(scales.scale_x) == Some(2) && integer_scale(scales.scale_y) == Some(2) {
        LinearPath::HalfBlocks
    } else {
        LinearPath::Bilinear
    }
}

/// OpenCV's `is_area_fast` test for one axis: `saturate_cast<int>(scale)`
/// (round half to even) within `DBL_EPSILON` of `scale`.
fn integer_scale(scale: f64) -> Option<i32> {
    let rounded = saturate_i32_from_f64(scale);
    let difference = scale - f64::from(rounded);
    (difference < f64::EPSILON && -difference < f64::EPSILON).then_some(rounded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_halving_on_both_axes_takes_the_area_blocks() {
        assert_eq!(linear_path(640, 480, 320, 240), LinearPath::HalfBlocks);
        assert_eq!(linear_path(2, 2, 1, 1), LinearPath::HalfBlocks);
        // Halving one axis only, or 3x, stays bilinear.
        assert_eq!(linear_path(640, 480, 320, 480), LinearPath::Bilinear);
        assert_eq!(linear_path(600, 300, 200, 100), LinearPath::Bilinear);
        // An odd source never halves exactly.
        assert_eq!(linear_path(641, 480, 320, 240), LinearPath::Bilinear);
    }

    #[test]
    fn same_size_copies_and_growth_is_bilinear() {
        assert_eq!(linear_path(7, 9, 7, 9), LinearPath::Copy);
        assert_eq!(linear_path(500, 375, 640, 480), LinearPath::Bilinear);
        assert_eq!(linear_path(320, 240, 640, 480), LinearPath::Bilinear);
    }
}
