//! Where each latency went (ABI 1.4's `report_timing`): a plugin that reports known queue and
//! compute times gets exactly them back in result.json's `latency_breakdown` and the trace; one
//! that reports none gets the host's part; `--sample-timing off` takes nothing.

use std::path::Path;

use serde_json::Value;

use crate::device_spread::device_plugin;
use crate::support::{self, TempDir};

fn run(dir: &Path, out: &str, extra: &[&str]) -> Value {
    let plugin = device_plugin(dir);
    let mut args = vec!["run", "--plugin", plugin.to_str().unwrap(), "--out", out];
    args.extend_from_slice(extra);
    let output = support::mlperf_host(dir, &args);
    support::assert_ok(&output);
    serde_json::from_slice(&std::fs::read(dir.join(out).join("result.json")).unwrap()).unwrap()
}

const SINGLE_STREAM: [&str; 6] = [
    "--scenario",
    "SingleStream",
    "--set",
    "min_duration_ms=0",
    "--set",
    "min_query_count=200",
];

/// Offline over both simulated devices, each reporting its timing: both busy, each sample
/// queued behind its device's earlier ones.
const OFFLINE_TIMED_ON_BOTH: [&str; 12] = [
    "--devices",
    "all",
    "--plugin-set",
    "timing=true",
    "--scenario",
    "Offline",
    "--set",
    "offline_expected_qps=1000",
    "--set",
    "min_duration_ms=100",
    "--set",
    "min_query_count=1",
];

fn part(at: &Value, name: &str) -> Option<i64> {
    at.get(name).and_then(Value::as_i64)
}

#[test]
fn a_plugins_reported_times_come_back_exactly_per_device_and_in_the_trace() {
    let dir = TempDir::new();
    let result = run(
        dir.path(),
        "timed",
        &[&OFFLINE_TIMED_ON_BOTH[..], &["--trace"]].concat(),
    );
    let breakdown = &result["latency_breakdown"];
    let samples = assert_exact_per_device(breakdown);
    // The later a sample in its device's queue, the longer it waited: the tail is queueing.
    let overall = breakdown["percentiles"].as_array().unwrap();
    let (p50, p99) = (&overall[0], &overall[4]);
    assert!(part(p99, "queue_ns") > part(p50, "queue_ns"), "{breakdown}");

    // The report draws it: all samples, then each device.
    let report = support::mlperf_host(dir.path(), &["report", "timed", "--out", "timed.html"]);
    support::assert_ok(&report);
    let html = std::fs::read_to_string(dir.path().join("timed.html")).unwrap();
    assert!(
        html.contains("<h3>Where the latency goes</h3>"),
        "the breakdown section"
    );
    assert!(
        html.contains(">1 (sim-slow)</text>") && html.contains("<title>compute: 3.00 ms</title>")
    );

    // The trace: each sample's times from its scheduled time, its device's lane.
    let trace: Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("timed/mlperf_log_trace.json")).unwrap(),
    )
    .unwrap();
    let begins: Vec<&Value> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "Sample" && e["ph"] == "b")
        .map(|e| &e["args"])
        .collect();
    assert_eq!(begins.len() as u64, samples);
    for args in begins {
        let at = |name: &str| {
            args[name]
                .as_i64()
                .unwrap_or_else(|| panic!("{name}: {args}"))
        };
        let compute = at("compute_end_ns") - at("compute_start_ns");
        let expected = [1_000_000, 3_000_000][at("device_lane") as usize];
        assert_eq!(compute, expected, "{args}");
        assert_eq!(
            at("compute_start_ns") - at("dequeued_ns"),
            200_000,
            "{args}"
        );
        assert!(at("handed_ns") <= at("dequeued_ns") && at("compute_end_ns") <= at("complete_ns"));
    }
}

#[test]
fn a_plugin_that_reports_nothing_gets_the_hosts_part_and_off_takes_nothing() {
    let dir = TempDir::new();
    let on = [&["--sample-timing", "on"][..], &SINGLE_STREAM[..]].concat();
    let result = run(dir.path(), "host-only", &on);
    let breakdown = &result["latency_breakdown"];
    let samples = breakdown["samples"].as_u64().unwrap();
    assert!(samples >= 200, "{breakdown}");
    assert_eq!(breakdown["handed_over"].as_u64(), Some(samples));
    assert_eq!(breakdown["timed"].as_u64(), Some(0));
    for at in breakdown["percentiles"].as_array().unwrap() {
        assert_eq!(part(at, "compute_ns"), None, "{at}");
        // The plugin's 1 ms is the plugin's part.
        let plugin = part(at, "plugin_ns").unwrap();
        assert!(plugin >= 1_000_000, "{at}");
        let sum = part(at, "issue_ns").unwrap() + part(at, "host_ns").unwrap() + plugin;
        let latency = part(at, "mean_latency_ns").unwrap();
        assert!((latency - sum).abs() <= 3, "{sum} against {latency}: {at}");
    }

    let off = [
        &["--sample-timing", "off", "--plugin-set", "timing=true"][..],
        &SINGLE_STREAM[..],
    ]
    .concat();
    let result = run(dir.path(), "off", &off);
    assert!(result.get("latency_breakdown").is_none(), "{result}");
}

/// Every sample divided, each device's at every percentile exactly what the plugin reported;
/// returns the samples.
fn assert_exact_per_device(breakdown: &Value) -> u64 {
    let samples = breakdown["samples"].as_u64().unwrap();
    assert!(samples >= 110, "{breakdown}");
    assert_eq!(breakdown["timed"].as_u64(), Some(samples), "{breakdown}");
    assert_eq!(breakdown["handed_over"].as_u64(), Some(samples));
    assert_eq!(breakdown["out_of_order"].as_u64(), Some(0));
    // Each device's samples: 200 us of preparing and its own service time, exactly.
    let devices = breakdown["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 2);
    for (device, service_ns) in devices.iter().zip([1_000_000, 3_000_000]) {
        for at in device["percentiles"].as_array().unwrap() {
            assert_eq!(part(at, "compute_ns"), Some(service_ns), "{at}");
            assert_eq!(part(at, "prepare_ns"), Some(200_000), "{at}");
            // The parts add up to the samples' latency (each a mean of whole ns).
            let sum: i64 = [
                "issue_ns",
                "host_ns",
                "queue_ns",
                "prepare_ns",
                "compute_ns",
                "completion_ns",
            ]
            .iter()
            .filter_map(|p| part(at, p))
            .sum();
            let latency = part(at, "mean_latency_ns").unwrap();
            assert!((latency - sum).abs() <= 6, "{sum} against {latency}: {at}");
            assert!(part(at, "queue_ns").unwrap() >= 0);
        }
    }
    samples
}

#[test]
fn an_isolated_plugins_reports_come_back_through_its_process() {
    let dir = TempDir::new();
    let result = run(
        dir.path(),
        "isolated",
        &[&OFFLINE_TIMED_ON_BOTH[..], &["--isolate", "process"]].concat(),
    );
    assert_exact_per_device(&result["latency_breakdown"]);
}
