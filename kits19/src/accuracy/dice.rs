//! Per-class overlap counts and the smoothed DICE of `get_dice_score`.

/// Smoothing constants of `accuracy_kits.get_dice_score` (numerator and
/// denominator). They make an empty-vs-empty class score 1 and an
/// empty-vs-nonempty one nearly 0, so no case is ever NaN.
pub const SMOOTH_NR: f64 = 1e-6;
pub const SMOOTH_DR: f64 = 1e-6;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassCounts {
    /// Voxels where both ground truth and prediction are this class.
    pub intersection: u64,
    /// Ground-truth voxels of this class.
    pub target: u64,
    /// Predicted voxels of this class.
    pub prediction: u64,
}

/// Counts for kidney (index 0, label 1) and tumour (index 1, label 2); a
/// label outside 0..=2 on either side is returned as `Err((is_prediction,
/// value))`, where the reference's one-hot encoding would raise.
pub fn count_classes(truth: &[u8], pred: &[u8]) -> Result<[ClassCounts; 2], (bool, u8)> {
    assert_eq!(truth.len(), pred.len(), "same shape checked by the caller");
    // 3x3 confusion table, counted once, then folded
    let mut table = [[0u64; 3]; 3];
    for (&t, &p) in truth.iter().zip(pred) {
        if t > 2 {
            return Err((false, t));
        }
        if p > 2 {
            return Err((true, p));
        }
        table[t as usize][p as usize] += 1;
    }
    let class = |k: usize| ClassCounts {
        intersection: table[k][k],
        target: table[k].iter().sum(),
        prediction: (0..3).map(|t| table[t][k]).sum(),
    };
    Ok([class(1), class(2)])
}

/// `(2·I + 1e-6) / (T + P + 1e-6)`, in f64 and in that order; the counts
/// are exact in f64 (the reference sums one-hot float64 arrays).
pub fn dice(c: ClassCounts) -> f64 {
    (2.0 * c.intersection as f64 + SMOOTH_NR) / (c.target as f64 + c.prediction as f64 + SMOOTH_DR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_classes_score_one_or_nearly_zero() {
        let c = count_classes(&[0, 1, 1, 0], &[0, 1, 0, 0]).unwrap();
        assert_eq!(
            c[0],
            ClassCounts {
                intersection: 1,
                target: 2,
                prediction: 1
            }
        );
        assert_eq!(dice(c[1]), 1.0);
        assert_eq!(
            dice(ClassCounts {
                intersection: 0,
                target: 0,
                prediction: 27
            }),
            1e-6 / (27.0 + 1e-6)
        );
        assert_eq!(count_classes(&[0], &[3]), Err((true, 3)));
    }
}
