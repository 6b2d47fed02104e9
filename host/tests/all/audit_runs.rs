//! `mlperf-host audit`, through the built binary: TEST01 on the `digits` benchmark with ONNX
//! Runtime (the accuracy check's pass and its performance verdict checked against the two runs'
//! logs, then a failure with the baseline/compliance accuracy fallback) and on the
//! null plugin with an edited accuracy log, TEST04 passing and failing on the null plugin's
//! latency, TEST06 on the null plugin's token runs, TEST07 on digits, TEST08 on dlrm-v3-shaped
//! float32 responses, TEST09 on token lengths, and the reference runs refused before anything
//! runs.
//!
//! The digits test needs what `bash scripts/test.sh` sets up: the .venv with onnxruntime
//! 1.31.1 and data/digits (scripts/benchmarks/prepare.sh digits).

use crate::support;

use std::path::Path;
use std::process::{Command, Output};

use support::{describe, ort_library, text, TempDir};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// One test at a time, and none beside an LLM server: TEST01 and TEST04 compare timings of
/// runs made seconds apart, which another test's load on a 2-core machine would skew.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    support::timings_or_llm()
}

use crate::support::mlperf_host;

fn assert_status(output: &Output, code: i32) -> String {
    assert_eq!(output.status.code(), Some(code), "{}", describe(output));
    text(&output.stdout)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The files directly in `dir`, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .filter(|entry| entry.path().is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The layout the submission checker reads, common to every test.
fn assert_run_logs(folder: &Path) {
    let run = folder.join("performance/run_1");
    assert_eq!(
        files(&run),
        [
            "mlperf_log_accuracy.json",
            "mlperf_log_detail.txt",
            "mlperf_log_summary.txt"
        ],
        "the checker allows only LoadGen's logs in run_1"
    );
    assert!(folder.join("result.json").is_file());
    let detail = read(&run.join("mlperf_log_detail.txt"));
    assert!(
        detail.contains("Found Audit Config file"),
        "the compliance run read its audit.config"
    );
}

/// Null-plugin SingleStream settings for a run of a second at the given latency: enough
/// queries that early stopping's estimate sits near the 90th percentile
/// rather than on the few slowest, which a busy machine moves.
fn null_run<'a>(latency: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "--latency",
        latency,
        "--set",
        "min_duration_ms=1000",
        "--set",
        "min_query_count=100",
        "--set",
        "single_stream_expected_latency_ns=1000000",
        "--out",
        out,
    ]
}

/// `mlperf-host run ARGS` that must succeed.
fn run_ok(dir: &Path, args: &[&str]) {
    let mut full = vec!["run", "--quiet"];
    full.extend_from_slice(args);
    assert_status(&mlperf_host(dir, &full), 0);
}

/// Rewrites every record's data of an accuracy log with `edit(qsl_idx, data)`.
fn edit_accuracy_log(path: &Path, edit: impl Fn(u64, &str) -> String) {
    let records: Vec<serde_json::Value> = serde_json::from_str(&read(path)).unwrap();
    let lines: Vec<String> = records
        .iter()
        .map(|record| {
            let index = record["qsl_idx"].as_u64().unwrap();
            let data = edit(index, record["data"].as_str().unwrap());
            format!(
                "{{ \"seq_id\" : {}, \"qsl_idx\" : {index}, \"data\" : \"{data}\" }}",
                record["seq_id"]
            )
        })
        .collect();
    std::fs::write(path, format!("[\n{}\n]\n", lines.join(",\n"))).unwrap();
}

// ---- TEST01 on a real backend -------------------------------------------------------------

fn digits(dir: &Path, args: &[&str]) -> Output {
    support::require_data("digits");
    let mut full = args.to_vec();
    full.extend_from_slice(&["--benchmark", "digits"]);
    Command::new(EXE)
        .args(&full)
        .current_dir(dir)
        .env("ORT_DYLIB_PATH", ort_library())
        .env_remove("MLPERF_HOST_LOG")
        .output()
        .expect("run mlperf-host")
}

