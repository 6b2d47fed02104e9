//! The patch weight map of `inference_utils.gaussian_kernel(128, 0.125*128)`
//! cast to float32 by `prepare_arrays`. Built in f64 in the reference's
//! operation order so the float32 result matches bit for bit.

/// `scipy.signal.windows.gaussian(n, std)`: `exp(-(k - (n-1)/2)^2 / (2 std^2))`.
fn gaussian_1d(n: usize, std: f64) -> Vec<f64> {
    let centre = (n as f64 - 1.0) / 2.0;
    let sig2 = 2.0 * std * std;
    (0..n)
        .map(|k| {
            let d = k as f64 - centre;
            (-(d * d) / sig2).exp()
        })
        .collect()
}

/// Flattened `n³` map (C order): `cbrt((g[i]·g[j])·g[k])`, divided by its
/// maximum, rounded to f32. The cube root of the product makes it equal, up
/// to rounding, to the 1-D window itself taken per axis and multiplied,
/// normalised to a peak of 1.
pub fn importance_map(n: usize) -> Vec<f32> {
    let g = gaussian_1d(n, 0.125 * n as f64);
    let mut m = Vec::with_capacity(n * n * n);
    for &gi in &g {
        for &gj in &g {
            let gij = gi * gj;
            m.extend(g.iter().map(|&gk| (gij * gk).cbrt()));
        }
    }
    let max = m.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    m.into_iter().map(|v| (v / max) as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::importance_map;

    #[test]
    fn peak_is_one_at_the_centre_and_symmetric() {
        let n = 8;
        let m = importance_map(n);
        let at = |z: usize, y: usize, x: usize| m[(z * n + y) * n + x];
        assert_eq!(at(3, 3, 3), 1.0);
        assert_eq!(at(0, 1, 2), at(7, 6, 5));
        assert!(at(0, 0, 0) < at(1, 1, 1));
    }
}
