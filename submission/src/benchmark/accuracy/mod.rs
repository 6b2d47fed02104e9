//! Scoring a run: reads `mlperf_log_accuracy.json` and computes the benchmark's metric, as
//! MLPerf's accuracy scripts do (each sample counted once, by `qsl_idx`), and writes
//! `accuracy.txt`. One file per metric: top-1 classification (`top1.rs`), cosine similarity
//! to reference embeddings (`cosine.rs`) and ROUGE of generated text (`rouge.rs`).

mod cnndm;
mod coco;
mod cosine;
mod imagenet;
mod kits19;
mod porter;
pub mod reference_script;
mod rouge;
mod sentences;
mod squad;
mod target;
mod top1;
mod whisper;

use std::path::{Path, PathBuf};

pub use cnndm::{
    clean_up_spaces_of, slow_llama_of, CnnDmRouge, CnnDmScorer, RougeScript, TokenDtype,
};
pub use coco::CocoMap;
pub use cosine::Cosine;
pub use imagenet::{ClassDtype, ImagenetTop1};
pub use kits19::KitsDice;
pub use rouge::Rouge;
pub use sentences::lines_of_sentences;
pub use squad::SquadF1;
pub use target::{Judged, TargetCheck};
pub use top1::Top1;
pub use whisper::WhisperWer;

