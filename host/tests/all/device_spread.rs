//! `--devices` (ABI 1.4): one instance per device a plugin lists, the queries spread over
//! them, each device's share in result.json; against a C plugin of two simulated devices whose
//! service times are known (1 ms and 3 ms a sample, one at a time each).

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{self, TempDir};

pub(crate) fn device_plugin(dir: &Path) -> PathBuf {
    support::compile_c_plugin(dir, "simdevices", include_str!("device_plugin.c"))
}

fn run(dir: &Path, plugin: &Path, out: &str, extra: &[&str]) -> Output {
    let mut args = vec!["run", "--plugin", plugin.to_str().unwrap(), "--out", out];
    args.extend_from_slice(extra);
    support::mlperf_host(dir, &args)
}

/// result.json's `devices`: (name, samples, share) of each, in the run's order.
fn shares(out: &Path) -> Vec<(String, u64, f64)> {
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
    result["devices"]
        .as_array()
        .unwrap_or_else(|| panic!("no devices in result.json: {result}"))
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap().to_string(),
                d["samples"].as_u64().unwrap(),
                d["share"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn offline_is_split_evenly_and_single_stream_goes_to_the_first_free_device() {
    let dir = TempDir::new();
    let plugin = device_plugin(dir.path());
    // 1.1 x 2000 qps x 0.2 s = 440 samples in the one query.
    let output = run(
        dir.path(),
        &plugin,
        "offline",
        &[
            "--devices",
            "all",
            "--scenario",
            "Offline",
            "--set",
            "offline_expected_qps=2000",
            "--set",
            "min_duration_ms=200",
            "--set",
            "min_query_count=1",
        ],
    );
    support::assert_ok(&output);
    let offline = shares(&dir.path().join("offline"));
    let report = support::mlperf_host(dir.path(), &["report", "offline", "--out", "offline.html"]);
    support::assert_ok(&report);
    let html = std::fs::read_to_string(dir.path().join("offline.html")).unwrap();
    assert!(
        html.contains("<h3>Devices</h3>")
            && html.contains("<tr><td>1 (sim-slow)</td><td>220</td><td>50.0 %</td></tr>"),
        "the report's device table"
    );
    assert_eq!(
        offline,
        [
            ("sim-fast".to_string(), 220, 0.5),
            ("sim-slow".to_string(), 220, 0.5)
        ]
    );
    let detail = std::fs::read_to_string(dir.path().join("offline/mlperf_log_detail.txt")).unwrap();
    assert!(
        detail.contains("0 (sim-fast), 1 (sim-slow)"),
        "the devices in the detail log"
    );

    // One query at a time: each finds both devices free and goes to the first.
    let output = run(
        dir.path(),
        &plugin,
        "single",
        &[
            "--devices",
            "1,0",
            "--scenario",
            "SingleStream",
            "--set",
            "min_duration_ms=0",
            "--set",
            "min_query_count=50",
        ],
    );
    support::assert_ok(&output);
    let single = shares(&dir.path().join("single"));
    assert_eq!(single[0].0, "sim-slow", "the order --devices gives");
    assert!(single[0].1 >= 50 && single[1].1 == 0, "{single:?}");
}

#[test]
fn a_device_that_crashes_under_isolation_is_named_in_the_verdict() {
    let dir = TempDir::new();
    let plugin = device_plugin(dir.path());
    let output = run(
        dir.path(),
        &plugin,
        "crash",
        &[
            "--devices",
            "all",
            "--isolate",
            "process",
            "--plugin-set",
            "crash=true",
            "--scenario",
            "Offline",
            "--set",
            "offline_expected_qps=1000",
            "--set",
            "min_duration_ms=100",
            "--set",
            "min_query_count=1",
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        support::describe(&output)
    );
    let detail = std::fs::read_to_string(dir.path().join("crash/mlperf_log_detail.txt")).unwrap();
    assert!(
        detail.contains("device 1 (sim-slow): ") && detail.contains("SIGABRT"),
        "{}",
        support::describe(&output)
    );
}

#[test]
fn devices_are_refused_clearly_where_the_plugin_lists_none_or_not_those() {
    let dir = TempDir::new();
    let plugin = device_plugin(dir.path());
    let output = run(dir.path(), &plugin, "five", &["--devices", "5"]);
    assert_ne!(output.status.code(), Some(0));
    let stderr = support::text(&output.stderr);
    assert!(
        stderr.contains("--devices 5: the plugin lists 2 device(s): 0 (sim-fast), 1 (sim-slow)"),
        "{stderr}"
    );
    let null = support::null_plugin();
    let output = run(dir.path(), &null, "null", &["--devices", "all"]);
    assert_ne!(output.status.code(), Some(0));
    let stderr = support::text(&output.stderr);
    assert!(stderr.contains("the plugin lists no devices"), "{stderr}");
}

/// A sweep over both devices, in process and isolated: every device's streamed tokens are
/// timed (2 gaps an answer), the slow device's failed requests are counted under their status
/// and named by device, and failing does not make that device look busy: it keeps getting
/// requests.
#[test]
fn a_sweep_over_devices_times_every_answers_tokens_and_counts_each_devices_failures() {
    let dir = TempDir::new();
    let plugin = device_plugin(dir.path());
    for isolate in ["none", "process"] {
        let out = dir.path().join(format!("sweep-{isolate}"));
        let output = support::mlperf_host(
            dir.path(),
            &[
                "sweep",
                "--plugin",
                plugin.to_str().unwrap(),
                "--devices",
                "all",
                "--isolate",
                isolate,
                "--plugin-set",
                "tokens=true",
                "--plugin-set",
                "fail_slow=true",
                "--concurrency",
                "2",
                "--duration",
                "2s",
                "--warmup",
                "100ms",
                "--no-saturation-stop",
                "--out",
                out.to_str().unwrap(),
            ],
        );
        support::assert_ok(&output);
        let sweep: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("sweep.json")).unwrap()).unwrap();
        let point = &sweep["points"][0];
        let completed = point["completed"].as_u64().unwrap();
        let failed = point["failed"].as_u64().unwrap();
        // Device 0 answers in about 1.4 ms, device 1 fails in about 3.4 ms: with 2 in flight
        // each has one most of the time, so about 2 answers for each failure. A device whose
        // failures were not counted as finished would have been given its first request only;
        // an isolated plugin whose answers waited for the reader's timeout gave 20 a second.
        assert!(completed >= 100, "{isolate}: {point:#}");
        assert!(failed >= completed / 10, "{isolate}: {point:#}");
        let unavailable = &point["errors"]["status 503"];
        assert_eq!(unavailable["count"].as_u64(), Some(failed), "{point:#}");
        let first = unavailable["first"].as_str().unwrap();
        assert!(
            first.contains("device 1 (sim-slow): sim-slow: service unavailable"),
            "{isolate}: {first}"
        );
        // Both devices' answers stream 3 tokens: 2 gaps each, timed from either device.
        let gaps = point["itl_ns"]["count"].as_u64().unwrap();
        assert!(gaps >= 2 * completed, "{isolate}: {gaps} gaps, {point:#}");
        // Each piece comes at least 200 us after the one before; the first token too is timed
        // when the plugin gave it (isolated: in its process, not when the host read it).
        let shortest = point["itl_ns"]["min"].as_f64().unwrap();
        assert!(shortest >= 200_000.0, "{isolate}: {shortest} ns, {point:#}");
        assert_eq!(point["output_tokens"]["max"], 3.0, "{point:#}");
    }
}

/// Tests whose verdict rests on timings (a latency bound, a rate, a comparison of two runs'
/// speeds): `scripts/test.sh` runs every `timed` test alone, one after another, after the
/// rest, so that no other test takes the CPU they measure.
mod timed {
    use super::*;

    #[test]
    fn server_queries_go_to_the_least_loaded_device_so_the_faster_one_takes_more() {
        // Timed: not beside another timed test.
        let _timings = support::timings_or_llm();
        let dir = TempDir::new();
        let plugin = device_plugin(dir.path());
        // 800 queries/s against 1,000/s and 333/s of capacity: the fast device alone would queue,
        // so the slow one takes the overflow.
        let output = run(
            dir.path(),
            &plugin,
            "server",
            &[
                "--devices",
                "2",
                "--scenario",
                "Server",
                "--set",
                "server_target_qps=800",
                "--set",
                "min_duration_ms=1000",
                "--set",
                "min_query_count=800",
                "--set",
                "server_target_latency_ns=100000000",
            ],
        );
        support::assert_ok(&output);
        let server = shares(&dir.path().join("server"));
        let (fast, slow) = (&server[0], &server[1]);
        assert!(fast.1 + slow.1 >= 800, "{server:?}");
        assert!((fast.2 + slow.2 - 1.0).abs() < 1e-9);
        // Join-the-shortest-queue at 60 % of the capacity: the fast device serves most (three
        // quarters of the work when both are busy all the time, more when the slow one idles).
        assert!(fast.2 > 0.6 && slow.1 > 0, "fast {fast:?}, slow {slow:?}");
    }
}
