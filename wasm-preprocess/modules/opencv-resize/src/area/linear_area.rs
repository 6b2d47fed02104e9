//! OpenCV's fallback when an `INTER_AREA` resize grows along either axis:
//! the fixed-point bilinear resizer (`resizeGeneric_` with `HResizeLinear` /
//! `VResizeLinear` for u8) driven by "area" coefficients.
//!
//! Coefficients, per destination index `d` on an axis with `scale = 1/inv`:
//! * `s = floor(d * scale)` (double),
//! * `f = (float)((d + 1) - (s + 1) * inv)`, then `f = f <= 0 ? 0 : f - floor(f)`,
//! * weights `(1 - f, f)` in float32, each times 2048 (`INTER_RESIZE_COEF_BITS
//!   = 11`) and converted with `saturate_cast<short>` (ties to even).
//!
//! Horizontally, a destination whose `s + 1` falls off the image is clamped to
//! the last pixel with weights (2048, 0) and OpenCV copies `src * 2048` there.
//! Vertically nothing is clamped except the row index (`min(s + k, h - 1)`).
//!
//! Horizontal pass: `row[x] = src[s] * w0 + src[s + 1] * w1` in i32 (SIMD and
//! scalar are both exact integer code). Vertical pass, OpenCV's
//! `VResizeLinear` specialisation for u8 (`FixedPtCast<int, uchar, 22>` is
//! *not* what runs): `(((b0 * (r0 >> 4)) >> 16) + ((b1 * (r1 >> 4)) >> 16) + 2) >> 2`.
//! Its SSE2 body saturates (int16 packs and adds, `packus`) while its scalar
//! tail truncates, but no input can reach either limit: each weight is at
//! most 2048 and a pair sums to at most 2049 (both may round up), so
//! `r >> 4 <= 255 * 2049 >> 4 = 32655` fits int16 and the blended sum is at
//! most `2049 * 32655 / 65536 < 1021`, giving at most `(1020 + 2) >> 2 = 255`.
//! One formula therefore reproduces both.

use crate::rounding::{floor_f32, floor_f64, saturate_i16_from_f32};

/// Fixed-point one (`INTER_RESIZE_COEF_SCALE`).
const COEF_ONE: i32 = 1 << 11;

/// The source index and the two fixed-point weights for one destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tap {
    src_index: i32,
    weight_near: i32,
    weight_far: i32,
}

/// Area-style linear coefficients for destination index `dst_index`.
/// `clamp_len` clamps the source index (and zeroes the fraction) when
/// `src_index + 1` would leave the axis, as OpenCV does only horizontally.
fn area_linear_tap(dst_index: usize, scale: f64, inv_scale: f64, clamp_len: Option<usize>) -> Tap {
    let mut src_index = floor_f64(dst_index as f64 * scale);
    let distance = ((dst_index + 1) as f64 - f64::from(src_index + 1) * inv_scale) as f32;
    let mut fraction = if distance <= 0.0 {
        0.0
    } else {
        distance - floor_f32(distance) as f32
    };
    if let Some(len) = clamp_len {
        let last = len as i32 - 1;
        if src_index < 0 {
            fraction = 0.0;
            src_index = 0;
        }
        if src_index >= last {
            fraction = 0.0;
            src_index = last;
        }
    }
    let to_fixed = |weight: f32| i32::from(saturate_i16_from_f32(weight * COEF_ONE as f32));
    Tap {
        src_index,
        weight_near: to_fixed(1.0 - fraction),
        weight_far: to_fixed(fraction),
    }
}

/// Borrowed working memory, all i32: per destination column the source index
/// and two weights, then two horizontally filtered rows.
pub(crate) struct LinearBuffers<'a> {
    pub(crate) column_src: &'a mut [i32],
    pub(crate) column_weight_near: &'a mut [i32],
    pub(crate) column_weight_far: &'a mut [i32],
    pub(crate) upper_row: &'a mut [i32],
    pub(crate) lower_row: &'a mut [i32],
}

pub(crate) struct LinearGeometry {
    pub(crate) src_w: usize,
    pub(crate) src_h: usize,
    pub(crate) dst_w: usize,
    pub(crate) dst_h: usize,
    pub(crate) scale_x: f64,
    pub(crate) scale_y: f64,
    pub(crate) inv_scale_x: f64,
    pub(crate) inv_scale_y: f64,
}

/// Horizontal coefficients plus the first column that needs clamping
/// (OpenCV's `xmax`).
struct ColumnTable<'a> {
    src: &'a [i32],
    weight_near: &'a [i32],
    weight_far: &'a [i32],
    first_clamped: usize,
}

fn build_column_table<'a>(
    geometry: &LinearGeometry,
    src: &'a mut [i32],
    weight_near: &'a mut [i32],
    weight_far: &'a mut [i32],
) -> ColumnTable<'a> {
    let mut first_clamped = geometry.dst_w;
    for dx in 0..geometry.dst_w {
        let unclamped = floor_f64(dx as f64 * geometry.scale_x);
        if unclamped + 1 >= geometry.src_w as i32 {
            first_clamped = first_clamped.min(dx);
        }
        let tap = area_linear_tap(
            dx,
            geometry.scale_x,
            geometry.inv_scale_x,
            Some(geometry.src_w),
        );
        src[dx] = tap.src_index;
        weight_near[dx] = tap.weight_near;
        weight_far[dx] = tap.weight_far;
    }
    ColumnTable {
        src,
        weight_near,
        weight_far,
        first_clamped,
    }
}

