//! The ONNX Runtime plugin on real models and data, through the `mlperf-host` binary: every
//! scenario on `digits` and `fmnist`, accuracy equal to ONNX Runtime's own Python result on the
//! same model (computed here) for them and for the `minilm` sentence encoder (three stacked
//! inputs, cosine metric), clear errors for a bad model, provider or library, and a Server run
//! with dynamic batching inside its latency bound.
//!
//! Needs what `bash scripts/test.sh` sets up: the .venv with onnxruntime 1.31.1 and
//! `data/{digits,fmnist,minilm}` (scripts/benchmarks/prepare.sh).

use crate::support;

use std::path::Path;
use std::process::{Command, Output};

use support::{accuracy_records, ort_library, repo, require_data, TempDir};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// One test of this file at a time: each runs ONNX Runtime on every core, and on a 2-core
/// machine a Server run beside another test would miss its latency bound for want of CPU.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn mlperf_host(dir: &Path, args: &[&str]) -> Output {
    Command::new(EXE)
        .args(args)
        .current_dir(repo())
        .env("ORT_DYLIB_PATH", ort_library())
        .env_remove("MLPERF_HOST_LOG")
        .arg("--out")
        .arg(dir)
        .output()
        .expect("run mlperf-host")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_ok(output: &Output) -> String {
    support::assert_success(output)
}

/// Settings that keep a performance run to a second or so.
const QUICK: [&str; 4] = [
    "--set",
    "min_duration_ms=300",
    "--set",
    "min_query_count=100",
];

#[test]
fn every_scenario_runs_valid_on_digits_and_fmnist() {
    let _serial = one_at_a_time();
    for benchmark in ["digits", "fmnist"] {
        require_data(benchmark);
        for scenario in ["SingleStream", "MultiStream", "Server", "Offline"] {
            let out = TempDir::new();
            let mut args = vec!["run", "--benchmark", benchmark, "--scenario", scenario];
            args.extend_from_slice(&QUICK);
            if scenario == "Server" {
                args.extend_from_slice(&["--set", "server_target_qps=500"]);
            }
            if scenario == "Offline" {
                // Enough samples to outlast the minimum duration on a fast machine.
                args.extend_from_slice(&[
                    "--set",
                    "offline_expected_qps=30000000",
                    "--set",
                    "min_duration_ms=100",
                ]);
            }
            let stdout = assert_ok(&mlperf_host(out.path(), &args));
            // p99 needs 662 queries for early stopping at 500 qps: MultiStream/Server may be
            // INVALID for that alone; the run itself must have completed every sample.
            assert!(
                stdout.contains(&format!("Scenario : {scenario}")),
                "{stdout}"
            );
            let result: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(out.path().join("result.json")).unwrap(),
            )
            .unwrap();
            let validity = &result["performance"]["validity"];
            assert_eq!(
                validity["all_samples_completed"], true,
                "{benchmark} {scenario}: {validity}"
            );
            assert!(
                result["provenance"]
                    .to_string()
                    .contains("plugin_attribute_onnxruntime_version"),
                "{}",
                result["provenance"]
            );
            if matches!(scenario, "SingleStream" | "Offline") {
                assert!(
                    stdout.contains("Result is : VALID"),
                    "{benchmark} {scenario}: {stdout}"
                );
            }
        }
    }
}

/// Top-1 `good` count of ONNX Runtime's Python API on the benchmark's model and inputs.
fn python_good_count(benchmark: &str) -> usize {
    let python = repo().join(".venv/bin/python");
    let data = repo().join("data").join(benchmark);
    let script = r#"
import sys, numpy as np, onnxruntime as ort
data = sys.argv[1]
options = ort.SessionOptions()
options.intra_op_num_threads = 1
session = ort.InferenceSession(data + "/model.onnx", options, providers=["CPUExecutionProvider"])
inputs = np.load(data + "/inputs.npy")
labels = np.load(data + "/labels.npy")
predicted = session.run(["label"], {session.get_inputs()[0].name: inputs})[0]
print(int((predicted.reshape(-1) == labels.reshape(-1)).sum()))
"#;
    let output = Command::new(python)
        .args(["-c", script])
        .arg(&data)
        .output()
        .expect("run the venv's python");
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stdout).trim().parse().unwrap()
}

