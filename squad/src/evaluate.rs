//! `evaluate_v1.1.py`: each question's exact match and token F1 against each of its
//! ground truths (the best of them), after its normalisation (lowercase, drop ASCII
//! punctuation, drop the words a/an/the, collapse whitespace); a question without an answer
//! scores 0. The figures are percentages over every question, printed as `json.dumps` does.

use std::collections::HashMap;

use crate::dataset::SquadDataset;
use crate::predict::Predictions;
use crate::pystr;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SquadScore {
    pub exact_match: f64,
    pub f1: f64,
    pub questions: usize,
    /// Questions without an answer (scored 0).
    pub unanswered: usize,
}

impl SquadScore {
    /// The script's line: `{"exact_match": 83.6, "f1": 90.9}`.
    pub fn line(&self) -> String {
        format!(
            "{{\"exact_match\": {}, \"f1\": {}}}",
            pystr::float_repr(self.exact_match),
            pystr::float_repr(self.f1)
        )
    }
}

pub fn evaluate(dataset: &SquadDataset, predictions: &Predictions) -> SquadScore {
    let answers: HashMap<&str, &str> = predictions
        .answers
        .iter()
        .map(|(id, text)| (id.as_str(), text.as_str()))
        .collect();
    let (mut exact, mut f1) = (0u64, 0.0f64);
    let mut unanswered = 0;
    for example in &dataset.examples {
        let Some(prediction) = answers.get(example.qas_id.as_str()) else {
            unanswered += 1;
            continue;
        };
        let normalized = normalize_answer(prediction);
        let truths: Vec<String> = example
            .answers
            .iter()
            .map(|t| normalize_answer(t))
            .collect();
        exact += u64::from(truths.contains(&normalized));
        // max() of ints 0 and floats: the first of the largest.
        f1 += truths
            .iter()
            .map(|truth| f1_score(&normalized, truth))
            .fold(f64::NEG_INFINITY, f64::max);
    }
    let total = dataset.examples.len();
    SquadScore {
        exact_match: 100.0 * exact as f64 / total as f64,
        f1: 100.0 * f1 / total as f64,
        questions: total,
        unanswered,
    }
}

/// The token F1 of two normalised answers.
fn f1_score(prediction: &str, truth: &str) -> f64 {
    let predicted: Vec<&str> = pystr::split(prediction).collect();
    let expected: Vec<&str> = pystr::split(truth).collect();
    let mut counts: HashMap<&str, (usize, usize)> = HashMap::new();
    for token in &predicted {
        counts.entry(token).or_default().0 += 1;
    }
    for token in &expected {
        counts.entry(token).or_default().1 += 1;
    }
    let same: usize = counts.values().map(|&(a, b)| a.min(b)).sum();
    if same == 0 {
        return 0.0;
    }
    let precision = 1.0 * same as f64 / predicted.len() as f64;
    let recall = 1.0 * same as f64 / expected.len() as f64;
    (2.0 * precision * recall) / (precision + recall)
}

/// `normalize_answer`: lower, remove punctuation, remove articles, fix whitespace.
pub fn normalize_answer(text: &str) -> String {
    let lowered = pystr::lower(text);
    let no_punctuation: String = lowered
        .chars()
        .filter(|c| !c.is_ascii_punctuation())
        .collect();
    pystr::join_split(&remove_articles(&no_punctuation))
}

/// `re.sub(r"\b(a|an|the)\b", " ", text)` with Python's `\b` (word characters: letters,
/// numbers, underscore).
fn remove_articles(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let word_at = |i: usize| chars.get(i).is_some_and(|&c| pystr::is_word(c));
    let boundary = |i: usize| (i > 0 && word_at(i - 1)) != word_at(i);
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if boundary(i) {
            // The alternation tries a, then an, then the: "a" matches first where it can.
            let matched = ["a", "an", "the"].iter().find_map(|article| {
                let len = article.chars().count();
                let fits = chars.len() >= i + len
                    && chars[i..i + len].iter().copied().eq(article.chars())
                    && boundary(i + len);
                fits.then_some(len)
            });
            if let Some(len) = matched {
                out.push(' ');
                i += len;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vectors;

    /// evaluate_v1.1.py's normalize_answer, exact_match_score and f1_score on 1,000 pairs.
    #[test]
    fn scores_are_the_scripts() {
        let entries = vectors::load("evaluate");
        let mut wrong = Vec::new();
        for entry in &entries {
            let prediction = vectors::str_of(entry, "prediction");
            let truth = vectors::str_of(entry, "ground_truth");
            let normalized = normalize_answer(prediction);
            if normalized != vectors::str_of(entry, "normalized") {
                wrong.push(format!("normalize {prediction:?}: {normalized:?}"));
            }
            let truth = normalize_answer(truth);
            let exact = normalized == truth;
            if exact != entry["exact_match"].as_bool().unwrap() {
                wrong.push(format!("EM {prediction:?} {truth:?}: {exact}"));
            }
            let f1 = f1_score(&normalized, &truth);
            if f1 != entry["f1"].as_f64().unwrap() {
                wrong.push(format!("F1 {prediction:?} {truth:?}: {f1}"));
            }
            let split: Vec<&str> = pystr::split(prediction).collect();
            if split != vectors::strings(entry, "split") {
                wrong.push(format!("split {prediction:?}: {split:?}"));
            }
        }
        vectors::assert_none_wrong("evaluate", entries.len(), &wrong);
    }

    #[test]
    fn answers_are_normalised_as_the_script_does() {
        assert_eq!(normalize_answer("The Cat, an apple & a-b!"), "cat apple ab");
        assert_eq!(normalize_answer("theatre a_the an"), "theatre athe");
        assert_eq!(
            normalize_answer("a\u{301} the\u{301} an"),
            "\u{301} \u{301}"
        );
        assert_eq!(normalize_answer("  Ångström  THE  "), "ångström");
        assert_eq!(
            f1_score("a b c", "b c d"),
            (2.0 * (2.0 / 3.0) * (2.0 / 3.0)) / (4.0 / 3.0)
        );
        assert_eq!(f1_score("x", "y"), 0.0);
    }
}