pub(crate) fn resize<const CN: usize>(
    src: &[u8],
    dst: &mut [u8],
    geometry: &LinearGeometry,
    buffers: LinearBuffers<'_>,
) {
    let LinearBuffers {
        column_src,
        column_weight_near,
        column_weight_far,
        mut upper_row,
        mut lower_row,
    } = buffers;
    let columns = build_column_table(geometry, column_src, column_weight_near, column_weight_far);
    let src_row_len = geometry.src_w * CN;
    let dst_row_len = geometry.dst_w * CN;
    let last_row = geometry.src_h - 1;
    let source_row = |index: usize| &src[index * src_row_len..(index + 1) * src_row_len];
    let mut upper_source: Option<usize> = None;
    let mut lower_source: Option<usize> = None;

    for (dy, dst_row) in dst
        .chunks_exact_mut(dst_row_len)
        .take(geometry.dst_h)
        .enumerate()
    {
        let tap = area_linear_tap(dy, geometry.scale_y, geometry.inv_scale_y, None);
        let upper_index = (tap.src_index.max(0) as usize).min(last_row);
        let lower_index = ((tap.src_index + 1).max(0) as usize).min(last_row);

        // Filtered rows depend only on their source row: reuse them.
        if lower_source == Some(upper_index) && upper_source != Some(upper_index) {
            core::mem::swap(&mut upper_row, &mut lower_row);
            core::mem::swap(&mut upper_source, &mut lower_source);
        }
        if upper_source != Some(upper_index) {
            filter_row::<CN>(source_row(upper_index), &columns, upper_row);
            upper_source = Some(upper_index);
        }
        if lower_source != Some(lower_index) {
            filter_row::<CN>(source_row(lower_index), &columns, lower_row);
            lower_source = Some(lower_index);
        }
        blend_rows(
            upper_row,
            lower_row,
            tap.weight_near,
            tap.weight_far,
            dst_row,
        );
    }
}

/// `HResizeLinear<uchar, int, short, 2048>`: blend two neighbours up to the
/// first clamped column, then copy the last source pixel times 2048.
fn filter_row<const CN: usize>(src_row: &[u8], columns: &ColumnTable<'_>, out: &mut [i32]) {
    let (blended, clamped) = out.split_at_mut(columns.first_clamped * CN);
    let blended_columns = columns
        .src
        .iter()
        .zip(columns.weight_near)
        .zip(columns.weight_far);
    for (out_pixel, ((&src_index, &weight_near), &weight_far)) in
        blended.chunks_exact_mut(CN).zip(blended_columns)
    {
        let near_start = src_index as usize * CN;
        let near: &[u8; CN] = src_row[near_start..near_start + CN]
            .try_into()
            .expect("a pixel is CN samples");
        let far: &[u8; CN] = src_row[near_start + CN..near_start + 2 * CN]
            .try_into()
            .expect("a pixel is CN samples");
        for ((sample_out, &a), &b) in out_pixel.iter_mut().zip(near).zip(far) {
            *sample_out = i32::from(a) * weight_near + i32::from(b) * weight_far;
        }
    }
    let clamped_columns = columns.src.iter().skip(columns.first_clamped);
    for (out_pixel, &src_index) in clamped.chunks_exact_mut(CN).zip(clamped_columns) {
        let start = src_index as usize * CN;
        for (sample_out, &a) in out_pixel.iter_mut().zip(&src_row[start..start + CN]) {
            *sample_out = i32::from(a) * COEF_ONE;
        }
    }
}

/// `VResizeLinear<uchar, int, short, ...>` for u8 (see the module notes for
/// why no saturation is needed). The `>> 4` and `>> 16` steps lose precision
/// on purpose: that is what OpenCV computes.
fn blend_rows(upper: &[i32], lower: &[i32], weight_upper: i32, weight_lower: i32, out: &mut [u8]) {
    let high_product = |sample: i32, weight: i32| (weight * (sample >> 4)) >> 16;
    for ((sample, &a), &b) in out.iter_mut().zip(upper).zip(lower) {
        let sum = high_product(a, weight_upper) + high_product(b, weight_lower) + 2;
        *sample = (sum >> 2) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_growth_replicates_and_fractional_growth_blends() {
        // inv = 2: every fraction is <= 0, so OpenCV's INTER_AREA upscale by
        // an integer factor is pixel replication.
        for d in 0..6 {
            let tap = area_linear_tap(d, 0.5, 2.0, Some(3));
            assert_eq!(
                (tap.src_index, tap.weight_near, tap.weight_far),
                ((d / 2) as i32, 2048, 0)
            );
        }
        // inv = 1.5: d = 1 -> s = 0, f = 2 - 1.5 = 0.5.
        let blended = area_linear_tap(1, 1.0 / 1.5, 1.5, Some(4));
        assert_eq!(
            (blended.src_index, blended.weight_near, blended.weight_far),
            (0, 1024, 1024)
        );
    }

    #[test]
    fn blending_the_brightest_rows_with_rounded_up_weights_stays_in_range() {
        let brightest = 255 * 2049;
        let mut out = [0u8; 1];
        blend_rows(&[brightest], &[brightest], 1025, 1024, &mut out);
        assert_eq!(out[0], 255);
        blend_rows(&[255 * 2048], &[0], 2048, 0, &mut out);
        assert_eq!(out[0], 255);
    }
}
