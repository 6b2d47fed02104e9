//! ABI 1.3 in runs: the plugin is told the test it serves at create, and is handed each set
//! of samples LoadGen loads (`load_samples`) and released from it (`unload_samples`), in this
//! process and in a process of its own; a load that fails or hangs ends the run with the
//! plugin's call named.

use crate::faulty_plugins::plugin_sets;
use crate::support::{self, TempDir};

use std::process::{Command, Output};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

fn run(dir: &std::path::Path, plugin: &std::path::Path, out: &str, extra: &[&str]) -> Output {
    Command::new(EXE)
        .args(["run", "--plugin"])
        .arg(plugin)
        .args(["--out", out])
        .args(extra)
        .current_dir(dir)
        .env("MLPERF_HOST_LOG", "debug")
        .output()
        .expect("run mlperf-host")
}

/// The run exited 1 and said `expected` on stderr.
fn assert_failed_with(output: &Output, expected: &str) {
    let described = support::describe(output);
    assert_eq!(output.status.code(), Some(1), "{described}");
    assert!(
        support::text(&output.stderr).contains(expected),
        "{expected:?} not said: {described}"
    );
}

#[test]
fn the_example_plugin_is_told_the_run_and_handed_every_loaded_set() {
    let dir = TempDir::new();
    let example_c = support::plugin_library("libmlperf_example_c.so");
    for isolate in ["none", "process"] {
        // An accuracy run covers 100 samples 16 at a time: 7 sets loaded and released.
        let output = run(
            dir.path(),
            &example_c,
            isolate,
            &[
                "--isolate",
                isolate,
                "--scenario",
                "Server",
                "--mode",
                "AccuracyOnly",
                "--total-samples",
                "100",
                "--set",
                "performance_sample_count_override=16",
                "--set",
                "server_target_qps=2000",
                "--set",
                "server_target_latency_ns=20000000",
                "--plugin-set",
                "workers=2",
            ],
        );
        support::assert_ok(&output);
        let stderr = support::text(&output.stderr);
        // The plugin logs what it was told and counts what it was handed; it fails the run
        // when a sample outside the loaded set is issued.
        assert!(
            stderr.contains(
                "run: Server, 1 sample(s) per query, target 2000.0 qps, latency bound 20000000 ns at p99.0, 16 of 100 samples loaded at once"
            ),
            "{isolate}: {stderr}"
        );
        let loads = stderr.matches("example-c: 16 samples loaded").count()
            + stderr.matches("example-c: 4 samples loaded").count();
        assert_eq!(loads, 7, "{isolate}: {stderr}");
        let accuracy =
            std::fs::read_to_string(dir.path().join(isolate).join("mlperf_log_accuracy.json"))
                .unwrap();
        assert_eq!(accuracy.matches("\"qsl_idx\"").count(), 100, "{isolate}");
    }
}

#[test]
fn a_load_that_fails_ends_the_run_naming_the_plugins_call() {
    let dir = TempDir::new();
    let faulty = support::faulty_plugin();
    for isolate in ["none", "process"] {
        let mut args = vec!["--isolate", isolate, "--total-samples", "64"];
        args.extend(plugin_sets(&["fault=fail_load"]));
        let output = run(dir.path(), &faulty, isolate, &args);
        // SingleStream loads the whole 64-sample library as one set.
        assert_failed_with(&output, "load_samples of 64 samples failed");
        assert_failed_with(&output, "fault = fail_load");
    }
}

#[test]
fn a_release_that_fails_is_reported_and_the_results_stand() {
    let dir = TempDir::new();
    let faulty = support::faulty_plugin();
    for isolate in ["none", "process"] {
        let mut args = vec!["--isolate", isolate, "--total-samples", "64"];
        args.extend(["--set", "min_duration_ms=0", "--set", "min_query_count=100"]);
        args.extend(plugin_sets(&["fault=fail_unload"]));
        let output = run(dir.path(), &faulty, isolate, &args);
        support::assert_ok(&output);
        let stderr = support::text(&output.stderr);
        assert!(
            stderr.contains("plugin faulty unload_samples of 64 samples failed (error 6)"),
            "{isolate}: {stderr}"
        );
        let summary =
            std::fs::read_to_string(dir.path().join(isolate).join("mlperf_log_summary.txt"))
                .unwrap();
        assert!(
            summary.contains("Result is : VALID"),
            "{isolate}: {summary}"
        );
    }
}

#[test]
fn an_isolated_load_that_never_returns_is_ended_after_the_stall_timeout() {
    let dir = TempDir::new();
    let faulty = support::faulty_plugin();
    let mut args = vec!["--isolate", "process", "--stall-timeout", "1"];
    args.extend(plugin_sets(&["fault=hang_load"]));
    let started = Instant::now();
    let output = run(dir.path(), &faulty, "hung", &args);
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_failed_with(&output, "load_samples has not returned after 1s");
}

#[test]
fn a_token_run_needs_a_plugin_that_reports_tokens() {
    let dir = TempDir::new();
    let example_c = support::plugin_library("libmlperf_example_c.so");
    let output = run(dir.path(), &example_c, "tokens", &["--tokens"]);
    assert_failed_with(
        &output,
        "plugin example-c does not declare MLPERF_CAP_TOKENS",
    );
}
