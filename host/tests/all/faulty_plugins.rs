//! Plugins that misbehave, compiled from C on the fly: what a run leaves behind and reports
//! when a plugin hands back garbage or takes the process down.

use crate::support::{self, compile_c_plugin, TempDir};

use std::path::Path;
use std::process::{Command, Output};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// A plugin completing every sample inline; `on_sample` runs first for each (with `n`, the
/// samples seen so far, and `r`, the response about to be completed).
fn plugin_source(on_sample: &str) -> String {
    format!(
        r#"#include <stdlib.h>
#include "mlperf_plugin.h"
static const mlperf_host_api *host;
static unsigned long n;
static const unsigned char byte = 1;
static mlperf_error *create(const mlperf_host_api *h, const char *c, size_t len, void **i) {{
    (void)c; (void)len; host = h; *i = 0; return 0; }}
static void destroy(void *i) {{ (void)i; }}
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
