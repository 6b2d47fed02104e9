//! `--engine official`: the same plugin and sample library under the official LoadGen 6.0.17
//! (compiled from its sources by mlperf-official-loadgen), compared with the native engine.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use mlperf_host::logs::DetailLog;
use support::{assert_ok, describe, TempDir};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

const SCENARIOS: [&str; 4] = ["SingleStream", "MultiStream", "Server", "Offline"];

/// Short runs that still end VALID under both engines, with every sample in the accuracy log.
const QUICK: [&str; 8] = [
    "--set",
    "min_duration_ms=0",
    "--set",
    "min_query_count=1000",
    "--set",
    "server_target_qps=2000",
    "--set",
    "accuracy_log_probability=1",
];

fn run(engine: &str, out: &Path, args: &[&str]) -> Output {
    Command::new(EXE)
        .args(["run", "--engine", engine, "--out"])
        .arg(out)
        .args(args)
        .current_dir(support::repo())
        .env("ORT_DYLIB_PATH", support::ort_library())
        .env_remove("MLPERF_HOST_LOG")
        .output()
        .expect("run mlperf-host")
}

/// Runs `args` under both engines into `dir/native-NAME` and `dir/official-NAME`; both must
/// succeed. Returns the two run directories.
fn run_both(dir: &Path, name: &str, args: &[&str]) -> (PathBuf, PathBuf) {
    let native = dir.join(format!("native-{name}"));
    let official = dir.join(format!("official-{name}"));
    assert_ok(&run("native", &native, args));
    assert_ok(&run("official", &official, args));
    (native, official)
}

pub(crate) fn require_official() {
    assert!(
        mlperf_host::official::engine::is_available(),
        "this build has no official LoadGen: {}",
        mlperf_host::official::engine::SETUP_COMMAND
    );
}

/// The sample indices of the accuracy log, in its order, and their responses.
fn accuracy_samples(dir: &Path) -> Vec<(u64, String)> {
    let path = dir.join("mlperf_log_accuracy.json");
    let text = std::fs::read_to_string(&path).expect("accuracy log");
    let records: Vec<serde_json::Value> =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    records
        .iter()
        .map(|r| {
            (
                r["qsl_idx"].as_u64().expect("qsl_idx"),
                r["data"].as_str().expect("data").to_string(),
            )
        })
        .collect()
}

fn detail(dir: &Path) -> DetailLog {
    DetailLog::read(&dir.join("mlperf_log_detail.txt")).expect("detail log")
}

