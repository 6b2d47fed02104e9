//! Every scenario golden of the official wheel: loaded sets, issued queries, Server schedules.

use crate::support;

use mlperf_loadgen::{start_test, LogSettings, TestMode, TestScenario};
use serde_json::Value;
use support::{golden, settings_from_json, RecordingQsl, RecordingSut};

fn indices(value: &Value) -> Vec<usize> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect()
}

fn check(name: &str) {
    let g = golden(name);
    let mut settings = settings_from_json(&g["test_settings"]);
    settings.scenario = g["scenario"]
        .as_str()
        .unwrap()
        .parse::<TestScenario>()
        .unwrap();
    settings.mode = g["mode"].as_str().unwrap().parse::<TestMode>().unwrap();
    let sut = RecordingSut::default();
    let mut qsl = RecordingQsl::new(
        g["qsl_total_sample_count"].as_u64().unwrap() as usize,
        g["qsl_performance_sample_count"].as_u64().unwrap() as usize,
    );
    let log = LogSettings {
        record_query_schedule: true,
        ..LogSettings::default()
    };
    let result = start_test(&sut, &mut qsl, &settings, &log).expect("test runs");

    let expected_sets: Vec<Vec<usize>> = g["loaded_sets"]
        .as_array()
        .unwrap()
        .iter()
        .map(indices)
        .collect();
    assert_eq!(qsl.loads, expected_sets, "{name}: loaded sets");
    assert_eq!(qsl.unloads, expected_sets, "{name}: unloaded sets");

    let issued = sut.queries.lock().unwrap();
    assert_eq!(
        issued.len() as u64,
        g["issued_query_count"].as_u64().unwrap(),
        "{name}: issued query count"
    );
    let expected_queries: Vec<Vec<usize>> = g["first_64_issued_queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(indices)
        .collect();
    let n = expected_queries.len();
    assert_eq!(
        &issued[..n],
        &expected_queries[..],
        "{name}: first issued queries"
    );

    if let Some(offsets) = g.get("first_64_scheduled_offsets_ns") {
        let expected: Vec<i64> = offsets
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        let got = &result.series[0].scheduled_offsets_ns;
        assert_eq!(
            &got[..expected.len()],
            &expected[..],
            "{name}: Server schedule"
        );
    }
    assert!(result.series.iter().all(|s| s.never_completed == 0));
}

#[test]
fn single_stream_performance() {
    check("singlestream_perf.json");
}

#[test]
fn multi_stream_performance() {
    check("multistream_perf.json");
}

#[test]
fn server_1000_qps() {
    check("server_perf_qps1000.json");
}

#[test]
fn server_12345_6_qps() {
    check("server_perf_qps12345_6.json");
}

#[test]
fn offline_performance() {
    check("offline_perf.json");
}

#[test]
fn single_stream_equal_issue() {
    check("singlestream_equal_issue.json");
}

#[test]
fn single_stream_issue_unique() {
    check("singlestream_issue_unique.json");
}

#[test]
fn single_stream_accuracy() {
    check("singlestream_accuracy.json");
}

#[test]
fn offline_accuracy() {
    check("offline_accuracy.json");
}

#[test]
fn multi_stream_accuracy() {
    check("multistream_accuracy.json");
}
