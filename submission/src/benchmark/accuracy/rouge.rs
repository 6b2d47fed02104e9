//! ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum of generated text against reference answers, and
//! the tokens generated per sample, as MLPerf's LLM accuracy scripts report them: per sample the
//! F-measure, averaged over the samples and given in percent. ROUGE-Lsum is `rouge_score`'s
//! summary-level LCS over the texts' sentences (`sentences.rs`). Text is tokenised as the
//! `rouge_score` package does with `use_stemmer=True`, as MLPerf's scripts call it: lowercase,
//! runs of letters and digits, words of more than three characters through the Porter stemmer
//! (`porter.rs`). Responses are UTF-8 text, or int32 token ids decoded with the benchmark's
//! tokenizer.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use mlperf_tokenizer::Tokenizer;

use super::{file_error, for_each_record, read_json, AccuracyError};

/// What a run must reach: each ROUGE at least `threshold` of the reference's, and the tokens per
/// sample within 10 % of the reference's (MLPerf's LLM rules).
const TOKENS_TOLERANCE: f64 = 0.10;

#[derive(Debug, Clone, PartialEq)]
pub struct Rouge {
    /// Mean F-measures in percent.
    pub rouge1: f64,
    pub rouge2: f64,
    pub rouge_l: f64,
    pub rouge_lsum: f64,
    /// Mean tokens per sample from the accuracy log's token counts (token runs only).
    pub tokens_per_sample: Option<f64>,
    pub total: usize,
    pub duplicates: usize,
    /// The references' own figures: ROUGE of the references against themselves (100) and their
    /// tokens per sample.
    pub reference_tokens_per_sample: f64,
    pub threshold: f64,
}

impl Rouge {
    /// Why the run fails its accuracy target; empty when it passes.
    pub fn failures(&self) -> Vec<String> {
        let mut failures = Vec::new();
        if self.total == 0 {
            failures.push("no samples scored".into());
        }
        let least = 100.0 * self.threshold;
        for (name, value) in [
            ("rouge1", self.rouge1),
            ("rouge2", self.rouge2),
            ("rougeL", self.rouge_l),
        ] {
            if value < least - 1e-9 {
                failures.push(format!("{name} {value:.4} < {least:.4}"));
            }
        }
        if let Some(tokens) = self.tokens_per_sample {
            let reference = self.reference_tokens_per_sample;
            if (tokens - reference).abs() > TOKENS_TOLERANCE * reference {
                failures.push(format!(
                    "tokens per sample {tokens:.2} is not within 10 % of the reference's \
                     {reference:.2}"
                ));
            }
        }
        failures
    }

    pub fn passes(&self) -> bool {
        self.failures().is_empty()
    }

    /// `accuracy.txt`: the scores, the references' figures and the verdict.
    pub fn report(&self) -> String {
        let mut text = format!(
            "rouge1={:.4}, rouge2={:.4}, rougeL={:.4}, rougeLsum={:.4}, total={}",
            self.rouge1, self.rouge2, self.rouge_l, self.rouge_lsum, self.total
        );
        if let Some(tokens) = self.tokens_per_sample {
            text.push_str(&format!(", tokens_per_sample={tokens:.2}"));
        }
        text.push('\n');
        if self.duplicates > 0 {
            text.push_str(&format!(
                "duplicates={} (records for samples already counted, ignored)\n",
                self.duplicates
            ));
        }
        text.push_str(&format!(
            "reference (the committed greedy answers): rouge1 100.0000, rouge2 100.0000, rougeL \
             100.0000, tokens_per_sample {:.2}\n",
            self.reference_tokens_per_sample
        ));
        let failures = self.failures();
        text.push_str(&format!(
            "rouge1, rouge2 and rougeL each >= {:.0} % of the reference's (rougeLsum is \
             reported, not checked), tokens per sample within 10 %: {}\n",
            self.threshold * 100.0,
            if failures.is_empty() {
                "PASS".to_string()
            } else {
                format!("FAIL ({})", failures.join("; "))
            }
        ));
        text
    }
}

