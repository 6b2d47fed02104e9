//! llama3.1-8b's ROUGE on CNN-DailyMail as its `evaluation.py` computes it: each sample's
//! first record (in log order) decoded from int32 or int64 token ids by the model's tokenizer,
//! special tokens skipped and, where `tokenizer_config.json` says so, transformers'
//! `clean_up_tokenization`; prediction and highlights stripped and split into sentences by
//! NLTK's Punkt (`mlperf-punkt`) joined with newlines; `rouge_score`'s F-measures with the
//! Porter stemmer; numpy's mean (pairwise summation) in percent rounded as `np.round` does;
//! `gen_len` the predictions' characters and `gen_num` their count, in the script's line.
//! llama2-70b's `evaluate-accuracy.py` scores OpenOrca the same way and adds `gen_tok_len`
//! (the scored answers' token ids) and `tokens_per_sample`, in a line of its own shape.

use std::path::Path;

use mlperf_punkt::{is_python_space, SentenceTokenizer};
use mlperf_tokenizer::{SlowLlama, Tokenizer};

use super::rouge::{f_measure, lcs_overlap, ngram_overlap, summary_lcs_overlap, words};
use super::{for_each_record, AccuracyError};
use crate::datasets::cnndm::CnnDmSet;

/// The reference script whose figures and line a score is (the ROUGE is the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RougeScript {
    /// llama3.1-8b's `evaluation.py`: the four ROUGE figures as strings, gen_len, gen_num.
    Evaluation,
    /// llama2-70b's `evaluate-accuracy.py`: the figures as numbers, and gen_tok_len and
    /// tokens_per_sample after gen_num.
    EvaluateAccuracy,
}

/// How the accuracy log's token ids are stored (`--dtype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenDtype {
    Int32,
    Int64,
}

/// A run's ROUGE scores as `evaluation.py` prints them.
#[derive(Debug, Clone, PartialEq)]
pub struct CnnDmRouge {
    /// Mean F-measures in percent, rounded to 4 decimals as the script rounds them.
    pub rouge1: f64,
    pub rouge2: f64,
    pub rouge_l: f64,
    pub rouge_lsum: f64,
    /// The unrounded means (fractions).
    pub means: [f64; 4],
    /// Characters of the post-processed predictions, and how many there are.
    pub gen_len: u64,
    pub gen_num: usize,
    /// Token ids of the scored answers, and their mean rounded to one decimal as Python's
    /// `round` does (llama2-70b's `tokens_per_sample`).
    pub gen_tok_len: u64,
    pub tokens_per_sample: f64,
    pub script: RougeScript,
    /// Records for samples already scored (ignored, as the script ignores them).
    pub duplicates: usize,
    /// Per scored sample in log order: its qsl_idx and four F-measures.
    pub per_sample: Vec<(usize, [f64; 4])>,
}

impl CnnDmRouge {
    /// The script's line: `{'rouge1': '38.7792', …, 'gen_len': 8167644, 'gen_num': 13368}`
    /// (evaluation.py), `{'rouge1': 44.4312, …, 'gen_num': 24576, 'gen_tok_len': 7236172,
    /// 'tokens_per_sample': 294.4}` (evaluate-accuracy.py, numpy < 2's scalar repr).
    pub fn line(&self) -> String {
        if self.script == RougeScript::EvaluateAccuracy {
            return format!(
                "{{'rouge1': {}, 'rouge2': {}, 'rougeL': {}, 'rougeLsum': {}, 'gen_len': {}, 'gen_num': {}, 'gen_tok_len': {}, 'tokens_per_sample': {}}}",
                python_float(self.rouge1),
                python_float(self.rouge2),
                python_float(self.rouge_l),
                python_float(self.rouge_lsum),
                self.gen_len,
                self.gen_num,
                self.gen_tok_len,
                python_float(self.tokens_per_sample)
            );
        }
        format!(
            "{{'rouge1': '{}', 'rouge2': '{}', 'rougeL': '{}', 'rougeLsum': '{}', 'gen_len': {}, 'gen_num': {}}}",
            python_float(self.rouge1),
            python_float(self.rouge2),
            python_float(self.rouge_l),
            python_float(self.rouge_lsum),
            self.gen_len,
            self.gen_num
        )
    }
}

