//! The host batching for a plugin that does not batch itself (`--plugin-batch`): larger
//! queries go over in calls of at most N samples, Server's queries are gathered into calls of
//! up to N, and the plugin is told N in its run description. The plugin here answers every
//! sample with the size of the call it came in and that N, so the accuracy log shows the calls.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::{accuracy_records, compile_c_plugin, describe, TempDir};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// Answers each sample inline with (count of its call, max_samples_per_call) as two u32s.
/// `CAPABILITIES` is filled in per build.
/// Its destroy appends a line to the file `DESTROYED_MARKER` names, when set.
const CALL_SIZES: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mlperf_plugin.h"
typedef struct { mlperf_host_api host; uint32_t per_call; } instance;
static instance one;
static mlperf_error *create(const mlperf_host_api *h, const char *c, size_t n, void **i) {
    (void)c; (void)n;
    one.host = *h;
    one.per_call = h->struct_size >= sizeof *h && h->run ? (uint32_t)h->run->max_samples_per_call : 0;
    *i = &one; return 0; }
static void destroy(void *i) {
    (void)i;
    const char *marker = getenv("DESTROYED_MARKER");
    FILE *f = marker ? fopen(marker, "a") : 0;
    if (f) { fputs("destroyed\n", f); fclose(f); } }
static mlperf_error *issue(void *i, const mlperf_sample *s, size_t n) {
    instance *self = i;
    uint32_t answer[2] = { (uint32_t)n, self->per_call };
    for (size_t k = 0; k < n; ++k) {
        const mlperf_sample *one_sample = (const mlperf_sample *)((const char *)s + k * s->struct_size);
        mlperf_response r = { .struct_size = sizeof r, .id = one_sample->id, .data = answer, .length = 8 };
        self->host.complete(self->host.context, &r, 1);
    }
    return 0; }
static mlperf_error *flush(void *i) { (void)i; return 0; }
static mlperf_plugin_api api;
MLPERF_PLUGIN_EXPORT const mlperf_plugin_api *mlperf_plugin_entry(uint32_t major, uint32_t minor) {
    (void)minor;
    api.struct_size = sizeof api; api.abi_major = 1; api.abi_minor = 3;
    api.kind = MLPERF_PLUGIN_KIND_SUT; api.name = "call-sizes"; api.version = "0";
    api.capabilities = CAPABILITIES;
    api.create = create; api.destroy = destroy; api.issue_query = issue; api.flush_queries = flush;
    return major == 1 ? &api : 0;
}
"#;

fn plugin(dir: &Path, name: &str, capabilities: &str) -> PathBuf {
    let source = CALL_SIZES.replace("CAPABILITIES", capabilities);
    compile_c_plugin(dir, name, &source)
}

fn run(plugin: &Path, out: &Path, args: &[&str]) -> Output {
    Command::new(EXE)
        .arg("run")
        .arg("--plugin")
        .arg(plugin)
        .args(["--total-samples", "100"])
        .args(args)
        .arg("--out")
        .arg(out)
        .env_remove("MLPERF_HOST_LOG")
        .output()
        .expect("run mlperf-host")
}

/// (call size, max_samples_per_call) of every sample in the accuracy log.
fn calls(out: &Path) -> Vec<(u32, u32)> {
    accuracy_records(out)
        .into_iter()
        .map(|(_, bytes)| {
            let word = |k: usize| u32::from_le_bytes(bytes[4 * k..4 * k + 4].try_into().unwrap());
            (word(0), word(1))
        })
        .collect()
}

#[test]
fn an_offline_query_goes_over_in_calls_of_at_most_the_batch() {
    let dir = TempDir::new();
    let plugin = plugin(dir.path(), "sizes", "0");
    let accuracy = ["--scenario", "Offline", "--mode", "AccuracyOnly"];
    let whole = dir.path().join("whole");
    let output = run(&plugin, &whole, &accuracy);
    assert!(output.status.success(), "{}", describe(&output));
    assert!(calls(&whole).iter().all(|&call| call == (100, 0)));

    let split = dir.path().join("split");
    let mut args = accuracy.to_vec();
    args.extend(["--plugin-batch", "16", "--isolate", "process"]);
    let output = run(&plugin, &split, &args);
    assert!(output.status.success(), "{}", describe(&output));
    let calls = calls(&split);
    assert_eq!(calls.len(), 100);
    // Six calls of 16 and the last of 4, each told the batch.
    assert_eq!(calls.iter().filter(|&&c| c == (16, 16)).count(), 96);
    assert_eq!(calls.iter().filter(|&&c| c == (4, 16)).count(), 4);
}