#[test]
fn accuracy_equals_onnx_runtimes_own_python_result() {
    let _serial = one_at_a_time();
    for benchmark in ["digits", "fmnist"] {
        require_data(benchmark);
        let out = TempDir::new();
        let stdout = assert_ok(&mlperf_host(
            out.path(),
            &[
                "run",
                "--benchmark",
                benchmark,
                "--scenario",
                "Offline",
                "--mode",
                "AccuracyOnly",
            ],
        ));
        let expected = python_good_count(benchmark);
        let accuracy = std::fs::read_to_string(out.path().join("accuracy.txt")).unwrap();
        assert!(
            accuracy.contains(&format!("good={expected}, ")),
            "{benchmark}: Python says {expected} correct; we wrote:\n{accuracy}"
        );
        assert!(accuracy.contains("PASS"), "{accuracy}");
        assert!(stdout.ends_with(&accuracy));
    }
}

/// Mean cosine, over the data set, of ONNX Runtime's Python API on minilm's model and tokens
/// with the committed reference embeddings.
fn python_minilm_mean_cosine() -> f64 {
    let python = repo().join(".venv/bin/python");
    let script = r#"
import sys, numpy as np, onnxruntime as ort
repo = sys.argv[1]
options = ort.SessionOptions()
options.intra_op_num_threads = 2
session = ort.InferenceSession(repo + "/data/minilm/model.onnx", options,
                               providers=["CPUExecutionProvider"])
tokens = np.load(repo + "/data/minilm/tokens.npy")
reference = np.load(repo + "/configs/benchmarks/minilm/reference.npy").astype(np.float64)
names = ["input_ids", "attention_mask", "token_type_ids"]
out = np.concatenate([
    session.run(["sentence_embedding"], {n: tokens[i:i + 32, k] for k, n in enumerate(names)})[0]
    for i in range(0, len(tokens), 32)]).astype(np.float64)
cos = (out * reference).sum(1) / np.linalg.norm(out, axis=1) / np.linalg.norm(reference, axis=1)
print(repr(float(cos.mean())))
"#;
    let output = Command::new(python)
        .args(["-c", script])
        .arg(repo())
        .output()
        .expect("run the venv's python");
    assert!(output.status.success(), "{}", text(&output.stderr));
    text(&output.stdout).trim().parse().unwrap()
}

#[test]
fn minilm_embeddings_match_onnx_runtimes_own_python_result() {
    let _serial = one_at_a_time();
    require_data("minilm");
    let out = TempDir::new();
    let stdout = assert_ok(&mlperf_host(
        out.path(),
        &[
            "run",
            "--benchmark",
            "minilm",
            "--scenario",
            "Offline",
            "--mode",
            "AccuracyOnly",
        ],
    ));
    let accuracy = std::fs::read_to_string(out.path().join("accuracy.txt")).unwrap();
    assert!(stdout.ends_with(&accuracy));
    assert!(accuracy.contains("total=456"), "{accuracy}");
    assert!(accuracy.contains("PASS"), "{accuracy}");
    let ours: f64 = accuracy
        .strip_prefix("mean_cosine=")
        .and_then(|rest| rest.split(',').next())
        .and_then(|mean| mean.parse().ok())
        .unwrap_or_else(|| panic!("no mean_cosine in:\n{accuracy}"));
    let python = python_minilm_mean_cosine();
    // Printed to 6 decimals; batching may move the last float bits.
    assert!(
        (ours - python).abs() < 2e-6,
        "ours {ours}, ONNX Runtime from Python {python}:\n{accuracy}"
    );

    // A performance run takes the same stacked samples one at a time.
    let out = TempDir::new();
    let mut args = vec!["run", "--benchmark", "minilm", "--scenario", "SingleStream"];
    args.extend_from_slice(&[
        "--set",
        "min_duration_ms=300",
        "--set",
        "min_query_count=64",
    ]);
    let stdout = assert_ok(&mlperf_host(out.path(), &args));
    assert!(stdout.contains("Result is : VALID"), "{stdout}");

    // The definition names the rows (`[dataset] input_names`); named in another order, they
    // would feed the wrong model inputs, and the plugin refuses the loaded set.
    let out = TempDir::new();
    args.extend_from_slice(&["--input-names", "attention_mask,input_ids,token_type_ids"]);
    let output = mlperf_host(out.path(), &args);
    let all = format!("{}{}", text(&output.stdout), text(&output.stderr));
    assert!(!output.status.success(), "{all}");
    assert!(
        all.contains("the samples' named inputs [attention_mask, input_ids, token_type_ids] are not the model inputs 'input_ids', 'attention_mask', 'token_type_ids' (stacked_inputs)"),
        "{all}"
    );
}

