//! OpenCV's `resizeArea_<uchar, float>` (both axes shrink, non-integer).
//!
//! Per destination row, OpenCV walks the vertical taps in order. For each
//! tap it builds a horizontally filtered copy of that source row,
//! `row[d] += src[s] * wx` in float32 in x-table order, then folds it into
//! the row accumulator: `acc = wy * row` for the row's first tap,
//! `acc = acc + wy * row` for the rest (a separate multiply and add; the
//! build has no FMA in this code). The accumulator is finally converted with
//! `saturate_cast<uchar>`. Rust never fuses `a + b * c`, so writing the same
//! operations in the same order reproduces every bit.
//!
//! Scratch: the x kernels plus two float rows; nothing image-sized.

use super::area_taps::{for_each_tap_of_cell, AreaTap};
use crate::rounding::saturate_u8_from_f32;

/// Borrowed working memory for one area-average resize.
pub(crate) struct AreaAverageBuffers<'a> {
    /// Horizontal kernels, `dst_w` groups of `taps_per_cell` (see
    /// `fill_padded_kernels`).
    pub(crate) x_kernels: &'a [AreaTap],
    pub(crate) taps_per_cell: usize,
    /// One horizontally filtered source row, `dst_w * CN` floats.
    pub(crate) filtered_row: &'a mut [f32],
    /// The vertical accumulator, `dst_w * CN` floats.
    pub(crate) accumulator: &'a mut [f32],
}

pub(crate) struct AreaAverageGeometry {
    pub(crate) src_w: usize,
    pub(crate) src_h: usize,
    pub(crate) dst_h: usize,
    pub(crate) scale_y: f64,
}

pub(crate) fn resize<const CN: usize>(
    src: &[u8],
    dst: &mut [u8],
    geometry: &AreaAverageGeometry,
    buffers: AreaAverageBuffers<'_>,
) {
    let src_row_len = geometry.src_w * CN;
    let dst_row_len = buffers.accumulator.len();
    let AreaAverageBuffers {
        x_kernels,
        taps_per_cell,
        filtered_row,
        accumulator,
    } = buffers;
    // The filtered row depends only on its source row, so a row shared by
    // two destination rows is filtered once.
    let mut filtered_source_row: Option<usize> = None;

    for (dy, dst_row) in dst
        .chunks_exact_mut(dst_row_len)
        .take(geometry.dst_h)
        .enumerate()
    {
        let mut is_first_tap = true;
        accumulator.fill(0.0);
        for_each_tap_of_cell(dy, geometry.src_h, geometry.scale_y, |sy, weight_y| {
            if filtered_source_row != Some(sy) {
                let src_row = &src[sy * src_row_len..(sy + 1) * src_row_len];
                filter_row_horizontally::<CN>(src_row, x_kernels, taps_per_cell, filtered_row);
                filtered_source_row = Some(sy);
            }
            if is_first_tap {
                scale_into(filtered_row, weight_y, accumulator);
                is_first_tap = false;
            } else {
                scale_and_add_into(filtered_row, weight_y, accumulator);
            }
        });
        for (out, &value) in dst_row.iter_mut().zip(accumulator.iter()) {
            *out = saturate_u8_from_f32(value);
        }
    }
}

/// `row[d*CN + c] = sum_k src[s_k*CN + c] * w_k` in kernel order.
///
/// OpenCV adds each tap into `buf[d]` in place, starting from 0; summing a
/// destination pixel's taps in registers from 0 is the same sequence of
/// float operations (and `0 + p` is exactly `p`).
fn filter_row_horizontally<const CN: usize>(
    src_row: &[u8],
    kernels: &[AreaTap],
    taps_per_cell: usize,
    row: &mut [f32],
) {
    for (out, kernel) in row
        .chunks_exact_mut(CN)
        .zip(kernels.chunks_exact(taps_per_cell))
    {
        let mut sums = [0.0f32; CN];
        for tap in kernel {
            let src_start = tap.src_index as usize * CN;
            let pixel: &[u8; CN] = src_row[src_start..src_start + CN]
                .try_into()
                .expect("a pixel is CN samples");
            for (sum, &sample) in sums.iter_mut().zip(pixel) {
                *sum += f32::from(sample) * tap.weight;
            }
        }
        out.copy_from_slice(&sums);
    }
}

/// `acc = weight * row` (OpenCV's `inter_area::mul`).
fn scale_into(row: &[f32], weight: f32, accumulator: &mut [f32]) {
    for (acc, &value) in accumulator.iter_mut().zip(row) {
        *acc = weight * value;
    }
}

/// `acc = acc + weight * row` (OpenCV's `inter_area::muladd`, unfused).
fn scale_and_add_into(row: &[f32], weight: f32, accumulator: &mut [f32]) {
    for (acc, &value) in accumulator.iter_mut().zip(row) {
        *acc += weight * value;
    }
}
