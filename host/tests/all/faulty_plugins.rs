//! Plugins that misbehave, compiled from C on the fly: what a run leaves behind and reports
//! when a plugin hands back garbage or takes the process down.

use crate::support::{self, compile_c_plugin, TempDir};

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// A plugin completing every sample inline; `on_sample` runs first for each (with `n`, the
/// samples seen so far, and `r`, the response about to be completed).
pub(crate) fn plugin_source(on_sample: &str) -> String {
    plugin_source_with(on_sample, "")
}

/// As [`plugin_source`], `on_destroy` run by its destroy.
pub(crate) fn plugin_source_with(on_sample: &str, on_destroy: &str) -> String {
    format!(
        r#"#include <stdlib.h>
#include <unistd.h>
#include "mlperf_plugin.h"
static const mlperf_host_api *host;
static unsigned long n;
static const unsigned char byte = 1;
static mlperf_error *create(const mlperf_host_api *h, const char *c, size_t len, void **i) {{
    (void)c; (void)len; host = h; *i = 0; return 0; }}
static void destroy(void *i) {{ (void)i; {on_destroy} }}
static mlperf_error *issue(void *i, const mlperf_sample *s, size_t count) {{
    (void)i;
    for (size_t k = 0; k < count; k++) {{
        mlperf_response r = {{ sizeof r, s[k].id, &byte, 1, 0 }};
        n++;
        {on_sample}
        host->complete(host->context, &r, 1);
    }}
    return 0;
}}
static mlperf_error *flush(void *i) {{ (void)i; return 0; }}
static mlperf_plugin_api api;
MLPERF_PLUGIN_EXPORT const mlperf_plugin_api *mlperf_plugin_entry(uint32_t major, uint32_t minor) {{
    (void)minor;
    if (major != MLPERF_PLUGIN_ABI_MAJOR) return 0;
    api.struct_size = sizeof api;
    api.abi_major = MLPERF_PLUGIN_ABI_MAJOR;
    api.abi_minor = MLPERF_PLUGIN_ABI_MINOR;
    api.kind = MLPERF_PLUGIN_KIND_SUT;
    api.name = "faulty";
    api.version = "0";
    api.create = create;
    api.destroy = destroy;
    api.issue_query = issue;
    api.flush_queries = flush;
    return &api;
}}
"#
    )
}

fn run(dir: &Path, plugin: &Path, mode: &str, out: &str) -> Output {
    Command::new(EXE)
        .args(["run", "--plugin"])
        .arg(plugin)
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
    for (name, length, mode) in [
        ("huge", "UINT64_MAX", "AccuracyOnly"),
        ("large", "(1ULL << 40)", "AccuracyOnly"),
        ("huge_perf", "UINT64_MAX", "PerformanceOnly"),
    ] {
        let plugin = compile_c_plugin(
            dir.path(),
            name,
            &plugin_source(&format!("if (n == 5) r.length = {length};")),
        );
        let output = run(dir.path(), &plugin, mode, name);
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
    let good = compile_c_plugin(dir.path(), "good", &plugin_source(""));
    let exits = compile_c_plugin(dir.path(), "exits", &plugin_source("if (n == 50) exit(0);"));
    support::assert_ok(&run(dir.path(), &good, "PerformanceOnly", "logs"));
    let out = dir.path().join("logs");
    for file in ["mlperf_log_summary.txt", "result.json"] {
        assert!(out.join(file).is_file(), "the first run wrote {file}");
    }

    run(dir.path(), &exits, "PerformanceOnly", "logs");
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
    let plugin = compile_c_plugin(dir.path(), "holds", &plugin_source("continue;"));
    let plugin = plugin.to_str().unwrap();
    let args = [
        "--plugin",
        plugin,
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
    let source = plugin_source_with("", "for (;;) pause();");
    let plugin = compile_c_plugin(dir.path(), "stuck", &source);
    let started = std::time::Instant::now();
    let output = Command::new(EXE)
        .args(["run", "--plugin"])
        .arg(&plugin)
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
