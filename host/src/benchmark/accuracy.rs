//! Scoring a run: reads `mlperf_log_accuracy.json` and computes the benchmark's metric, as
//! MLPerf's accuracy scripts do (each sample counted once, by `qsl_idx`), and writes
//! `accuracy.txt`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::definition::{Accuracy, Benchmark, OutputEncoding};
use crate::samples::{NpySource, SampleSource};

#[derive(Debug, thiserror::Error)]
pub enum AccuracyError {
    #[error("{}: {message}", path.display())]
    File { path: PathBuf, message: String },
    #[error("benchmark {benchmark} has no accuracy metric: {why}")]
    Unavailable { benchmark: String, why: String },
    #[error("{}: record {record} (qsl_idx {qsl_idx}): {message}", path.display())]
    Record {
        path: PathBuf,
        record: usize,
        qsl_idx: usize,
        message: String,
    },
}

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

#[derive(Deserialize)]
struct Record {
    qsl_idx: usize,
    data: String,
}

/// Scores the accuracy log at `log` for `benchmark`.
pub fn evaluate(benchmark: &Benchmark, log: &Path) -> Result<Top1, AccuracyError> {
    let (labels_path, output, reference_path, threshold) = match &benchmark.accuracy {
        Accuracy::Top1 {
            labels,
            output,
            reference,
            threshold,
        } => (labels, *output, reference, *threshold),
        Accuracy::Unavailable { why } => {
            return Err(AccuracyError::Unavailable {
                benchmark: benchmark.name.clone(),
                why: why.clone(),
            })
        }
    };
    let labels = read_labels(labels_path)?;
    let file_error = |path: &Path, message: String| AccuracyError::File {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(log).map_err(|e| file_error(log, e.to_string()))?;
    let records: Vec<Record> = serde_json::from_str(&text)
        .map_err(|e| file_error(log, format!("not an MLPerf accuracy log: {e}")))?;
    let mut seen = vec![false; labels.len()];
    let mut score = Top1 {
        good: 0,
        total: 0,
        duplicates: 0,
        reference: None,
        threshold,
    };
    for (number, record) in records.iter().enumerate() {
        let record_error = |message: String| AccuracyError::Record {
            path: log.to_path_buf(),
            record: number,
            qsl_idx: record.qsl_idx,
            message,
        };
        let Some(label) = labels.get(record.qsl_idx) else {
            return Err(record_error(format!(
                "beyond the {} labels of {}",
                labels.len(),
                labels_path.display()
            )));
        };
        if std::mem::replace(&mut seen[record.qsl_idx], true) {
            score.duplicates += 1;
            continue;
        }
        let bytes = decode_hex(&record.data).map_err(record_error)?;
        let class = predicted_class(&bytes, output).map_err(record_error)?;
        score.total += 1;
        score.good += usize::from(class == *label);
    }
    if let Some(path) = reference_path {
        score.reference = Some(read_reference(path)?);
    }
    Ok(score)
}

/// Scores the log and writes `accuracy.txt` beside it; returns the score.
pub fn evaluate_into(benchmark: &Benchmark, log: &Path) -> Result<(Top1, PathBuf), AccuracyError> {
    let score = evaluate(benchmark, log)?;
    let out = log.with_file_name("accuracy.txt");
    std::fs::write(&out, score.report()).map_err(|e| AccuracyError::File {
        path: out.clone(),
        message: e.to_string(),
    })?;
    Ok((score, out))
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

fn decode_hex(text: &str) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err("odd number of hex digits in data".into());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&text[i..i + 2], 16)
                .map_err(|_| format!("data is not hex: {:?}", &text[i..i + 2]))
        })
        .collect()
}

/// Integer labels from a `.npy` file of one integer per sample.
fn read_labels(path: &Path) -> Result<Vec<i64>, AccuracyError> {
    let error = |message: String| AccuracyError::File {
        path: path.to_path_buf(),
        message,
    };
    let mut source = NpySource::open(path).map_err(|e| error(e.to_string()))?;
    let dtype = source.layout().dtype;
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
    let error = |message: String| AccuracyError::File {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| error(format!("invalid JSON: {e}")))?;
    for (key, source) in [
        ("onnxruntime_top1", "ONNX Runtime's own result"),
        ("top1", "reference"),
    ] {
        if let Some(value) = json.get(key).and_then(serde_json::Value::as_f64) {
            let version = json
                .get("onnxruntime_version")
                .and_then(|v| v.as_str())
                .map(|v| format!(" {v}"))
                .unwrap_or_default();
            let source = if key == "onnxruntime_top1" {
                format!("ONNX Runtime{version} from Python on the same model")
            } else {
                source.to_string()
            };
            return Ok((value, source));
        }
    }
    Err(error(
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
        assert_eq!(decode_hex("00FFa0"), Ok(vec![0, 255, 160]));
        assert!(decode_hex("0G").is_err());
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
