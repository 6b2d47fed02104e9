//! A signal at any moment of a run ends it: before the test begins, at once; once it has
//! begun (loading samples, issuing, draining), INVALID within seconds, every log whole and
//! the signal named in them. Every scenario, each of the three signals, in process and
//! isolated.

use crate::faulty_plugins::{signal, start_run, wait_within};
use crate::isolated_plugins::assert_invalid_because;
use crate::support::{self, TempDir};
use std::process::{Command, Stdio};
use std::time::Duration;

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// A server of 1 ms a sample on one thread, for a minute: Offline's one query then drains for
/// a minute, which the signal, half a second in, cuts short.
const MINUTE_OF_SERVICE: [&str; 12] = [
    "--plugin-set",
    "workers=1",
    "--plugin-set",
    "service_us=1000",
    "--set",
    "min_duration_ms=60000",
    "--set",
    "min_query_count=1",
    "--set",
    "offline_expected_qps=1000",
    "--set",
    "server_target_qps=200",
];

#[test]
fn a_signal_in_any_scenario_ends_the_run_invalid_within_seconds() {
    for (scenario, name, status, isolated) in [
        ("SingleStream", "TERM", 143, false),
        ("MultiStream", "HUP", 129, true),
        ("Server", "INT", 130, false),
        ("Offline", "TERM", 143, false),
        ("Offline", "HUP", 129, true),
    ] {
        let dir = TempDir::new();
        let mut args = vec!["--scenario", scenario];
        args.extend(MINUTE_OF_SERVICE);
        if isolated {
            args.extend(["--isolate", "process"]);
        }
        let child = start_run(dir.path(), "logs", &args);
        signal(&child, name);
        let (output, took) = wait_within(child, Duration::from_secs(30));
        let out = dir.path().join("logs");
        assert_invalid_because(&output, status, &out, &format!("interrupted by SIG{name}"));
        let detail = std::fs::read_to_string(out.join("mlperf_log_detail.txt")).unwrap();
        assert!(
            detail.contains(&format!("Test aborted: interrupted by SIG{name}.")),
            "{scenario}"
        );
        // The drain is cut 2 s after the abort; the rest is writing the logs.
        assert!(took < Duration::from_secs(10), "{scenario}: {took:?}");
    }
}

