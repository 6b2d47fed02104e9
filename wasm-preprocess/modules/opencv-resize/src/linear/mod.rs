//! Bit-exact port of OpenCV 5.0.0's `cv2.resize(img, (w, h),
//! interpolation=cv2.INTER_LINEAR)` for interleaved u8 images with 1 to 4
//! channels, as `opencv-python-headless==5.0.0.93` computes it on x86_64,
//! and of ultralytics 8.4.190's YOLO `LetterBox` preprocessing built on it
//! (see [`letterbox`]).
//!
//! `#![no_std]`, no allocation, no dependencies, no `unsafe`: the tables and
//! row buffers come from the caller through [`Scratch`], sized by
//! [`scratch_requirement`] (exact) or [`scratch_upper_bound`] (for static
//! buffers). Rows are tightly packed (`stride = width * channels`).
//!
//! OpenCV picks one of three paths from the sizes alone ([`linear_path`]):
//! a copy, the `INTER_AREA` 2x2 block mean for an exact halving, or its
//! fixed-point bilinear resizer. Each is reproduced operation for operation;
//! PORT-LINEAR.md gives the details.

mod bilinear;
mod half_blocks;
pub mod letterbox;
mod plan;
mod sink;

pub use bilinear::ColumnTap;
pub use plan::{linear_path, LinearPath};

use plan::AxisScales;
use sink::{ImageRows, RowSink};

/// Why a resize was refused. Nothing is written to `dst` on error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResizeError {
    /// A width or height is zero.
    EmptyImage,
    /// An image has more samples than OpenCV's `int` arithmetic allows.
    DimensionTooLarge,
    /// `src.len()` is not `src_w * src_h * channels`.
    SourceLength { expected: usize, actual: usize },
    /// `dst.len()` is not `dst_w * dst_h * channels`.
    DestinationLength { expected: usize, actual: usize },
    /// A scratch slice is shorter than [`scratch_requirement`] says.
    ScratchTooSmall {
        needed: ScratchRequirement,
        provided: ScratchRequirement,
    },
}

/// Element counts of the two scratch slices a resize needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScratchRequirement {
    pub columns: usize,
    pub rows: usize,
}

impl ScratchRequirement {
    fn fits_in(&self, provided: &ScratchRequirement) -> bool {
        self.columns <= provided.columns && self.rows <= provided.rows
    }
}

/// Caller-owned working memory. Slices may be longer than needed; contents
/// on entry do not matter and are unspecified on return.
pub struct Scratch<'a> {
    pub columns: &'a mut [ColumnTap],
    pub rows: &'a mut [u16],
}

impl Scratch<'_> {
    fn capacity(&self) -> ScratchRequirement {
        ScratchRequirement {
            columns: self.columns.len(),
            rows: self.rows.len(),
        }
    }
}

/// Largest scratch any resize to `dst_w <= max_dst_w` with `channels`
/// channels can need, whatever the other sizes: for buffers sized at
/// compile time.
pub const fn scratch_upper_bound(max_dst_w: usize, channels: usize) -> ScratchRequirement {
    ScratchRequirement {
        columns: max_dst_w,
        rows: 2 * max_dst_w * channels,
    }
}

/// Exact scratch needed for one resize.
pub fn scratch_requirement(
    src_w: usize,
    src_h: usize,
    dst_w: usize,
    dst_h: usize,
    channels: usize,
) -> Result<ScratchRequirement, ResizeError> {
    crate::checks::check_dimensions(src_w, src_h, dst_w, dst_h, channels)?;
    Ok(match linear_path(src_w, src_h, dst_w, dst_h) {
        LinearPath::Copy | LinearPath::HalfBlocks => ScratchRequirement::default(),
        LinearPath::Bilinear => scratch_upper_bound(dst_w, channels),
    })
}

/// `cv2.resize(src, (dst_w, dst_h), interpolation=cv2.INTER_LINEAR)` for a
/// 3-channel u8 image.
pub fn resize_linear_u8c3(
    src: &[u8],
    src_w: usize,
    src_h: usize,
    dst: &mut [u8],
    dst_w: usize,
    dst_h: usize,
    scratch: &mut Scratch<'_>,
) -> Result<(), ResizeError> {
    resize_linear_u8::<3>(src, src_w, src_h, dst, dst_w, dst_h, scratch)
}

