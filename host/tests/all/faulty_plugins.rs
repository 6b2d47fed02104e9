//! Plugins that misbehave (plugins/faulty, its fault chosen by `--plugin-set`): what a run
//! leaves behind and reports when a plugin hands back garbage or takes the process down.

use crate::support::{self, TempDir};

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// `--plugin-set KEY=VALUE` for each of `sets`, configuring the faulty plugin.
pub(crate) fn plugin_sets<'a>(sets: &[&'a str]) -> Vec<&'a str> {
    sets.iter().flat_map(|set| ["--plugin-set", set]).collect()
}

/// A run of the faulty plugin configured by `sets`.
fn run(dir: &Path, mode: &str, out: &str, sets: &[&str]) -> Output {
    Command::new(EXE)
        .args(["run", "--plugin"])
        .arg(support::faulty_plugin())
        .args(plugin_sets(sets))
        .args(["--mode", mode, "--out", out, "--total-samples", "64"])
        .args(["--set", "min_duration_ms=0", "--set", "min_query_count=100"])
        .current_dir(dir)
        .env_remove("MLPERF_HOST_LOG")
        .output()
        .expect("run mlperf-host")
}

#[test]
fn a_response_claiming_more_bytes_than_memory_holds_ends_the_run_naming_the_sample() {
    let dir = TempDir::new();
    // The length defaults to UINT64_MAX.
    for (name, length, mode) in [
        ("huge", None, "AccuracyOnly"),
        (
            "large",
            Some("response_length=1099511627776"),
            "AccuracyOnly",
        ),
        ("huge_perf", None, "PerformanceOnly"),
    ] {
        let mut sets = vec!["fault=huge_response", "at_sample=5"];
        sets.extend(length);
        let output = run(dir.path(), mode, name, &sets);
        let stderr = support::text(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{name}: {}",
            support::describe(&output)
        );
        assert!(
            stderr.contains("with a response of") && stderr.contains("at most 1073741824 bytes"),
            "{name}: {stderr}"
        );
        // The logs are whole, and say why.
        let out = dir.path().join(name);
        let summary = std::fs::read_to_string(out.join("mlperf_log_summary.txt")).unwrap();
        assert!(
            !summary.contains("No errors encountered"),
            "{name}: {summary}"
        );
        let result: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
        assert!(result.to_string().contains("with a response of"), "{name}");
    }
}

#[test]
fn a_plugin_that_exits_mid_run_leaves_nothing_of_the_earlier_run_in_out() {
    let dir = TempDir::new();
    support::assert_ok(&run(dir.path(), "PerformanceOnly", "logs", &[]));
    let out = dir.path().join("logs");
    for file in ["mlperf_log_summary.txt", "result.json"] {
        assert!(out.join(file).is_file(), "the first run wrote {file}");
    }

    run(
        dir.path(),
        "PerformanceOnly",
        "logs",
        &["fault=exit", "at_sample=50"],
    );
    // At most its own detail log, begun (never the earlier run's, which ends with a verdict);
    // no summary or result.json of the run before it.
    let detail = std::fs::read_to_string(out.join("mlperf_log_detail.txt")).unwrap_or_default();
    assert!(!detail.contains("result_validity"), "{detail}");
    for file in ["mlperf_log_summary.txt", "result.json"] {
        assert!(
            !out.join(file).exists(),
            "{file} survived from the earlier run"
        );
    }
}

/// Starts `mlperf-host ARGS` in `dir`, waits until its detail log in `out` has begun.
pub(crate) fn start_run(dir: &Path, out: &str, args: &[&str]) -> std::process::Child {
    let child = Command::new(EXE)
        .arg("run")
        .args(args)
        .args(["--out", out])
        .current_dir(dir)
        .env_remove("MLPERF_HOST_LOG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start mlperf-host");
    let detail = dir.join(out).join("mlperf_log_detail.txt");
    let started = std::time::Instant::now();
    while !std::fs::metadata(&detail).is_ok_and(|m| m.len() > 0) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the run never began"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Well into the timed series.
    std::thread::sleep(Duration::from_millis(500));
    child
}

