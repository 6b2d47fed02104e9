//! The per-axis weight tables of OpenCV's true area resize
//! (`computeResizeAreaTab`).
//!
//! Destination cell `d` covers the source interval `[d*scale, (d+1)*scale)`
//! (double precision). Each source pixel overlapping it gets the overlap
//! length divided by the cell width, converted to float32. Partial overlaps
//! shorter than 1e-3 are dropped, exactly as OpenCV does, so weights need not
//! sum to one.

use crate::rounding::{ceil_f64, cpp_min, floor_f64};

/// One weight of a horizontal kernel: `weight * source[src_index]`, with
/// `src_index` in pixels.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AreaTap {
    pub(crate) src_index: u32,
    pub(crate) weight: f32,
}

/// Calls `emit(source_index, weight)` for each tap of destination cell
/// `dst_index`, in OpenCV's order (left partial, whole pixels, right
/// partial); the source indices are consecutive.
pub(crate) fn for_each_tap_of_cell(
    dst_index: usize,
    src_len: usize,
    scale: f64,
    mut emit: impl FnMut(usize, f32),
) {
    let cell_start = dst_index as f64 * scale;
    let cell_end = cell_start + scale;
    let cell_width = cpp_min(scale, src_len as f64 - cell_start);

    let last_src = src_len as i32 - 1;
    let whole_end = floor_f64(cell_end).min(last_src);
    let whole_start = ceil_f64(cell_start).min(whole_end);

    if f64::from(whole_start) - cell_start > 1e-3 {
        let weight = ((f64::from(whole_start) - cell_start) / cell_width) as f32;
        emit((whole_start - 1) as usize, weight);
    }
    let whole_weight = (1.0 / cell_width) as f32;
    for src_index in whole_start..whole_end {
        emit(src_index as usize, whole_weight);
    }
    let right_overlap = cell_end - f64::from(whole_end);
    if right_overlap > 1e-3 {
        let overlap = cpp_min(cpp_min(right_overlap, 1.0), cell_width);
        emit(whole_end as usize, (overlap / cell_width) as f32);
    }
}

/// The largest number of taps any destination cell of the axis has.
pub(crate) fn max_taps_per_cell(src_len: usize, dst_len: usize, scale: f64) -> usize {
    (0..dst_len)
        .map(|dst_index| {
            let mut count = 0;
            for_each_tap_of_cell(dst_index, src_len, scale, |_, _| count += 1);
            count
        })
        .max()
        .unwrap_or(0)
}

/// Lays the axis table out as `dst_len` kernels of `taps_per_cell` taps
/// each (from [`max_taps_per_cell`]), short kernels padded at the end with
/// zero weights on their last source pixel.
///
/// The padding is exact: every partial sum is finite and non-negative, and
/// `x + 0 * s == x` for such values, so a padded kernel accumulates the same
/// float bits as OpenCV's variable-length one while the loop stays regular.
pub(crate) fn fill_padded_kernels(
    src_len: usize,
    dst_len: usize,
    scale: f64,
    taps_per_cell: usize,
    kernels: &mut [AreaTap],
) {
    for (dst_index, kernel) in kernels
        .chunks_exact_mut(taps_per_cell)
        .take(dst_len)
        .enumerate()
    {
        let mut used = 0;
        for_each_tap_of_cell(dst_index, src_len, scale, |src_index, weight| {
            kernel[used] = AreaTap {
                src_index: src_index as u32,
                weight,
            };
            used += 1;
        });
        let last_src = kernel[..used].last().map_or(0, |tap| tap.src_index);
        for padding in &mut kernel[used..] {
            *padding = AreaTap {
                src_index: last_src,
                weight: 0.0,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_and_a_half_scale_splits_the_middle_pixel() {
        let taps_per_cell = max_taps_per_cell(3, 2, 1.5);
        assert_eq!(taps_per_cell, 2);
        let mut kernels = [AreaTap::default(); 4];
        fill_padded_kernels(3, 2, 1.5, taps_per_cell, &mut kernels);
        let expected: [(u32, f32); 4] = [
            (0, 1.0 / 1.5),
            (1, 0.5 / 1.5),
            (1, 0.5 / 1.5),
            (2, 1.0 / 1.5),
        ];
        for (tap, &(src, weight)) in kernels.iter().zip(expected.iter()) {
            assert_eq!(tap.src_index, src);
            assert!((tap.weight - weight).abs() < 1e-6);
        }
    }

    #[test]
    fn short_kernels_are_padded_with_zero_weights() {
        // 500 -> 341 (scale ~1.47): cells have 2 or 3 taps.
        let scale = 1.0 / (341.0 / 500.0);
        let taps_per_cell = max_taps_per_cell(500, 341, scale);
        assert_eq!(taps_per_cell, 3);
        let mut kernels = [AreaTap::default(); 3 * 341];
        fill_padded_kernels(500, 341, scale, taps_per_cell, &mut kernels);
        let padded = kernels
            .chunks_exact(3)
            .find(|kernel| kernel[2].weight == 0.0)
            .expect("some cell has only two taps");
        assert_eq!(padded[2].src_index, padded[1].src_index);
    }

    #[test]
    fn padded_table_stays_within_source_plus_two_per_destination() {
        for (src, dst) in [(500, 341), (7, 3), (1200, 1), (257, 256), (4000, 341)] {
            let scale = 1.0 / (dst as f64 / src as f64);
            assert!(max_taps_per_cell(src, dst, scale) * dst <= src + 2 * dst);
        }
    }
}