/// `cv2.resize(..., interpolation=cv2.INTER_LINEAR)` for a u8 image with
/// `CHANNELS` (1 to 4) interleaved channels.
pub fn resize_linear_u8<const CHANNELS: usize>(
    src: &[u8],
    src_w: usize,
    src_h: usize,
    dst: &mut [u8],
    dst_w: usize,
    dst_h: usize,
    scratch: &mut Scratch<'_>,
) -> Result<(), ResizeError> {
    const {
        assert!(
            CHANNELS >= 1 && CHANNELS <= 4,
            "this port covers 1 to 4 channels"
        )
    };
    crate::checks::check_lengths(src.len(), src_w, src_h, CHANNELS)
        .map_err(|(expected, actual)| ResizeError::SourceLength { expected, actual })?;
    crate::checks::check_lengths(dst.len(), dst_w, dst_h, CHANNELS)
        .map_err(|(expected, actual)| ResizeError::DestinationLength { expected, actual })?;
    let mut sink = ImageRows {
        image: dst,
        row_len: dst_w * CHANNELS,
    };
    resize_into::<CHANNELS, _>(src, src_w, src_h, dst_w, dst_h, scratch, &mut sink)
}

/// Checks sizes and scratch, then runs the path OpenCV would, handing each
/// finished row to `sink`. `src.len()` must already be checked.
pub(crate) fn resize_into<const CN: usize, S: RowSink>(
    src: &[u8],
    src_w: usize,
    src_h: usize,
    dst_w: usize,
    dst_h: usize,
    scratch: &mut Scratch<'_>,
    sink: &mut S,
) -> Result<(), ResizeError> {
    let needed = scratch_requirement(src_w, src_h, dst_w, dst_h, CN)?;
    let provided = scratch.capacity();
    if !needed.fits_in(&provided) {
        return Err(ResizeError::ScratchTooSmall { needed, provided });
    }
    let row_len = src_w * CN;
    match linear_path(src_w, src_h, dst_w, dst_h) {
        LinearPath::Copy => {
            for (dy, row) in src.chunks_exact(row_len).enumerate() {
                sink.row_mut(dy).copy_from_slice(row);
                sink.row_done(dy);
            }
        }
        LinearPath::HalfBlocks => half_blocks::resize::<CN, S>(src, src_w, dst_h, sink),
        LinearPath::Bilinear => {
            let scales = AxisScales::new(src_w, src_h, dst_w, dst_h);
            let filtered_len = dst_w * CN;
            let (upper, rest) = scratch.rows.split_at_mut(filtered_len);
            let buffers = bilinear::BilinearBuffers {
                columns: &mut scratch.columns[..dst_w],
                upper,
                lower: &mut rest[..filtered_len],
            };
            let geometry = bilinear::Geometry {
                src_w,
                src_h,
                dst_h,
                scale_x: scales.scale_x,
                scale_y: scales.scale_y,
            };
            bilinear::resize::<CN, S>(src, &geometry, buffers, sink);
        }
    }
    Ok(())
}

impl From<crate::checks::SizeError> for ResizeError {
    fn from(error: crate::checks::SizeError) -> ResizeError {
        match error {
            crate::checks::SizeError::EmptyImage => ResizeError::EmptyImage,
            crate::checks::SizeError::DimensionTooLarge => ResizeError::DimensionTooLarge,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_sizes_before_writing() {
        let src = [7u8; 12];
        let mut dst = [0u8; 12];
        let mut scratch = Scratch {
            columns: &mut [],
            rows: &mut [],
        };
        assert_eq!(
            resize_linear_u8c3(&src, 2, 2, &mut dst, 0, 4, &mut scratch),
            Err(ResizeError::DestinationLength {
                expected: 0,
                actual: 12
            })
        );
        assert_eq!(
            resize_linear_u8c3(&src, 2, 2, &mut dst, 4, 1, &mut scratch),
            Err(ResizeError::ScratchTooSmall {
                needed: ScratchRequirement {
                    columns: 4,
                    rows: 24
                },
                provided: ScratchRequirement::default()
            })
        );
        assert_eq!(dst, [0u8; 12]);
    }

    #[test]
    fn copies_and_halves_without_scratch() {
        let src: [u8; 12] = core::array::from_fn(|i| i as u8 * 20);
        let mut scratch = Scratch {
            columns: &mut [],
            rows: &mut [],
        };
        let mut same = [0u8; 12];
        resize_linear_u8c3(&src, 2, 2, &mut same, 2, 2, &mut scratch).unwrap();
        assert_eq!(same, src);
        let mut half = [0u8; 3];
        resize_linear_u8c3(&src, 2, 2, &mut half, 1, 1, &mut scratch).unwrap();
        // Channel 0: (0 + 60 + 120 + 180 + 2) >> 2 = 90.
        assert_eq!(half, [90, 110, 130]);
    }
}
