//! `write_predictions` of the reference's `accuracy-squad.py`: for each question, the
//! `n_best_size` best start and end positions of each of its logged features, the pairs that
//! lie in the span, start where the span has the most context, end after the start and hold
//! at most `max_answer_length` pieces, ranked by start + end logit (ties in order); the first
//! whose projected text is new is the answer ("empty" when none is).

use std::collections::HashMap;

use crate::dataset::SquadDataset;
use crate::features::Feature;
use crate::final_text::final_text;
use crate::pystr;
use crate::tokenize::BertTokenizer;

/// The script's settings (`write_predictions(…, 20, 30, True, …)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PredictSettings {
    pub n_best_size: usize,
    pub max_answer_length: usize,
}

impl Default for PredictSettings {
    fn default() -> Self {
        PredictSettings {
            n_best_size: 20,
            max_answer_length: 30,
        }
    }
}

/// Each question's answer, in the dev set's order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Predictions {
    pub answers: Vec<(String, String)>,
}

impl Predictions {
    /// The answer to question `qas_id` (the last one given, as the script's dictionary).
    pub fn get(&self, qas_id: &str) -> Option<&str> {
        self.answers
            .iter()
            .rev()
            .find(|(id, _)| id == qas_id)
            .map(|(_, text)| text.as_str())
    }

    /// `predictions.json` as the script writes it: `json.dumps(predictions, indent=4)` and a
    /// newline; a question id given twice keeps its first place and its last answer.
    pub fn to_json(&self) -> String {
        let mut order: Vec<&str> = Vec::new();
        let mut last: HashMap<&str, &str> = HashMap::new();
        for (id, text) in &self.answers {
            if last.insert(id.as_str(), text.as_str()).is_none() {
                order.push(id);
            }
        }
        let entries: Vec<(&str, &str)> = order.iter().map(|id| (*id, last[id])).collect();
        crate::pyjson::dumps_object_indent4(&entries) + "\n"
    }
}

/// A feature's logits, decoded ([`crate::log::decode_logits`]): start and end per position,
/// as float64 (the script pads to 384 with -10000 where a response is shorter).
pub type Logits<'a> = &'a dyn Fn(usize) -> Option<Vec<f64>>;

struct Candidate {
    feature: usize,
    start: usize,
    end: usize,
    start_logit: f64,
    end_logit: f64,
}

/// The answers the script writes, `logits(i)` giving feature `i`'s logged `[N, 2]` start
/// and end logits (None: not logged).
pub fn predictions(
    dataset: &SquadDataset,
    features: &[Feature],
    tokenizer: &BertTokenizer,
    logits: Logits<'_>,
    settings: &PredictSettings,
) -> Predictions {
    let vocab = tokenizer.vocab();
    let mut answers = Vec::with_capacity(dataset.examples.len());
    let mut by_example: Vec<Vec<usize>> = vec![Vec::new(); dataset.examples.len()];
    for (index, feature) in features.iter().enumerate() {
        if let Some(list) = by_example.get_mut(feature.example_index) {
            list.push(index);
        }
    }
    // The script's max_seq_length.
    let width = 384;
    for (example, feature_indices) in dataset.examples.iter().zip(&by_example) {
        let mut candidates: Vec<Candidate> = Vec::new();
        for &index in feature_indices {
            let Some(values) = logits(index) else {
                continue;
            };
            let feature = &features[index];
            let (starts, ends) = padded(&values, width);
            let best_starts = best_indexes(&starts, settings.n_best_size);
            let best_ends = best_indexes(&ends, settings.n_best_size);
            let tokens = feature.token_ids.len();
            for &start in &best_starts {
                for &end in &best_ends {
                    if start >= tokens || end >= tokens {
                        continue;
                    }
                    if feature.orig_word(start).is_none() || feature.orig_word(end).is_none() {
                        continue;
                    }
                    if !feature.is_max_context(start) || end < start {
                        continue;
                    }
                    if end - start + 1 > settings.max_answer_length {
                        continue;
                    }
                    candidates.push(Candidate {
                        feature: index,
                        start,
                        end,
                        start_logit: starts[start],
                        end_logit: ends[end],
                    });
                }
            }
        }
        // sorted(…, reverse=True) is stable: equal totals keep their order.
        candidates.sort_by(|a, b| {
            (b.start_logit + b.end_logit)
                .partial_cmp(&(a.start_logit + a.end_logit))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        // The n-best list's first entry is the best candidate's text (the list only drops
        // later repeats of a text).
        let best = candidates.first().map(|candidate| {
            let feature = &features[candidate.feature];
            let pieces: Vec<&str> = feature.token_ids[candidate.start..=candidate.end]
                .iter()
                .map(|&id| vocab.token(id))
                .collect();
            let tok_text = pieces.join(" ").replace(" ##", "").replace("##", "");
            let tok_text = pystr::join_split(pystr::strip(&tok_text));
            let first = feature.orig_word(candidate.start).unwrap_or(0);
            let last = feature.orig_word(candidate.end).unwrap_or(0);
            let orig_text = example
                .doc_tokens
                .get(first..=last)
                .map(|words| words.join(" "))
                .unwrap_or_default();
            final_text(&tok_text, &orig_text)
        });
        answers.push((
            example.qas_id.clone(),
            best.unwrap_or_else(|| "empty".to_string()),
        ));
    }
    Predictions { answers }
}

/// Start and end logits as the script holds them: float64, padded to `width` with -10000.
fn padded(values: &[f64], width: usize) -> (Vec<f64>, Vec<f64>) {
    let mut starts = vec![-10000.0; width];
    let mut ends = vec![-10000.0; width];
    for (k, pair) in values.chunks_exact(2).enumerate().take(width) {
        starts[k] = pair[0];
        ends[k] = pair[1];
    }
    (starts, ends)
}

/// `_get_best_indexes`: the positions of the `n` largest logits, largest first, ties by
/// position.
fn best_indexes(logits: &[f64], n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..logits.len()).collect();
    order.sort_by(|&a, &b| {
        logits[b]
            .partial_cmp(&logits[a])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    order.truncate(n);
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vectors;

    /// _get_best_indexes on 200 lists full of ties.
    #[test]
    fn best_indexes_are_the_scripts() {
        let entries = vectors::load("best_indexes");
        let mut wrong = Vec::new();
        for entry in &entries {
            let logits: Vec<f64> = entry["logits"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            let want: Vec<usize> = vectors::numbers(entry, "best")
                .into_iter()
                .map(|i| i as usize)
                .collect();
            if best_indexes(&logits, 20) != want {
                wrong.push(format!("{logits:?}"));
            }
        }
        vectors::assert_none_wrong("best indexes", entries.len(), &wrong);
    }

    #[test]
    fn a_repeated_question_keeps_its_first_place_and_its_last_answer() {
        let predictions = Predictions {
            answers: vec![
                ("q1".into(), "a".into()),
                ("q2".into(), "é\"".into()),
                ("q1".into(), "b".into()),
            ],
        };
        assert_eq!(
            predictions.to_json(),
            "{\n    \"q1\": \"b\",\n    \"q2\": \"\\u00e9\\\"\"\n}\n"
        );
        assert_eq!(predictions.get("q1"), Some("b"));
    }
}