#[test]
fn bad_model_provider_or_library_is_a_clear_error_before_the_run() {
    let _serial = one_at_a_time();
    require_data("digits");
    let garbage = TempDir::new();
    let not_a_model = garbage.path().join("model.onnx");
    std::fs::write(&not_a_model, b"not a protobuf").unwrap();
    let not_a_model = format!("model={}", not_a_model.display());
    let cases: [(&[&str], &[&str]); 4] = [
        (
            &["--plugin-set", "model=/nonexistent/model.onnx"],
            &["/nonexistent/model.onnx"],
        ),
        (&["--plugin-set", &not_a_model], &["model.onnx"]),
        (&["--plugin-set", "provider=cuda"], &["CUDA"]),
        (
            &["--plugin-set", "library=/nonexistent/libonnxruntime.so"],
            &["/nonexistent/libonnxruntime.so"],
        ),
    ];
    for (extra, words) in cases {
        let out = TempDir::new();
        let mut args = vec!["run", "--benchmark", "digits"];
        args.extend_from_slice(extra);
        let output = mlperf_host(out.path(), &args);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{extra:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        for word in words {
            assert!(
                stderr.contains(word),
                "{extra:?}: missing {word:?} in {stderr}"
            );
        }
        assert!(!out.path().join("mlperf_log_summary.txt").exists());
    }
}

#[test]
fn the_onnxruntime_plugin_passes_the_conformance_suite_on_digits() {
    let _serial = one_at_a_time();
    require_data("digits");
    let output = Command::new(EXE)
        .args([
            "plugins",
            "test",
            "onnxruntime",
            "--dataset",
            "data/digits/inputs.npy",
        ])
        .args(["--plugin-set", "model=\"data/digits/model.onnx\""])
        .args([
            "--plugin-set",
            "output=\"label\"",
            "--plugin-set",
            "workers=2",
            // Two CPU instances (ABI 1.4): the suite runs Offline over both.
            "--plugin-set",
            "devices=2",
        ])
        .current_dir(repo())
        .env("ORT_DYLIB_PATH", ort_library())
        .output()
        .expect("run mlperf-host");
    let stdout = assert_ok(&output);
    // 899 samples: MultiStream's accuracy run pads its last query of 8 with 5 repeats.
    assert!(stdout.contains("CONFORMS: 14 passed, 0 failed"), "{stdout}");
    assert!(
        stdout.contains("  ok    devices: an instance per listed device, each given queries"),
        "{stdout}"
    );
}

/// An accuracy run of the digits classifier whose responses name `outputs`, logging
/// `logged`.
fn digits_with_named_outputs(dir: &Path, outputs: &str, logged: &str, scenario: &str) -> Output {
    mlperf_host(
        dir,
        &[
            "run",
            "--plugin",
            "onnxruntime",
            "--dataset",
            "data/digits/inputs.npy",
            "--plugin-set",
            "model=\"data/digits/model.onnx\"",
            "--plugin-set",
            "output=\"label\"",
            "--plugin-set",
            &format!("outputs={outputs}"),
            "--scenario",
            scenario,
            "--mode",
            "AccuracyOnly",
            "--logged-outputs",
            logged,
        ],
    )
}

#[test]
fn named_outputs_of_a_two_output_model_are_logged_as_the_run_names_them() {
    let _serial = one_at_a_time();
    require_data("digits");
    // The digits classifier has two outputs: `label` (one int64) and `probabilities` (ten
    // float32). The plugin names both in every response; the run logs what it asks for.
    let run = |logged: &str| {
        let dir = TempDir::new();
        let outputs = "[\"label\", \"probabilities\"]";
        assert_ok(&digits_with_named_outputs(
            dir.path(),
            outputs,
            logged,
            "Offline",
        ));
        accuracy_records(dir.path())
    };
    let probabilities = run("probabilities");
    assert_eq!(probabilities.len(), 899);
    assert!(probabilities.iter().all(|(_, bytes)| bytes.len() == 40));
    let both = run("label,probabilities");
    assert_eq!(both.len(), 899);
    let argmax = |floats: &[u8]| {
        let scores: Vec<f32> = floats
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        (0..scores.len())
            .max_by(|&a, &b| scores[a].total_cmp(&scores[b]))
            .unwrap() as i64
    };
    for (index, bytes) in &both {
        assert_eq!(
            bytes.len(),
            48,
            "sample {index}: 8 bytes of label, 40 of scores"
        );
        let label = i64::from_le_bytes(bytes[..8].try_into().unwrap());
        // The classifier's label is its most probable class (checked in Python: all 899).
        assert_eq!(label, argmax(&bytes[8..]), "sample {index}");
        let alone = probabilities.iter().find(|(i, _)| i == index).unwrap();
        assert_eq!(&alone.1[..], &bytes[8..], "sample {index}: the same scores");
    }

    // An output the plugin does not name fails the run, naming it and what the plugin gave.
    let dir = TempDir::new();
    let output =
        digits_with_named_outputs(dir.path(), "[\"label\"]", "probabilities", "SingleStream");
    let all = format!("{}{}", text(&output.stdout), text(&output.stderr));
    assert!(!output.status.success(), "{all}");
    assert!(
        all.contains("without the output 'probabilities' the run logs: it named 'label'"),
        "{all}"
    );
}

#[test]
fn a_benchmark_definition_names_the_output_its_accuracy_is_scored_from() {
    let _serial = one_at_a_time();
    require_data("digits");
    // digits scored from the classifier's `probabilities` (float32 scores, argmax) instead of
    // its `label`: the definition names the output the log records and the metric reads.
    let dir = TempDir::new();
    let data = repo().join("data/digits");
    let definition = dir.write(
        "digits-scores.toml",
        &format!(
            r#"name = "digits-scores"
[model]
path = "{data}/model.onnx"
[dataset]
inputs = "{data}/inputs.npy"
[accuracy]
metric = "top1"
labels = "{data}/labels.npy"
output = "float32"
logged_outputs = ["probabilities"]
[plugin]
name = "onnxruntime"
config = {{ output = "label", outputs = ["probabilities"] }}
"#,
            data = data.display()
        ),
    );
    let out = TempDir::new();
    let definition = definition.display().to_string();
    let stdout = assert_ok(&mlperf_host(
        out.path(),
        &[
            "run",
            "--benchmark",
            &definition,
            "--scenario",
            "Offline",
            "--mode",
            "AccuracyOnly",
        ],
    ));
    let records = accuracy_records(out.path());
    assert_eq!(records.len(), 899);
    assert!(records.iter().all(|(_, bytes)| bytes.len() == 40));
    let accuracy = std::fs::read_to_string(out.path().join("accuracy.txt")).unwrap();
    assert!(stdout.ends_with(&accuracy));
    assert!(accuracy.contains("total=899"), "{accuracy}");
    // The same classes as the label output gives: ONNX Runtime's own Python count.
    let good = python_good_count("digits");
    assert!(accuracy.contains(&format!("good={good}")), "{accuracy}");
}

/// Tests whose verdict rests on timings (a latency bound, a rate, a comparison of two runs'
/// speeds): `scripts/test.sh` runs every `timed` test alone, one after another, after the
/// rest, so that no other test takes the CPU they measure.
mod timed {
    use super::*;

    #[test]
    fn a_server_run_with_dynamic_batching_keeps_its_latency_bound() {
        let _serial = one_at_a_time();
        require_data("fmnist");
        let out = TempDir::new();
        let stdout = assert_ok(&mlperf_host(
            out.path(),
            &[
                "run",
                "--benchmark",
                "fmnist",
                "--scenario",
                "Server",
                "--set",
                "server_target_qps=2000",
                "--set",
                "server_target_latency_ns=20000000",
                "--set",
                "min_duration_ms=2000",
                "--set",
                "min_query_count=3000",
                "--plugin-set",
                "max_batch=16",
                "--plugin-set",
                "max_wait_us=500",
            ],
        ));
        assert!(stdout.contains("Result is : VALID"), "{stdout}");
        let result: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.path().join("result.json")).unwrap())
                .unwrap();
        let latency = &result["performance"]["sample_latency"];
        assert_eq!(latency["target_percentile"], 0.99);
        let p99 = latency["target_ns"].as_i64().unwrap();
        assert!(p99 <= 20_000_000, "p99 {p99} ns");
        // The plugin reports each batch's run (MLPERF_CAP_SAMPLE_TIMING): every sample divided,
        // in order, the session's run its compute.
        let breakdown = &result["latency_breakdown"];
        let samples = breakdown["samples"].as_u64().unwrap();
        assert!(samples >= 3000, "{breakdown}");
        assert_eq!(breakdown["timed"].as_u64(), Some(samples), "{breakdown}");
        assert_eq!(breakdown["out_of_order"].as_u64(), Some(0), "{breakdown}");
        for at in breakdown["percentiles"].as_array().unwrap() {
            assert!(at["compute_ns"].as_i64().unwrap() > 0, "{at}");
            assert!(at["queue_ns"].as_i64().unwrap() >= 0, "{at}");
        }
    }
}
