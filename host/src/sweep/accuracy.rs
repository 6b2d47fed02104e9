//! The sweep's accuracy pass, scored: the answers as a LoadGen accuracy log
//! (`accuracy/mlperf_log_accuracy.json`, scored by the benchmark's metric as `run --mode
//! accuracy` scores it, `accuracy.txt` beside it) and as MLPerf Endpoints'
//! `accuracy/accuracy_results.json` (matched against mlcommons/endpoints ea332753, read by the
//! checker's endpoints parser at mlcommons/inference b66003e1: docs/endpoints-format.md §1.4).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::AccuracyAnswers;
use crate::benchmark::accuracy::{evaluate_into, lines_of_sentences, AccuracyError, Score};
use crate::benchmark::{Accuracy, Benchmark};
use crate::logs::accuracy::hex;

/// The accuracy pass's outcome.
#[derive(Debug)]
pub struct ScoredAnswers {
    /// The benchmark's score (none without a benchmark that has a metric).
    pub score: Option<Score>,
    pub log: PathBuf,
    /// `accuracy_results.json`'s content.
    pub results: Value,
}

#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    #[error("{}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Accuracy(#[from] AccuracyError),
}

/// Writes the answers' accuracy log under `out/accuracy/`, scores it with `benchmark`'s
/// metric (answers are text: a ROUGE benchmark's tokenizer is not used to decode them), and
/// returns the Endpoints results for `dataset_name`.
pub fn score_answers(
    out: &Path,
    answers: &AccuracyAnswers,
    benchmark: Option<&Benchmark>,
    dataset_name: &str,
) -> Result<ScoredAnswers, ScoreError> {
    let dir = out.join("accuracy");
    let log = dir.join("mlperf_log_accuracy.json");
    let write_error = |path: &Path, source| ScoreError::Write {
        path: path.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(&dir).map_err(|e| write_error(&dir, e))?;
    std::fs::write(&log, accuracy_log(&answers.answers)).map_err(|e| write_error(&log, e))?;
    let score = match benchmark {
        Some(benchmark) if !matches!(benchmark.accuracy, Accuracy::Unavailable { .. }) => {
            let mut text_answers = benchmark.clone();
            if let Accuracy::Rouge { tokenizer, .. } = &mut text_answers.accuracy {
                *tokenizer = None;
            }
            Some(evaluate_into(&text_answers, &log)?.0)
        }
        _ => None,
    };
    let results = accuracy_results(answers, score.as_ref(), dataset_name);
    Ok(ScoredAnswers {
        score,
        log,
        results,
    })
}

/// LoadGen's accuracy log of the answered samples, in sample order.
fn accuracy_log(answers: &[Option<Vec<u8>>]) -> String {
    let records: Vec<String> = answers
        .iter()
        .enumerate()
        .filter_map(|(sample, answer)| Some((sample, answer.as_ref()?)))
        .enumerate()
        .map(|(seq, (sample, data))| {
            format!(
                "{{ \"seq_id\" : {seq}, \"qsl_idx\" : {sample}, \"data\" : \"{}\" }}",
                hex(data).to_ascii_uppercase()
            )
        })
        .collect();
    format!("[\n{}\n]\n", records.join(",\n"))
}

/// `accuracy_results.json`: one entry of `dataset_type` `accuracy` covering the pass.
pub fn accuracy_results(
    answers: &AccuracyAnswers,
    score: Option<&Score>,
    dataset_name: &str,
) -> Value {
    let issued = answers.answers.len();
    let empty = answers
        .answers
        .iter()
        .flatten()
        .filter(|answer| {
            std::str::from_utf8(answer).map_or(answer.is_empty(), |t| t.trim().is_empty())
        })
        .count();
    let missing = answers.answers.iter().filter(|a| a.is_none()).count();
    let (score_json, extractor) = match score {
        // As the client's ROUGE scorer writes it: percent strings to 4 decimals, the
        // answers' characters (stripped, a sentence a line) and how many were scored.
        Some(Score::Rouge(rouge)) => {
            let characters: usize = answers
                .answers
                .iter()
                .flatten()
                .map(|answer| {
                    lines_of_sentences(&String::from_utf8_lossy(answer))
                        .chars()
                        .count()
                })
                .sum();
            (
                json!({
                    "rouge1": python_float(rouge.rouge1),
                    "rouge2": python_float(rouge.rouge2),
                    "rougeL": python_float(rouge.rouge_l),
                    "rougeLsum": python_float(rouge.rouge_lsum),
                    "gen_len": characters.to_string(),
                    "gen_num": rouge.total,
                }),
                json!("IdentityExtractor"),
            )
        }
        Some(Score::Top1(top1)) => (json!(top1.accuracy()), Value::Null),
        Some(Score::Cosine(cosine)) => (json!(cosine.mean), Value::Null),
        Some(Score::Imagenet(judged)) => (json!(judged.score.percent() / 100.0), Value::Null),
        Some(Score::Coco(judged)) => (json!(judged.score.stats[0]), Value::Null),
        Some(Score::Kits19(judged)) => (json!(judged.score.mean_composite), Value::Null),
        Some(Score::Squad(judged)) => (json!(judged.score.f1), Value::Null),
        Some(Score::Cnndm(judged)) => (json!(judged.score.rouge1), Value::Null),
        Some(Score::Whisper(judged)) => (json!(judged.score.accuracy() / 100.0), Value::Null),
        None => (Value::Null, Value::Null),
    };
    let mut results = serde_json::Map::new();
    if let Some(average) = score_json.as_f64() {
        results.insert("average_accuracy".into(), json!(average));
    }
    results.insert(
        "accuracy_scores".into(),
        json!([{
            "dataset_name": dataset_name,
            "extractor": extractor,
            "ground_truth_column": null,
            "score": score_json,
            "unit_samples": issued,
            "num_repeats": 1,
            "total_samples": issued,
            "duration_s": (answers.duration_s * 1000.0).round() / 1000.0,
            // Every sample of the data set answered (not so with --accuracy-samples).
            "complete": missing == 0 && issued == answers.data_set,
            "dataset_type": "accuracy",
            "response_counts": {
                "issued": issued, "scored": issued - empty - missing, "empty": empty,
                "missing": missing,
            },
        }]),
    );
    Value::Object(results)
}

/// A percentage rounded to 4 decimals as Python's `str` writes a float (`38.7287`, `40.0`).
fn python_float(value: f64) -> String {
    let rounded = (value * 1e4).round() / 1e4;
    if rounded.fract() == 0.0 {
        format!("{rounded:.1}")
    } else {
        format!("{rounded}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benchmark::accuracy::Rouge;

    fn answers() -> AccuracyAnswers {
        AccuracyAnswers {
            answers: vec![
                Some(b" The cat sat.  It purred. ".to_vec()),
                None,
                Some(b"   ".to_vec()),
                Some("Déjà vu".as_bytes().to_vec()),
            ],
            failed: 1,
            abandoned: 0,
            duration_s: 1.23456,
            data_set: 4,
        }
    }

    #[test]
    fn the_log_holds_each_answered_sample_once_in_hex() {
        let log = accuracy_log(&answers().answers);
        let records: Vec<Value> = serde_json::from_str(&log).unwrap();
        assert_eq!(records.len(), 3);
        assert_eq!(records[1]["qsl_idx"], 2);
        assert_eq!(records[1]["seq_id"], 1);
        assert_eq!(
            records[2]["data"],
            hex("Déjà vu".as_bytes()).to_ascii_uppercase()
        );
    }

    fn known_rouge() -> Rouge {
        Rouge {
            rouge1: 38.728_749,
            rouge2: 40.0,
            rouge_l: 24.5,
            rouge_lsum: 24.25,
            tokens_per_sample: None,
            total: 3,
            duplicates: 0,
            reference_tokens_per_sample: 30.0,
            threshold: 0.99,
        }
    }

    #[test]
    fn rouge_is_written_as_the_endpoints_client_writes_it() {
        let results = accuracy_results(&answers(), Some(&Score::Rouge(known_rouge())), "smollm2");
        // A dict score has no average (the client averages numbers only).
        assert!(results.get("average_accuracy").is_none(), "{results}");
        let entry = &results["accuracy_scores"][0];
        assert_eq!(entry["score"]["rouge1"], "38.7287");
        assert_eq!(entry["score"]["rouge2"], "40.0");
        assert_eq!(entry["score"]["rougeL"], "24.5");
        assert_eq!(entry["score"]["rougeLsum"], "24.25");
        // "The cat sat.\nIt purred." and "Déjà vu": 23 + 7 characters (stripped, the
        // sentences a line each, as the client counts them after NLTK's split).
        assert_eq!(entry["score"]["gen_len"], "30");
        assert_eq!(entry["score"]["gen_num"], 3);
        assert_eq!(entry["extractor"], "IdentityExtractor");
        assert_eq!(entry["total_samples"], 4);
        assert_eq!(entry["duration_s"], 1.235);
        assert_eq!(entry["complete"], false);
        assert_eq!(entry["dataset_type"], "accuracy");
        assert_eq!(
            entry["response_counts"],
            json!({"issued": 4, "scored": 2, "empty": 1, "missing": 1})
        );
    }

    #[test]
    fn a_numeric_score_is_also_the_average_and_no_score_is_null() {
        let top1 = crate::benchmark::accuracy::Top1 {
            good: 3,
            total: 4,
            duplicates: 0,
            reference: None,
            threshold: 0.99,
        };
        let results = accuracy_results(&answers(), Some(&Score::Top1(top1)), "digits");
        assert_eq!(results["average_accuracy"], 0.75);
        assert_eq!(results["accuracy_scores"][0]["score"], 0.75);
        let results = accuracy_results(&answers(), None, "x");
        assert!(results["accuracy_scores"][0]["score"].is_null());
        assert!(results.get("average_accuracy").is_none());
    }

    const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/endpoints");

    /// The known results are the file the official parser read in accuracy mode, and it read
    /// our score and sample count from it (regenerate with MLPERF_HOST_UPDATE_FIXTURES=1, then
    /// parse again: tests/data/endpoints/README.md).
    #[test]
    fn the_official_parser_reads_our_score_and_sample_count() {
        let results = accuracy_results(&answers(), Some(&Score::Rouge(known_rouge())), "smollm2");
        let written = serde_json::to_string_pretty(&results).unwrap();
        let file = Path::new(FIXTURE).join("point/accuracy/accuracy_results.json");
        if std::env::var_os("MLPERF_HOST_UPDATE_FIXTURES").is_some() {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, &written).unwrap();
        }
        assert_eq!(written, std::fs::read_to_string(&file).unwrap());
        let parsed: Value = serde_json::from_str(
            &std::fs::read_to_string(Path::new(FIXTURE).join("parsed-accuracy.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            parsed["accuracy_score"],
            results["accuracy_scores"][0]["score"]
        );
        assert_eq!(parsed["effective_accuracy_sample_count"], 4);
    }
}
