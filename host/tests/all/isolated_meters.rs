//! `run --isolate process` with a power-meter plugin: the meter runs in a process of its own.
//! A healthy meter gives the same power result as in-process; one whose process crashes or
//! exits mid-run, or whose read freezes, fails only the power result, naming the cause, and the
//! run's logs and performance result stand; one that crashes while opening is refused before
//! the run.

use crate::power_plugin::c_meter;
use crate::power_runs::SHORT_SINGLE_STREAM;
use crate::support::{self, compile_c_plugin, TempDir};

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// A real invalid access (not raise(), which the host's handler would swallow).
const SEGFAULT: &str = "{ volatile int *volatile nowhere = 0; *nowhere = 1; }";

/// A second-long SingleStream run of the null plugin into `dir/out` with the meter `power`,
/// isolated or not; its output, and how long it took.
fn run(dir: &Path, out: &str, power: &str, isolated: bool) -> (Output, Duration) {
    let started = Instant::now();
    let output = Command::new(EXE)
        .arg("run")
        .args(SHORT_SINGLE_STREAM)
        .args(["--power", power, "--out", out])
        .args(
            isolated
                .then_some(["--isolate", "process"])
                .into_iter()
                .flatten(),
        )
        .current_dir(dir)
        .env_remove("MLPERF_HOST_LOG")
        .output()
        .expect("run mlperf-host");
    (output, started.elapsed())
}

fn json(path: &Path) -> serde_json::Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap()
}

/// The value's shape: its keys and their shapes, without the values.
fn shape(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), shape(v))).collect(),
        Value::Array(items) => items.iter().map(shape).collect(),
        _ => Value::Null,
    }
}

#[test]
fn an_isolated_meter_plugin_gives_the_same_power_result_as_in_process() {
    let dir = TempDir::new();
    let example_c = support::plugin_library("libmlperf_example_c.so");
    let power = format!("plugin:{}?watts=60&device=npu0", example_c.display());
    let mut summaries = Vec::new();
    for (out, isolated) in [("in-process", false), ("isolated", true)] {
        let (output, took) = run(dir.path(), out, &power, isolated);
        support::assert_ok(&output);
        assert!(took < Duration::from_secs(10), "{out}: {took:?}");
        let stdout = support::text(&output.stdout);
        assert!(stdout.contains("Power result : VALID"), "{out}: {stdout}");
        let out = dir.path().join(out);
        let summary = json(&out.join("power_summary.json"));
        let source = &summary["sources"][0];
        assert_eq!(source["scope"], "component: npu0 board power (simulated)");
        assert_eq!(source["provenance"], "simulated");
        assert_eq!(source["accounting"]["average_watts"], 60.0);
        assert!(out.join("spl.txt").is_file());
        let result = json(&out.join("result.json"));
        assert_eq!(result["power"]["valid"], true, "{}", result["power"]);
        // Where the meter ran is said, isolated only.
        let isolated_note = "the meter plugin ran in a process of its own (--isolate process)";
        assert_eq!(
            source["notes"].to_string().contains(isolated_note),
            isolated,
            "{}",
            source["notes"]
        );
        summaries.push(summary);
    }
    // The same keys, but for the isolated note.
    for summary in &mut summaries {
        summary["sources"][0]["notes"] = serde_json::Value::Null;
    }
    assert_eq!(shape(&summaries[0]), shape(&summaries[1]));
    let [local, isolated] = [&summaries[0]["sources"][0], &summaries[1]["sources"][0]];
    for key in [
        "source",
        "identity",
        "period_seconds",
        "scope",
        "trace_file",
    ] {
        assert_eq!(local[key], isolated[key], "{key}");
    }
}

