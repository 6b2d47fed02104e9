//! OpenCV's general `INTER_LINEAR` resizer for u8: `resizeGeneric_` with
//! `HResizeLinear<uchar, int, short, 2048>` and the u8 specialisation of
//! `VResizeLinear`, driven by the coefficient tables `cv::hal::resize` builds.
//!
//! **Coefficients**, per destination index `d` on an axis with
//! `scale = 1 / (dst / src)` (double):
//! * `f = (float)((d + 0.5) * scale - 0.5)`, the product and difference in
//!   double, then rounded to f32;
//! * `s = cvFloor(f)` (of the f32) and `f = f - s` (exact in f32);
//! * fixed-point weights `saturate_cast<short>((1.f - f) * 2048)` and
//!   `saturate_cast<short>(f * 2048)`: f32 products, rounded half to even
//!   (`INTER_RESIZE_COEF_BITS = 11`).
//!
//! Horizontally, a negative `s` becomes 0 with `f = 0`; then, if `s + 1`
//! reaches the width, this column and every later one is "clamped" (OpenCV's
//! `xmax`; the columns are monotonic), `s` becomes `min(s, w - 1)` and
//! `f = 0`. Vertically the weights are left alone and only the two row
//! indices are clipped into `0..h` (OpenCV's `clip(sy, 0, h)` and
//! `clip(sy + 1, 0, h)`), so the first destination row of an upscale blends
//! source row 0 with itself using weights that need not sum to 2048.
//!
//! **Horizontal pass** (i32): blended columns give
//! `src[s] * w0 + src[s + 1] * w1`, clamped columns `src[s] * 2048`. The
//! `HResizeLinearVecU8_X4` SSE bodies compute the same sums with 16-bit
//! multiplies and 32-bit adds (`v_dotprod`), which cannot overflow here.
//!
//! **Vertical pass**: `((b0 * (r0 >> 4)) >> 16) + ((b1 * (r1 >> 4)) >> 16) + 2) >> 2`
//! with arithmetic shifts. The SSE body (`VResizeLinearVec_32s8u`) packs
//! `r >> 4` to i16 with saturation, uses `mulhi`, a saturating i16 add and a
//! saturating `(x + 2) >> 2` pack to u8, while the scalar tail truncates with
//! `uchar(...)`. Neither limit is reachable: the weights lie in 0..=2048 and a
//! pair sums to at most 2049 (both may round up), so `r >> 4 <= 255 * 2049 >> 4
//! = 32655` fits i16 and the sum of the two high products stays below
//! `2049 * 32655 / 65536 < 1021`, i.e. at most `(1020 + 2) >> 2 = 255`. One
//! formula therefore reproduces both.

use super::sink::RowSink;
use crate::rounding::{floor_f32, saturate_i16_from_f32};

/// Fixed-point one, `INTER_RESIZE_COEF_SCALE`.
const COEF_ONE: i32 = 1 << 11;

/// One destination column: where its left source pixel starts (in samples)
/// and its two fixed-point weights.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ColumnTap {
    offset: u32,
    near: i32,
    far: i32,
}

/// `(cvFloor(f), f - cvFloor(f))` for `f = (float)((d + 0.5) * scale - 0.5)`.
fn axis_position(d: usize, scale: f64) -> (i32, f32) {
    let position = ((d as f64 + 0.5) * scale - 0.5) as f32;
    let index = floor_f32(position);
    (index, position - index as f32)
}

/// `saturate_cast<short>(weight * INTER_RESIZE_COEF_SCALE)`.
fn to_fixed(weight: f32) -> i32 {
    i32::from(saturate_i16_from_f32(weight * COEF_ONE as f32))
}