/// Scores the accuracy log at `log` (each response the generated UTF-8 text, or its token ids
/// when there is a `tokenizer`) against the `samples[i].output` of `references`.
pub(super) fn evaluate(
    log: &Path,
    references: &Path,
    threshold: f64,
    tokenizer: Option<&Path>,
) -> Result<Rouge, AccuracyError> {
    let (answers, reference_tokens) = read_references(references)?;
    let tokenizer = tokenizer.map(Tokenizer::from_file).transpose()?;
    let mut sums = [0.0f64; 4];
    let (mut total, mut tokens, mut counted) = (0usize, 0i64, 0usize);
    let what = format!("references of {}", references.display());
    let duplicates = for_each_record(log, answers.len(), &what, |index, bytes, token_count| {
        let text = match &tokenizer {
            Some(tokenizer) => decode_token_ids(tokenizer, bytes)?,
            None => String::from_utf8_lossy(bytes).into_owned(),
        };
        let generated = Answer::of(&text);
        let reference = &answers[index];
        sums[0] += f_measure(ngram_overlap(&generated.words, &reference.words, 1));
        sums[1] += f_measure(ngram_overlap(&generated.words, &reference.words, 2));
        sums[2] += f_measure(lcs_overlap(&generated.words, &reference.words));
        sums[3] += f_measure(summary_lcs_overlap(
            &generated.sentences,
            &reference.sentences,
        ));
        total += 1;
        if let Some(count) = token_count {
            tokens += count;
            counted += 1;
        }
        Ok(())
    })?;
    let mean = |sum: f64| {
        if total > 0 {
            100.0 * sum / total as f64
        } else {
            0.0
        }
    };
    Ok(Rouge {
        rouge1: mean(sums[0]),
        rouge2: mean(sums[1]),
        rouge_l: mean(sums[2]),
        rouge_lsum: mean(sums[3]),
        tokens_per_sample: (counted > 0).then(|| tokens as f64 / counted as f64),
        total,
        duplicates,
        reference_tokens_per_sample: reference_tokens,
        threshold,
    })
}

/// The text of a response of int32 little-endian token ids.
fn decode_token_ids(tokenizer: &Tokenizer, bytes: &[u8]) -> Result<String, String> {
    if !bytes.len().is_multiple_of(4) {
        return Err(format!(
            "{} bytes are not int32 token ids (the benchmark has a tokenizer, so responses are \
             token ids)",
            bytes.len()
        ));
    }
    let ids = bytes
        .chunks_exact(4)
        .map(|b| {
            let id = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            u32::try_from(id).map_err(|_| format!("token id {id} is negative"))
        })
        .collect::<Result<Vec<u32>, String>>()?;
    tokenizer.decode(&ids).map_err(|e| e.to_string())
}

/// A text as ROUGE reads it: its words, and its sentences' words (for ROUGE-Lsum).
struct Answer {
    words: Vec<String>,
    sentences: Vec<Vec<String>>,
}

impl Answer {
    fn of(text: &str) -> Answer {
        let lines = super::sentences::lines_of_sentences(text);
        Answer {
            words: words(&lines),
            // As rouge_score reads them: a sentence a line, empty lines left out.
            sentences: lines
                .split('\n')
                .filter(|line| !line.is_empty())
                .map(words)
                .collect(),
        }
    }
}

/// Each sample's reference answer, and the references' mean tokens per sample.
fn read_references(path: &Path) -> Result<(Vec<Answer>, f64), AccuracyError> {
    let json = read_json(path)?;
    let samples = json
        .get("samples")
        .and_then(|s| s.as_array())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| file_error(path, "no `samples` list".into()))?;
    let mut answers = Vec::with_capacity(samples.len());
    let mut tokens = 0.0;
    for (index, sample) in samples.iter().enumerate() {
        let field = |key: &str| {
            sample
                .get(key)
                .ok_or_else(|| file_error(path, format!("samples[{index}] has no `{key}`")))
        };
        let output = field("output")?
            .as_str()
            .ok_or_else(|| file_error(path, format!("samples[{index}].output is not text")))?;
        tokens += field("output_tokens")?.as_f64().ok_or_else(|| {
            file_error(
                path,
                format!("samples[{index}].output_tokens is not a number"),
            )
        })?;
        answers.push(Answer::of(output));
    }
    let mean_tokens = tokens / answers.len() as f64;
    Ok((answers, mean_tokens))
}

/// `rouge_score`'s default tokenisation: lowercase, every run of ASCII letters and digits a
/// word, everything else a separator.
pub(super) fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            if w.len() > 3 {
                super::porter::stem(w)
            } else {
                w.to_owned()
            }
        })
        .collect()
}

/// (matches, generated units, reference units) for an F-measure.
pub(super) type Overlap = (usize, usize, usize);