/// Short SingleStream runs (digits answers in microseconds).
const DIGITS_QUICK: [&str; 4] = [
    "--set",
    "min_duration_ms=300",
    "--set",
    "min_query_count=100",
];

/// The submission's performance run of digits, then TEST01 into `TEST01` against it and the
/// accuracy run `accuracy_run`. One try: the performance check compares two timed runs, so the
/// tests assert the verdict their logs imply, not a pass (noise on a shared machine moves a
/// microsecond-scale latency by more than the 20 % allowed).
fn digits_test01(dir: &Path, accuracy_run: &str) -> Output {
    let mut performance = vec!["run", "--quiet", "--out", "perf"];
    performance.extend_from_slice(&DIGITS_QUICK);
    assert_status(&digits(dir, &performance), 0);
    let mut audit = vec![
        "audit",
        "--test",
        "TEST01",
        "--accuracy-run",
        accuracy_run,
        "--performance-run",
        "perf",
        "--out",
        "TEST01",
    ];
    audit.extend_from_slice(&DIGITS_QUICK);
    digits(dir, &audit)
}

/// A number a detail log records under `key`.
fn detail_number(path: &Path, key: &str) -> f64 {
    read(path)
        .lines()
        .filter_map(|line| line.strip_prefix(":::MLLOG "))
        .map(|json| serde_json::from_str::<serde_json::Value>(json).expect("a JSON log line"))
        .find(|entry| entry["key"] == key)
        .and_then(|entry| entry["value"].as_f64())
        .unwrap_or_else(|| panic!("{}: no number under {key}", path.display()))
}

/// TEST01's performance verdict on a SingleStream pair, from the two detail logs themselves:
/// (reference score, test score, whether the test's lies within 20 % of the reference's, the
/// allowance of a SingleStream whose early-stopping latency is 200 us or less).
fn single_stream_verdict(reference_detail: &Path, test_detail: &Path) -> (f64, f64, bool) {
    let reference = detail_number(reference_detail, "early_stopping_latency_ss");
    let test = detail_number(test_detail, "early_stopping_latency_ss");
    assert!(
        reference <= 200_000.0,
        "digits answers in microseconds: {reference} ns"
    );
    let within = reference * 0.8 <= test && test <= reference * 1.2;
    (reference, test, within)
}

#[test]
fn test01_on_digits_scores_the_baseline_and_compliance_accuracy_when_responses_differ() {
    let _serial = one_at_a_time();
    let dir = TempDir::new();
    assert_status(
        &digits(
            dir.path(),
            &["run", "--quiet", "--mode", "AccuracyOnly", "--out", "acc"],
        ),
        0,
    );
    // Every other class of the accuracy run shifted by one: the baseline loses accuracy.
    edit_accuracy_log(
        &dir.path().join("acc/mlperf_log_accuracy.json"),
        |index, data| {
            if index % 2 == 1 {
                return data.to_string();
            }
            let class =
                i64::from_le_bytes(hex_bytes(data).try_into().expect("an 8-byte int64 label"));
            ((class + 1) % 10)
                .to_le_bytes()
                .iter()
                .map(|b| format!("{b:02X}"))
                .collect()
        },
    );
    let output = digits_test01(dir.path(), "acc");
    let stdout = assert_status(&output, 3);
    assert!(stdout.contains("Accuracy check pass: False\n"), "{stdout}");
    let folder = dir.path().join("TEST01");
    let verify = read(&folder.join("verify_accuracy.txt"));
    assert!(verify.ends_with("TEST FAIL\n\n"), "{verify}");
    assert!(
        !verify.contains("num_perf_log_data_mismatch = 0\n"),
        "{verify}"
    );
    // The four files the checker requires of a failed TEST01 accuracy check, and no others.
    assert_eq!(
        files(&folder.join("accuracy")),
        [
            "accuracy.txt",
            "baseline_accuracy.txt",
            "compliance_accuracy.txt",
            "mlperf_log_accuracy.json"
        ]
    );
    let accuracy_of = |name: &str| -> f64 {
        let report = read(&folder.join("accuracy").join(name));
        let value = report
            .strip_prefix("accuracy=")
            .and_then(|rest| rest.split('%').next())
            .unwrap_or_else(|| panic!("{name}: {report}"));
        value.parse().unwrap()
    };
    let baseline = accuracy_of("baseline_accuracy.txt");
    let compliance = accuracy_of("compliance_accuracy.txt");
    assert!(
        compliance > 80.0 && baseline < compliance - 20.0,
        "baseline {baseline} %, compliance {compliance} %"
    );
    assert_eq!(
        read(&folder.join("accuracy/accuracy.txt")),
        read(&folder.join("accuracy/compliance_accuracy.txt"))
    );
    assert!(
        stdout.contains("beyond the 1.0 % the submission checker accepts"),
        "{stdout}"
    );
}