/// Fills one tap per destination column and returns the first clamped
/// column (OpenCV's `xmax`, in pixels).
fn build_columns<const CN: usize>(src_w: usize, scale_x: f64, columns: &mut [ColumnTap]) -> usize {
    let last = src_w as i32 - 1;
    let mut first_clamped = columns.len();
    for (dx, tap) in columns.iter_mut().enumerate() {
        let (mut sx, mut fx) = axis_position(dx, scale_x);
        if sx < 0 {
            sx = 0;
            fx = 0.0;
        }
        if sx + 1 > last {
            first_clamped = first_clamped.min(dx);
            if sx >= last {
                sx = last;
                fx = 0.0;
            }
        }
        *tap = ColumnTap {
            offset: (sx as usize * CN) as u32,
            near: to_fixed(1.0 - fx),
            far: to_fixed(fx),
        };
    }
    first_clamped
}

/// The row index, clipped into `0..len` as OpenCV's `clip(x, 0, len)`.
fn clip_row(index: i32, len: usize) -> usize {
    if index < 0 {
        0
    } else {
        (index as usize).min(len - 1)
    }
}

/// Borrowed working memory: one tap per destination column and two
/// horizontally filtered rows of `dst_w * CN` samples. The rows hold
/// `r >> 4` rather than the i32 sums `r` OpenCV keeps: the vertical pass only
/// ever reads `r >> 4` (`0..=32655`, see the module notes), so this is the
/// same arithmetic in half the memory, and the blend becomes 16-bit
/// multiply-high operations that vectorise.
pub(crate) struct BilinearBuffers<'a> {
    pub(crate) columns: &'a mut [ColumnTap],
    pub(crate) upper: &'a mut [u16],
    pub(crate) lower: &'a mut [u16],
}

pub(crate) struct Geometry {
    pub(crate) src_w: usize,
    pub(crate) src_h: usize,
    pub(crate) dst_h: usize,
    pub(crate) scale_x: f64,
    pub(crate) scale_y: f64,
}

pub(crate) fn resize<const CN: usize, S: RowSink>(
    src: &[u8],
    geometry: &Geometry,
    buffers: BilinearBuffers<'_>,
    sink: &mut S,
) {
    let BilinearBuffers {
        columns,
        mut upper,
        mut lower,
    } = buffers;
    let first_clamped = build_columns::<CN>(geometry.src_w, geometry.scale_x, columns);
    let columns: &[ColumnTap] = columns;
    let src_row_len = geometry.src_w * CN;
    let source_row = |index: usize| &src[index * src_row_len..(index + 1) * src_row_len];
    let mut upper_source: Option<usize> = None;
    let mut lower_source: Option<usize> = None;

    for dy in 0..geometry.dst_h {
        let (sy, fy) = axis_position(dy, geometry.scale_y);
        let (weight_upper, weight_lower) = (to_fixed(1.0 - fy), to_fixed(fy));
        let upper_index = clip_row(sy, geometry.src_h);
        let lower_index = clip_row(sy + 1, geometry.src_h);

        // A filtered row depends only on its source row: reuse it.
        if upper_source != Some(upper_index) {
            if lower_source == Some(upper_index) {
                core::mem::swap(&mut upper, &mut lower);
                core::mem::swap(&mut upper_source, &mut lower_source);
            } else {
                filter_row::<CN>(source_row(upper_index), columns, first_clamped, upper);
                upper_source = Some(upper_index);
            }
        }
        let out = sink.row_mut(dy);
        if lower_index == upper_index {
            blend_rows(upper, upper, weight_upper, weight_lower, out);
        } else {
            if lower_source != Some(lower_index) {
                filter_row::<CN>(source_row(lower_index), columns, first_clamped, lower);
                lower_source = Some(lower_index);
            }
            blend_rows(upper, lower, weight_upper, weight_lower, out);
        }
        sink.row_done(dy);
    }
}

