//! TEST08 (`compliance/TEST08/run_verification.py`), dlrm-v3's accuracy in performance mode.
//! Its streaming data set is issued in its own temporal order, so samples are matched by the
//! `(ts_idx, query_idx)` pair each response carries rather than by `qsl_idx`: an accuracy-run
//! response is float32 `[ts_idx, query_idx, predictions…, labels…, weights…, candidates]`, a
//! performance-run response `[ts_idx, query_idx, predictions…]`. Every sampled performance
//! response must match an accuracy-run sample, and its normalized entropy (with that sample's
//! labels and weights) must lie within 0.1 % of the accuracy run's.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use super::accuracy_log::read_accuracy_log;
use super::{ComplianceError, Verification};
use crate::logs::accuracy::decode_hex;

/// The script's default relative tolerance on the normalized entropy.
pub const TEST08_NE_TOLERANCE: f64 = 0.001;

/// The clip the script applies to predictions, labels and the mean label (numpy casts the
/// Python floats 1e-7 and 1 - 1e-7 to float32).
const EPS_F32: f32 = 1e-7;
const ONE_MINUS_EPS_F32: f32 = (1.0f64 - 1e-7) as f32;

/// An accuracy-run sample: its normalized entropy, labels and weights.
struct Reference {
    ne: f32,
    labels: Vec<f32>,
    weights: Vec<f32>,
}

/// TEST08's `verify_accuracy.txt` (the script's output) from the accuracy run's log and the
/// compliance run's.
pub fn verify_test08(
    accuracy_log: &Path,
    compliance_log: &Path,
    tolerance: f64,
) -> Result<Verification, ComplianceError> {
    let accuracy = read_accuracy_log(accuracy_log)?;
    let compliance = read_accuracy_log(compliance_log)?;
    let mut references: HashMap<(i64, i64), Reference> = HashMap::new();
    for (record, entry) in accuracy.iter().enumerate() {
        let data = floats(accuracy_log, record, entry.qsl_idx, &entry.data)?;
        let malformed = |message: String| ComplianceError::Record {
            path: accuracy_log.to_path_buf(),
            record,
            qsl_idx: entry.qsl_idx,
            message,
        };
        let candidates = match data.last() {
            Some(&last) if last >= 0.0 => last as usize,
            _ => return Err(malformed("no candidate count at its end".into())),
        };
        if data.len() != 3 + candidates * 3 {
            return Err(malformed(format!(
                "{} float32 values, where [ts_idx, query_idx, {candidates} predictions, labels \
                 and weights, candidate count] makes {}",
                data.len(),
                3 + candidates * 3
            )));
        }
        let predictions = &data[2..2 + candidates];
        let labels = data[2 + candidates..2 + 2 * candidates].to_vec();
        let weights = data[2 + 2 * candidates..2 + 3 * candidates].to_vec();
        let ne = normalized_entropy(predictions, &labels, &weights);
        // As a Python dict: a later record of the same pair replaces an earlier one.
        references.insert(
            (data[0] as i64, data[1] as i64),
            Reference {
                ne,
                labels,
                weights,
            },
        );
    }
    let mut text = String::from(
        "Verifying accuracy. This might take a while...\nReading accuracy mode results...\n\
         Reading performance mode results...\n",
    );
    let (mut matched, mut unmatched, mut mismatched) = (0usize, 0usize, 0usize);
    for (record, entry) in compliance.iter().enumerate() {
        let data = floats(compliance_log, record, entry.qsl_idx, &entry.data)?;
        if data.len() < 2 {
            return Err(ComplianceError::Record {
                path: compliance_log.to_path_buf(),
                record,
                qsl_idx: entry.qsl_idx,
                message: format!(
                    "{} float32 values: a response starts with ts_idx and query_idx",
                    data.len()
                ),
            });
        }
        let key = (data[0] as i64, data[1] as i64);
        let Some(reference) = references.get(&key) else {
            unmatched += 1;
            continue;
        };
        matched += 1;
        let predictions = &data[2..];
        if predictions.len() != reference.labels.len() {
            // The script stops on numpy's shape error here; a verdict says more.
            mismatched += 1;
            let _ = writeln!(
                text,
                "  NE mismatch at ({}, {}): {} predictions for {} candidates",
                key.0,
                key.1,
                predictions.len(),
                reference.labels.len()
            );
            continue;
        }
        let ne = normalized_entropy(predictions, &reference.labels, &reference.weights);
        if reference.ne == 0.0 && ne == 0.0 {
            continue;
        }
        if reference.ne == 0.0 || ne == 0.0 {
            mismatched += 1;
            let _ = writeln!(
                text,
                "  NE mismatch at ({}, {}): acc_ne={}, perf_ne={}",
                key.0,
                key.1,
                python_f32(reference.ne),
                python_f32(ne)
            );
            continue;
        }
        // In float32, as numpy compares a float32 with a Python float.
        let difference = (ne - reference.ne).abs() / reference.ne.abs();
        if difference > tolerance as f32 {
            mismatched += 1;
            let _ = writeln!(
                text,
                "  NE mismatch at ({}, {}): acc_ne={:.6}, perf_ne={:.6}, diff={:.4}%",
                key.0,
                key.1,
                f64::from(reference.ne),
                f64::from(ne),
                f64::from(difference * 100.0)
            );
        }
    }
    let passed = mismatched == 0 && matched > 0 && unmatched == 0;
    let _ = write!(
        text,
        "\nnum_acc_log_entries = {}\nnum_perf_log_entries = {}\nnum_matched = {matched}\n\
         num_unmatched = {unmatched}\nnum_ne_mismatch = {mismatched}\ntolerance = {:.2}%\n\n{}\n\
         TEST08 verification complete\n",
        accuracy.len(),
        compliance.len(),
        tolerance * 100.0,
        if passed { "TEST PASS" } else { "TEST FAIL" }
    );
    Ok(Verification::new(text, passed))
}