fn hex_bytes(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

// ---- TEST01 on the null plugin ------------------------------------------------------------

#[test]
fn test01_fails_when_the_compliance_responses_differ_from_the_accuracy_runs() {
    let _serial = one_at_a_time();
    let dir = TempDir::new();
    run_ok(dir.path(), &["--mode", "AccuracyOnly", "--out", "acc"]);
    run_ok(dir.path(), &null_run("1ms", "perf"));
    // The null plugin answers each sample with its index: the accuracy run now says otherwise
    // for every sample (the first byte too, which the default byte dtype compares).
    edit_accuracy_log(
        &dir.path().join("acc/mlperf_log_accuracy.json"),
        |_, data| format!("FF{}", &data[2..]),
    );
    let mut audit = vec![
        "audit",
        "--test",
        "TEST01",
        "--accuracy-run",
        "acc",
        "--performance-run",
        "perf",
    ];
    audit.extend(null_run("1ms", "TEST01"));
    let stdout = assert_status(&mlperf_host(dir.path(), &audit), 3);
    // The performance verdict is TEST04's to test; here only the responses matter.
    assert!(stdout.contains("Accuracy check pass: False\n"), "{stdout}");
    assert!(
        stdout.contains("TEST01 verification complete\n"),
        "{stdout}"
    );
    let folder = dir.path().join("TEST01");
    assert_run_logs(&folder);
    let verify = read(&folder.join("verify_accuracy.txt"));
    let line = |key: &str| -> u64 {
        verify
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key} = ")))
            .unwrap_or_else(|| panic!("{key}: {verify}"))
            .parse()
            .unwrap()
    };
    assert_eq!(line("num_acc_log_entries"), 1024);
    // Every logged sample is in the accuracy run. The first record of each differs from it,
    // except where the index's low byte is already FF (only the first byte is compared with
    // the default dtype); a later record of the same sample is compared with that first one
    // (the script's map update) and matches.
    let logged: Vec<serde_json::Value> = serde_json::from_str(&read(
        &folder.join("performance/run_1/mlperf_log_accuracy.json"),
    ))
    .unwrap();
    let differing: std::collections::HashSet<u64> = logged
        .iter()
        .map(|record| record["qsl_idx"].as_u64().unwrap())
        .filter(|index| index % 256 != 255)
        .collect();
    assert!(!differing.is_empty());
    assert_eq!(line("num_perf_log_entries"), logged.len() as u64);
    assert_eq!(line("num_perf_log_qsl_idx_match"), logged.len() as u64);
    assert_eq!(
        line("num_perf_log_data_mismatch"),
        differing.len() as u64,
        "{verify}"
    );
    assert!(verify.ends_with("TEST FAIL\n\n"));
    // resnet50's audit.config (the default model); no metric to score a fallback with.
    let detail = read(&folder.join("performance/run_1/mlperf_log_detail.txt"));
    assert!(detail.contains("TEST01/resnet50/audit.config"));
    assert!(
        stdout.contains("no benchmark with an accuracy metric"),
        "{stdout}"
    );
    assert_eq!(
        files(&folder.join("accuracy")),
        ["mlperf_log_accuracy.json"]
    );
}

