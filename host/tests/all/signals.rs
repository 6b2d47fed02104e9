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
        signal(&child, name);
        let (output, took) = wait_within(child, Duration::from_secs(30));
        assert_eq!(
            output.status.code(),
            Some(status),
            "{}",
            support::describe(&output)
        );
        assert!(took < Duration::from_secs(10), "{scenario}: {took:?}");
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
