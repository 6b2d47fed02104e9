//! A call into an in-process plugin that never returns (the faulty plugin's `hang_issue` and
//! `hang_flush`): after `--stall-timeout` the run ends INVALID with every log written and the
//! command exits 1 without waiting for the call.

use crate::support::{self, TempDir};

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

fn run(dir: &Path, out: &str, args: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let output = Command::new(EXE)
        .args(["run", "--plugin"])
        .arg(support::plugin_library("libmlperf_faulty.so"))
        .args([
            "--stall-timeout",
            "1",
            "--out",
            out,
            "--total-samples",
            "64",
        ])
        .args([
            "--set",
            "min_duration_ms=0",
            "--set",
            "min_query_count=2000",
        ])
        .args(args)
        .current_dir(dir)
        .env_remove("MLPERF_HOST_LOG")
        .output()
        .expect("run mlperf-host");
    (output, started.elapsed())
}

/// The run ended INVALID for `reason`, in the summary (on stdout too), the detail log (every
/// line JSON) and result.json, and exited 1 naming it.
fn assert_abandoned(output: &Output, out: &Path, reason: &str) {
    let shown = support::describe(output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(
        support::text(&output.stderr).contains(&format!("error: {reason} (--stall-timeout)")),
        "{shown}"
    );
    let summary = std::fs::read_to_string(out.join("mlperf_log_summary.txt")).unwrap();
    assert!(summary.contains("Result is : INVALID\n"), "{summary}");
    assert!(
        summary.contains(&format!("The test was abandoned: {reason}.")),
        "{summary}"
    );
    assert!(support::text(&output.stdout).contains(&summary), "{shown}");
    let detail = std::fs::read_to_string(out.join("mlperf_log_detail.txt")).unwrap();
    let lines: Vec<serde_json::Value> = detail
        .lines()
        .map(|line| {
            let json = line.strip_prefix(":::MLLOG ").expect("an MLLOG line");
            serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {line}"))
        })
        .collect();
    let last = |key: &str| {
        lines
            .iter()
            .rev()
            .find(|line| line["key"] == key)
            .map(|line| line["value"].clone())
    };
    assert_eq!(last("result_validity"), Some("INVALID".into()));
    assert_eq!(last("result_invalid_reason"), Some(reason.into()));
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
    assert_eq!(result["abandoned"], reason);
    let accuracy = std::fs::read(out.join("mlperf_log_accuracy.json")).unwrap();
    serde_json::from_slice::<serde_json::Value>(&accuracy).expect("the accuracy log is JSON");
}

#[test]
fn an_issue_query_that_never_returns_ends_the_run_after_the_stall_timeout() {
    let dir = TempDir::new();
    for (out, args) in [
        ("single", &["--scenario", "SingleStream"][..]),
        (
            "server",
            &["--scenario", "Server", "--set", "server_target_qps=20000"][..],
        ),
        (
            "threads",
            &[
                "--scenario",
                "Server",
                "--set",
                "server_target_qps=20000",
                "--set",
                "server_num_issue_query_threads=2",
            ][..],
        ),
        (
            "accuracy",
            &["--scenario", "Offline", "--mode", "AccuracyOnly"][..],
        ),
    ] {
        let mut args = args.to_vec();
        args.extend([
            "--plugin-set",
            "fault=hang_issue",
            "--plugin-set",
            "at_sample=50",
        ]);
        let (output, took) = run(dir.path(), out, &args);
        assert_abandoned(
            &output,
            &dir.path().join(out),
            "faulty issue_query has not returned after 1s",
        );
        assert!(took < Duration::from_secs(10), "{out}: took {took:?}");
    }
}

#[test]
fn a_flush_that_never_returns_ends_the_run_after_the_stall_timeout() {
    let dir = TempDir::new();
    let (output, took) = run(
        dir.path(),
        "flush",
        &["--scenario", "Offline", "--plugin-set", "fault=hang_flush"],
    );
    assert_abandoned(
        &output,
        &dir.path().join("flush"),
        "faulty flush_queries has not returned after 1s",
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn under_the_official_engine_a_stalled_call_aborts_it_after_the_stall_timeout() {
    crate::official_engine::require_official();
    let dir = TempDir::new();
    let (output, took) = run(
        dir.path(),
        "official",
        &[
            "--engine",
            "official",
            "--plugin-set",
            "fault=hang_issue",
            "--plugin-set",
            "at_sample=50",
        ],
    );
    let shown = support::describe(&output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    let reason = "faulty issue_query has not returned after 1s (--stall-timeout)";
    assert!(support::text(&output.stderr).contains(reason), "{shown}");
    // The official library's logs are as far as it wrote them; the verdict is beside them.
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("official/result.json")).unwrap())
            .unwrap();
    assert_eq!(result["aborted"], reason);
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn an_abandoned_run_ends_the_analyzers_measurement_and_restores_its_ranges() {
    let dir = TempDir::new();
    let commands = dir.path().join("commands.txt");
    let simulator =
        crate::power_runs::PtdSimulator::start(&["--log-commands", commands.to_str().unwrap()]);
    let spec = simulator.spec();
    let (output, _) = run(
        dir.path(),
        "ptd",
        &[
            "--plugin-set",
            "fault=hang_issue",
            "--plugin-set",
            "at_sample=500",
            "--power",
            &spec,
        ],
    );
    // The stall strikes in the ranging run, the analyzer measuring at automatic ranges.
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        support::describe(&output)
    );
    let log = std::fs::read_to_string(&commands).unwrap();
    let sent: Vec<&str> = log.lines().collect();
    let go = sent
        .iter()
        .position(|c| c.starts_with("Go,"))
        .expect("a measurement began");
    assert_eq!(sent[go + 1], "Stop", "{log}");
    // The ranges the analyzer had before the run (the simulator's: 300 V, 20 A), not Auto.
    assert_eq!(&sent[go + 2..], ["SR,V,300", "SR,A,20"], "{log}");
}