// ---- TEST04 -------------------------------------------------------------------------------

fn test04(dir: &Path, reference_latency: &str, compliance_latency: &str) -> Output {
    run_ok(dir, &null_run(reference_latency, "perf"));
    let mut audit = vec!["audit", "--test", "TEST04", "--performance-run", "perf"];
    audit.extend(null_run(compliance_latency, "TEST04"));
    mlperf_host(dir, &audit)
}

// ---- TEST06 -------------------------------------------------------------------------------

/// A one-sample .npy data set of int32 tokens.
fn token_dataset(path: &Path, tokens: &[i32]) {
    token_rows(path, 1, tokens);
}

/// A .npy data set of `rows` samples of int32 tokens, `tokens` holding them all.
fn token_rows(path: &Path, rows: usize, tokens: &[i32]) {
    let bytes: Vec<u8> = tokens.iter().flat_map(|t| t.to_le_bytes()).collect();
    mlperf_host::samples::write_npy(path, "<i4", rows, &[(tokens.len() / rows) as i64], &bytes)
        .unwrap();
}

#[test]
fn test06_passes_a_consistent_token_run() {
    let _serial = one_at_a_time();
    let dir = TempDir::new();
    // The null plugin answers with the sample's own data, [5, EOS], and reports 2 + 0 % 7 = 2
    // tokens for sample 0: consistent.
    token_dataset(&dir.path().join("tokens.npy"), &[5, 2]);
    let output = mlperf_host(
        dir.path(),
        &[
            "audit",
            "--test",
            "TEST06",
            "--tokens",
            "--dataset",
            "tokens.npy",
            "--plugin-set",
            "response=data",
            "--out",
            "TEST06",
        ],
    );
    let stdout = assert_status(&output, 0);
    let folder = dir.path().join("TEST06");
    let verify = read(&folder.join("verify_accuracy.txt"));
    assert_eq!(
        verify,
        "First token check pass: True\nEOS check pass: True\nSample length check pass: True\nTEST06 verification complete\n"
    );
    assert!(stdout.contains(&verify));
    assert_run_logs(&folder);
    // About every sample logged, as TEST06's audit.config asks (100 queries, target 100).
    let log = read(&folder.join("accuracy/mlperf_log_accuracy.json"));
    assert_eq!(log.matches("\"token_count\" : 2").count(), 100, "{log}");
    assert!(!folder.join("verify_performance.txt").exists());
}

#[test]
fn test06_fails_when_token_counts_differ_from_the_output_length() {
    let _serial = one_at_a_time();
    for (scenario, first_token) in [("SingleStream", "True"), ("Offline", "Skipped")] {
        let dir = TempDir::new();
        // The null plugin answers with one int32 (the index) but counts 2 + index % 7 tokens.
        let output = mlperf_host(
            dir.path(),
            &[
                "audit",
                "--test",
                "TEST06",
                "--tokens",
                "--scenario",
                scenario,
                "--out",
                "TEST06",
            ],
        );
        assert_status(&output, 3);
        let verify = read(&dir.path().join("TEST06/verify_accuracy.txt"));
        assert_eq!(
            verify,
            format!(
                "First token check pass: {first_token}\nEOS check pass: True\nSample length check pass: False\nTEST06 verification failed\n"
            ),
            "{scenario}"
        );
    }
}

// ---- Refusals -----------------------------------------------------------------------------