pub(super) fn ngram_overlap(generated: &[String], reference: &[String], n: usize) -> Overlap {
    fn grams<'a>(words: &'a [String], n: usize) -> HashMap<&'a [String], usize> {
        let mut counts: HashMap<&'a [String], usize> = HashMap::new();
        for gram in words.windows(n) {
            *counts.entry(gram).or_default() += 1;
        }
        counts
    }
    let (generated_grams, reference_grams) = (grams(generated, n), grams(reference, n));
    let matches = generated_grams
        .iter()
        .map(|(gram, &count)| count.min(reference_grams.get(gram).copied().unwrap_or(0)))
        .sum();
    let total = |words: &[String]| words.len().saturating_sub(n - 1);
    (matches, total(generated), total(reference))
}

/// The longest common subsequence of words.
pub(super) fn lcs_overlap(generated: &[String], reference: &[String]) -> Overlap {
    let mut row = vec![0usize; reference.len() + 1];
    for word in generated {
        let mut diagonal = 0;
        for (j, other) in reference.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if word == other {
                diagonal + 1
            } else {
                above.max(row[j])
            };
            diagonal = above;
        }
    }
    (row[reference.len()], generated.len(), reference.len())
}

/// ROUGE-Lsum's matches (`rouge_score`'s summary-level LCS): for each reference sentence, the
/// union of its LCS with every generated sentence, each word counted at most as often as it
/// is in both texts yet.
pub(super) fn summary_lcs_overlap(generated: &[Vec<String>], reference: &[Vec<String>]) -> Overlap {
    let count = |sentences: &[Vec<String>]| sentences.iter().map(Vec::len).sum::<usize>();
    let (n, m) = (count(generated), count(reference));
    if n == 0 || m == 0 {
        return (0, n, m);
    }
    let (mut left_generated, mut left_reference) = (tally(generated), tally(reference));
    let mut hits = 0;
    for sentence in reference {
        let union: BTreeSet<usize> = generated
            .iter()
            .flat_map(|other| lcs_indices(sentence, other))
            .collect();
        for i in union {
            let word = sentence[i].as_str();
            let (Some(g), Some(r)) = (left_generated.get_mut(word), left_reference.get_mut(word))
            else {
                continue;
            };
            if *g > 0 && *r > 0 {
                hits += 1;
                *g -= 1;
                *r -= 1;
            }
        }
    }
    (hits, n, m)
}

/// How many times each word is in `sentences`.
fn tally(sentences: &[Vec<String>]) -> HashMap<&str, usize> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for word in sentences.iter().flatten() {
        *counts.entry(word.as_str()).or_default() += 1;
    }
    counts
}

/// The positions in `reference` of one longest common subsequence with `candidate`, the one
/// `rouge_score` backtracks to (from the end; on a tie, the reference's word is dropped).
fn lcs_indices(reference: &[String], candidate: &[String]) -> Vec<usize> {
    let cols = candidate.len() + 1;
    let mut table = vec![0u32; (reference.len() + 1) * cols];
    for i in 1..=reference.len() {
        for j in 1..=candidate.len() {
            table[i * cols + j] = if reference[i - 1] == candidate[j - 1] {
                table[(i - 1) * cols + j - 1] + 1
            } else {
                table[(i - 1) * cols + j].max(table[i * cols + j - 1])
            };
        }
    }
    let (mut i, mut j) = (reference.len(), candidate.len());
    let mut indices = Vec::new();
    while i > 0 && j > 0 {
        if reference[i - 1] == candidate[j - 1] {
            indices.push(i - 1);
            i -= 1;
            j -= 1;
        } else if table[i * cols + j - 1] > table[(i - 1) * cols + j] {
            j -= 1;
        } else {
            i -= 1;
        }
    }
    indices.reverse();
    indices
}

