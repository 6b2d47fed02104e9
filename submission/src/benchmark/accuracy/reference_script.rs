//! The reference's own accuracy script, run on a log: what the submission checker expects
//! accuracy.txt to hold. The native scorer's line must agree with the script's; accuracy.txt
//! then holds the script's line, with the native one beside it.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{AccuracyError, Score};
use crate::benchmark::definition::{Accuracy, Benchmark};

/// How the reference scores this benchmark's logs: its script inside an inference checkout,
/// and the flags MLCommons' automation passes it.
pub fn reference_command(
    benchmark: &Benchmark,
    checkout: &Path,
    python: &Path,
    log: &Path,
) -> Result<Command, AccuracyError> {
    let unavailable = |why: &str| AccuracyError::Unavailable {
        benchmark: benchmark.name.clone(),
        why: why.to_string(),
    };
    match &benchmark.accuracy {
        Accuracy::Imagenet { dtype } => {
            let script = script(
                checkout,
                "vision/classification_and_detection/tools/accuracy-imagenet.py",
            )?;
            let mut command = Command::new(python);
            command
                .arg(script)
                .arg("--mlperf-accuracy-file")
                .arg(log)
                .arg("--imagenet-val-file")
                .arg(benchmark.val_map())
                .arg("--dtype")
                .arg(dtype.name());
            Ok(command)
        }
        Accuracy::Coco => {
            // No --use-inv-map: the records carry COCO ids already.
            let script = script(
                checkout,
                "vision/classification_and_detection/tools/accuracy-coco.py",
            )?;
            let mut command = Command::new(python);
            command
                .arg(script)
                .arg("--mlperf-accuracy-file")
                .arg(log)
                .arg("--coco-dir")
                .arg(&benchmark.inputs);
            Ok(command)
        }
        Accuracy::Kits19 => {
            // Its predictions go back to NIfTI files in a folder of its own, beside the log;
            // it reads the case list and ground truth from the preprocessed folder, and its
            // global_vars.py the case lists under ./meta: it runs in its own folder.
            let script = script(
                checkout,
                "vision/medical_imaging/3d-unet-kits19/accuracy_kits.py",
            )?;
            let absolute = |path: &Path| std::path::absolute(path).unwrap_or(path.to_path_buf());
            let log = absolute(log);
            let postprocessed = log.with_file_name("reference_postprocessed");
            let mut command = Command::new(python);
            command
                .current_dir(script.parent().unwrap_or(checkout))
                .arg(&script)
                .arg("--log_file")
                .arg(&log)
                .arg("--preprocessed_data_dir")
                .arg(absolute(&benchmark.inputs))
                .arg("--postprocessed_data_dir")
                .arg(postprocessed)
                .arg("--output_dtype")
                .arg("uint8");
            Ok(command)
        }
        Accuracy::Squad => {
            // It caches its features in the file it is given and reads them back when it is
            // there: a cache left by another data set would score against the wrong features,
            // so each run starts without one. It shells out to `python3 evaluate_v1.1.py`
            // (the standard library only) from PATH for the printed line.
            let script = script(checkout, "language/bert/accuracy-squad.py")?;
            let absolute = |path: &Path| std::path::absolute(path).unwrap_or(path.to_path_buf());
            let log = absolute(log);
            let cache = log.with_file_name("reference_eval_features.pickle");
            if cache.exists() {
                std::fs::remove_file(&cache).map_err(|e| AccuracyError::File {
                    path: cache.clone(),
                    message: format!("cannot remove the reference's stale feature cache: {e}"),
                })?;
            }
            let dir = absolute(&benchmark.inputs);
            let mut command = Command::new(python);
            command
                .current_dir(script.parent().unwrap_or(checkout))
                .arg(&script)
                .arg("--vocab_file")
                .arg(dir.join(crate::datasets::squad::VOCAB))
                .arg("--val_data")
                .arg(dir.join(crate::datasets::squad::DEV_SET))
                .arg("--log_file")
                .arg(&log)
                .arg("--out_file")
                .arg(log.with_file_name("reference_predictions.json"))
                .arg("--features_cache_file")
                .arg(cache)
                .arg("--output_dtype")
                .arg("float32");
            Ok(command)
        }
        Accuracy::Cnndm {
            dtype,
            script: super::RougeScript::EvaluateAccuracy,
            ..
        } => {
            // It reads the pickle (pandas) and loads evaluate's "rouge" metric (a ./rouge/
            // folder first): it runs in its own folder too. --checkpoint-path is the
            // tokenizer's folder, which it loads as the slow (sentencepiece) tokenizer.
            let script = script(checkout, "language/llama2-70b/evaluate-accuracy.py")?;
            let absolute = |path: &Path| std::path::absolute(path).unwrap_or(path.to_path_buf());
            let tokenizer = benchmark
                .tokenizer
                .as_deref()
                .and_then(Path::parent)
                .ok_or_else(|| unavailable("it names no tokenizer"))?;
            let folder = benchmark.dataset_list();
            let pickle = folder
                .parent()
                .unwrap_or(Path::new("."))
                .join(crate::datasets::openorca::PICKLE);
            if !pickle.is_file() {
                return Err(unavailable(&format!(
                    "the reference script reads the pickle, and {} does not exist (`dataset convert` links it beside the file it writes)",
                    pickle.display()
                )));
            }
            let mut command = Command::new(python);
            command
                .current_dir(script.parent().unwrap_or(checkout))
                .arg(&script)
                .arg("--checkpoint-path")
                .arg(absolute(tokenizer))
                .arg("--mlperf-accuracy-file")
                .arg(absolute(log))
                .arg("--dataset-file")
                .arg(absolute(&pickle))
                .arg("--dtype")
                .arg(token_dtype(*dtype));
            Ok(command)
        }
        Accuracy::Cnndm { dtype, .. } => {
            // It imports its dataset.py from its folder and loads evaluate's "rouge" metric
            // (a ./rouge/ folder first, then the Hub): it runs in its own folder, as the
            // reference's run_accuracy.sh runs it. --model-name is the tokenizer's folder.
            let script = script(checkout, "language/llama3.1-8b/evaluation.py")?;
            let absolute = |path: &Path| std::path::absolute(path).unwrap_or(path.to_path_buf());
            let tokenizer = benchmark
                .tokenizer
                .as_deref()
                .and_then(Path::parent)
                .ok_or_else(|| unavailable("it names no tokenizer"))?;
            let mut command = Command::new(python);
            command
                .current_dir(script.parent().unwrap_or(checkout))
                .arg(&script)
                .arg("--mlperf-accuracy-file")
                .arg(absolute(log))
                .arg("--dataset-file")
                .arg(absolute(&benchmark.dataset_list()))
                .arg("--dtype")
                .arg(token_dtype(*dtype))
                .arg("--model-name")
                .arg(absolute(tokenizer));
            Ok(command)
        }
        Accuracy::Whisper { .. } => {
            // It imports manifest.py and the helpers from its own folder and
            // whisper.normalizers from openai-whisper (whose package __init__ imports torch);
            // --output_dtype int64 as MLCommons' automation passes it.
            let script = script(checkout, "speech2text/accuracy_eval.py")?;
            if log.file_name() != Some(std::ffi::OsStr::new(crate::logs::ACCURACY_LOG)) {
                return Err(unavailable(&format!(
                    "accuracy_eval.py reads the log folder's {}, and the log given is {}",
                    crate::logs::ACCURACY_LOG,
                    log.display()
                )));
            }
            let absolute = |path: &Path| std::path::absolute(path).unwrap_or(path.to_path_buf());
            let log = absolute(log);
            let mut command = Command::new(python);
            command
                .current_dir(script.parent().unwrap_or(checkout))
                .arg(&script)
                .arg("--log_dir")
                .arg(log.parent().unwrap_or(Path::new(".")))
                .arg("--dataset_dir")
                .arg(absolute(&benchmark.inputs))
                .arg("--manifest")
                .arg(absolute(&benchmark.dataset_list()))
                .arg("--output_dtype")
                .arg("int64");
            Ok(command)
        }
        _ => Err(unavailable(
            "it is the project's own benchmark: there is no reference script to run",
        )),
    }
}