#[test]
fn missing_or_wrong_reference_runs_are_refused_before_anything_runs() {
    let _serial = one_at_a_time();
    let dir = TempDir::new();
    run_ok(dir.path(), &["--mode", "AccuracyOnly", "--out", "acc"]);
    run_ok(dir.path(), &null_run("0", "perf"));
    std::fs::create_dir_all(dir.path().join("empty")).unwrap();
    let cases: [(&[&str], &str); 10] = [
        (
            &["--test", "TEST01", "--performance-run", "perf"],
            "TEST01 needs --accuracy-run DIR",
        ),
        (
            &["--test", "TEST01", "--accuracy-run", "acc"],
            "TEST01 needs --performance-run DIR",
        ),
        (
            &[
                "--test",
                "TEST01",
                "--accuracy-run",
                "nowhere",
                "--performance-run",
                "perf",
            ],
            "--accuracy-run nowhere: no such directory",
        ),
        (
            &[
                "--test",
                "TEST01",
                "--accuracy-run",
                "empty",
                "--performance-run",
                "perf",
            ],
            "--accuracy-run empty: no mlperf_log_accuracy.json in it",
        ),
        (
            &[
                "--test",
                "TEST01",
                "--accuracy-run",
                "perf",
                "--performance-run",
                "perf",
            ],
            "--accuracy-run perf: its test mode is PerformanceOnly",
        ),
        (&["--test", "TEST04"], "TEST04 needs --performance-run DIR"),
        (
            &["--test", "TEST04", "--performance-run", "empty"],
            "--performance-run empty: no mlperf_log_summary.txt in it",
        ),
        (
            &["--test", "TEST06", "--performance-run", "perf"],
            "--performance-run is for TEST01 and TEST04",
        ),
        (
            &[
                "--test",
                "TEST04",
                "--performance-run",
                "perf",
                "--out",
                "perf",
            ],
            "it would write into the submission's run",
        ),
        (
            &[
                "--test",
                "TEST01",
                "--model",
                "gpt-oss-120b",
                "--accuracy-run",
                "acc",
                "--performance-run",
                "perf",
            ],
            "TEST01/gpt-oss-120b/audit.config nor",
        ),
    ];
    for (args, words) in cases {
        let mut full = vec!["audit"];
        full.extend_from_slice(args);
        if !args.contains(&"--out") {
            full.extend_from_slice(&["--out", "compliance"]);
        }
        let output = mlperf_host(dir.path(), &full);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{args:?}\n{}",
            describe(&output)
        );
        let stderr = text(&output.stderr);
        let last = stderr.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("error: ") && last.contains(words),
            "{args:?}: expected {words:?} in\n{stderr}"
        );
        assert!(
            !dir.path().join("compliance").exists(),
            "{args:?}: something ran"
        );
    }
}

// ---- TEST07, TEST09 -----------------------------------------------------------------------

/// TEST07's or TEST09's LoadGen keys for a data set of `samples`, and `extra` lines.
fn full_dataset_audit_config(path: &Path, samples: usize, extra: &str) {
    std::fs::write(
        path,
        format!(
            "*.*.mode = 2\n*.*.accuracy_log_rng_seed = 720381539243781796\n\
             *.*.accuracy_log_sampling_target = {samples}\n*.*.min_query_count = {samples}\n\
             *.*.min_duration = 0\n*.*.performance_issue_unique = 1\n\
             *.*.sample_concatenate_permutation = 0\n{extra}"
        ),
    )
    .unwrap();
}

#[test]
fn test07_scores_every_sample_of_a_performance_run_against_the_threshold() {
    let _serial = one_at_a_time();
    let dir = TempDir::new();
    let test07 = |config: &Path| {
        digits(
            dir.path(),
            &[
                "audit",
                "--test",
                "TEST07",
                "--audit-conf",
                config.to_str().unwrap(),
                "--out",
                "TEST07",
            ],
        )
    };
    // digits' reference scores 97.11 %: a threshold of 90 passes, 99.5 fails.
    for (threshold, status, verdict) in [("90", 0, "TEST PASS"), ("99.5", 3, "TEST FAIL")] {
        let config = dir.path().join(format!("audit-{threshold}.config"));
        full_dataset_audit_config(
            &config,
            899,
            &format!("*.*.test07_accuracy_threshold = {threshold}\n"),
        );
        assert_status(&test07(&config), status);
        let folder = dir.path().join("TEST07");
        let verify = read(&folder.join("verify_accuracy.txt"));
        assert!(
            verify.contains(&format!("Accuracy threshold: {threshold}\n"))
                && verify.ends_with(&format!("{verdict}\n")),
            "{verify}"
        );
        let score: f64 = verify
            .lines()
            .find_map(|l| l.strip_prefix("Accuracy score: "))
            .unwrap()
            .parse()
            .unwrap();
        assert!((95.0..99.0).contains(&score), "{verify}");
        assert_run_logs(&folder);
        // Every sample logged once.
        let log = read(&folder.join("accuracy/mlperf_log_accuracy.json"));
        assert_eq!(log.matches("\"qsl_idx\"").count(), 899);
    }
    // Without the threshold key, the test says which key is missing.
    let config = dir.path().join("no-threshold.config");
    full_dataset_audit_config(&config, 899, "");
    let output = test07(&config);
    assert_status(&output, 1);
    assert!(text(&output.stderr).contains("no test07_accuracy_threshold"));
}