pub(super) fn f_measure((matches, generated, reference): Overlap) -> f64 {
    if matches == 0 {
        return 0.0;
    }
    let precision = matches as f64 / generated as f64;
    let recall = matches as f64 / reference as f64;
    2.0 * precision * recall / (precision + recall)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An accuracy log of int32 token ids per sample, scored against references through the
    /// tokenizer; the folder is removed afterwards.
    fn score_token_ids(responses: &[&[i32]]) -> Result<Rouge, AccuracyError> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mlperf-rouge-ids-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("tokenizer.json"),
            mlperf_tokenizer::testing::SMALL_TOKENIZER_JSON,
        )
        .unwrap();
        std::fs::write(
            dir.join("references.json"),
            r#"{"samples": [{"output": "ab ab", "output_tokens": 2},
                            {"output": "b a", "output_tokens": 3}]}"#,
        )
        .unwrap();
        let records: Vec<String> = responses
            .iter()
            .enumerate()
            .map(|(i, ids)| {
                let hex: String = ids
                    .iter()
                    .flat_map(|id| id.to_le_bytes())
                    .map(|b| format!("{b:02X}"))
                    .collect();
                format!(
                    r#"{{ "seq_id" : {i}, "qsl_idx" : {i}, "data" : "{hex}", "token_count" : {} }}"#,
                    ids.len()
                )
            })
            .collect();
        let log = dir.join("mlperf_log_accuracy.json");
        std::fs::write(&log, format!("[\n{}\n]\n", records.join(",\n"))).unwrap();
        let score = evaluate(
            &log,
            &dir.join("references.json"),
            0.99,
            Some(&dir.join("tokenizer.json")),
        );
        std::fs::remove_dir_all(&dir).unwrap();
        score
    }

    #[test]
    fn token_id_responses_are_decoded_with_the_tokenizer_before_scoring() {
        // "ab ab" (with the end token, which decoding drops) and "b a".
        let score = score_token_ids(&[&[3, 4, 5], &[1, 2, 0]]).unwrap();
        assert_eq!(
            (score.rouge1, score.rouge2, score.rouge_l),
            (100.0, 100.0, 100.0)
        );
        assert_eq!(score.tokens_per_sample, Some(3.0));
        // The second answer decodes to "ab", not "b a": below the references'.
        let score = score_token_ids(&[&[3, 4], &[3]]).unwrap();
        assert!(score.rouge1 < 100.0 && !score.passes(), "{score:?}");
    }

    #[test]
    fn responses_that_are_not_token_ids_are_errors_naming_the_record() {
        let error = score_token_ids(&[&[3, 4], &[-1]]).unwrap_err().to_string();
        assert!(
            error.contains("record 1") && error.contains("token id -1 is negative"),
            "{error}"
        );
        let error = score_token_ids(&[&[3, 99]]).unwrap_err().to_string();
        assert!(
            error.contains("record 0") && error.contains("token id 99 is outside"),
            "{error}"
        );
    }

    fn w(text: &str) -> Vec<String> {
        words(text)
    }

    #[test]
    fn words_are_lowercase_runs_of_letters_and_digits_longer_ones_stemmed() {
        // As rouge_score tokenizes them: words of more than three characters stemmed.
        assert_eq!(
            w("The Moon's 2 sides, far-away!"),
            ["the", "moon", "s", "2", "side", "far", "away"]
        );
        assert_eq!(w("Dancing bees"), ["danc", "bee"]);
        assert!(w(" ... ").is_empty());
    }

    /// Figures of `rouge_score` 0.1.2 (`RougeScorer([...], use_stemmer=True)`, NLTK 3.9.1):
    /// stemming makes "cats"/"cat", "running"/"runs", "gardens"/"garden" match.
    #[test]
    fn scores_equal_rouge_scores_with_its_stemmer() {
        let cases = [
            (
                "The cats were running quickly across the gardens.",
                "A cat runs quickly across the garden.",
                [0.7999999999999999, 0.6153846153846153, 0.7999999999999999],
            ),
            (
                "Honey bees communicate by dancing; their dances indicate directions.",
                "Bees communicated with a dance that indicated the direction.",
                [0.5555555555555556, 0.125, 0.5555555555555556],
            ),
            (
                "Generalizations about electrical engineering are hopefully useful.",
                "Electrical engineers generalize hopefully and usefully.",
                [0.7692307692307692, 0.1818181818181818, 0.6153846153846153],
            ),
        ];
        for (target, prediction, [rouge1, rouge2, rouge_l]) in cases {
            let (reference, generated) = (words(target), words(prediction));
            let scores = [
                f_measure(ngram_overlap(&generated, &reference, 1)),
                f_measure(ngram_overlap(&generated, &reference, 2)),
                f_measure(lcs_overlap(&generated, &reference)),
            ];
            for (ours, theirs) in scores.into_iter().zip([rouge1, rouge2, rouge_l]) {
                assert!((ours - theirs).abs() < 1e-12, "{prediction:?}: {scores:?}");
            }
        }
    }

    #[test]
    fn scores_match_rouge_scores_definitions() {
        // rouge_score: target "the cat sat on the mat", prediction "the cat lay on the mat":
        // rouge1 F = 5/6, rouge2 F = 3/5 (the cat, on the, the mat), rougeL F = 5/6.
        let (reference, generated) = (w("the cat sat on the mat"), w("the cat lay on the mat"));
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(
            f_measure(ngram_overlap(&generated, &reference, 1)),
            5.0 / 6.0
        ));
        assert!(close(
            f_measure(ngram_overlap(&generated, &reference, 2)),
            3.0 / 5.0
        ));
        assert!(close(
            f_measure(lcs_overlap(&generated, &reference)),
            5.0 / 6.0
        ));
        // Order matters to rougeL only: "mat the on sat cat the" keeps every word, but its
        // longest common subsequence with the reference is "the on the".
        let shuffled = w("mat the on sat cat the");
        assert!(close(
            f_measure(ngram_overlap(&shuffled, &reference, 1)),
            1.0
        ));
        assert!(close(f_measure(lcs_overlap(&shuffled, &reference)), 0.5));
        assert_eq!(f_measure(ngram_overlap(&[], &reference, 1)), 0.0);
        assert_eq!(f_measure(ngram_overlap(&w("one"), &w("one"), 2)), 0.0);
    }

    /// Figures of `rouge_score` 0.1.2 (`RougeScorer(["rougeL", "rougeLsum"], use_stemmer=True)`,
    /// NLTK 3.10.4) for texts already a sentence a line: ROUGE-L over the whole texts, and
    /// ROUGE-Lsum's union of each reference sentence's LCS with every generated one, each word
    /// counted as often as it is left in both.
    #[test]
    fn rouge_lsum_equals_rouge_scores_summary_level_lcs() {
        let cases = [
            (
                "The cat sat on the mat.\nIt was warm.\nThe dog slept.",
                "The dog sat on the mat.\nThe cat was warm.",
                [0.6363636363636365, 0.9090909090909091],
            ),
            (
                "Bees dance to talk.\nTheir dances show where the food is.",
                "Bees talk by dancing, and their dances show food.",
                [0.6, 0.6],
            ),
            (
                "One two three four.\nFive six seven.",
                "Four three two one.\nSeven six five.",
                [0.2857142857142857, 0.2857142857142857],
            ),
            (
                "a b c d e\nf g",
                "a c e\nb d f g\nc",
                [0.6666666666666666, 0.9333333333333333],
            ),
            (
                "The running dogs were happily playing.\nGenerally, engineers generalize.",
                "Engineers generalize generally.\nDogs run and play happily.",
                [0.23529411764705882, 0.47058823529411764],
            ),
        ];
        let lines = |text: &str| -> Vec<Vec<String>> { text.split('\n').map(words).collect() };
        for (target, prediction, [rouge_l, rouge_lsum]) in cases {
            let ours = [
                f_measure(lcs_overlap(&words(prediction), &words(target))),
                f_measure(summary_lcs_overlap(&lines(prediction), &lines(target))),
            ];
            assert!(
                (ours[0] - rouge_l).abs() < 1e-12,
                "{prediction:?}: {ours:?}"
            );
            assert!(
                (ours[1] - rouge_lsum).abs() < 1e-12,
                "{prediction:?}: {ours:?}"
            );
            // Written on one line, sentences that end in periods split where the lines were.
            if !prediction.split('\n').all(|line| line.ends_with('.')) {
                continue;
            }
            let (one_line, reference) = (prediction.replace('\n', " "), Answer::of(target));
            let generated = Answer::of(&one_line);
            assert_eq!(generated.sentences, lines(prediction), "{one_line:?}");
            let split = f_measure(summary_lcs_overlap(
                &generated.sentences,
                &reference.sentences,
            ));
            assert!((split - rouge_lsum).abs() < 1e-12, "{one_line:?}: {split}");
        }
    }

    #[test]
    fn the_verdict_checks_each_rouge_and_the_token_count() {
        let score = Rouge {
            rouge1: 99.5,
            rouge2: 99.1,
            rouge_l: 99.4,
            rouge_lsum: 99.3,
            tokens_per_sample: Some(27.0),
            total: 256,
            duplicates: 0,
            reference_tokens_per_sample: 27.4,
            threshold: 0.99,
        };
        assert!(score.passes(), "{}", score.report());
        assert!(score.report().starts_with(
            "rouge1=99.5000, rouge2=99.1000, rougeL=99.4000, rougeLsum=99.3000, total=256, \
             tokens_per_sample=27.00\n"
        ));
        let low = Rouge {
            rouge2: 98.0,
            ..score.clone()
        };
        assert!(
            low.report().contains("FAIL (rouge2 98.0000 < 99.0000)"),
            "{}",
            low.report()
        );
        let short = Rouge {
            tokens_per_sample: Some(20.0),
            ..score.clone()
        };
        assert!(short
            .report()
            .contains("tokens per sample 20.00 is not within 10 %"));
        let empty = Rouge { total: 0, ..score };
        assert!(!empty.passes());
    }
}
