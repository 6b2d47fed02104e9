//! Bit-exact port of OpenCV 5.0.0's `cv2.resize(img, (w, h),
//! interpolation=cv2.INTER_AREA)` for interleaved u8 images with 1 to 4
//! channels, as shipped in `opencv-python-headless==5.0.0.93` for x86_64.
//!
//! `#![no_std]`, no allocation, no dependencies: every table and row buffer
//! comes from the caller through [`Scratch`], sized by
//! [`scratch_requirement`] (exact) or [`scratch_upper_bound`] (for static
//! buffers). Rows are tightly packed (`stride = width * channels`).
//!
//! OpenCV picks one of three algorithms from the sizes alone (see `plan`):
//! integer-ratio block means, true area averaging in float32, or its
//! fixed-point bilinear resizer with area coefficients when an axis grows.
//! Each is reproduced operation for operation; PORT-AREA.md gives the details.

mod area_average;
mod area_taps;
mod integer_blocks;
mod linear_area;
mod plan;

pub use area_taps::AreaTap;

use plan::{choose_path, ResizePath};

/// Why a resize was refused. Nothing is written to `dst` on error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AreaError {
    /// A width or height is zero.
    EmptyImage,
    /// A dimension (times channels) exceeds OpenCV's `int` range.
    DimensionTooLarge,
    /// `src.len()` is not `src_w * src_h * channels`.
    SourceLength { expected: usize, actual: usize },
    /// `dst.len()` is not `dst_w * dst_h * channels`.
    DestinationLength { expected: usize, actual: usize },
    /// Some scratch slice is shorter than [`scratch_requirement`] says.
    ScratchTooSmall {
        needed: ScratchRequirement,
        provided: ScratchRequirement,
    },
}

/// Element counts of the three scratch slices a resize needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScratchRequirement {
    pub ints: usize,
    pub floats: usize,
    pub taps: usize,
}

impl ScratchRequirement {
    fn fits_in(&self, provided: &ScratchRequirement) -> bool {
        self.ints <= provided.ints && self.floats <= provided.floats && self.taps <= provided.taps
    }
}

/// Caller-owned working memory. Slices may be longer than needed; contents
/// on entry do not matter and are unspecified on return.
pub struct Scratch<'a> {
    pub ints: &'a mut [i32],
    pub floats: &'a mut [f32],
    pub taps: &'a mut [AreaTap],
}

impl Scratch<'_> {
    fn capacity(&self) -> ScratchRequirement {
        ScratchRequirement {
            ints: self.ints.len(),
            floats: self.floats.len(),
            taps: self.taps.len(),
        }
    }
}

/// Largest scratch any resize with `src_w <= max_src_w`,
/// `dst_w <= max_dst_w` and `channels` channels can need, whatever the
/// heights: for buffers sized at compile time.
pub const fn scratch_upper_bound(
    max_src_w: usize,
    max_dst_w: usize,
    channels: usize,
) -> ScratchRequirement {
    // Area kernels: at most floor(scale) + 2 taps for each of dst_w cells,
    // i.e. src_w + 2 * dst_w, and that path only runs when dst_w <= src_w.
    let kernel_dst_w = if max_dst_w < max_src_w {
        max_dst_w
    } else {
        max_src_w
    };
    ScratchRequirement {
        ints: linear_ints(max_dst_w, channels),
        floats: 2 * max_dst_w * channels,
        taps: max_src_w + 2 * kernel_dst_w,
    }
}

/// Three per-column i32 tables plus two filtered rows.
const fn linear_ints(dst_w: usize, channels: usize) -> usize {
    3 * dst_w + 2 * dst_w * channels
}

/// Exact scratch needed for one resize.
pub fn scratch_requirement(
    src_w: usize,
    src_h: usize,
    dst_w: usize,
    dst_h: usize,
    channels: usize,
) -> Result<ScratchRequirement, AreaError> {
    crate::checks::check_dimensions(src_w, src_h, dst_w, dst_h, channels)?;
    Ok(match choose_path(src_w, src_h, dst_w, dst_h) {
        ResizePath::Copy | ResizePath::IntegerBlocks { .. } => ScratchRequirement::default(),
        ResizePath::AreaAverage(scales) => ScratchRequirement {
            ints: 0,
            floats: 2 * dst_w * channels,
            taps: dst_w * area_taps::max_taps_per_cell(src_w, dst_w, scales.scale_x),
        },
        ResizePath::LinearArea(_) => ScratchRequirement {
            ints: linear_ints(dst_w, channels),
            floats: 0,
            taps: 0,
        },
    })
}

