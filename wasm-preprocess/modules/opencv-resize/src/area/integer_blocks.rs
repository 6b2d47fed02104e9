//! OpenCV's `resizeAreaFast_` for u8: every destination sample is the mean
//! of a `block_w` x `block_h` source block (the scales are exact integers,
//! so the source is exactly `block` times the destination on each axis).
//!
//! Two different roundings are in play and both must be kept:
//! * 2x2 blocks with 1, 3 or 4 channels go through `ResizeAreaFastVec`
//!   (SIMD and its scalar tail agree): `(sum + 2) >> 2`, ties rounded up.
//! * Every other block shape (and 2x2 with 2 channels, which OpenCV leaves
//!   out of that fast path) computes `sum * (1.0f / area)` in float32 and
//!   converts with `saturate_cast<uchar>`, ties rounded to even.

use crate::rounding::saturate_u8_from_f32;

/// Source and destination geometry for one integer-ratio resize.
pub(crate) struct BlockGeometry {
    pub(crate) src_w: usize,
    pub(crate) dst_w: usize,
    pub(crate) dst_h: usize,
    pub(crate) block_w: usize,
    pub(crate) block_h: usize,
}

pub(crate) fn resize<const CN: usize>(src: &[u8], dst: &mut [u8], geometry: &BlockGeometry) {
    let src_row_len = geometry.src_w * CN;
    let dst_row_len = geometry.dst_w * CN;
    let src_band_len = src_row_len * geometry.block_h;
    let bands = src.chunks_exact(src_band_len);
    let dst_rows = dst.chunks_exact_mut(dst_row_len).take(geometry.dst_h);
    let uses_shift_rounding = geometry.block_w == 2 && geometry.block_h == 2 && CN != 2;

    for (band, dst_row) in bands.zip(dst_rows) {
        if uses_shift_rounding {
            average_2x2_rounding_up::<CN>(band, src_row_len, dst_row);
        } else {
            average_blocks_in_float::<CN>(band, src_row_len, dst_row, geometry);
        }
    }
}

/// `(a + b + c + d + 2) >> 2` over each 2x2 block.
fn average_2x2_rounding_up<const CN: usize>(band: &[u8], src_row_len: usize, dst_row: &mut [u8]) {
    let (top, bottom) = band.split_at(src_row_len);
    let top_pixels = top.chunks_exact(2 * CN);
    let bottom_pixels = bottom.chunks_exact(2 * CN);
    for ((out, upper), lower) in dst_row
        .chunks_exact_mut(CN)
        .zip(top_pixels)
        .zip(bottom_pixels)
    {
        for channel in 0..CN {
            let sum = u32::from(upper[channel])
                + u32::from(upper[CN + channel])
                + u32::from(lower[channel])
                + u32::from(lower[CN + channel]);
            out[channel] = ((sum + 2) >> 2) as u8;
        }
    }
}

/// Integer block sum, then `saturate_cast<uchar>(sum * (1.f / area))`.
fn average_blocks_in_float<const CN: usize>(
    band: &[u8],
    src_row_len: usize,
    dst_row: &mut [u8],
    geometry: &BlockGeometry,
) {
    let area = geometry.block_w * geometry.block_h;
    let inverse_area = 1.0f32 / area as f32;
    let block_row_len = geometry.block_w * CN;
    for (dx, out) in dst_row.chunks_exact_mut(CN).enumerate() {
        let block_start = dx * block_row_len;
        for (channel, out_sample) in out.iter_mut().enumerate() {
            let mut sum: i32 = 0;
            for src_row in band.chunks_exact(src_row_len) {
                let block = &src_row[block_start..block_start + block_row_len];
                sum += block
                    .iter()
                    .skip(channel)
                    .step_by(CN)
                    .map(|&sample| i32::from(sample))
                    .sum::<i32>();
            }
            // int * float in C++: the sum is converted to float first.
            *out_sample = saturate_u8_from_f32(sum as f32 * inverse_area);
        }
    }
}