/// What the scorer needs beside the log: the data set, the model's tokenizer folder (its
/// `tokenizer.json` and `tokenizer_config.json`) and the Punkt parameters.
pub struct CnnDmScorer<'a> {
    pub set: &'a CnnDmSet,
    pub tokenizer: &'a Tokenizer,
    pub clean_up_spaces: bool,
    /// Decode as the slow (sentencepiece) LlamaTokenizer does, which `use_fast=False` loads
    /// where the folder has one ([`slow_llama_of`]).
    pub slow_llama: Option<SlowLlama>,
    pub punkt: &'a SentenceTokenizer,
    pub script: RougeScript,
}

impl CnnDmScorer<'_> {
    /// `evaluation.py --dtype DTYPE` over `log`.
    pub fn evaluate(&self, log: &Path, dtype: TokenDtype) -> Result<CnnDmRouge, AccuracyError> {
        let mut per_sample = Vec::new();
        let mut gen_len = 0u64;
        let mut gen_tok_len = 0u64;
        let what = format!("records of {}", self.set.path.display());
        let duplicates = for_each_record(log, self.set.len(), &what, |index, bytes, _| {
            let ids = token_ids(bytes, dtype)?;
            gen_tok_len += ids.len() as u64;
            let decoded = match self.slow_llama {
                Some(slow) => self.tokenizer.decode_slow_llama(&ids, slow),
                None => self.tokenizer.decode(&ids),
            };
            let mut text = decoded.map_err(|e| e.to_string())?;
            if self.clean_up_spaces {
                text = clean_up_tokenization(&text);
            }
            let prediction = self.sentence_lines(&text);
            let target = self.sentence_lines(&self.set.records[index].output);
            gen_len += prediction.chars().count() as u64;
            per_sample.push((index, rouge_scores(&prediction, &target)));
            Ok(())
        })?;
        let means: [f64; 4] = std::array::from_fn(|k| {
            let values: Vec<f64> = per_sample.iter().map(|(_, f)| f[k]).collect();
            numpy_mean(&values)
        });
        let percent = |mean: f64| numpy_round(mean * 100.0, 4);
        Ok(CnnDmRouge {
            rouge1: percent(means[0]),
            rouge2: percent(means[1]),
            rouge_l: percent(means[2]),
            rouge_lsum: percent(means[3]),
            means,
            gen_len,
            gen_num: per_sample.len(),
            gen_tok_len,
            tokens_per_sample: python_round_1(gen_tok_len as f64 / per_sample.len() as f64),
            script: self.script,
            duplicates,
            per_sample,
        })
    }

    /// `postprocess_text`: stripped, then a sentence a line.
    fn sentence_lines(&self, text: &str) -> String {
        let text = text.trim_matches(is_python_space);
        self.punkt.sentences(text).join("\n")
    }
}

/// Whether the tokenizer folder's `tokenizer_config.json` asks for transformers' clean-up of
/// decoded text (`clean_up_tokenization_spaces`; transformers 4.46 defaults it to false).
pub fn clean_up_spaces_of(tokenizer_dir: &Path) -> Result<bool, AccuracyError> {
    let path = tokenizer_dir.join("tokenizer_config.json");
    if !path.is_file() {
        return Ok(false);
    }
    let config = super::read_json(&path)?;
    match config.get("clean_up_tokenization_spaces") {
        None | Some(serde_json::Value::Null) => Ok(false),
        Some(serde_json::Value::Bool(flag)) => Ok(*flag),
        Some(other) => Err(super::file_error(
            &path,
            format!("clean_up_tokenization_spaces is {other}, not true or false"),
        )),
    }
}

