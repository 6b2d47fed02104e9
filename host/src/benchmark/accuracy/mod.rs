//! Scoring a run: reads `mlperf_log_accuracy.json` and computes the benchmark's metric, as
//! MLPerf's accuracy scripts do (each sample counted once, by `qsl_idx`), and writes
//! `accuracy.txt`. One file per metric: top-1 classification (`top1.rs`) and cosine similarity
//! to reference embeddings (`cosine.rs`).

mod cosine;
mod top1;

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use cosine::Cosine;
pub use top1::Top1;

use super::definition::{Accuracy, Benchmark};

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

/// A run's score under its benchmark's metric.
#[derive(Debug, Clone, PartialEq)]
pub enum Score {
    Top1(Top1),
    Cosine(Cosine),
}

impl Score {
    /// `accuracy.txt`: the line MLPerf's scripts print, then the comparison with the reference.
    pub fn report(&self) -> String {
        match self {
            Score::Top1(score) => score.report(),
            Score::Cosine(score) => score.report(),
        }
    }
}

/// One response of the accuracy log.
#[derive(Deserialize)]
struct Record {
    qsl_idx: usize,
    data: String,
}

/// The accuracy log's records, each sample's first one decoded (later ones are counted as
/// duplicates): calls `each(qsl_idx, bytes)` and returns the number of duplicates.
fn for_each_response(
    log: &Path,
    samples: usize,
    what: &str,
    mut each: impl FnMut(usize, &[u8]) -> Result<(), String>,
) -> Result<usize, AccuracyError> {
    let text = std::fs::read_to_string(log).map_err(|e| file_error(log, e.to_string()))?;
    let records: Vec<Record> = serde_json::from_str(&text)
        .map_err(|e| file_error(log, format!("not an MLPerf accuracy log: {e}")))?;
    let mut seen = vec![false; samples];
    let mut duplicates = 0;
    for (number, record) in records.iter().enumerate() {
        let record_error = |message: String| AccuracyError::Record {
            path: log.to_path_buf(),
            record: number,
            qsl_idx: record.qsl_idx,
            message,
        };
        let Some(seen) = seen.get_mut(record.qsl_idx) else {
            return Err(record_error(format!("beyond the {samples} {what}")));
        };
        if std::mem::replace(seen, true) {
            duplicates += 1;
            continue;
        }
        let bytes = decode_hex(&record.data).map_err(record_error)?;
        each(record.qsl_idx, &bytes).map_err(record_error)?;
    }
    Ok(duplicates)
}

/// Scores the accuracy log at `log` for `benchmark`.
pub fn evaluate(benchmark: &Benchmark, log: &Path) -> Result<Score, AccuracyError> {
    match &benchmark.accuracy {
        Accuracy::Top1 {
            labels,
            output,
            reference,
            threshold,
        } => {
            top1::evaluate(log, labels, *output, reference.as_deref(), *threshold).map(Score::Top1)
        }
        Accuracy::Cosine {
            embeddings,
            reference,
            threshold,
        } => cosine::evaluate(log, embeddings, reference.as_deref(), *threshold).map(Score::Cosine),
        Accuracy::Unavailable { why } => Err(AccuracyError::Unavailable {
            benchmark: benchmark.name.clone(),
            why: why.clone(),
        }),
    }
}

/// Scores the log and writes `accuracy.txt` beside it; returns the score.
pub fn evaluate_into(benchmark: &Benchmark, log: &Path) -> Result<(Score, PathBuf), AccuracyError> {
    let score = evaluate(benchmark, log)?;
    let out = log.with_file_name("accuracy.txt");
    std::fs::write(&out, score.report()).map_err(|e| file_error(&out, e.to_string()))?;
    Ok((score, out))
}

fn file_error(path: &Path, message: String) -> AccuracyError {
    AccuracyError::File {
        path: path.to_path_buf(),
        message,
    }
}

/// Hex text (either case) to bytes.
pub fn decode_hex(text: &str) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err(format!("odd number of hex digits ({})", text.len()));
    }
    text.as_bytes()
        .chunks_exact(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|digits| u8::from_str_radix(digits, 16).ok())
                .ok_or_else(|| format!("not hex: {:?}", String::from_utf8_lossy(pair)))
        })
        .collect()
}

fn read_reference_json(path: &Path) -> Result<(serde_json::Value, String), AccuracyError> {
    let text = std::fs::read_to_string(path).map_err(|e| file_error(path, e.to_string()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| file_error(path, format!("invalid JSON: {e}")))?;
    let version = json
        .get("onnxruntime_version")
        .and_then(|v| v.as_str())
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    let source = format!("ONNX Runtime{version} from Python on the same model");
    Ok((json, source))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_decodes_or_says_why_not() {
        assert_eq!(decode_hex("00FFa0"), Ok(vec![0, 255, 160]));
        assert!(decode_hex("0G").is_err());
        assert!(decode_hex("abc").is_err());
    }
}