#[test]
fn server_queries_are_gathered_into_calls_of_up_to_the_batch() {
    let dir = TempDir::new();
    let plugin = plugin(dir.path(), "sizes", "0");
    // 100 one-sample queries at 5,000 a second: about 25 arrive within each 5 ms wait.
    let server = [
        "--scenario",
        "Server",
        "--mode",
        "AccuracyOnly",
        "--set",
        "server_target_qps=5000",
    ];
    let alone = dir.path().join("alone");
    let output = run(&plugin, &alone, &server);
    assert!(output.status.success(), "{}", describe(&output));
    assert!(calls(&alone).iter().all(|&call| call == (1, 0)));

    for isolate in ["none", "process"] {
        let gathered = dir.path().join(format!("gathered-{isolate}"));
        let mut args = server.to_vec();
        args.extend([
            "--plugin-batch",
            "8",
            "--plugin-batch-wait",
            "5ms",
            "--isolate",
            isolate,
        ]);
        let output = run(&plugin, &gathered, &args);
        assert!(output.status.success(), "{}", describe(&output));
        let calls = calls(&gathered);
        assert_eq!(calls.len(), 100, "{isolate}");
        assert!(
            calls.iter().all(|&(size, told)| size <= 8 && told == 8),
            "{isolate}: {calls:?}"
        );
        assert!(
            calls.iter().any(|&(size, _)| size == 8),
            "{isolate}: {calls:?}"
        );
    }

    // A performance run: the last calls go at the flush, and every query completes.
    let performance = dir.path().join("performance");
    let output = run(
        &plugin,
        &performance,
        &[
            "--scenario",
            "Server",
            "--set",
            "server_target_qps=2000",
            "--set",
            "server_target_latency_ns=50000000",
            "--set",
            "min_duration_ms=500",
            "--set",
            "min_query_count=500",
            "--plugin-batch",
            "4",
            "--plugin-batch-wait",
            "1ms",
        ],
    );
    let summary = describe(&output);
    assert!(output.status.success(), "{summary}");
    assert!(summary.contains("Result is : VALID"), "{summary}");
}

#[test]
fn a_plugin_that_batches_itself_is_refused_host_batching() {
    let dir = TempDir::new();
    let plugin = plugin(dir.path(), "native", "MLPERF_CAP_NATIVE_BATCHING");
    let out = dir.path().join("out");
    let output = run(&plugin, &out, &["--plugin-batch", "8"]);
    let all = describe(&output);
    assert!(!output.status.success(), "{all}");
    assert!(
        all.contains("plugin call-sizes batches samples itself (MLPERF_CAP_NATIVE_BATCHING)"),
        "{all}"
    );
    for (args, message) in [
        (
            &["--plugin-batch", "0"][..],
            "--plugin-batch 0: a call holds at least one sample",
        ),
        (
            &["--plugin-batch-wait", "1ms"][..],
            "--plugin-batch-wait needs --plugin-batch",
        ),
    ] {
        let output = run(&plugin, &out, args);
        let all = describe(&output);
        assert!(all.contains(message), "{all}");
    }
}

#[test]
fn a_batching_thread_that_cannot_start_fails_the_run_and_destroys_the_instance() {
    let dir = TempDir::new();
    let plugin = plugin(dir.path(), "sizes", "0");
    let marker = dir.path().join("destroyed.txt");
    let output = Command::new(EXE)
        .arg("run")
        .arg("--plugin")
        .arg(&plugin)
        .args([
            "--total-samples",
            "100",
            "--scenario",
            "Server",
            "--plugin-batch",
            "8",
        ])
        .arg("--out")
        .arg(dir.path().join("out"))
        .env_remove("MLPERF_HOST_LOG")
        .env(mlperf_host::plugin::REFUSE_THREAD_ENV, "mlperf-batch")
        .env("DESTROYED_MARKER", &marker)
        .output()
        .expect("run mlperf-host");
    let all = describe(&output);
    assert!(!output.status.success(), "{all}");
    assert!(
        all.contains("cannot start the host's batching thread"),
        "{all}"
    );
    // The instance created before the thread failed is destroyed, once.
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap_or_default(),
        "destroyed\n",
        "{all}"
    );
}
