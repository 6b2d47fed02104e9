//! Accumulating weighted patch results and turning them into labels.

use std::sync::Arc;

use super::gaussian::importance_map;
use super::patches::ROI;

/// Output channels of the KiTS19 U-Net: background, kidney, tumour.
pub const CLASSES: usize = 3;

/// The reference's `result` and `norm_map` arrays for one volume. The
/// reference keeps a 3-channel `norm_map` whose channels are identical; one
/// channel gives the same values.
pub struct Combiner {
    shape: [usize; 3],
    weights: Arc<[f32]>,
    acc: Vec<f32>,
    norm: Vec<f32>,
}

impl Combiner {
    pub fn new(shape: [usize; 3]) -> Self {
        Self::with_weights(shape, importance_map(ROI).into())
    }

    /// As [`Combiner::new`], with the importance map computed once for many volumes (it is
    /// 2 M cube roots).
    pub fn with_weights(shape: [usize; 3], weights: Arc<[f32]>) -> Self {
        assert_eq!(weights.len(), ROI * ROI * ROI, "a 128³ importance map");
        let n: usize = shape.iter().product();
        Self {
            shape,
            weights,
            acc: vec![0.0; CLASSES * n],
            norm: vec![0.0; n],
        }
    }

    /// The float32 importance map (`norm_patch`), flattened C order.
    pub fn weights(&self) -> &[f32] {
        &self.weights
    }

    /// Adds one patch result `[3, 128, 128, 128]` (C order) at `origin`:
    /// `acc += out * w` and `norm += w`, each product rounded to f32 before
    /// the sum, as numpy evaluates `result_slice += out * norm_patch`.
    pub fn add_patch(&mut self, origin: [usize; 3], out: &[f32]) {
        let p3 = ROI * ROI * ROI;
        assert_eq!(
            out.len(),
            CLASSES * p3,
            "patch result must be [3, 128, 128, 128]"
        );
        let [d, h, w] = self.shape;
        let n = d * h * w;
        let [z0, y0, x0] = origin;
        assert!(
            z0 + ROI <= d && y0 + ROI <= h && x0 + ROI <= w,
            "patch inside the volume"
        );
        for z in 0..ROI {
            for y in 0..ROI {
                let local = (z * ROI + y) * ROI;
                let global = ((z0 + z) * h + (y0 + y)) * w + x0;
                let wrow = &self.weights[local..local + ROI];
                for c in 0..CLASSES {
                    let orow = &out[c * p3 + local..c * p3 + local + ROI];
                    let arow = &mut self.acc[c * n + global..c * n + global + ROI];
                    for ((a, &o), &wt) in arow.iter_mut().zip(orow).zip(wrow) {
                        *a += o * wt;
                    }
                }
                for (m, &wt) in self.norm[global..global + ROI].iter_mut().zip(wrow) {
                    *m += wt;
                }
            }
        }
    }

    /// `(acc, norm)`: acc is `[3, D, H, W]`, norm `[D, H, W]`, both C order.
    pub fn accumulators(&self) -> (&[f32], &[f32]) {
        (&self.acc, &self.norm)
    }

    /// `argmax(acc / norm)` over channels, as uint8 in C order: the bytes
    /// the SUT sends back. A voxel no patch covered divides 0/0 = NaN and,
    /// like numpy, gets label 0.
    pub fn finalize(&self) -> Vec<u8> {
        let n = self.norm.len();
        (0..n)
            .map(|v| {
                let m = self.norm[v];
                argmax_first(std::array::from_fn(|c| self.acc[c * n + v] / m))
            })
            .collect()
    }
}

/// numpy's argmax: the first maximum wins ties; a NaN counts as the maximum
/// (the first NaN wins).
pub fn argmax_first(v: [f32; CLASSES]) -> u8 {
    let mut best = 0;
    for c in 0..CLASSES {
        if v[c].is_nan() {
            return c as u8;
        }
        if v[c] > v[best] {
            best = c;
        }
    }
    best as u8
}

#[cfg(test)]
mod tests {
    use super::argmax_first;

    #[test]
    fn argmax_rules() {
        assert_eq!(argmax_first([1.0, 1.0, 0.0]), 0);
        assert_eq!(argmax_first([0.0, 2.0, 2.0]), 1);
        assert_eq!(argmax_first([0.0, f32::NAN, 5.0]), 1);
        assert_eq!(argmax_first([f32::NAN; 3]), 0);
    }
}