use super::definition::{Accuracy, Benchmark};
use crate::logs::accuracy::decode_hex;
use crate::logs::accuracy::{read_accuracy_log, AccuracyLogEntry, AccuracyLogError};

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
        qsl_idx: u64,
        message: String,
    },
    #[error(transparent)]
    Log(#[from] AccuracyLogError),
    #[error(transparent)]
    Dataset(#[from] crate::datasets::DatasetError),
    #[error("the reference's accuracy script ({command}): {message}")]
    Reference { command: String, message: String },
    #[error(transparent)]
    Tokenizer(#[from] mlperf_tokenizer::TokenizerError),
}

/// A run's score under its benchmark's metric.
#[derive(Debug, Clone, PartialEq)]
pub enum Score {
    Top1(Top1),
    Cosine(Cosine),
    Rouge(Rouge),
    /// ResNet-50's top-1 on ImageNet, judged by the round's target.
    Imagenet(Judged<ImagenetTop1>),
    /// YOLO's COCO mAP, judged by the round's target.
    Coco(Judged<CocoMap>),
    /// 3D-UNet's mean DICE on KiTS19, judged by the round's target.
    Kits19(Judged<KitsDice>),
    /// BERT's exact match and F1 on SQuAD v1.1, judged by the round's target.
    Squad(Judged<SquadF1>),
    /// llama3.1-8b's ROUGE and answer length on CNN-DailyMail, judged by the round's targets.
    Cnndm(Judged<CnnDmRouge>),
    /// whisper's word error rate on LibriSpeech, judged by the round's target.
    Whisper(Judged<WhisperWer>),
}

impl Score {
    /// Whether the score reaches the benchmark's target; true where there is no target to
    /// reach (a top-1 score without a reference).
    pub fn passes(&self) -> bool {
        match self {
            Score::Top1(top1) => top1.meets_reference().unwrap_or(true),
            Score::Cosine(cosine) => cosine.passes(),
            Score::Rouge(rouge) => rouge.passes(),
            Score::Imagenet(judged) => judged.passes(),
            Score::Coco(judged) => judged.passes(),
            Score::Kits19(judged) => judged.passes(),
            Score::Squad(judged) => judged.passes(),
            Score::Cnndm(judged) => judged.passes(),
            Score::Whisper(judged) => judged.passes(),
        }
    }

    /// The name accuracy.txt gives the headline figure (`accuracy=…`, `mean_cosine=…`).
    pub fn metric_name(&self) -> &'static str {
        match self {
            Score::Top1(_) => "accuracy",
            Score::Cosine(_) => "mean_cosine",
            Score::Rouge(_) => "rouge1",
            Score::Imagenet(_) => "accuracy",
            Score::Coco(_) => "mAP",
            Score::Kits19(_) => "DICE",
            Score::Squad(_) => "F1",
            Score::Cnndm(_) => "rouge1",
            Score::Whisper(_) => "accuracy",
        }
    }

    /// `accuracy.txt`: the line MLPerf's scripts print, then the comparison with the reference.
    pub fn report(&self) -> String {
        match self {
            Score::Top1(score) => score.report(),
            Score::Cosine(score) => score.report(),
            Score::Rouge(score) => score.report(),
            Score::Imagenet(judged) => judged_report(
                &judged.score.line(),
                judged.score.duplicates,
                "samples",
                judged,
            ),
            Score::Coco(judged) => {
                let mut text = format!("{}\n", judged.score.line);
                for line in &judged.score.counts {
                    text.push_str(line);
                    text.push('\n');
                }
                text + &judged.target_lines()
            }
            Score::Kits19(judged) => format!("{}\n", judged.score.line) + &judged.target_lines(),
            Score::Squad(judged) => judged_report(
                &judged.score.line,
                judged.score.duplicates,
                "features",
                judged,
            ),
            Score::Cnndm(judged) => judged_report(
                &judged.score.line(),
                judged.score.duplicates,
                "samples",
                judged,
            ),
            Score::Whisper(judged) => {
                let mut text = format!("{}\n", judged.score.line());
                if judged.score.repeats > 0 {
                    text.push_str(&format!(
                        "repeats={} (records for clips logged before, scored again as the script scores every record)\n",
                        judged.score.repeats
                    ));
                }
                text + &judged.target_lines()
            }
        }
    }
}

/// A judged score's report: its line, the records ignored as repeats of `what`, the targets.
fn judged_report<S>(line: &str, duplicates: usize, what: &str, judged: &Judged<S>) -> String {
    let mut text = format!("{line}\n");
    if duplicates > 0 {
        text.push_str(&format!(
            "duplicates={duplicates} (records for {what} already counted, ignored)\n"
        ));
    }
    text + &judged.target_lines()
}

/// The accuracy log's records, each sample's first one decoded (later ones are counted as
/// duplicates): calls `each(qsl_idx, bytes)` and returns the number of duplicates.
fn for_each_response(
    log: &Path,
    samples: usize,
    what: &str,
    mut each: impl FnMut(usize, &[u8]) -> Result<(), String>,
) -> Result<usize, AccuracyError> {
    for_each_record(log, samples, what, |index, bytes, _| each(index, bytes))
}

/// As `for_each_response`, with each record's token count (token runs).
fn for_each_record(
    log: &Path,
    samples: usize,
    what: &str,
    mut each: impl FnMut(usize, &[u8], Option<i64>) -> Result<(), String>,
) -> Result<usize, AccuracyError> {
    for_each_logged(log, samples, what, |index, record, repeat| {
        if repeat {
            return Ok(());
        }
        let bytes = decode_hex(&record.data)?;
        each(index, &bytes, record.token_count)
    })
}

/// Every record of the accuracy log, in order, with whether its sample was logged before
/// (the caller decides which record of a sample counts): returns the number of repeats.
fn for_each_logged(
    log: &Path,
    samples: usize,
    what: &str,
    mut each: impl FnMut(usize, &AccuracyLogEntry, bool) -> Result<(), String>,
) -> Result<usize, AccuracyError> {
    let records = read_accuracy_log(log)?;
    let mut seen = vec![false; samples];
    let mut duplicates = 0;
    for (number, record) in records.iter().enumerate() {
        let record_error = |message: String| AccuracyError::Record {
            path: log.to_path_buf(),
            record: number,
            qsl_idx: record.qsl_idx,
            message,
        };
        let index = usize::try_from(record.qsl_idx).unwrap_or(usize::MAX);
        let Some(seen) = seen.get_mut(index) else {
            return Err(record_error(format!("beyond the {samples} {what}")));
        };
        let repeat = std::mem::replace(seen, true);
        duplicates += usize::from(repeat);
        each(index, record, repeat).map_err(record_error)?;
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
        Accuracy::Rouge {
            references,
            threshold,
            tokenizer,
        } => rouge::evaluate(log, references, *threshold, tokenizer.as_deref()).map(Score::Rouge),
        Accuracy::Imagenet { dtype } => {
            let list = crate::datasets::imagenet::ValMap::read(&benchmark.val_map())?;
            let score = imagenet::evaluate(log, &list, *dtype)?;
            Ok(Score::Imagenet(judged(benchmark, &score.line(), score)))
        }
        Accuracy::Coco => {
            let list = crate::datasets::coco::CocoList::read(&benchmark.inputs)?;
            let score = coco::evaluate(log, &list)?;
            let line = score.line.clone();
            Ok(Score::Coco(judged(benchmark, &line, score)))
        }
        Accuracy::Kits19 => {
            let list = crate::datasets::kits19::KitsList::read(&benchmark.inputs)?;
            let score = kits19::evaluate(log, &benchmark.inputs, &list)?;
            let line = score.line.clone();
            Ok(Score::Kits19(judged(benchmark, &line, score)))
        }
        Accuracy::Squad => {
            let set = crate::datasets::squad::SquadSet::open(&benchmark.inputs)?;
            let score = squad::evaluate(log, &set)?;
            let line = score.line.clone();
            Ok(Score::Squad(judged(benchmark, &line, score)))
        }
        Accuracy::Cnndm {
            punkt,
            dtype,
            script,
        } => {
            let set = crate::datasets::token_prompts(benchmark.format, &benchmark.dataset_list())?;
            let tokenizer_path =
                benchmark
                    .tokenizer
                    .as_deref()
                    .ok_or_else(|| AccuracyError::Unavailable {
                        benchmark: benchmark.name.clone(),
                        why: "it names no tokenizer to decode the answers".into(),
                    })?;
            let tokenizer = mlperf_tokenizer::Tokenizer::from_file(tokenizer_path)?;
            let tokenizer_dir = tokenizer_path.parent().unwrap_or(Path::new("."));
            let clean_up_spaces = clean_up_spaces_of(tokenizer_dir)?;
            let slow_llama = cnndm::slow_llama_of(tokenizer_dir)?;
            let params = mlperf_punkt::PunktParameters::read_punkt_tab(punkt)
                .map_err(|e| file_error(punkt, e.to_string()))?;
            let punkt = mlperf_punkt::SentenceTokenizer::new(params);
            let scorer = CnnDmScorer {
                set: &set,
                tokenizer: &tokenizer,
                clean_up_spaces,
                slow_llama,
                punkt: &punkt,
                script: *script,
            };
            let score = scorer.evaluate(log, *dtype)?;
            let line = score.line();
            Ok(Score::Cnndm(judged(benchmark, &line, score)))
        }
        Accuracy::Whisper { spelling_map } => {
            let manifest = crate::datasets::librispeech::open(&benchmark.inputs)?;
            let map = mlperf_whisper::normalizer::SpellingMap::read(spelling_map)
                .map_err(|e| file_error(spelling_map, e.to_string()))?;
            let normalizer = mlperf_whisper::normalizer::EnglishTextNormalizer::new(map);
            let score = whisper::evaluate(log, &manifest, &normalizer)?;
            let line = score.line();
            Ok(Score::Whisper(judged(benchmark, &line, score)))
        }
        Accuracy::Unavailable { why } => Err(AccuracyError::Unavailable {
            benchmark: benchmark.name.clone(),
            why: why.clone(),
        }),
    }
}

/// `score` with the verdicts of the round's targets for `benchmark`, read off `line`.
fn judged<S>(benchmark: &Benchmark, line: &str, score: S) -> Judged<S> {
    let (round, targets) = target::round_targets(&benchmark.name);
    Judged {
        score,
        round,
        targets: target::judge(line, &targets),
    }
}

/// Scores the log and writes `accuracy.txt` beside it; returns the score.
pub fn evaluate_into(benchmark: &Benchmark, log: &Path) -> Result<(Score, PathBuf), AccuracyError> {
    let score = evaluate(benchmark, log)?;
    let out = log.with_file_name(crate::logs::ACCURACY_TXT);
    std::fs::write(&out, score.report()).map_err(|e| file_error(&out, e.to_string()))?;
    Ok((score, out))
}

fn file_error(path: &Path, message: String) -> AccuracyError {
    AccuracyError::File {
        path: path.to_path_buf(),
        message,
    }
}

fn read_json(path: &Path) -> Result<serde_json::Value, AccuracyError> {
    let text = std::fs::read_to_string(path).map_err(|e| file_error(path, e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| file_error(path, format!("invalid JSON: {e}")))
}

fn read_reference_json(path: &Path) -> Result<(serde_json::Value, String), AccuracyError> {
    let json = read_json(path)?;
    let version = json
        .get("onnxruntime_version")
        .and_then(|v| v.as_str())
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    let source = format!("ONNX Runtime{version} from Python on the same model");
    Ok((json, source))
}