fn token_dtype(dtype: super::TokenDtype) -> &'static str {
    match dtype {
        super::TokenDtype::Int32 => "int32",
        super::TokenDtype::Int64 => "int64",
    }
}

fn script(checkout: &Path, relative: &str) -> Result<PathBuf, AccuracyError> {
    let path = checkout.join(relative);
    if path.is_file() {
        Ok(path)
    } else {
        Err(AccuracyError::File {
            path,
            message: format!(
                "no such file: --reference-script names a checkout of mlcommons/inference ({} holds no {relative})",
                checkout.display()
            ),
        })
    }
}

/// The reference script's verdict beside the native one.
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceLine {
    /// The script's stdout, as printed.
    pub printed: String,
    /// The command, for the report.
    pub command: String,
}

/// Runs `command` and checks that the line it prints is the native `score`'s.
pub fn run_and_compare(
    mut command: Command,
    score: &Score,
) -> Result<ReferenceLine, AccuracyError> {
    let shown = format!("{command:?}");
    let output = command.output().map_err(|e| AccuracyError::Reference {
        command: shown.clone(),
        message: format!("cannot start it: {e}"),
    })?;
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        return Err(AccuracyError::Reference {
            command: shown,
            message: format!(
                "exited with {}: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ),
        });
    }
    let native = score.report();
    let native_line = native.lines().next().unwrap_or_default();
    if !printed.lines().any(|line| line == native_line) {
        return Err(AccuracyError::Reference {
            command: shown,
            message: format!(
                "it printed {:?}, the native scorer {native_line:?}: they must agree",
                printed.trim_end()
            ),
        });
    }
    Ok(ReferenceLine {
        printed,
        command: shown,
    })
}

