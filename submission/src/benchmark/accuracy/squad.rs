//! BERT's exact match and F1 on SQuAD v1.1 as `accuracy-squad.py` and `evaluate_v1.1.py`
//! score them (`mlperf-squad`): each logged feature's float32 `[384, 2]` start and end
//! logits (a record for a feature logged twice replaces the earlier one, as the script's
//! dictionary of results does), the n-best answer of each question over its features, and
//! the script's `{"exact_match": …, "f1": …}` line.

use std::path::Path;

use mlperf_squad::evaluate::evaluate as evaluate_predictions;
use mlperf_squad::log::{decode_logits, LogitDtype};
use mlperf_squad::predict::{predictions, PredictSettings};

use super::{for_each_logged, AccuracyError};
use crate::datasets::squad::SquadSet;
use crate::logs::accuracy::decode_hex;

/// A run's SQuAD scores and what they were computed over.
#[derive(Debug, Clone, PartialEq)]
pub struct SquadF1 {
    /// Percentages, as the script prints them.
    pub exact_match: f64,
    pub f1: f64,
    /// The script's line, `{"exact_match": 83.6, "f1": 90.9}`.
    pub line: String,
    /// The questions scored (every one of the dev set: a question without an answer counts
    /// as wrong).
    pub questions: usize,
    /// The features the log answered, and its records for features answered before.
    pub features_logged: usize,
    pub duplicates: usize,
    /// `predictions.json` as the script writes it.
    pub predictions_json: String,
}

/// Scores `log` against `set`.
pub(super) fn evaluate(log: &Path, set: &SquadSet) -> Result<SquadF1, AccuracyError> {
    let width = set.settings.max_seq_length;
    let what = format!("features of {}", set.path.display());
    let mut logits: Vec<Option<Vec<f64>>> = vec![None; set.len()];
    // Every record decoded, a later one replacing an earlier one of its feature.
    let duplicates = for_each_logged(log, set.len(), &what, |index, record, _| {
        let bytes = decode_hex(&record.data)?;
        if bytes.is_empty() || bytes.len() % 8 != 0 || bytes.len() > 8 * width {
            return Err(format!(
                "{} bytes: a response is float32 [N, 2] start and end logits, N at most {width} ({} bytes)",
                bytes.len(),
                8 * width
            ));
        }
        let values =
            decode_logits(&bytes, LogitDtype::Float32, false).map_err(|e| e.to_string())?;
        logits[index] = Some(values);
        Ok(())
    })?;
    let features_logged = logits.iter().filter(|l| l.is_some()).count();
    let answers = predictions(
        &set.dataset,
        &set.features,
        &set.tokenizer,
        &|index| logits.get(index).cloned().flatten(),
        &PredictSettings::default(),
    );
    let score = evaluate_predictions(&set.dataset, &answers);
    Ok(SquadF1 {
        exact_match: score.exact_match,
        f1: score.f1,
        line: score.line(),
        questions: score.questions,
        features_logged,
        duplicates,
        predictions_json: answers.to_json(),
    })
}
