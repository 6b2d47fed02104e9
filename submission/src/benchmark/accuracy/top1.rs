//! Top-1 classification: each response's class (an int64 label, or the argmax of float32
//! scores) against integer labels, as MLPerf's classification script counts it.

use std::path::Path;

use super::{file_error, for_each_response, read_reference_json, AccuracyError};
use crate::benchmark::definition::OutputEncoding;
use crate::npy::NpyFile;

/// A top-1 score.
#[derive(Debug, Clone, PartialEq)]
pub struct Top1 {
    pub good: usize,
    pub total: usize,
    /// Records for a sample already counted (ignored).
    pub duplicates: usize,
    /// The reference top-1 and where it comes from, when the benchmark has one.
    pub reference: Option<(f64, String)>,
    pub threshold: f64,
}

impl Top1 {
    pub fn accuracy(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.good as f64 / self.total as f64
        }
    }

    /// Whether the run reaches `threshold` of the reference (None without a reference).
    pub fn meets_reference(&self) -> Option<bool> {
        self.reference
            .as_ref()
            .map(|(reference, _)| self.accuracy() >= self.threshold * reference - 1e-12)
    }

    /// `accuracy.txt`: the line MLPerf's classification script prints, then the reference
    /// comparison.
    pub fn report(&self) -> String {
        let mut text = format!(
            "accuracy={:.3}%, good={}, total={}\n",
            100.0 * self.accuracy(),
            self.good,
            self.total
        );
        if self.duplicates > 0 {
            text.push_str(&format!(
                "duplicates={} (records for samples already counted, ignored)\n",
                self.duplicates
            ));
        }
        if let (Some((reference, source)), Some(met)) = (&self.reference, self.meets_reference()) {
            text.push_str(&format!(
                "reference={:.3}% ({source}); this run reaches {:.2}% of it: {} (>= {:.0}%)\n",
                100.0 * reference,
                100.0 * self.accuracy() / reference,
                if met { "PASS" } else { "FAIL" },
                100.0 * self.threshold
            ));
        }
        text
    }
}

/// Scores the accuracy log at `log` against `labels`.
pub(super) fn evaluate(
    log: &Path,
    labels_path: &Path,
    output: OutputEncoding,
    reference: Option<&Path>,
    threshold: f64,
) -> Result<Top1, AccuracyError> {
    let labels = read_labels(labels_path)?;
    let mut score = Top1 {
        good: 0,
        total: 0,
        duplicates: 0,
        reference: None,
        threshold,
    };
    let what = format!("labels of {}", labels_path.display());
    score.duplicates = for_each_response(log, labels.len(), &what, |index, bytes| {
        let class = predicted_class(bytes, output)?;
        score.total += 1;
        score.good += usize::from(class == labels[index]);
        Ok(())
    })?;
    if let Some(path) = reference {
        score.reference = Some(read_reference(path)?);
    }
    Ok(score)
}

fn predicted_class(bytes: &[u8], output: OutputEncoding) -> Result<i64, String> {
    match output {
        OutputEncoding::Int64 => {
            let array: [u8; 8] = bytes
                .get(..8)
                .and_then(|b| b.try_into().ok())
                .ok_or_else(|| format!("{} bytes, expected an 8-byte int64 label", bytes.len()))?;
            Ok(i64::from_le_bytes(array))
        }
        OutputEncoding::Float32 => {
            if bytes.is_empty() || !bytes.len().is_multiple_of(4) {
                return Err(format!(
                    "{} bytes, expected float32 scores (a multiple of 4)",
                    bytes.len()
                ));
            }
            let best = bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .enumerate()
                .fold((0, f32::NEG_INFINITY), |best, (i, score)| {
                    if score > best.1 {
                        (i, score)
                    } else {
                        best
                    }
                });
            Ok(best.0 as i64)
        }
    }
}

/// Integer labels from a `.npy` file of one integer per sample.
fn read_labels(path: &Path) -> Result<Vec<i64>, AccuracyError> {
    let error = |message: String| file_error(path, message);
    let mut source = NpyFile::open(path).map_err(|e| error(e.to_string()))?;
    let dtype = source.layout().element;
    let mut labels = Vec::with_capacity(source.len());
    let mut bytes = Vec::new();
    for index in 0..source.len() {
        source
            .read(index, &mut bytes)
            .map_err(|e| error(e.to_string()))?;
        let label = match bytes.len() {
            8 => i64::from_le_bytes(bytes[..8].try_into().unwrap_or_default()),
            4 => i32::from_le_bytes(bytes[..4].try_into().unwrap_or_default()) as i64,
            1 => bytes[0] as i64,
            n => {
                return Err(error(format!(
                    "labels must be one integer per sample; found {n} bytes of {dtype:?} each"
                )))
            }
        };
        labels.push(label);
    }
    Ok(labels)
}

/// The reference top-1 from a `reference.json` (`onnxruntime_top1`, else `top1`).
fn read_reference(path: &Path) -> Result<(f64, String), AccuracyError> {
    let (json, onnxruntime) = read_reference_json(path)?;
    if let Some(value) = json.get("onnxruntime_top1").and_then(|v| v.as_f64()) {
        return Ok((value, onnxruntime));
    }
    if let Some(value) = json.get("top1").and_then(|v| v.as_f64()) {
        return Ok((value, "reference".into()));
    }
    Err(file_error(
        path,
        "no reference accuracy (expected onnxruntime_top1 or top1)".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_decode_from_labels_and_scores() {
        assert_eq!(
            predicted_class(&7i64.to_le_bytes(), OutputEncoding::Int64),
            Ok(7)
        );
        let scores: Vec<u8> = [0.1f32, 0.7, 0.2]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        assert_eq!(predicted_class(&scores, OutputEncoding::Float32), Ok(1));
        assert!(predicted_class(&[1, 2, 3], OutputEncoding::Int64).is_err());
        assert!(predicted_class(&[1, 2, 3], OutputEncoding::Float32).is_err());
    }

    #[test]
    fn the_report_has_the_official_line_and_the_reference_check() {
        let score = Top1 {
            good: 8806,
            total: 10000,
            duplicates: 0,
            reference: Some((0.8806, "ONNX Runtime".into())),
            threshold: 0.99,
        };
        let report = score.report();
        assert!(
            report.starts_with("accuracy=88.060%, good=8806, total=10000\n"),
            "{report}"
        );
        assert!(report.contains("100.00% of it: PASS (>= 99%)"), "{report}");
        let low = Top1 {
            good: 8000,
            ..score
        };
        assert_eq!(low.meets_reference(), Some(false));
        assert!(low.report().contains("FAIL"));
    }
}