/// accuracy.txt with the reference's own output first (what the checker reads), then the
/// native scorer's report, each of its lines marked so that no checker pattern reads them.
pub fn report_with_reference(score: &Score, reference: &ReferenceLine) -> String {
    let mut text = reference.printed.clone();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("reference script: {}\n", reference.command));
    for line in score.report().lines() {
        text.push_str("native: ");
        text.push_str(line);
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// accuracy-squad.py reads the folder's dev set and vocabulary (absolute paths) and
    /// writes its predictions and features cache beside the log, the cache of an earlier run
    /// removed first (the script would read it back).
    #[test]
    fn accuracy_squad_runs_on_the_folders_files_without_a_stale_cache() {
        let checkout = std::env::temp_dir().join(format!("inference-squad-{}", std::process::id()));
        let folder = checkout.join("language/bert");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("accuracy-squad.py"), "").unwrap();
        let definition =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/benchmarks/bert-99.toml");
        let benchmark = Benchmark::read(&definition).unwrap();
        let runs = checkout.join("runs");
        std::fs::create_dir_all(&runs).unwrap();
        let log = runs.join("mlperf_log_accuracy.json");
        let stale = runs.join("reference_eval_features.pickle");
        std::fs::write(&stale, "another data set's features").unwrap();
        let command = reference_command(&benchmark, &checkout, Path::new("python3"), &log).unwrap();
        assert!(!stale.exists(), "the cache of an earlier run is removed");
        assert_eq!(command.get_current_dir(), Some(folder.as_path()));
        let args: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(
            args[0].ends_with("language/bert/accuracy-squad.py"),
            "{args:?}"
        );
        let flag = |name: &str| {
            let at = args.iter().position(|a| a == name).unwrap();
            args[at + 1].clone()
        };
        assert!(flag("--vocab_file").ends_with("tests/fixtures/squad/vocab.txt"));
        assert!(flag("--val_data").ends_with("tests/fixtures/squad/dev-v1.1.json"));
        assert!(Path::new(&flag("--val_data")).is_absolute());
        assert_eq!(flag("--log_file"), log.to_str().unwrap());
        assert_eq!(
            flag("--out_file"),
            runs.join("reference_predictions.json").to_str().unwrap()
        );
        assert_eq!(flag("--features_cache_file"), stale.to_str().unwrap());
        assert_eq!(flag("--output_dtype"), "float32");
        std::fs::remove_dir_all(&checkout).unwrap();
    }

    /// evaluation.py runs in its own folder (its dataset.py and ./rouge metric), on absolute
    /// paths, with the tokenizer's folder as --model-name.
    #[test]
    fn evaluation_py_runs_in_its_folder_on_the_tokenizers_folder() {
        let checkout = std::env::temp_dir().join(format!("inference-llama-{}", std::process::id()));
        let folder = checkout.join("language/llama3.1-8b");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("evaluation.py"), "").unwrap();
        let definition =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/benchmarks/llama3.1-8b.toml");
        let benchmark = Benchmark::read(&definition).unwrap();
        let log = Path::new("/runs/accuracy/mlperf_log_accuracy.json");
        let command = reference_command(&benchmark, &checkout, Path::new("python3"), log).unwrap();
        assert_eq!(command.get_current_dir(), Some(folder.as_path()));
        let args: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let flag = |name: &str| {
            let at = args.iter().position(|a| a == name).unwrap();
            args[at + 1].clone()
        };
        assert_eq!(flag("--mlperf-accuracy-file"), log.to_str().unwrap());
        assert!(flag("--dataset-file").ends_with("tests/fixtures/cnndm/cnn_eval.json"));
        assert!(Path::new(&flag("--dataset-file")).is_absolute());
        assert_eq!(flag("--dtype"), "int32");
        assert!(flag("--model-name").ends_with("tests/fixtures/cnndm/tokenizer"));
        std::fs::remove_dir_all(&checkout).unwrap();
    }

    /// llama2-70b's evaluate-accuracy.py runs in its own folder too (its ./rouge metric), on
    /// the pickle beside the converted file and the tokenizer's folder as --checkpoint-path;
    /// without the pickle it says where it looked.
    #[test]
    fn evaluate_accuracy_py_reads_the_pickle_beside_the_converted_records() {
        let checkout = tempfile::tempdir().unwrap();
        let folder = checkout.path().join("language/llama2-70b");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("evaluate-accuracy.py"), "").unwrap();
        let definition = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../configs/benchmarks/llama2-70b-99.9.toml");
        let benchmark = Benchmark::read(&definition).unwrap();
        let log = Path::new("/runs/accuracy/mlperf_log_accuracy.json");
        let python = Path::new("python3");
        let command = reference_command(&benchmark, checkout.path(), python, log).unwrap();
        assert_eq!(command.get_current_dir(), Some(folder.as_path()));
        let args: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let flag = |name: &str| {
            let at = args.iter().position(|a| a == name).unwrap();
            args[at + 1].clone()
        };
        assert!(flag("--checkpoint-path").ends_with("tests/fixtures/openorca/tokenizer"));
        assert_eq!(flag("--mlperf-accuracy-file"), log.to_str().unwrap());
        assert!(flag("--dataset-file")
            .ends_with("openorca/open_orca_gpt4_tokenized_llama.sampled_24576.pkl"));
        assert!(Path::new(&flag("--dataset-file")).is_absolute());
        assert_eq!(flag("--dtype"), "int32");

        let converted = tempfile::tempdir().unwrap();
        let benchmark = benchmark.with_dataset_dir(converted.path()).unwrap();
        let error = reference_command(&benchmark, checkout.path(), python, log)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("reads the pickle") && error.contains("does not exist"),
            "{error}"
        );
    }

    /// accuracy_kits.py runs in its own folder (its global_vars.py reads ./meta), on absolute
    /// paths, with the flags MLCommons' automation passes it. (Run against the real script on
    /// the KiTS19 fixture: its line matched the native one; docs/benchmarks.md.)
    #[test]
    fn accuracy_kits_runs_in_its_folder_with_the_automations_flags() {
        let checkout = std::env::temp_dir().join(format!("inference-{}", std::process::id()));
        let folder = checkout.join("vision/medical_imaging/3d-unet-kits19");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("accuracy_kits.py"), "").unwrap();
        let definition =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/benchmarks/3d-unet-99.toml");
        let benchmark = Benchmark::read(&definition).unwrap();
        let log = Path::new("/runs/accuracy/mlperf_log_accuracy.json");
        let command = reference_command(&benchmark, &checkout, Path::new("python3"), log).unwrap();
        assert_eq!(command.get_current_dir(), Some(folder.as_path()));
        let args: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(
            args[0].ends_with("3d-unet-kits19/accuracy_kits.py"),
            "{args:?}"
        );
        assert_eq!(
            args[1..3],
            ["--log_file", "/runs/accuracy/mlperf_log_accuracy.json"]
        );
        assert_eq!(args[3], "--preprocessed_data_dir");
        assert!(Path::new(&args[4]).is_absolute() && args[4].ends_with("preprocessed_data"));
        assert_eq!(
            args[5..],
            [
                "--postprocessed_data_dir",
                "/runs/accuracy/reference_postprocessed",
                "--output_dtype",
                "uint8"
            ]
        );
        std::fs::remove_dir_all(&checkout).unwrap();
    }
}