/// MLPerf ResNet-50 preprocessing target size: the short side becomes
/// `short_side` and the long side `int(short_side * long / short)`
/// (Python's true division then truncation; a square keeps both equal).
pub fn short_side_resize_dims(width: usize, height: usize, short_side: usize) -> (usize, usize) {
    let scaled =
        |long: usize, short: usize| (short_side as f64 * long as f64 / short as f64) as usize;
    if height > width {
        (short_side, scaled(height, width))
    } else {
        (scaled(width, height), short_side)
    }
}

/// `cv2.resize(src, (dst_w, dst_h), interpolation=cv2.INTER_AREA)` for a
/// 3-channel u8 image.
pub fn resize_area_u8c3(
    src: &[u8],
    src_w: usize,
    src_h: usize,
    dst: &mut [u8],
    dst_w: usize,
    dst_h: usize,
    scratch: &mut Scratch<'_>,
) -> Result<(), AreaError> {
    resize_area_u8::<3>(src, src_w, src_h, dst, dst_w, dst_h, scratch)
}

/// `cv2.resize(..., interpolation=cv2.INTER_AREA)` for a u8 image with
/// `CHANNELS` (1 to 4) interleaved channels.
pub fn resize_area_u8<const CHANNELS: usize>(
    src: &[u8],
    src_w: usize,
    src_h: usize,
    dst: &mut [u8],
    dst_w: usize,
    dst_h: usize,
    scratch: &mut Scratch<'_>,
) -> Result<(), AreaError> {
    const {
        assert!(
            CHANNELS >= 1 && CHANNELS <= 4,
            "OpenCV's area resize handles 1-4 channels"
        )
    };
    let needed = scratch_requirement(src_w, src_h, dst_w, dst_h, CHANNELS)?;
    crate::checks::check_lengths(src.len(), src_w, src_h, CHANNELS)
        .map_err(|(expected, actual)| AreaError::SourceLength { expected, actual })?;
    crate::checks::check_lengths(dst.len(), dst_w, dst_h, CHANNELS)
        .map_err(|(expected, actual)| AreaError::DestinationLength { expected, actual })?;
    let provided = scratch.capacity();
    if !needed.fits_in(&provided) {
        return Err(AreaError::ScratchTooSmall { needed, provided });
    }

    match choose_path(src_w, src_h, dst_w, dst_h) {
        ResizePath::Copy => dst.copy_from_slice(src),
        ResizePath::IntegerBlocks { block_w, block_h } => {
            let geometry = integer_blocks::BlockGeometry {
                src_w,
                dst_w,
                dst_h,
                block_w,
                block_h,
            };
            integer_blocks::resize::<CHANNELS>(src, dst, &geometry);
        }
        ResizePath::AreaAverage(scales) => {
            let taps_per_cell = area_taps::max_taps_per_cell(src_w, dst_w, scales.scale_x);
            let x_kernels = &mut scratch.taps[..dst_w * taps_per_cell];
            area_taps::fill_padded_kernels(src_w, dst_w, scales.scale_x, taps_per_cell, x_kernels);
            let row_len = dst_w * CHANNELS;
            let (filtered_row, rest) = scratch.floats.split_at_mut(row_len);
            let buffers = area_average::AreaAverageBuffers {
                x_kernels,
                taps_per_cell,
                filtered_row,
                accumulator: &mut rest[..row_len],
            };
            let geometry = area_average::AreaAverageGeometry {
                src_w,
                src_h,
                dst_h,
                scale_y: scales.scale_y,
            };
            area_average::resize::<CHANNELS>(src, dst, &geometry, buffers);
        }
        ResizePath::LinearArea(scales) => {
            let row_len = dst_w * CHANNELS;
            let (column_src, rest) = scratch.ints.split_at_mut(dst_w);
            let (column_weight_near, rest) = rest.split_at_mut(dst_w);
            let (column_weight_far, rest) = rest.split_at_mut(dst_w);
            let (upper_row, rest) = rest.split_at_mut(row_len);
            let buffers = linear_area::LinearBuffers {
                column_src,
                column_weight_near,
                column_weight_far,
                upper_row,
                lower_row: &mut rest[..row_len],
            };
            let geometry = linear_area::LinearGeometry {
                src_w,
                src_h,
                dst_w,
                dst_h,
                scale_x: scales.scale_x,
                scale_y: scales.scale_y,
                inv_scale_x: scales.inv_scale_x,
                inv_scale_y: scales.inv_scale_y,
            };
            linear_area::resize::<CHANNELS>(src, dst, &geometry, buffers);
        }
    }
    Ok(())
}

impl From<crate::checks::SizeError> for AreaError {
    fn from(error: crate::checks::SizeError) -> AreaError {
        match error {
            crate::checks::SizeError::EmptyImage => AreaError::EmptyImage,
            crate::checks::SizeError::DimensionTooLarge => AreaError::DimensionTooLarge,
        }
    }
}