#[test]
fn a_signal_while_the_samples_load_ends_the_run_once_the_load_returns() {
    let dir = TempDir::new();
    let plugin = support::faulty_plugin();
    let child = start_run(
        dir.path(),
        "logs",
        &[
            "--plugin",
            plugin.to_str().unwrap(),
            "--plugin-set",
            "fault=hang_load",
            "--plugin-set",
            "hang_ms=2500",
            "--set",
            "min_duration_ms=60000",
        ],
    );
    signal(&child, "TERM");
    let (output, took) = wait_within(child, Duration::from_secs(30));
    assert_invalid_because(
        &output,
        143,
        &dir.path().join("logs"),
        "interrupted by SIGTERM",
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn a_signal_before_the_test_begins_exits_at_once() {
    let plugin = support::faulty_plugin();
    for isolated in [false, true] {
        let dir = TempDir::new();
        let mut command = Command::new(EXE);
        command
            .args(["run", "--plugin", plugin.to_str().unwrap()])
            .args(["--plugin-set", "fault=hang_create", "--out", "logs"])
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if isolated {
            command.args(["--isolate", "process"]);
        }
        let child = command.spawn().unwrap();
        // Blocked in the plugin's create, which never returns.
        std::thread::sleep(Duration::from_millis(800));
        signal(&child, "INT");
        let (output, took) = wait_within(child, Duration::from_secs(10));
        assert_eq!(
            output.status.code(),
            Some(130),
            "{}",
            support::describe(&output)
        );
        assert!(
            support::text(&output.stderr).contains("SIGINT before the test began"),
            "{}",
            support::describe(&output)
        );
        assert!(took < Duration::from_secs(2), "{took:?}");
        assert!(!dir.path().join("logs/mlperf_log_summary.txt").exists());
    }
}

#[test]
fn a_signal_ends_an_official_engine_run_with_its_logs_flushed() {
    crate::official_engine::require_official();
    // Its AbortTest stops only its logging: the test used to wait forever after it.
    for (scenario, name, status) in [("Offline", "TERM", 143), ("SingleStream", "INT", 130)] {
        let dir = TempDir::new();
        let mut args = vec!["--engine", "official", "--scenario", scenario];
        args.extend(MINUTE_OF_SERVICE);
        let child = start_run(dir.path(), "logs", &args);
        let output = signal_and_wait(child, name, status);
        let stderr = support::text(&output.stderr);
        assert!(stderr.contains("cannot be cut short"), "{stderr}");
        let out = dir.path().join("logs");
        let verdict = std::fs::read_to_string(out.join("mlperf_host_aborted.txt")).unwrap();
        assert!(
            verdict.contains(&format!("interrupted by SIG{name}"))
                && verdict.contains("the run is INVALID"),
            "{verdict}"
        );
        let result: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
        assert_eq!(
            result["aborted"],
            format!("interrupted by SIG{name}"),
            "{result}"
        );
        // What the official library had logged is flushed.
        let detail = std::fs::read_to_string(out.join("mlperf_log_detail.txt")).unwrap();
        assert!(detail.contains("loadgen_version"), "{detail}");
    }
}

/// `mlperf-host sweep` on the null plugin, 1 ms a request, started in `dir`: returned once its
/// first point is under way (its table's header printed, half a second more), with the thread
/// reading the rest of its stdout.
fn start_sweep(
    dir: &std::path::Path,
    args: &[&str],
) -> (std::process::Child, std::thread::JoinHandle<String>) {
    use std::io::{BufRead, BufReader};
    let null = support::null_plugin();
    let mut sweep = vec!["sweep", "--plugin", null.to_str().unwrap()];
    sweep.extend([
        "--plugin-set",
        "workers=1",
        "--plugin-set",
        "service_us=1000",
    ]);
    sweep.extend(["--warmup", "0s", "--out", "sweep"]);
    sweep.extend(args);
    let mut child = spawn(dir, &sweep);
    // The header, then the rest kept for the caller's assertions.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut header = String::new();
    while stdout.read_line(&mut header).is_ok_and(|n| n > 0) && !header.contains("TTFT p50") {
        header.clear();
    }
    assert!(header.contains("TTFT p50"), "the sweep never began");
    let rest = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
        text
    });
    std::thread::sleep(Duration::from_millis(500));
    (child, rest)
}

#[test]
fn a_signal_ends_a_sweep_point_short_and_writes_the_files_of_the_points_run() {
    for (name, status, accuracy) in [("TERM", 143, false), ("INT", 130, true)] {
        let dir = TempDir::new();
        let mut args = vec!["--concurrency", "1,2,4", "--duration", "60s"];
        if accuracy {
            args.extend(["--accuracy", "--accuracy-samples", "8"]);
        }
        let (child, stdout) = start_sweep(dir.path(), &args);
        let output = signal_and_wait(child, name, status);
        let stdout = stdout.join().unwrap();
        let stderr = support::text(&output.stderr);
        assert!(
            stdout.contains(&format!(
                "sweep stopped: point 1 (concurrency 1) was cut short, interrupted by SIG{name}: \
                 the 2 point(s) after it were not run"
            )),
            "{stdout}"
        );
        assert!(
            stderr.contains(&format!("interrupted by SIG{name}; the run is INVALID")),
            "{stderr}"
        );
        let out = dir.path().join("sweep");
        let sweep: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("sweep.json")).unwrap()).unwrap();
        let points = sweep["points"].as_array().unwrap();
        assert_eq!(points.len(), 1, "{sweep}");
        assert!(points[0]["completed"].as_u64().unwrap() > 0, "{sweep}");
        assert!(
            points[0]["invalid_because"]
                .to_string()
                .contains(&format!("interrupted by SIG{name}")),
            "{sweep}"
        );
        assert!(out
            .join("endpoints/point-1/performance/result_summary.json")
            .is_file());
        if accuracy {
            assert!(
                stderr.contains(&format!(
                    "the accuracy pass: not run: the sweep was interrupted by SIG{name}"
                )),
                "{stderr}"
            );
        }
    }
}