fn result_json(dir: &Path) -> serde_json::Value {
    let path = dir.join("result.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Validates official result.json files against schema/official-result.schema.json with the
/// Python `jsonschema` package (the official wheel's virtual environment has it).
fn assert_official_schema(files: &[PathBuf]) {
    let python = std::env::var_os("MLPERF_OFFICIAL_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| support::repo().join(".venv/bin/python"));
    let script = r#"
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
validator = Draft202012Validator(schema)
failed = False
for path in sys.argv[2:]:
    for error in validator.iter_errors(json.load(open(path))):
        failed = True
        print(path, "/".join(map(str, error.absolute_path)), error.message[:300])
sys.exit(1 if failed else 0)
"#;
    let output = Command::new(&python)
        .arg("-c")
        .arg(script)
        .arg(support::repo().join("schema/official-result.schema.json"))
        .args(files)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    assert_ok(&output);
}

/// Samples the native engine issued over all of its series, from its result.json.
fn native_samples_issued(result: &serde_json::Value) -> u64 {
    result["series"]
        .as_array()
        .expect("series")
        .iter()
        .map(|s| s["samples_issued"].as_u64().expect("samples_issued"))
        .sum()
}

/// The settings both engines log: every `requested_*` and `effective_*` entry.
fn logged_settings(log: &DetailLog) -> Vec<(String, String)> {
    let mut entries: Vec<(String, String)> = ["requested_", "effective_"]
        .iter()
        .flat_map(|prefix| log.with_prefix(prefix))
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect();
    entries.sort();
    entries
}

#[test]
fn official_logs_carry_the_official_provenance() {
    require_official();
    let dir = TempDir::new();
    let out = dir.path().join("run");
    let mut args = vec!["--scenario", "Offline"];
    args.extend_from_slice(&QUICK);
    assert_ok(&run("official", &out, &args));
    let log = detail(&out);
    assert_eq!(log.str("loadgen_version"), Some("6.0.17 @ d6147c7eb7"));
    assert_eq!(
        log.str("loadgen_git_log_message"),
        Some("d6147c7eb760c75ac2f7f2dd379719afb090d87c Increment version to 6.0.17")
    );
    // As the wheel logs them: source files by their names within the sources.
    let text = std::fs::read_to_string(out.join("mlperf_log_detail.txt")).unwrap();
    assert!(
        text.contains(r#""file": "loadgen.cc""#),
        "{}",
        &text[..2000]
    );
    let native = dir.path().join("native");
    assert_ok(&run("native", &native, &args));
    assert!(detail(&native)
        .str("loadgen_version")
        .is_some_and(|v| v.contains("mlperf-host")));
}

#[test]
fn user_conf_and_set_mode_reach_the_official_settings() {
    require_official();
    let dir = TempDir::new();
    let user_conf = dir.write(
        "user.conf",
        "*.Server.target_qps = 1234.5\n*.Server.min_duration = 0\n*.Server.min_query_count = 64\n",
    );
    let user_conf = user_conf.to_str().unwrap();
    let args = [
        "--scenario",
        "Server",
        // --mode is covered by the submission test; the same through --set here.
        "--set",
        "mode=AccuracyOnly",
        "--user-conf",
        user_conf,
        "--total-samples",
        "100",
        "--set",
        "server_target_latency_ns=5000000",
    ];
    let (native, official) = (dir.path().join("n"), dir.path().join("o"));
    assert_ok(&run("native", &native, &args));
    assert_ok(&run("official", &official, &args));
    let log = detail(&official);
    assert_eq!(log.f64("requested_server_target_qps"), Some(1234.5));
    assert_eq!(
        log.u64("requested_server_target_latency_ns"),
        Some(5_000_000)
    );
    assert_eq!(log.str("effective_test_mode"), Some("AccuracyOnly"));
    assert_eq!(logged_settings(&detail(&native)), logged_settings(&log));
    // An accuracy run answers every sample once.
    let mut indices: Vec<u64> = accuracy_samples(&official).iter().map(|s| s.0).collect();
    indices.sort_unstable();
    assert_eq!(indices, (0..100).collect::<Vec<_>>());
}

/// An official run the watchdog is to end: it must fail (status 1) within `limit`; returns
/// its stderr.
fn run_aborted(out: &Path, args: &[&str], limit: Duration) -> String {
    let started = Instant::now();
    let output = run("official", out, args);
    let took = started.elapsed();
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert!(took < limit, "took {took:?}");
    assert!(out.join("mlperf_host_aborted.txt").is_file());
    support::text(&output.stderr)
}

#[test]
fn a_plugin_that_never_completes_is_aborted_after_the_drain_timeout() {
    require_official();
    let dir = TempDir::new();
    let out = dir.path().join("run");
    let args = [
        "--scenario",
        "SingleStream",
        "--plugin-set",
        "never_complete_after=10",
        "--drain-timeout",
        "2",
        "--set",
        "min_duration_ms=0",
    ];
    let stderr = run_aborted(&out, &args, Duration::from_secs(10));
    assert!(
        stderr.contains(
            "the official LoadGen was aborted: no sample completed for 2.0 s with 1 outstanding"
        ),
        "{stderr}"
    );
    let verdict = std::fs::read_to_string(out.join("mlperf_host_aborted.txt")).unwrap();
    assert!(verdict.contains("the run is INVALID"), "{verdict}");
    // What the official library logged before the abort was flushed.
    let log = detail(&out);
    assert_eq!(log.str("loadgen_version"), Some("6.0.17 @ d6147c7eb7"));
    // result.json says why, and how far the run got.
    let result = result_json(&out);
    let aborted = result["aborted"].as_str().unwrap_or_default();
    assert!(
        aborted.starts_with("no sample completed for 2.0 s"),
        "{aborted}"
    );
    assert_eq!(result["performance"], serde_json::Value::Null);
    assert_eq!(result["samples"]["issued"], 11);
    assert_eq!(result["samples"]["completed"], 10);
    assert_eq!(result["loadgen_version"], "6.0.17 @ d6147c7eb7");
    assert_official_schema(&[out.join("result.json")]);
}

#[test]
fn a_plugin_failure_ends_the_official_run_at_once() {
    require_official();
    let dir = TempDir::new();
    let out = dir.path().join("run");
    let args = [
        "--scenario",
        "Server",
        "--plugin-set",
        "fail_after=50",
        "--set",
        "server_target_qps=1000",
    ];
    // Server's min_duration is 600 s: only the failure can have ended it this soon.
    let stderr = run_aborted(&out, &args, Duration::from_secs(10));
    assert!(
        stderr.contains("the official LoadGen was aborted: plugin null failed: null plugin: fail_after = 50 reached"),
        "{stderr}"
    );
}

#[test]
fn a_sample_answered_twice_never_reaches_the_official_library() {
    require_official();
    let dir = TempDir::new();
    let out = dir.path().join("run");
    let args = [
        "--scenario",
        "Offline",
        "--plugin-set",
        "complete_twice_after=5",
        "--set",
        "min_duration_ms=0",
    ];
    // The official library would read the second answer's id as a freed pointer.
    let stderr = run_aborted(&out, &args, Duration::from_secs(10));
    assert!(
        stderr.contains("the system under test answered 1 sample id(s) it was not issued or had already completed"),
        "{stderr}"
    );
    assert!(result_json(&out)["aborted"]
        .as_str()
        .is_some_and(|a| a.contains("it was not issued or had already completed")));
}

#[test]
fn a_reused_directory_keeps_nothing_of_the_previous_run() {
    require_official();
    let dir = TempDir::new();
    let out = dir.path().join("run");
    let mut args = vec!["--scenario", "Offline"];
    args.extend_from_slice(&QUICK);
    assert_ok(&run("official", &out, &args));
    assert!(out.join("mlperf_log_summary.txt").is_file());
    let output = run(
        "official",
        &out,
        &[
            "--scenario",
            "SingleStream",
            "--plugin-set",
            "never_complete_after=0",
            "--drain-timeout",
            "1",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    // The official library opens its files at the start: the summary is there, empty.
    let summary = std::fs::read_to_string(out.join("mlperf_log_summary.txt")).unwrap_or_default();
    assert!(!summary.contains("Result is"), "{summary}");
    assert!(out.join("mlperf_host_aborted.txt").is_file());
    // The result.json there is the aborted run's.
    assert!(result_json(&out)["aborted"].is_string());
}

#[test]
fn rules_files_the_official_engine_cannot_apply_are_refused() {
    require_official();
    let dir = TempDir::new();
    let conf = dir.write("mlperf.conf", "*.*.min_query_count = 1\n");
    let output = run(
        "official",
        &dir.path().join("run"),
        &["--mlperf-conf", conf.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert!(support::text(&output.stderr)
        .contains("--mlperf-conf: the official LoadGen applies the mlperf.conf compiled into it"));
}

#[test]
fn token_runs_log_token_latencies_under_both_engines() {
    require_official();
    let dir = TempDir::new();
    for scenario in ["SingleStream", "Server", "Offline"] {
        let mut args = vec!["--scenario", scenario, "--tokens"];
        args.extend_from_slice(&QUICK);
        let (native, official) = run_both(dir.path(), &format!("tokens-{scenario}"), &args);
        assert_eq!(accuracy_samples(&native), accuracy_samples(&official));
        let (ours, theirs) = (detail(&native), detail(&official));
        assert_eq!(
            logged_settings(&ours),
            logged_settings(&theirs),
            "{scenario}"
        );
        assert_eq!(theirs.bool("requested_use_token_latencies"), Some(true));
        assert_eq!(theirs.str("result_validity"), Some("VALID"), "{scenario}");
        if scenario != "Offline" {
            // Time to first token, reported through FirstTokenComplete.
            assert!(
                theirs.f64("result_first_token_mean_latency_ns").is_some(),
                "{scenario}"
            );
        }
    }
}

#[test]
fn the_c_example_plugin_runs_the_same_under_both_engines() {
    require_official();
    let plugin = support::plugin_library("libmlperf_example_c.so");
    let plugin = plugin.to_str().unwrap();
    let dir = TempDir::new();
    for scenario in ["SingleStream", "Offline"] {
        let mut args = vec!["--scenario", scenario, "--plugin", plugin];
        args.extend_from_slice(&QUICK);
        let (native, official) = run_both(dir.path(), scenario, &args);
        let (ours, theirs) = (accuracy_samples(&native), accuracy_samples(&official));
        assert!(!ours.is_empty());
        assert_eq!(ours, theirs, "{scenario}");
        assert_eq!(detail(&official).str("result_validity"), Some("VALID"));
        assert_eq!(
            detail(&official).str("sut_name"),
            detail(&native).str("sut_name")
        );
    }
}

#[test]
fn onnx_runtime_answers_the_same_under_both_engines() {
    require_official();
    support::require_data("fmnist");
    let dir = TempDir::new();
    let args = [
        "--benchmark",
        "fmnist",
        "--scenario",
        "Offline",
        "--mode",
        "AccuracyOnly",
    ];
    let (native, official) = run_both(dir.path(), "fmnist", &args);
    // The plugin may answer an Offline query in another order: compare per sample.
    let sorted = |dir: &Path| {
        let mut samples = accuracy_samples(dir);
        samples.sort();
        samples
    };
    let (ours, theirs) = (sorted(&native), sorted(&official));
    assert_eq!(ours.len(), 10_000);
    assert_eq!(ours, theirs);
    // Scored from the official logs as from ours.
    let score = |dir: &Path| std::fs::read_to_string(dir.join("accuracy.txt")).unwrap();
    assert_eq!(score(&native), score(&official));
    assert!(
        score(&official).starts_with("accuracy="),
        "{}",
        score(&official)
    );
}

#[test]
fn timed_preprocessing_answers_the_same_under_both_engines() {
    require_official();
    support::require_data("fmnist");
    let dir = TempDir::new();
    // SingleStream reuses each query's buffer once its sample is released; Offline preprocesses
    // its one query of every sample at issue.
    for scenario in ["SingleStream", "Offline"] {
        let args = [
            "--benchmark",
            "fmnist",
            "--scenario",
            scenario,
            "--mode",
            "AccuracyOnly",
            "--preprocess-timed",
        ];
        let (native, official) = run_both(dir.path(), &format!("timed-{scenario}"), &args);
        let sorted = |dir: &Path| {
            let mut samples = accuracy_samples(dir);
            samples.sort();
            samples
        };
        assert_eq!(sorted(&native).len(), 10_000, "{scenario}");
        assert_eq!(sorted(&native), sorted(&official), "{scenario}");
        let provenance = std::fs::read_to_string(official.join("mlperf_host_provenance.json"))
            .expect("provenance file");
        assert!(
            provenance.contains(r#""sut_preprocess_timed": "true""#),
            "{provenance}"
        );
    }
}

#[test]
fn bench_runs_each_case_through_every_engine_with_the_same_sut() {
    require_official();
    let output = Command::new(EXE)
        .args([
            "bench",
            "--json",
            "--engine",
            "all",
            "--case",
            "single-stream",
            "--queries",
            "20000",
        ])
        .output()
        .expect("run mlperf-host bench");
    assert_ok(&output);
    let reports: Vec<serde_json::Value> = support::text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let engines: Vec<&str> = reports
        .iter()
        .map(|r| r["engine"].as_str().unwrap())
        .collect();
    assert_eq!(engines, ["native", "official", "official-cpp"]);
    for report in &reports {
        assert_eq!(report["valid"], true, "{report}");
        assert_eq!(report["queries"], 20000, "{report}");
        assert!(report["throughput_per_s"].as_f64().unwrap() > 0.0);
    }
}

/// Tests whose verdict rests on timings (a latency bound, a rate, a comparison of two runs'
/// speeds): `scripts/test.sh` runs every `timed` test alone, one after another, after the
/// rest, so that no other test takes the CPU they measure.
mod timed {
    use super::*;

    #[test]
    fn both_engines_issue_the_same_samples_in_every_scenario() {
        require_official();
        let dir = TempDir::new();
        let mut results = Vec::new();
        for scenario in SCENARIOS {
            let mut args = vec!["--scenario", scenario];
            args.extend_from_slice(&QUICK);
            let (native, official) = run_both(dir.path(), scenario, &args);
            let (ours, theirs) = (accuracy_samples(&native), accuracy_samples(&official));
            assert!(
                ours.len() >= 1000,
                "{scenario}: {} samples logged",
                ours.len()
            );
            assert_eq!(ours, theirs, "{scenario}: issued samples differ");
            let (ours, theirs) = (detail(&native), detail(&official));
            assert_eq!(
                logged_settings(&ours),
                logged_settings(&theirs),
                "{scenario}: settings differ"
            );
            assert_eq!(theirs.str("result_validity"), Some("VALID"), "{scenario}");
            assert_eq!(ours.str("result_validity"), Some("VALID"), "{scenario}");

            // result.json: the same figures under the same names, read from the official log.
            let (ours, theirs) = (result_json(&native), result_json(&official));
            assert_eq!(theirs["engine"], "official");
            assert_eq!(theirs["loadgen_version"], "6.0.17 @ d6147c7eb7");
            assert_eq!(theirs["effective"]["scenario"], scenario);
            assert_eq!(theirs["aborted"], serde_json::Value::Null);
            let validity = &theirs["performance"]["validity"];
            assert_eq!(validity["valid"], true, "{scenario}: {validity}");
            assert_eq!(validity["all_samples_completed"], true, "{scenario}");
            assert_eq!(
                theirs["samples"]["issued"].as_u64(),
                Some(native_samples_issued(&ours)),
                "{scenario}"
            );
            assert_eq!(theirs["samples"]["completed"], theirs["samples"]["issued"]);
            let latency = &theirs["performance"]["sample_latency"];
            assert_eq!(
                latency["target_percentile"],
                ours["performance"]["sample_latency"]["target_percentile"],
                "{scenario}"
            );
            assert!(
                latency["target_ns"].as_i64().is_some(),
                "{scenario}: {latency}"
            );
            results.push(official.join("result.json"));
        }
        assert_official_schema(&results);
    }
}