/// `HResizeLinear`: blend two neighbours up to the first clamped column,
/// then the clamped source pixel times 2048; stored as `sum >> 4`.
fn filter_row<const CN: usize>(
    src_row: &[u8],
    columns: &[ColumnTap],
    first_clamped: usize,
    out: &mut [u16],
) {
    let (blended_out, clamped_out) = out.split_at_mut(first_clamped * CN);
    let (blended_taps, clamped_taps) = columns.split_at(first_clamped);
    for (pixel, tap) in blended_out.chunks_exact_mut(CN).zip(blended_taps) {
        let start = tap.offset as usize;
        let pair = &src_row[start..start + 2 * CN];
        let (near, far) = pair.split_at(CN);
        for ((sample, &a), &b) in pixel.iter_mut().zip(near).zip(far) {
            *sample = ((i32::from(a) * tap.near + i32::from(b) * tap.far) >> 4) as u16;
        }
    }
    for (pixel, tap) in clamped_out.chunks_exact_mut(CN).zip(clamped_taps) {
        let start = tap.offset as usize;
        for (sample, &a) in pixel.iter_mut().zip(&src_row[start..start + CN]) {
            *sample = ((i32::from(a) * COEF_ONE) >> 4) as u16;
        }
    }
}

/// The u8 `VResizeLinear` (see the module notes on why nothing saturates).
/// The `>> 4` and `>> 16` steps lose precision on purpose: that is what
/// OpenCV computes.
fn blend_rows(upper: &[u16], lower: &[u16], weight_upper: i32, weight_lower: i32, out: &mut [u8]) {
    // Both factors are non-negative (weights 0..=2048, rows 0..=32655), so
    // the signed multiply-high OpenCV uses equals the unsigned one, which
    // LLVM turns into `pmulhuw` on x86_64.
    let (weight_upper, weight_lower) = (weight_upper as u16, weight_lower as u16);
    let high = |w: u16, x: u16| ((u32::from(w) * u32::from(x)) >> 16) as u16;
    for ((sample, &a), &b) in out.iter_mut().zip(upper).zip(lower) {
        let sum = high(weight_upper, a) + high(weight_lower, b);
        *sample = ((sum + 2) >> 2) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upscale_by_two_interpolates_at_quarters() {
        // scale 0.5: d = 1 -> 0.25, d = 2 -> 0.75 of the first source gap.
        assert_eq!(axis_position(0, 0.5), (-1, 0.75));
        assert_eq!(axis_position(1, 0.5), (0, 0.25));
        assert_eq!(axis_position(2, 0.5), (0, 0.75));
        assert_eq!((to_fixed(0.75), to_fixed(0.25)), (1536, 512));
    }

    #[test]
    fn columns_clamp_at_both_edges() {
        let mut columns = [ColumnTap::default(); 8];
        let first_clamped = build_columns::<3>(4, 0.5, &mut columns);
        // Column 0 sits left of the first pixel centre: weights (2048, 0).
        assert_eq!(
            columns[0],
            ColumnTap {
                offset: 0,
                near: 2048,
                far: 0
            }
        );
        // Columns 7 (position 3.25) is right of the last centre.
        assert_eq!(first_clamped, 7);
        assert_eq!(
            columns[7],
            ColumnTap {
                offset: 9,
                near: 2048,
                far: 0
            }
        );
        assert_eq!(columns[6].offset, 6);
    }

    #[test]
    fn one_pixel_wide_sources_clamp_every_column() {
        let mut columns = [ColumnTap::default(); 5];
        assert_eq!(build_columns::<1>(1, 0.2, &mut columns), 0);
        assert!(columns
            .iter()
            .all(|tap| tap.offset == 0 && tap.near == 2048));
    }

    #[test]
    fn brightest_rows_with_rounded_up_weights_stay_in_range() {
        let brightest = ((255u32 * 2049) >> 4) as u16;
        let mut out = [0u8; 1];
        blend_rows(&[brightest], &[brightest], 1025, 1024, &mut out);
        assert_eq!(out[0], 255);
        blend_rows(&[((255u32 * 2048) >> 4) as u16], &[0], 2048, 0, &mut out);
        assert_eq!(out[0], 255);
    }
}