#[test]
fn test09_checks_the_mean_output_length_in_tokens() {
    let _serial = one_at_a_time();
    let dir = TempDir::new();
    // 20 samples of 5 int32 tokens, echoed by the null plugin: the mean length is 5.
    let rows: Vec<i32> = (0..20).flat_map(|i| [7, 8, 9, i, 2]).collect();
    token_rows(&dir.path().join("tokens.npy"), 20, &rows);
    for (bounds, status, verdict) in [("4.5", 0, "TEST PASS"), ("5.5", 3, "TEST FAIL")] {
        let config = dir.path().join("audit.config");
        full_dataset_audit_config(
            &config,
            20,
            &format!("*.*.test09_min_output_tokens = {bounds}\n*.*.test09_max_output_tokens = 6\n"),
        );
        let output = mlperf_host(
            dir.path(),
            &[
                "audit",
                "--test",
                "TEST09",
                "--dataset",
                "tokens.npy",
                "--plugin-set",
                "response=data",
                "--audit-conf",
                "audit.config",
                "--out",
                "TEST09",
            ],
        );
        assert_status(&output, status);
        let verify = read(&dir.path().join("TEST09/verify_output_len.txt"));
        assert!(
            verify.contains("Mean output tokens: 5.00\n")
                && verify.contains(&format!("Min threshold: {bounds}\n"))
                && verify.ends_with(&format!("{verdict}\n")),
            "{verify}"
        );
    }
}

// ---- TEST08 -------------------------------------------------------------------------------

/// A float32 .npy data set, one row per sample.
fn float_rows(path: &Path, rows: &[Vec<f32>]) {
    let bytes: Vec<u8> = rows
        .iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    mlperf_host::samples::write_npy(path, "<f4", rows.len(), &[rows[0].len() as i64], &bytes)
        .unwrap();
}

