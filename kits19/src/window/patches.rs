//! Patch placement: a regular grid with stride `ROI * (1 - OVERLAP)`, no
//! extra patch flush with the far edge. Preprocessing makes every axis a
//! multiple of 64 and at least 128, so the grid always ends on the edge.

pub const ROI: usize = 128;
pub const OVERLAP: f64 = 0.5;

/// Stride as the reference computes it: `int(roi * (1 - overlap))`.
pub(crate) fn stride(roi: usize, overlap: f64) -> usize {
    (roi as f64 * (1.0 - overlap)) as usize
}

/// Patch starts along one axis: `range(0, stride * count, stride)` with
/// `count = (size - roi) // stride + 1`, which is none when size < roi.
/// If `(size - roi) % stride != 0` the tail past the last patch is never
/// covered (its weight stays 0); preprocessed volumes never have one.
pub fn axis_starts(size: usize, roi: usize, stride: usize) -> Vec<usize> {
    if size < roi {
        return Vec::new();
    }
    let count = (size - roi) / stride + 1;
    (0..count).map(|i| i * stride).collect()
}

/// All patch origins `(z, y, x)` in the reference's loop order (x fastest).
pub fn patch_origins(shape: [usize; 3]) -> Vec<[usize; 3]> {
    let s = stride(ROI, OVERLAP);
    let [zs, ys, xs] = shape.map(|d| axis_starts(d, ROI, s));
    let mut out = Vec::with_capacity(zs.len() * ys.len() * xs.len());
    for &z in &zs {
        for &y in &ys {
            for &x in &xs {
                out.push([z, y, x]);
            }
        }
    }
    out
}

/// Copies the `ROI³` block at `origin` out of a C-order `shape` volume: the
/// `[1, 1, 128, 128, 128]` model input.
pub fn extract_patch(volume: &[f32], shape: [usize; 3], origin: [usize; 3]) -> Vec<f32> {
    let [_, h, w] = shape;
    let [z0, y0, x0] = origin;
    let mut out = Vec::with_capacity(ROI * ROI * ROI);
    for z in z0..z0 + ROI {
        for y in y0..y0 + ROI {
            let row = (z * h + y) * w + x0;
            out.extend_from_slice(&volume[row..row + ROI]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_matches_reference_formula() {
        assert_eq!(stride(128, 0.5), 64);
        assert_eq!(axis_starts(128, 128, 64), vec![0]);
        assert_eq!(axis_starts(320, 128, 64), vec![0, 64, 128, 192]);
        assert_eq!(axis_starts(200, 128, 64), vec![0, 64]); // tail 192..200 uncovered
        assert!(axis_starts(100, 128, 64).is_empty());
        let o = patch_origins([192, 128, 192]);
        assert_eq!(o, vec![[0, 0, 0], [0, 0, 64], [64, 0, 0], [64, 0, 64]]);
    }
}