pub(crate) fn signal(child: &std::process::Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits for the child at most `limit`; its output and how long it took.
pub(crate) fn wait_within(mut child: std::process::Child, limit: Duration) -> (Output, Duration) {
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("still running {limit:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    (child.wait_with_output().unwrap(), started.elapsed())
}

#[test]
fn sigterm_ends_the_run_invalid_with_every_log_written_and_exit_143() {
    let dir = TempDir::new();
    let long_run = [
        "--latency",
        "1ms",
        "--set",
        "min_duration_ms=600000",
        "--set",
        "min_query_count=1",
    ];
    let child = start_run(dir.path(), "logs", &long_run);
    signal(&child, "TERM");
    let (output, _) = wait_within(child, Duration::from_secs(20));
    assert_eq!(
        output.status.code(),
        Some(143),
        "{}",
        support::describe(&output)
    );
    assert!(support::text(&output.stderr).contains("interrupted by SIGTERM"));
    let out = dir.path().join("logs");
    let detail = std::fs::read_to_string(out.join("mlperf_log_detail.txt")).unwrap();
    assert!(
        detail.contains("Test aborted: interrupted by SIGTERM."),
        "{detail}"
    );
    let summary = std::fs::read_to_string(out.join("mlperf_log_summary.txt")).unwrap();
    assert!(summary.contains("Result is : INVALID"), "{summary}");
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
    assert!(result.to_string().contains("interrupted by SIGTERM"));
}

#[test]
fn a_second_sigint_exits_at_once_while_the_first_waits_for_the_drain() {
    let dir = TempDir::new();
    // Never completes a sample: after the first signal the engine waits for them.
    let plugin = support::faulty_plugin();
    let args = [
        "--plugin",
        plugin.to_str().unwrap(),
        "--plugin-set",
        "fault=hold",
        "--drain-timeout",
        "120",
        "--set",
        "min_duration_ms=600000",
    ];
    let child = start_run(dir.path(), "logs", &args);
    signal(&child, "INT");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        matches!(
            Command::new("kill").args(["-0", &child.id().to_string()]).status(),
            Ok(status) if status.success()
        ),
        "the first SIGINT waits for the outstanding samples"
    );
    signal(&child, "INT");
    let (output, took) = wait_within(child, Duration::from_secs(5));
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        support::describe(&output)
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(support::text(&output.stderr).contains("exiting at once"));
}

#[test]
fn a_destroy_that_never_returns_ends_the_command_after_the_stall_timeout_with_every_file() {
    let dir = TempDir::new();
    let started = std::time::Instant::now();
    let output = Command::new(EXE)
        .args(["run", "--plugin"])
        .arg(support::faulty_plugin())
        .args(["--plugin-set", "fault=hang_destroy"])
        .args([
            "--stall-timeout",
            "1",
            "--total-samples",
            "64",
            "--out",
            "logs",
        ])
        .args(["--set", "min_duration_ms=0", "--set", "min_query_count=100"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        support::describe(&output)
    );
    assert!(support::text(&output.stderr).contains("destroy has not returned after 1s"));
    let out = dir.path().join("logs");
    let summary = std::fs::read_to_string(out.join("mlperf_log_summary.txt")).unwrap();
    assert!(summary.contains("Result is : VALID"), "{summary}");
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
    assert!(result["performance"].is_object());
}

#[test]
fn a_plugin_or_data_set_that_is_not_a_regular_file_is_refused_at_once() {
    let dir = TempDir::new();
    let fifo = dir.path().join("samples.npy");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let plugin_dir = dir.path().join("npu.so");
    std::fs::create_dir(&plugin_dir).unwrap();
    for (flag, path) in [("--dataset", &fifo), ("--plugin", &plugin_dir)] {
        let child = Command::new(EXE)
            .args(["run", flag])
            .arg(path)
            .args(["--out", "logs"])
            .current_dir(dir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Reading a FIFO nobody writes would block forever.
        let (output, _) = wait_within(child, Duration::from_secs(20));
        let stderr = support::text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{flag}: {stderr}");
        assert!(stderr.contains("not a regular file"), "{flag}: {stderr}");
        assert!(stderr.contains(path.file_name().unwrap().to_str().unwrap()));
    }
}
