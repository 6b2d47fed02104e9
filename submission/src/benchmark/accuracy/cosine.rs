//! Cosine similarity of each response (float32 embedding) to the sample's reference embedding,
//! for sentence encoders: the mean over the samples must reach the threshold.

use std::path::Path;

use super::{file_error, for_each_response, read_reference_json, AccuracyError};
use crate::npy::{Element, NpyFile};

/// A cosine-similarity score.
#[derive(Debug, Clone, PartialEq)]
pub struct Cosine {
    /// Mean cosine over the samples scored.
    pub mean: f64,
    /// The lowest cosine and its sample.
    pub min: (f64, usize),
    /// Samples whose cosine is under the threshold.
    pub below: usize,
    pub total: usize,
    /// Records for a sample already counted (ignored).
    pub duplicates: usize,
    /// Mean and min cosine of the reference run (ONNX Runtime from Python), and its source.
    pub reference: Option<(f64, f64, String)>,
    /// The mean cosine a run must reach.
    pub threshold: f64,
}

impl Cosine {
    pub fn passes(&self) -> bool {
        self.total > 0 && self.mean >= self.threshold - 1e-12
    }

    /// `accuracy.txt`: the scores, the reference run's and the verdict.
    pub fn report(&self) -> String {
        let mut text = format!(
            "mean_cosine={:.6}, min_cosine={:.6} (qsl_idx {}), below_threshold={}, total={}\n",
            self.mean, self.min.0, self.min.1, self.below, self.total
        );
        if self.duplicates > 0 {
            text.push_str(&format!(
                "duplicates={} (records for samples already counted, ignored)\n",
                self.duplicates
            ));
        }
        if let Some((mean, min, source)) = &self.reference {
            text.push_str(&format!(
                "reference ({source}): mean_cosine={mean:.6}, min_cosine={min:.6}\n"
            ));
        }
        text.push_str(&format!(
            "mean cosine to the reference embeddings >= {}: {}\n",
            self.threshold,
            if self.passes() { "PASS" } else { "FAIL" }
        ));
        text
    }
}

/// Scores the accuracy log at `log` against the rows of `embeddings` (float32 [N, D]).
pub(super) fn evaluate(
    log: &Path,
    embeddings: &Path,
    reference: Option<&Path>,
    threshold: f64,
) -> Result<Cosine, AccuracyError> {
    let rows = read_embeddings(embeddings)?;
    let mut score = Cosine {
        mean: 0.0,
        min: (f64::INFINITY, 0),
        below: 0,
        total: 0,
        duplicates: 0,
        reference: None,
        threshold,
    };
    let mut sum = 0.0;
    let what = format!("reference embeddings of {}", embeddings.display());
    score.duplicates = for_each_response(log, rows.len(), &what, |index, bytes| {
        let cosine = cosine(bytes, &rows[index])?;
        sum += cosine;
        score.total += 1;
        score.below += usize::from(cosine < threshold);
        if cosine < score.min.0 {
            score.min = (cosine, index);
        }
        Ok(())
    })?;
    if score.total > 0 {
        score.mean = sum / score.total as f64;
    } else {
        score.min.0 = 0.0;
    }
    if let Some(path) = reference {
        score.reference = Some(read_reference(path)?);
    }
    Ok(score)
}

/// The cosine of a response's little-endian f32s with the reference row.
fn cosine(bytes: &[u8], reference: &[f32]) -> Result<f64, String> {
    if bytes.len() != reference.len() * 4 {
        return Err(format!(
            "{} bytes, expected a float32 embedding of {} values ({} bytes)",
            bytes.len(),
            reference.len(),
            reference.len() * 4
        ));
    }
    let (mut dot, mut norm, mut norm_reference) = (0.0f64, 0.0f64, 0.0f64);
    for (chunk, &r) in bytes.chunks_exact(4).zip(reference) {
        let value = f64::from(f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]));
        let r = f64::from(r);
        dot += value * r;
        norm += value * value;
        norm_reference += r * r;
    }
    let scale = (norm * norm_reference).sqrt();
    if !scale.is_normal() || !dot.is_finite() {
        // A zero or non-finite embedding is no match for anything.
        return Ok(0.0);
    }
    Ok(dot / scale)
}