/// A response's float32 values (little-endian, as numpy's `frombuffer`).
fn floats(
    path: &Path,
    record: usize,
    qsl_idx: u64,
    hex: &str,
) -> Result<Vec<f32>, ComplianceError> {
    let error = |message: String| ComplianceError::Record {
        path: path.to_path_buf(),
        record,
        qsl_idx,
        message,
    };
    let bytes = decode_hex(hex).map_err(error)?;
    if !bytes.len().is_multiple_of(4) {
        return Err(error(format!(
            "{} bytes: not a whole number of float32 values",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|chunk| f32::from_le_bytes(chunk.try_into().expect("4 bytes")))
        .collect())
}

/// The script's `compute_ne` in numpy's float32 arithmetic: the weighted cross entropy over
/// the entropy of the weighted mean label, predictions and labels clipped to
/// [1e-7, 1 - 1e-7]; 0 without weight. (numpy's vectorised log may round a last bit
/// differently from this one: the printed values can differ in their last digits, a verdict
/// only at the tolerance's very edge.)
fn normalized_entropy(predictions: &[f32], labels: &[f32], weights: &[f32]) -> f32 {
    let clip = |value: f32| value.clamp(EPS_F32, ONE_MINUS_EPS_F32);
    let total_weight = numpy_sum(weights);
    if total_weight == 0.0 {
        return 0.0;
    }
    let labels: Vec<f32> = labels.iter().copied().map(clip).collect();
    let terms: Vec<f32> = predictions
        .iter()
        .zip(&labels)
        .zip(weights)
        .map(|((&prediction, &label), &weight)| {
            let p = clip(prediction);
            weight * (label * p.ln() + (1.0 - label) * (1.0 - p).ln())
        })
        .collect();
    let cross_entropy = -numpy_sum(&terms);
    let weighted: Vec<f32> = weights.iter().zip(&labels).map(|(w, l)| w * l).collect();
    let p = clip(numpy_sum(&weighted) / total_weight);
    let baseline = -p * p.ln() - (1.0 - p) * (1.0 - p).ln();
    if baseline == 0.0 {
        return 0.0;
    }
    cross_entropy / (baseline * total_weight)
}

/// `np.sum` of a float32 array: numpy's pairwise summation (blocks of up to 128 summed in
/// eight interleaved lanes, longer arrays halved at a multiple of 8), in float32, added to 0.
fn numpy_sum(values: &[f32]) -> f32 {
    0.0 + pairwise_sum(values)
}

fn pairwise_sum(values: &[f32]) -> f32 {
    let n = values.len();
    if n < 8 {
        return values.iter().fold(0.0, |sum, &v| sum + v);
    }
    if n <= 128 {
        let mut lanes = [0f32; 8];
        lanes.copy_from_slice(&values[..8]);
        let whole = n - n % 8;
        for block in values[8..whole].chunks_exact(8) {
            for (lane, &v) in lanes.iter_mut().zip(block) {
                *lane += v;
            }
        }
        let r = lanes;
        let sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        return values[whole..].iter().fold(sum, |sum, &v| sum + v);
    }
    let half = n / 2 - (n / 2) % 8;
    pairwise_sum(&values[..half]) + pairwise_sum(&values[half..])
}

/// A float32 as Python prints a numpy float32 (`str`): the shortest digits, `.0` on a whole
/// number.
fn python_f32(value: f32) -> String {
    let text = value.to_string();
    if value.is_finite() && !text.contains(['.', 'e']) {
        format!("{text}.0")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(values: &[f32]) -> String {
        values
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    fn log(path: &Path, rows: &[Vec<f32>]) {
        let records: Vec<String> = rows
            .iter()
            .enumerate()
            .map(|(i, row)| {
                format!(
                    "{{ \"seq_id\" : {i}, \"qsl_idx\" : {i}, \"data\" : \"{}\" }}",
                    hex(row)
                )
            })
            .collect();
        std::fs::write(path, format!("[\n{}\n]\n", records.join(",\n"))).unwrap();
    }

    /// Values of the official script's `compute_ne` and numpy's `np.sum` (numpy 2.4.6), the
    /// inputs computed in Python floats and stored as float32.
    #[test]
    fn normalized_entropy_and_sums_agree_with_numpy() {
        let values: Vec<f32> = (0..300)
            .map(|i| (((i * 37) % 101) as f64 / 7.0 - 6.5) as f32)
            .collect();
        // 300 values: np.sum gives 188.2857; the exact sum rounds to 188.28572.
        assert_eq!(numpy_sum(&values), 188.2857);
        assert_eq!(numpy_sum(&values[..13]), -4.071429);
        assert_eq!(numpy_sum(&values[..5]), -8.5);
        let close = |ne: f32, numpy: f32| (ne - numpy).abs() <= 2.0 * f32::EPSILON * numpy;
        let ne = normalized_entropy(&[0.8, 0.3], &[1.0, 0.0], &[1.0, 1.0]);
        assert!(close(ne, 0.4182508), "{ne}");
        // One positive label: the mean label clips to 1 - 1e-7, a tiny baseline entropy.
        let ne = normalized_entropy(&[0.5], &[1.0], &[1.0]);
        assert!(close(ne, 343194.9), "{ne}");
        let n = 40;
        let predictions: Vec<f32> = (0..n)
            .map(|i| (0.05 + 0.9 * ((i * 7) % 17) as f64 / 16.0) as f32)
            .collect();
        let labels: Vec<f32> = (0..n)
            .map(|i: usize| f32::from(u8::from(i.is_multiple_of(3))))
            .collect();
        let weights: Vec<f32> = (0..n)
            .map(|i| (0.5 + (i % 5) as f64 / 4.0) as f32)
            .collect();
        let ne = normalized_entropy(&predictions, &labels, &weights);
        assert!(close(ne, 1.4627591), "{ne}");
        assert_eq!(normalized_entropy(&[0.5], &[1.0], &[0.0]), 0.0);
        assert_eq!(python_f32(0.0), "0.0");
        assert_eq!(python_f32(0.4182508), "0.4182508");
    }

    #[test]
    fn responses_are_matched_by_their_pair_and_compared_within_the_tolerance() {
        let dir = std::env::temp_dir().join(format!("test08-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (accuracy, compliance) = (dir.join("accuracy.json"), dir.join("compliance.json"));
        let row = |ts: f32, q: f32, predictions: [f32; 2]| {
            vec![
                ts,
                q,
                predictions[0],
                predictions[1],
                1.0,
                0.0,
                1.0,
                1.0,
                2.0,
            ]
        };
        log(
            &accuracy,
            &[row(0.0, 0.0, [0.8, 0.3]), row(0.0, 1.0, [0.6, 0.4])],
        );
        // Same predictions, in another order: a pass.
        log(
            &compliance,
            &[vec![0.0, 1.0, 0.6, 0.4], vec![0.0, 0.0, 0.8, 0.3]],
        );
        let verification = verify_test08(&accuracy, &compliance, TEST08_NE_TOLERANCE).unwrap();
        assert!(verification.passed, "{}", verification.text);
        assert!(
            verification
                .text
                .contains("num_matched = 2\nnum_unmatched = 0\n")
                && verification
                    .text
                    .contains("tolerance = 0.10%\n\nTEST PASS\n"),
            "{}",
            verification.text
        );
        // A prediction moved by 1 %, a pair the accuracy run never saw, a short response.
        log(
            &compliance,
            &[
                vec![0.0, 1.0, 0.606, 0.4],
                vec![5.0, 0.0, 0.8, 0.3],
                vec![0.0, 0.0, 0.8],
            ],
        );
        let verification = verify_test08(&accuracy, &compliance, TEST08_NE_TOLERANCE).unwrap();
        assert!(!verification.passed);
        let text = &verification.text;
        assert!(text.contains("  NE mismatch at (0, 1): acc_ne="), "{text}");
        assert!(
            text.contains("  NE mismatch at (0, 0): 1 predictions for 2 candidates\n"),
            "{text}"
        );
        assert!(
            text.contains("num_matched = 2\nnum_unmatched = 1\nnum_ne_mismatch = 2\n")
                && text.ends_with("TEST FAIL\nTEST08 verification complete\n"),
            "{text}"
        );
        // The same move passes a 10 % tolerance (but the unmatched pair still fails).
        let loose = verify_test08(&accuracy, &compliance, 0.1).unwrap();
        assert!(
            loose.text.contains("num_ne_mismatch = 1\n"),
            "{}",
            loose.text
        );
        // A reference row whose length does not fit its candidate count is named.
        log(&accuracy, &[vec![0.0, 0.0, 0.5, 1.0, 2.0]]);
        let error = verify_test08(&accuracy, &compliance, TEST08_NE_TOLERANCE)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("accuracy.json: record 0 (qsl_idx 0): 5 float32 values"),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