/// How `AutoTokenizer.from_pretrained(dir, use_fast=False)` decodes: the slow LlamaTokenizer
/// where `tokenizer_config.json` names a Llama (sentencepiece) class and `tokenizer.model`
/// is there (Llama 2), with its `legacy` and `add_prefix_space` (transformers' defaults: true);
/// None where only the fast tokenizer exists (Llama 3).
pub fn slow_llama_of(tokenizer_dir: &Path) -> Result<Option<SlowLlama>, AccuracyError> {
    let path = tokenizer_dir.join("tokenizer_config.json");
    if !path.is_file() || !tokenizer_dir.join("tokenizer.model").is_file() {
        return Ok(None);
    }
    let config = super::read_json(&path)?;
    let class = config
        .get("tokenizer_class")
        .and_then(|c| c.as_str())
        .unwrap_or("");
    if !matches!(class, "LlamaTokenizer" | "LlamaTokenizerFast") {
        return Ok(None);
    }
    let flag = |key: &str| match config.get(key) {
        None | Some(serde_json::Value::Null) => Ok(true),
        Some(serde_json::Value::Bool(flag)) => Ok(*flag),
        Some(other) => Err(super::file_error(
            &path,
            format!("{key} is {other}, not true or false"),
        )),
    };
    Ok(Some(SlowLlama {
        legacy: flag("legacy")?,
        add_prefix_space: flag("add_prefix_space")?,
    }))
}

/// The response's token ids.
fn token_ids(bytes: &[u8], dtype: TokenDtype) -> Result<Vec<u32>, String> {
    let width = match dtype {
        TokenDtype::Int32 => 4,
        TokenDtype::Int64 => 8,
    };
    if !bytes.len().is_multiple_of(width) {
        return Err(format!(
            "{} bytes are not {} token ids (pass the dtype the SUT logged)",
            bytes.len(),
            if width == 4 { "int32" } else { "int64" }
        ));
    }
    bytes
        .chunks_exact(width)
        .map(|b| {
            let id = if width == 4 {
                i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            } else {
                i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
            };
            u32::try_from(id).map_err(|_| format!("token id {id} is not a vocabulary index"))
        })
        .collect()
}

/// transformers' `clean_up_tokenization`: the spaces its English detokenisation leaves
/// before punctuation and contractions, in its order of replacements.
fn clean_up_tokenization(text: &str) -> String {
    [
        (" .", "."),
        (" ?", "?"),
        (" !", "!"),
        (" ,", ","),
        (" ' ", "'"),
        (" n't", "n't"),
        (" 'm", "'m"),
        (" 's", "'s"),
        (" 've", "'ve"),
        (" 're", "'re"),
    ]
    .iter()
    .fold(text.to_string(), |text, (from, to)| text.replace(from, to))
}

/// `rouge_score`'s rouge1, rouge2, rougeL and rougeLsum F-measures of a prediction against its
/// target, both a sentence a line.
fn rouge_scores(prediction: &str, target: &str) -> [f64; 4] {
    let (generated, reference) = (words(prediction), words(target));
    let sentences = |text: &str| -> Vec<Vec<String>> {
        text.split('\n')
            .filter(|line| !line.is_empty())
            .map(words)
            .collect()
    };
    [
        f_measure(ngram_overlap(&generated, &reference, 1)),
        f_measure(ngram_overlap(&generated, &reference, 2)),
        f_measure(lcs_overlap(&generated, &reference)),
        f_measure(summary_lcs_overlap(
            &sentences(prediction),
            &sentences(target),
        )),
    ]
}

/// `np.mean`: numpy's pairwise sum divided by the count; NaN for none.
fn numpy_mean(values: &[f64]) -> f64 {
    mlperf_kits19::accuracy::numpy_sum(values) / values.len() as f64
}

/// `np.round(x, decimals)`: scaled, rounded half to even, scaled back (not Python's
/// correctly rounded `round`).
fn numpy_round(x: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round_ties_even() / scale
}

/// Python's `round(x, 1)`: the decimal nearest to x's exact binary value, ties to even
/// (Rust's formatting rounds the exact value the same way).
fn python_round_1(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    format!("{x:.1}").parse().unwrap_or(x)
}