/// The reference embeddings: a float32 `.npy` of one vector per sample.
fn read_embeddings(path: &Path) -> Result<Vec<Vec<f32>>, AccuracyError> {
    let error = |message: String| file_error(path, message);
    let mut source = NpyFile::open(path).map_err(|e| error(e.to_string()))?;
    let layout = source.layout();
    if layout.element != Element::F32 || layout.shape.len() != 1 {
        return Err(error(format!(
            "reference embeddings must be float32 [samples, dimensions]; found {:?} with sample \
             shape {:?}",
            layout.element, layout.shape
        )));
    }
    let mut bytes = Vec::new();
    (0..source.len())
        .map(|index| {
            source
                .read(index, &mut bytes)
                .map_err(|e| error(e.to_string()))?;
            Ok(bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect())
        })
        .collect()
}

/// The reference run's `onnxruntime_mean_cosine` and `onnxruntime_min_cosine`.
fn read_reference(path: &Path) -> Result<(f64, f64, String), AccuracyError> {
    let (json, source) = read_reference_json(path)?;
    let figure = |key: &str| json.get(key).and_then(|v| v.as_f64());
    match (
        figure("onnxruntime_mean_cosine"),
        figure("onnxruntime_min_cosine"),
    ) {
        (Some(mean), Some(min)) => Ok((mean, min, source)),
        _ => Err(file_error(
            path,
            "no reference figures (expected onnxruntime_mean_cosine and onnxruntime_min_cosine)"
                .into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn cosine_is_scale_free_and_checks_the_length() {
        let reference = [0.6f32, 0.8, 0.0];
        let same = cosine(&le(&[3.0, 4.0, 0.0]), &reference).unwrap();
        assert!((same - 1.0).abs() < 1e-12, "{same}");
        let orthogonal = cosine(&le(&[0.0, 0.0, 2.0]), &reference).unwrap();
        assert!(orthogonal.abs() < 1e-12);
        let opposite = cosine(&le(&[-0.6, -0.8, 0.0]), &reference).unwrap();
        assert!((opposite + 1.0).abs() < 1e-7);
        assert_eq!(cosine(&le(&[0.0; 3]), &reference), Ok(0.0));
        assert_eq!(cosine(&le(&[f32::NAN, 1.0, 0.0]), &reference), Ok(0.0));
        let short = cosine(&le(&[1.0, 2.0]), &reference).unwrap_err();
        assert!(
            short.contains("8 bytes") && short.contains("3 values"),
            "{short}"
        );
    }

    #[test]
    fn the_report_gives_the_scores_the_reference_and_the_verdict() {
        let score = Cosine {
            mean: 0.999_55,
            min: (0.999_16, 17),
            below: 0,
            total: 456,
            duplicates: 0,
            reference: Some((0.999_55, 0.999_16, "ONNX Runtime".into())),
            threshold: 0.99,
        };
        let report = score.report();
        assert!(
            report.starts_with(
                "mean_cosine=0.999550, min_cosine=0.999160 (qsl_idx 17), below_threshold=0, \
                 total=456\n"
            ),
            "{report}"
        );
        assert!(report.contains("reference (ONNX Runtime): mean_cosine=0.999550"));
        assert!(report.ends_with(">= 0.99: PASS\n"), "{report}");
        let low = Cosine {
            mean: 0.98,
            ..score.clone()
        };
        assert!(!low.passes());
        assert!(low.report().contains("FAIL"));
        let empty = Cosine { total: 0, ..score };
        assert!(!empty.passes());
    }
}