#[test]
fn test08_matches_responses_by_their_pair_and_compares_normalized_entropy() {
    let _serial = one_at_a_time();
    let dir = TempDir::new();
    // dlrm-v3's response layouts, echoed by the null plugin: the accuracy run answers
    // [ts_idx, query_idx, 4 predictions, 4 labels, 4 weights, 4], the performance run
    // [ts_idx, query_idx, 4 predictions]. 32 samples over 4 timestamps.
    let samples: Vec<(f32, f32, [f32; 4], [f32; 4])> = (0..32)
        .map(|i| {
            let prediction = |k: usize| 0.05 + 0.9 * (((i * 7 + k * 3) % 17) as f32 / 16.0);
            let label = |k: usize| f32::from(u8::from((i + k).is_multiple_of(3)));
            (
                (i / 8) as f32,
                (i % 8) as f32,
                [prediction(0), prediction(1), prediction(2), prediction(3)],
                [label(0), label(1), label(2), label(3)],
            )
        })
        .collect();
    let full: Vec<Vec<f32>> = samples
        .iter()
        .map(|(ts, q, predictions, labels)| {
            let mut row = vec![*ts, *q];
            row.extend_from_slice(predictions);
            row.extend_from_slice(labels);
            row.extend_from_slice(&[1.0; 4]);
            row.push(4.0);
            row
        })
        .collect();
    let short = |change: &dyn Fn(usize, &mut Vec<f32>)| -> Vec<Vec<f32>> {
        samples
            .iter()
            .enumerate()
            .map(|(i, (ts, q, predictions, _))| {
                let mut row = vec![*ts, *q];
                row.extend_from_slice(predictions);
                change(i, &mut row);
                row
            })
            .collect()
    };
    float_rows(&dir.path().join("full.npy"), &full);
    run_ok(
        dir.path(),
        &[
            "--mode",
            "AccuracyOnly",
            "--dataset",
            "full.npy",
            "--plugin-set",
            "response=data",
            "--out",
            "acc",
        ],
    );
    full_dataset_audit_config(&dir.path().join("audit.config"), 32, "");
    let test08 = |rows: Vec<Vec<f32>>| {
        float_rows(&dir.path().join("perf.npy"), &rows);
        mlperf_host(
            dir.path(),
            &[
                "audit",
                "--test",
                "TEST08",
                "--accuracy-run",
                "acc",
                "--dataset",
                "perf.npy",
                "--plugin-set",
                "response=data",
                "--audit-conf",
                "audit.config",
                "--out",
                "TEST08",
            ],
        )
    };
    let verify = || read(&dir.path().join("TEST08/verify_accuracy.txt"));
    // The performance run's predictions equal the accuracy run's: every pair matches.
    assert_status(&test08(short(&|_, _| {})), 0);
    let verdict = verify();
    assert!(
        verdict.contains("num_acc_log_entries = 32\nnum_perf_log_entries = 32\nnum_matched = 32\n")
            && verdict.ends_with("TEST PASS\nTEST08 verification complete\n"),
        "{verdict}"
    );
    assert_run_logs(&dir.path().join("TEST08"));
    // Sample 9 (timestamp 1, query 1) predicts 2 % higher, sample 20's pair is unknown.
    let changed = short(&|i, row| match i {
        9 => row[2..].iter_mut().for_each(|p| *p *= 1.02),
        20 => row[0] = 99.0,
        _ => {}
    });
    assert_status(&test08(changed), 3);
    let verdict = verify();
    assert!(
        verdict.contains("  NE mismatch at (1, 1): acc_ne="),
        "{verdict}"
    );
    assert!(
        verdict.contains("num_matched = 31\nnum_unmatched = 1\nnum_ne_mismatch = 1\n")
            && verdict.ends_with("TEST FAIL\nTEST08 verification complete\n"),
        "{verdict}"
    );
    // The accuracy run is what TEST08 compares with: without it nothing runs.
    let output = mlperf_host(
        dir.path(),
        &["audit", "--test", "TEST08", "--out", "TEST08-none"],
    );
    assert_status(&output, 1);
    assert!(text(&output.stderr).contains("TEST08 needs --accuracy-run DIR"));
    assert!(!dir.path().join("TEST08-none").exists());
}

/// Tests whose verdict rests on timings (a latency bound, a rate, a comparison of two runs'
/// speeds): `scripts/test.sh` runs every `timed` test alone, one after another, after the
/// rest, so that no other test takes the CPU they measure.
mod timed {
    use super::*;