/// `str()` of a float64 as the script formats it: the shortest repr, `.0` on whole numbers.
fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    let text = format!("{x}");
    if text.contains('.') || text.contains("inf") {
        text
    } else {
        text + ".0"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::datasets::cnndm::CnnDmSet;
    use mlperf_punkt::PunktParameters;
    use std::path::PathBuf;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/cnndm")
    }

    fn english() -> SentenceTokenizer {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/punkt/english");
        assert!(
            dir.is_dir(),
            "data/punkt is not prepared: run `bash scripts/benchmarks/prepare.sh punkt` (scripts/test.sh does)"
        );
        SentenceTokenizer::new(PunktParameters::read_punkt_tab(&dir).unwrap())
    }

    fn json(path: &Path) -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn float(value: &serde_json::Value) -> f64 {
        value.as_str().unwrap().parse().unwrap()
    }

    /// The line the reference printed for each of a fixture's two logs (records/accuracy.json:
    /// int32 and int64), and the repeated qsl_idx counted as one duplicate.
    fn assert_the_reference_lines(scorer: &CnnDmScorer, fixture: &Path) {
        let runs = json(&fixture.join("records/accuracy.json"));
        for (run, log, dtype) in [
            ("reference_int32", "synthetic", TokenDtype::Int32),
            ("reference_int64", "synthetic_int64", TokenDtype::Int64),
        ] {
            let log = fixture
                .join("logs")
                .join(log)
                .join("mlperf_log_accuracy.json");
            let score = scorer.evaluate(&log, dtype).unwrap();
            let recorded = runs
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["run"] == run)
                .unwrap();
            assert_eq!(
                score.line(),
                recorded["result_line"].as_str().unwrap(),
                "{run}"
            );
            assert_eq!((score.gen_num, score.duplicates), (10, 1));
        }
    }

    /// `evaluation.py`'s line (records/accuracy.json) on both logs, and per sample the
    /// post-processed texts and rouge_score's F-measures (records/per_sample.json), to the
    /// last bit.
    #[test]
    fn the_fixtures_scores_equal_the_reference_scripts() {
        let set = CnnDmSet::open(&fixture()).unwrap();
        let tokenizer = Tokenizer::from_file(&fixture().join("tokenizer/tokenizer.json")).unwrap();
        let punkt = english();
        let scorer = CnnDmScorer {
            set: &set,
            tokenizer: &tokenizer,
            clean_up_spaces: clean_up_spaces_of(&fixture().join("tokenizer")).unwrap(),
            slow_llama: slow_llama_of(&fixture().join("tokenizer")).unwrap(),
            punkt: &punkt,
            script: RougeScript::Evaluation,
        };
        assert!(scorer.clean_up_spaces);
        assert_eq!(scorer.slow_llama, None);
        assert_the_reference_lines(&scorer, &fixture());
        let log = fixture().join("logs/synthetic/mlperf_log_accuracy.json");
        let score = scorer.evaluate(&log, TokenDtype::Int32).unwrap();
        let per_sample = json(&fixture().join("records/per_sample.json"));
        let samples = per_sample["samples"].as_array().unwrap();
        assert_eq!(score.per_sample.len(), samples.len());
        for ((index, ours), recorded) in score.per_sample.iter().zip(samples) {
            assert_eq!(*index as u64, recorded["qsl_idx"].as_u64().unwrap());
            let decoded = recorded["decoded"].as_str().unwrap();
            assert_eq!(
                scorer.sentence_lines(decoded),
                recorded["prediction_post"].as_str().unwrap()
            );
            let target = &set.records[*index].output;
            assert_eq!(
                scorer.sentence_lines(target),
                recorded["target_post"].as_str().unwrap()
            );
            let theirs = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
                .map(|k| float(&recorded["fmeasure"][k]));
            assert_eq!(*ours, theirs, "qsl_idx {index}");
        }
        let means =
            ["rouge1", "rouge2", "rougeL", "rougeLsum"].map(|k| float(&per_sample["mean"][k]));
        assert_eq!(score.means, means);
    }

    /// llama2-70b's `evaluate-accuracy.py` on the openorca fixture (its pickle converted, its
    /// sentencepiece tokenizer decoded as the slow LlamaTokenizer decodes): the printed line
    /// of both logs (records/accuracy.json), and each scored answer's decoded text
    /// (records/decoded.json, where the fast tokenizer differs on one).
    #[test]
    fn the_openorca_fixtures_scores_equal_llama2s_reference_script() {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/openorca");
        let set = crate::datasets::openorca::open(&fixture).unwrap();
        let tokenizer_dir = fixture.join("tokenizer");
        let tokenizer = Tokenizer::from_file(&tokenizer_dir.join("tokenizer.json")).unwrap();
        let punkt = english();
        let scorer = CnnDmScorer {
            set: &set,
            tokenizer: &tokenizer,
            clean_up_spaces: clean_up_spaces_of(&tokenizer_dir).unwrap(),
            slow_llama: slow_llama_of(&tokenizer_dir).unwrap(),
            punkt: &punkt,
            script: RougeScript::EvaluateAccuracy,
        };
        assert!(!scorer.clean_up_spaces);
        assert_eq!(
            scorer.slow_llama,
            Some(SlowLlama {
                legacy: false,
                add_prefix_space: true
            })
        );
        assert_the_reference_lines(&scorer, &fixture);
        let decoded = json(&fixture.join("records/decoded.json"));
        let mut fast_differs = 0;
        for sample in decoded["samples"].as_array().unwrap() {
            let ids: Vec<u32> = sample["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|id| id.as_u64().unwrap() as u32)
                .collect();
            let slow = tokenizer
                .decode_slow_llama(&ids, scorer.slow_llama.unwrap())
                .unwrap();
            assert_eq!(slow, sample["slow"].as_str().unwrap());
            assert_eq!(
                tokenizer.decode(&ids).unwrap(),
                sample["fast"].as_str().unwrap()
            );
            fast_differs += usize::from(slow != sample["fast"].as_str().unwrap());
        }
        assert_eq!(fast_differs, 1);
    }

    #[test]
    fn tokens_per_sample_rounds_as_pythons_round_does() {
        // round(x, 1) on the exact binary value, ties to even: 47.25 is exact (a tie), 0.35
        // is 0.34999999999999997.
        assert_eq!(python_round_1(47.25), 47.2);
        assert_eq!(python_round_1(47.75), 47.8);
        assert_eq!(python_round_1(0.35), 0.3);
        assert_eq!(python_round_1(294.45), 294.4);
        assert_eq!(python_round_1(944.0 / 10.0), 94.4);
        assert!(python_round_1(f64::NAN).is_nan());
    }

    #[test]
    fn numpys_mean_and_round_differ_from_the_naive_ones_where_numpy_does() {
        // numpy 1.26.4: np.round(60.43055, 4) == 60.4306 where Python's round gives 60.4305.
        assert_eq!(numpy_round(60.43055, 4), 60.4306);
        // np.mean of 0.1 repeated 10 times is 0.1 (pairwise); the running sum gives
        // 0.09999999999999999.
        assert_eq!(numpy_mean(&[0.1; 10]), 0.1);
        assert_ne!([0.1f64; 10].iter().sum::<f64>() / 10.0, 0.1);
        assert!(numpy_mean(&[]).is_nan());
        assert_eq!(python_float(60.0), "60.0");
        assert_eq!(python_float(60.4306), "60.4306");
    }

    #[test]
    fn clean_up_follows_transformers_replacements() {
        assert_eq!(
            clean_up_tokenization("He said , \"it 's fine\" . Is n't it ?"),
            "He said, \"it's fine\". Isn't it?"
        );
    }

    #[test]
    fn token_ids_of_either_width_and_bad_ones_are_errors() {
        assert_eq!(
            token_ids(&[1, 0, 0, 0, 2, 1, 0, 0], TokenDtype::Int32).unwrap(),
            [1, 258]
        );
        assert_eq!(
            token_ids(&[7, 0, 0, 0, 0, 0, 0, 0], TokenDtype::Int64).unwrap(),
            [7]
        );
        let error = token_ids(&[1, 0, 0], TokenDtype::Int32).unwrap_err();
        assert!(error.contains("3 bytes are not int32"), "{error}");
        let error = token_ids(&[255, 255, 255, 255], TokenDtype::Int32).unwrap_err();
        assert!(error.contains("token id -1"), "{error}");
    }
}
