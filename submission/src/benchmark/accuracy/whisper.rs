//! whisper's word error rate as `accuracy_eval.py` scores it (`mlperf-whisper`): every record
//! of the log counts (the script keeps no set of samples seen: a sample logged twice is scored
//! twice), its int64 label indices turned back into text against the manifest's transcript of
//! its `qsl_idx`, both normalised by openai-whisper's EnglishTextNormalizer, and the word
//! distances of `compute_wer_with_concatenation` summed over the reference words; the line
//! `Word Error Rate: X%, accuracy=Y%` with Python's float text.

use std::path::Path;

use mlperf_whisper::labels::text_of_labels;
use mlperf_whisper::manifest::Manifest;
use mlperf_whisper::normalizer::EnglishTextNormalizer;
use mlperf_whisper::wer::WordErrors;

use super::{for_each_logged, AccuracyError};
use crate::compliance::python_float_repr;
use crate::logs::accuracy::decode_hex;

/// A run's word error rate and what it was computed over.
#[derive(Debug, Clone, PartialEq)]
pub struct WhisperWer {
    /// Fractions, as the script computes them before printing percentages.
    pub word_error_rate: f64,
    pub errors: WordErrors,
    /// The records scored (every one) and those for a sample scored before.
    pub answers: usize,
    pub repeats: usize,
}

impl WhisperWer {
    /// `accuracy` as the checker reads it, percent.
    pub fn accuracy(&self) -> f64 {
        (1.0 - self.word_error_rate) * 100.0
    }

    /// The script's line.
    pub fn line(&self) -> String {
        format!(
            "Word Error Rate: {}%, accuracy={}%",
            python_float_repr(self.word_error_rate * 100.0),
            python_float_repr(self.accuracy())
        )
    }
}

/// Scores `log` against `manifest`.
pub(super) fn evaluate(
    log: &Path,
    manifest: &Manifest,
    normalizer: &EnglishTextNormalizer,
) -> Result<WhisperWer, AccuracyError> {
    let what = format!("clips of {}", manifest.path.display());
    // Each transcript normalised once: a sample may be logged more than once.
    let mut references: Vec<Option<String>> = vec![None; manifest.len()];
    let mut errors = WordErrors::default();
    let mut answers = 0;
    let repeats = for_each_logged(log, manifest.len(), &what, |index, record, _| {
        let bytes = decode_hex(&record.data)?;
        if !bytes.len().is_multiple_of(8) {
            return Err(format!(
                "{} bytes: an answer is int64 label indices (8 bytes each); the reference's int32 is array('l'), 8 bytes on Linux too",
                bytes.len()
            ));
        }
        let indices: Vec<i64> = bytes
            .chunks_exact(8)
            .map(|chunk| i64::from_le_bytes(chunk.try_into().expect("8 bytes")))
            .collect();
        let hypothesis = text_of_labels(&indices).map_err(|e| e.to_string())?;
        let hypothesis = normalizer
            .normalize(&hypothesis)
            .map_err(|e| e.to_string())?;
        let reference = match &references[index] {
            Some(reference) => reference.clone(),
            None => {
                let transcript = &manifest.clips[index].transcript;
                let normalized = normalizer
                    .normalize(transcript)
                    .map_err(|e| e.to_string())?;
                references[index] = Some(normalized.clone());
                normalized
            }
        };
        errors.add(&hypothesis, &reference);
        answers += 1;
        Ok(())
    })?;
    let word_error_rate = errors.rate().ok_or_else(|| AccuracyError::File {
        path: log.to_path_buf(),
        message: "no logged answer has a reference word to count errors against (the script divides by zero)".into(),
    })?;
    Ok(WhisperWer {
        word_error_rate,
        errors,
        answers,
        repeats,
    })
}
