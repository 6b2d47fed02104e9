//! The exact 2x shrink: `cv::hal::resize` turns `INTER_LINEAR` into
//! `INTER_AREA` here ("INTER_AREA (fast) also is equal to INTER_LINEAR"), and
//! that runs `resizeAreaFast_<uchar, int, ResizeAreaFastVec<...>>` on 2x2
//! blocks.
//!
//! Each output sample is built from the integer sum `S` of its four source
//! samples:
//! * 1, 3 or 4 channels: `ResizeAreaFastVec`'s "fast mode" gives
//!   `(S + 2) >> 2`, ties rounding up (its SSE2 bodies compute the same
//!   integers with `v_rshr_pack<2>`);
//! * 2 channels: fast mode is off, so the generic loop computes
//!   `saturate_cast<uchar>(S * 0.25f)`, exact in f32, then rounded half to
//!   even: `S = 4q + 2` gives `q` or `q + 1`, whichever is even.
//!
//! (The exact 2x scale means `src = 2 * dst` on both axes, so OpenCV's
//! partial-block branch never runs.)

use super::sink::RowSink;

pub(crate) fn resize<const CN: usize, S: RowSink>(
    src: &[u8],
    src_w: usize,
    dst_h: usize,
    sink: &mut S,
) {
    let src_row_len = src_w * CN;
    for dy in 0..dst_h {
        let top = &src[2 * dy * src_row_len..(2 * dy + 1) * src_row_len];
        let bottom = &src[(2 * dy + 1) * src_row_len..(2 * dy + 2) * src_row_len];
        let out = sink.row_mut(dy);
        let blocks = top.chunks_exact(2 * CN).zip(bottom.chunks_exact(2 * CN));
        for (pixel, (upper, lower)) in out.chunks_exact_mut(CN).zip(blocks) {
            for (c, sample) in pixel.iter_mut().enumerate() {
                let sum = u32::from(upper[c])
                    + u32::from(upper[c + CN])
                    + u32::from(lower[c])
                    + u32::from(lower[c + CN]);
                *sample = if CN == 2 {
                    quarter_ties_even(sum)
                } else {
                    ((sum + 2) >> 2) as u8
                };
            }
        }
        sink.row_done(dy);
    }
}

/// `cvRound(sum * 0.25f)` for `sum <= 1020`.
fn quarter_ties_even(sum: u32) -> u8 {
    let (quotient, remainder) = (sum >> 2, sum & 3);
    let round_up = remainder > 2 || (remainder == 2 && quotient & 1 == 1);
    (quotient + u32::from(round_up)) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_channel_quarters_round_half_to_even() {
        assert_eq!(quarter_ties_even(2), 0); // 0.5 -> 0
        assert_eq!(quarter_ties_even(6), 2); // 1.5 -> 2
        assert_eq!(quarter_ties_even(10), 2); // 2.5 -> 2
        assert_eq!(quarter_ties_even(7), 2); // 1.75 -> 2
        assert_eq!(quarter_ties_even(1020), 255);
    }
}