/// `mlperf-host ARGS` started in `dir`, its output piped.
fn spawn(dir: &std::path::Path, args: &[&str]) -> std::process::Child {
    Command::new(EXE)
        .args(args)
        .current_dir(dir)
        .env_remove("MLPERF_HOST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mlperf-host")
}

/// `mlperf-host ARGS` started in `dir`, returned half a second after `detail` (a run's detail
/// log, under `dir`) was begun.
fn start_waiting_for(dir: &std::path::Path, args: &[&str], detail: &str) -> std::process::Child {
    let child = spawn(dir, args);
    let detail = dir.join(detail);
    let started = std::time::Instant::now();
    while !std::fs::metadata(&detail).is_ok_and(|m| m.len() > 0) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{} never began",
            detail.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    child
}

/// Sends SIG`name` to `child`, which then ends within 10 s with `status`: its output.
fn signal_and_wait(child: std::process::Child, name: &str, status: i32) -> std::process::Output {
    signal(&child, name);
    let (output, took) = wait_within(child, Duration::from_secs(30));
    assert_eq!(
        output.status.code(),
        Some(status),
        "{}",
        support::describe(&output)
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
    output
}

#[test]
fn a_signal_ends_tune_in_its_trial_and_audit_in_its_run() {
    let dir = TempDir::new();
    let tune = [
        "tune",
        "--scenario",
        "Offline",
        "--trial-duration",
        "60s",
        "--plugin-set",
        "workers=1",
        "--plugin-set",
        "service_us=1000",
        "--out",
        "tuned",
    ];
    let child = start_waiting_for(dir.path(), &tune, "tuned/trial-1/mlperf_log_detail.txt");
    let output = signal_and_wait(child, "TERM", 143);
    assert!(
        support::text(&output.stderr).contains("interrupted by SIGTERM"),
        "{}",
        support::describe(&output)
    );
    assert!(!dir.path().join("tuned/user.conf").exists());

    support::assert_ok(&support::mlperf_host(
        dir.path(),
        &["run", "--set", "min_duration_ms=100", "--out", "perf"],
    ));
    let mut audit = vec![
        "audit",
        "--test",
        "TEST04",
        "--performance-run",
        "perf",
        "--out",
        "TEST04",
    ];
    audit.extend(MINUTE_OF_SERVICE);
    let child = start_waiting_for(
        dir.path(),
        &audit,
        "TEST04/performance/run_1/mlperf_log_detail.txt",
    );
    signal_and_wait(child, "HUP", 129);
    let run = dir.path().join("TEST04/performance/run_1");
    let summary = std::fs::read_to_string(run.join("mlperf_log_summary.txt")).unwrap();
    assert!(summary.contains("Result is : INVALID"), "{summary}");
    let detail = std::fs::read_to_string(run.join("mlperf_log_detail.txt")).unwrap();
    assert!(detail.contains("Test aborted: interrupted by SIGHUP."));
    // result.json beside the compliance folder, as the checker wants run_1/ LoadGen's only.
    let result = std::fs::read_to_string(dir.path().join("TEST04/result.json")).unwrap();
    assert!(result.contains("interrupted by SIGHUP"), "{result}");
    // Nothing was verified of a run cut short.
    assert!(!dir.path().join("TEST04/verify_performance.txt").exists());
}
