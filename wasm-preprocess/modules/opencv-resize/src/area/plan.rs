//! Chooses the algorithm exactly as `cv::resize` / `cv::hal::resize` do for
//! `INTER_AREA` on 8-bit images in OpenCV 5.0.0.
//!
//! The decision depends only on the four dimensions, through the same double
//! precision expressions OpenCV evaluates, so borderline ratios (for example
//! a scale of 2.9999999999999996) fall on the same side.

use crate::rounding::round_half_even_f64;

/// Which of OpenCV's code paths a resize takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ResizePath {
    /// `dsize == ssize`: `cv::resize` just copies.
    Copy,
    /// Both scales are integers (within `DBL_EPSILON`): `resizeAreaFast_`,
    /// averaging `block_w` x `block_h` source blocks in integer arithmetic.
    IntegerBlocks { block_w: usize, block_h: usize },
    /// Both axes shrink (scale >= 1) by non-integer ratios: `resizeArea_`,
    /// true area averaging with float32 weights.
    AreaAverage(AxisScales),
    /// At least one axis grows: OpenCV "emulates" area interpolation with its
    /// fixed-point bilinear resizer fed with area-style coefficients.
    LinearArea(AxisScales),
}

/// `inv_scale` is destination/source and `scale` its reciprocal, both in
/// double precision, as OpenCV computes them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct AxisScales {
    pub(crate) inv_scale_x: f64,
    pub(crate) inv_scale_y: f64,
    pub(crate) scale_x: f64,
    pub(crate) scale_y: f64,
}

impl AxisScales {
    fn new(src_w: usize, src_h: usize, dst_w: usize, dst_h: usize) -> Self {
        let inv_scale_x = dst_w as f64 / src_w as f64;
        let inv_scale_y = dst_h as f64 / src_h as f64;
        Self {
            inv_scale_x,
            inv_scale_y,
            scale_x: 1.0 / inv_scale_x,
            scale_y: 1.0 / inv_scale_y,
        }
    }
}

/// Picks the path; all dimensions must be non-zero.
pub(crate) fn choose_path(src_w: usize, src_h: usize, dst_w: usize, dst_h: usize) -> ResizePath {
    if src_w == dst_w && src_h == dst_h {
        return ResizePath::Copy;
    }
    let scales = AxisScales::new(src_w, src_h, dst_w, dst_h);
    if scales.scale_x >= 1.0 && scales.scale_y >= 1.0 {
        match (integer_scale(scales.scale_x), integer_scale(scales.scale_y)) {
            (Some(block_w), Some(block_h)) => ResizePath::IntegerBlocks { block_w, block_h },
            _ => ResizePath::AreaAverage(scales),
        }
    } else {
        ResizePath::LinearArea(scales)
    }
}

/// OpenCV's `is_area_fast` test for one axis: `saturate_cast<int>(scale)`
/// (round half to even) must lie within `DBL_EPSILON` of `scale`.
fn integer_scale(scale: f64) -> Option<usize> {
    let rounded = round_half_even_f64(scale);
    let difference = scale - f64::from(rounded);
    let is_integer = difference < f64::EPSILON && -difference < f64::EPSILON;
    (is_integer && rounded >= 1).then_some(rounded as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_ratios_take_the_integer_block_path() {
        assert_eq!(
            choose_path(600, 300, 200, 100),
            ResizePath::IntegerBlocks {
                block_w: 3,
                block_h: 3
            }
        );
        assert_eq!(
            choose_path(500, 256, 250, 256),
            ResizePath::IntegerBlocks {
                block_w: 2,
                block_h: 1
            }
        );
    }

    #[test]
    fn fractional_shrink_and_growth_are_told_apart() {
        assert!(matches!(
            choose_path(500, 375, 341, 256),
            ResizePath::AreaAverage(_)
        ));
        assert!(matches!(
            choose_path(100, 80, 320, 256),
            ResizePath::LinearArea(_)
        ));
        assert!(matches!(
            choose_path(900, 200, 300, 256),
            ResizePath::LinearArea(_)
        ));
        assert_eq!(choose_path(7, 9, 7, 9), ResizePath::Copy);
    }
}
