//! The few numpy behaviours whose exact arithmetic decides the result bits.

use std::cmp::Ordering;

/// `np.spacing(1)`: the gap between 1.0 and the next double, 2^-52.
/// pycocotools adds it to every precision denominator.
pub const SPACING_ONE: f64 = f64::EPSILON;

/// `np.linspace(start, stop, num)` (endpoint=True, float64), computed the way
/// numpy 2.x does: `arange(num) * step + start`, then the last element forced
/// to `stop`. Plain `start + i*(stop-start)/(num-1)` differs in the last bit
/// for some elements (e.g. 0.8999999999999999 for the 9th IoU threshold).
pub fn linspace(start: f64, stop: f64, num: usize) -> Vec<f64> {
    assert!(num >= 2, "linspace port only covers num >= 2");
    let div = (num - 1) as f64;
    let delta = stop - start;
    let step = delta / div;
    let mut y: Vec<f64> = (0..num)
        .map(|i| {
            let i = i as f64;
            if step == 0.0 {
                (i / div) * delta + start
            } else {
                i * step + start
            }
        })
        .collect();
    y[num - 1] = stop;
    y
}

/// numpy's `pairwise_sum` for float64 (loops_utils.h.src): blocks below 8
/// are summed left to right from -0.0; up to 128 elements use 8 interleaved
/// accumulators combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)) plus a
/// sequential tail; larger blocks split at half rounded down to a multiple
/// of 8. `np.add.reduce` on a contiguous 1-D float64 array runs this over
/// the whole array at once (checked against numpy 2.4 up to 60 000 elements).
pub fn pairwise_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut res = -0.0;
        for &v in a {
            res += v;
        }
        res
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - (n % 8) {
            for (j, acc) in r.iter_mut().enumerate() {
                *acc += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += a[i];
            i += 1;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&a[..n2]) + pairwise_sum(&a[n2..])
    }
}

/// `np.mean` of a 1-D float64 array: the add-reduce (identity 0.0 plus the
/// pairwise sum) divided by the element count.
pub fn mean(a: &[f64]) -> f64 {
    (0.0 + pairwise_sum(a)) / a.len() as f64
}

/// Ascending order of `-score` as numpy compares floats: NaN after every
/// number, -0.0 equal to 0.0.
fn cmp_desc(a: f64, b: f64) -> Ordering {
    let (ka, kb) = (-a, -b);
    match (ka.is_nan(), kb.is_nan()) {
        (false, false) => ka.partial_cmp(&kb).unwrap_or(Ordering::Equal),
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
    }
}

/// `np.argsort(-scores, kind='mergesort')`: indices by descending score,
/// equal scores keeping their input order. Any stable sort gives the same
/// permutation, so Rust's stable `sort_by` stands in for numpy's mergesort.
pub fn argsort_desc_stable(scores: &[f64]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|&i, &j| cmp_desc(scores[i], scores[j]));
    idx
}

/// `np.searchsorted(a, v, side='left')` for a non-decreasing `a`: the first
/// index whose element is not less than `v`.
pub fn searchsorted_left(a: &[f64], v: f64) -> usize {
    a.partition_point(|&x| x < v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linspace_matches_numpy_bits() {
        // repr() of np.linspace(.5, 0.95, 10) under numpy 2.4.
        let want = [
            0.5,
            0.55,
            0.6,
            0.65,
            0.7,
            0.75,
            0.8,
            0.85,
            0.8999999999999999,
            0.95,
        ];
        let got = linspace(0.5, 0.95, 10);
        for (g, w) in got.iter().zip(want) {
            assert_eq!(g.to_bits(), f64::to_bits(w));
        }
        let r = linspace(0.0, 1.0, 101);
        for (i, v) in r.iter().enumerate() {
            assert_eq!(v.to_bits(), (i as f64 * 0.01).to_bits(), "recThrs[{i}]");
        }
    }

    #[test]
    fn spacing_is_2_pow_minus_52() {
        assert_eq!(SPACING_ONE, 2.0f64.powi(-52));
        assert_eq!((1.0 + SPACING_ONE).to_bits(), 1.0f64.to_bits() + 1);
        assert_eq!(2.0 + SPACING_ONE, 2.0);
    }

    #[test]
    fn pairwise_differs_from_naive() {
        // Sequential summation of these 9 values differs from numpy's.
        let a = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1e-17];
        let naive: f64 = a.iter().sum();
        let pw = pairwise_sum(&a);
        // r0..r7 = a0..a7, combined in a tree, then + a8.
        let tree = ((0.1 + 0.2) + (0.3 + 0.4)) + ((0.5 + 0.6) + (0.7 + 0.8)) + 1e-17;
        assert_eq!(pw.to_bits(), f64::to_bits(tree));
        let _ = naive;
    }

    #[test]
    fn stable_desc() {
        let s = [0.5, 0.9, 0.5, 0.9, 0.1, f64::NAN, 0.5];
        assert_eq!(argsort_desc_stable(&s), vec![1, 3, 0, 2, 6, 4, 5]);
    }

    #[test]
    fn searchsorted() {
        let a = [0.0, 0.5, 0.5, 1.0];
        assert_eq!(searchsorted_left(&a, 0.5), 1);
        assert_eq!(searchsorted_left(&a, 0.0), 0);
        assert_eq!(searchsorted_left(&a, 1.5), 4);
    }
}
