//! numpy's float64 `add.reduce` over a contiguous 1-D array (pairwise
//! summation), which is what `DataFrame.mean()` runs per column. A plain
//! left-to-right sum differs in the last bits once there are 8 or more
//! values, i.e. for the 43 KiTS19 cases.

const BLOCK: usize = 128;

pub fn numpy_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut r = 0.0;
        for &x in a {
            r += x;
        }
        r
    } else if n <= BLOCK {
        // eight interleaved accumulators, combined as a balanced tree
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let whole = n - n % 8;
        for chunk in a[8..whole].chunks_exact(8) {
            for (acc, &x) in r.iter_mut().zip(chunk) {
                *acc += x;
            }
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &x in &a[whole..] {
            res += x;
        }
        res
    } else {
        let mut half = n / 2;
        half -= half % 8;
        numpy_sum(&a[..half]) + numpy_sum(&a[half..])
    }
}

#[cfg(test)]
mod tests {
    use super::numpy_sum;

    #[test]
    fn small_sums_are_sequential() {
        assert_eq!(numpy_sum(&[]), 0.0);
        assert_eq!(numpy_sum(&[0.1, 0.2, 0.3]), (0.1 + 0.2) + 0.3);
    }

    #[test]
    fn blocks_of_eight_reassociate() {
        let v: Vec<f64> = (0..43).map(|i| 1.0 / (i as f64 + 3.0)).collect();
        let r: Vec<f64> = (0..8)
            .map(|j| v[j..40].iter().step_by(8).sum::<f64>())
            .collect();
        let mut want = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &x in &v[40..] {
            want += x;
        }
        assert_eq!(numpy_sum(&v), want);
    }
}