    #[test]
    fn test01_passes_on_digits_with_onnx_runtime() {
        let _serial = one_at_a_time();
        let dir = TempDir::new();
        let accuracy = digits(
            dir.path(),
            &["run", "--quiet", "--mode", "AccuracyOnly", "--out", "acc"],
        );
        assert_status(&accuracy, 0);
        let output = digits_test01(dir.path(), "acc");
        let folder = dir.path().join("TEST01");
        let (reference, test, within) = single_stream_verdict(
            &dir.path().join("perf/mlperf_log_detail.txt"),
            &folder.join("performance/run_1/mlperf_log_detail.txt"),
        );
        let stdout = assert_status(&output, if within { 0 } else { 3 });
        let python_bool = if within { "True" } else { "False" };
        assert!(
        stdout.contains(&format!(
            "Accuracy check pass: True\nPerformance check pass: {python_bool}\nTEST01 verification complete\n"
        )),
        "{stdout}"
    );
        assert_run_logs(&folder);
        // digits' own sampling target, and int64 labels compared (the benchmark's output).
        let detail = read(&folder.join("performance/run_1/mlperf_log_detail.txt"));
        assert!(detail.contains("TEST01/digits/audit.config"), "{detail}");
        assert!(
            detail.contains("\"key\": \"effective_accuracy_log_sampling_target\", \"value\": 256,"),
            "digits' audit.config samples 256"
        );
        let verify = read(&folder.join("verify_accuracy.txt"));
        assert!(verify.starts_with("Verifying accuracy. This might take a while...\n"));
        assert!(verify.contains("num_acc_log_entries = 899\n"), "{verify}");
        assert!(
            verify.contains("num_perf_log_data_mismatch = 0\n"),
            "{verify}"
        );
        assert!(verify.ends_with("TEST PASS\n\n"), "{verify}");
        assert!(
            !verify.contains("num_perf_log_qsl_idx_match = 0\n"),
            "responses were compared: {verify}"
        );
        let performance = read(&folder.join("verify_performance.txt"));
        let score = |label: &str| -> f64 {
            let line = performance
                .lines()
                .find_map(|line| line.strip_prefix(label))
                .unwrap_or_else(|| panic!("no {label:?} in {performance}"));
            line.parse().unwrap()
        };
        assert!(performance.starts_with("Verifying performance.\nReference score = "));
        assert_eq!(score("Reference score = "), reference, "{performance}");
        assert_eq!(score("Test score = "), test, "{performance}");
        let verdict = if within {
            "TEST PASS\n"
        } else {
            "TEST FAIL: Test score invalid\n"
        };
        assert!(performance.ends_with(verdict), "{performance}");
        // The compliance run's responses, as the official script copies them.
        assert_eq!(
            files(&folder.join("accuracy")),
            ["mlperf_log_accuracy.json"]
        );
        assert_eq!(
            read(&folder.join("accuracy/mlperf_log_accuracy.json")),
            read(&folder.join("performance/run_1/mlperf_log_accuracy.json"))
        );
    }

    #[test]
    fn test04_passes_when_the_same_sample_runs_no_faster() {
        let _serial = one_at_a_time();
        let dir = TempDir::new();
        let stdout = assert_status(&test04(dir.path(), "1ms", "1ms"), 0);
        assert!(
            stdout.contains("Performance check pass: True\nTEST04 verification complete\n"),
            "{stdout}"
        );
        let folder = dir.path().join("TEST04");
        assert_run_logs(&folder);
        let verify = read(&folder.join("verify_performance.txt"));
        let lines: Vec<&str> = verify.lines().collect();
        assert_eq!(lines[0], "Verifying performance.");
        assert!(lines[1].starts_with("reference score = "), "{verify}");
        assert!(lines[2].starts_with("test score = "), "{verify}");
        assert_eq!(lines[3], "TEST PASS");
        // Every query issued loaded sample 3, as TEST04's audit.config asks.
        let detail = read(&folder.join("performance/run_1/mlperf_log_detail.txt"));
        assert!(detail.contains("\"key\": \"effective_performance_issue_same\", \"value\": true,"));
        assert!(
            detail.contains("\"key\": \"effective_performance_issue_same_index\", \"value\": 3,")
        );
        assert!(!folder.join("verify_accuracy.txt").exists());
    }

    #[test]
    fn test04_fails_when_the_compliance_run_is_much_faster_than_the_reference() {
        let _serial = one_at_a_time();
        let dir = TempDir::new();
        // A reference three times slower than the compliance run: as if results were cached.
        let stdout = assert_status(&test04(dir.path(), "3ms", "1ms"), 3);
        assert!(
            stdout.contains("Performance check pass: False\n"),
            "{stdout}"
        );
        let verify = read(&dir.path().join("TEST04/verify_performance.txt"));
        assert!(
            verify.ends_with("TEST FAIL: Test score invalid\n"),
            "{verify}"
        );
    }
}