#[test]
fn a_meter_plugin_process_that_crashes_or_exits_mid_run_fails_only_the_power_result() {
    let dir = TempDir::new();
    // Five-millisecond reads: the twentieth falls inside the second-long run.
    let fault_at_read_20 = |fault: &str| {
        c_meter("")
            .replace(
                "#include <math.h>",
                "#include <math.h>\n#include <stdlib.h>",
            )
            .replace(
                "int n = (*(int *)i)++;",
                &format!("int n = (*(int *)i)++;\n    if (n == 20) {fault}"),
            )
    };
    for (name, fault, cause) in [
        ("segv", SEGFAULT, "power plugin process killed by SIGSEGV"),
        (
            "exit0",
            "exit(0);",
            "power plugin process exited with status 0",
        ),
    ] {
        let meter = compile_c_plugin(dir.path(), name, &fault_at_read_20(fault));
        let power = format!("plugin:{}", meter.display());
        let (output, took) = run(dir.path(), name, &power, true);
        // As a meter that fails in-process: the performance result stands.
        support::assert_ok(&output);
        assert!(took < Duration::from_secs(10), "{name}: {took:?}");
        let (stdout, stderr) = (support::text(&output.stdout), support::text(&output.stderr));
        assert!(stderr.contains(cause), "{name}: {stderr}");
        assert!(
            stdout.contains("Power result : INVALID"),
            "{name}: {stdout}"
        );
        let out = dir.path().join(name);
        let summary = std::fs::read_to_string(out.join("mlperf_log_summary.txt")).unwrap();
        assert!(summary.contains("Result is : VALID"), "{summary}");
        let detail = std::fs::read_to_string(out.join("mlperf_log_detail.txt")).unwrap();
        assert!(detail.contains("\"key\": \"result_validity\""), "whole");
        let reasons =
            json(&out.join("power_summary.json"))["sources"][0]["invalid_reasons"].to_string();
        assert!(reasons.contains(cause), "{name}: {reasons}");
        let result = json(&out.join("result.json"));
        assert_eq!(result["power"]["valid"], false, "{}", result["power"]);
    }
}

#[test]
fn a_meter_plugin_process_that_crashes_while_opening_is_refused_before_the_run() {
    let dir = TempDir::new();
    let meter = compile_c_plugin(dir.path(), "crash_open", &c_meter(SEGFAULT));
    let power = format!("plugin:{}", meter.display());
    let (output, took) = run(dir.path(), "out", &power, true);
    let described = support::describe(&output);
    assert_eq!(output.status.code(), Some(1), "{described}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    let stderr = support::text(&output.stderr);
    assert!(
        stderr.contains("power plugin process killed by SIGSEGV"),
        "{stderr}"
    );
    assert!(!dir.path().join("out/mlperf_log_detail.txt").exists());
}

#[test]
fn nan_readings_cross_from_the_meter_process_as_in_process() {
    let dir = TempDir::new();
    // Every 50th read is NaN (a failed read), the others 42 W.
    let source = c_meter("").replace("n == 1 ? NAN", "n % 50 == 1 ? NAN");
    let meter = compile_c_plugin(dir.path(), "nan", &source);
    let power = format!("plugin:{}", meter.display());
    for (out, isolated) in [("in-process", false), ("isolated", true)] {
        let (output, _) = run(dir.path(), out, &power, isolated);
        // JSON has no NaN: serde_json writes null, which reads back as NaN (a failed read).
        support::assert_ok(&output);
        let summary = json(&dir.path().join(out).join("power_summary.json"));
        let accounting = &summary["sources"][0]["accounting"];
        assert_eq!(accounting["average_watts"], 42.0, "{out}: {summary}");
        let invalid = accounting["invalid_samples"].as_u64().unwrap();
        assert!((2..=6).contains(&invalid), "{out}: {summary}");
    }
}

#[test]
fn a_meter_plugin_process_that_freezes_mid_run_fails_only_the_power_result_within_its_bound() {
    let dir = TempDir::new();
    // The twentieth read never returns (the process lives on, blocked in pause()).
    let source = c_meter("")
        .replace(
            "#include <math.h>",
            "#include <math.h>\n#include <unistd.h>",
        )
        .replace(
            "int n = (*(int *)i)++;",
            "int n = (*(int *)i)++;\n    if (n == 20) { for (;;) pause(); }",
        );
    let meter = compile_c_plugin(dir.path(), "frozen", &source);
    let power = format!("plugin:{}", meter.display());
    let (output, took) = run(dir.path(), "frozen", &power, true);
    // The performance result and every log stand; the power result is INVALID, and the host
    // did not wait for the stuck read past the meter's bounds.
    support::assert_ok(&output);
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let stdout = support::text(&output.stdout);
    assert!(stdout.contains("Power result : INVALID"), "{stdout}");
    let out = dir.path().join("frozen");
    let summary = std::fs::read_to_string(out.join("mlperf_log_summary.txt")).unwrap();
    assert!(summary.contains("Result is : VALID"), "{summary}");
    let reasons =
        json(&out.join("power_summary.json"))["sources"][0]["invalid_reasons"].to_string();
    // The meter's process gives up on the stuck read within its bound and answers the stop.
    assert!(
        reasons.contains("read_power did not return within 5.0 s of the stop"),
        "{reasons}"
    );
    assert_eq!(json(&out.join("result.json"))["power"]["valid"], false);
}
