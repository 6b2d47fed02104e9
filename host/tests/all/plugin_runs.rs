//! The real plugins through the ABI: both run every scenario; faulty behaviour of the null
//! plugin (a panic, a double completion, a sample never completed, a failure reported through
//! the host's fail callback) ends the run INVALID with the reason and complete logs.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mlperf_host::loadgen::{
    start_test, start_test_with, LogSettings, StopReason, TestContext, TestScenario, TestSettings,
};
use mlperf_host::plugin::{Plugin, PluginBackend, PluginSut};
use support::{null_plugin, RecordingQsl};

fn example_c_plugin() -> PathBuf {
    support::plugin_library("libmlperf_example_c.so")
}

fn quick(scenario: TestScenario) -> TestSettings {
    TestSettings {
        scenario,
        min_duration_ms: 0,
        min_query_count: 700,
        server_target_qps: 20_000.0,
        offline_expected_qps: 1000.0,
        ..TestSettings::default()
    }
}

fn sut(path: &Path, config: &str) -> PluginSut {
    PluginSut::create(&Plugin::open(path).unwrap(), config, None).unwrap()
}

#[test]
fn both_plugins_run_every_scenario_through_the_abi() {
    let configs = [
        (null_plugin(), "workers = 0"),
        (null_plugin(), "workers = 2\nlatency_us = 50"),
        (example_c_plugin(), "workers = 0"),
        (example_c_plugin(), "workers = 2\nlatency_us = 50"),
    ];
    for (path, config) in &configs {
        for scenario in TestScenario::ALL {
            let sut = sut(path, config);
            let mut qsl = RecordingQsl::new(1000, 500);
            let context = TestContext {
                provenance: sut.provenance(),
                ..TestContext::default()
            };
            let log = LogSettings::default();
            let result = start_test_with(&sut, &mut qsl, &quick(scenario), &log, &context).unwrap();
            let performance = result.performance.as_ref().unwrap();
            assert!(
                performance.validity.valid,
                "{} [{config}] {scenario}: {:?}",
                path.display(),
                performance.validity
            );
            assert!(result
                .provenance
                .iter()
                .any(|(k, v)| k == "plugin_sha256" && v.len() == 64));
        }
    }
}

#[test]
fn accuracy_responses_carry_the_sample_index_through_the_abi() {
    for path in [null_plugin(), example_c_plugin()] {
        let sut = sut(&path, "workers = 1");
        let mut qsl = RecordingQsl::new(300, 100);
        let settings = TestSettings {
            mode: mlperf_host::loadgen::TestMode::AccuracyOnly,
            ..quick(TestScenario::Offline)
        };
        let result = start_test(&sut, &mut qsl, &settings, &LogSettings::default()).unwrap();
        assert_eq!(result.accuracy_log.len(), 300, "{}", path.display());
        for record in &result.accuracy_log {
            assert_eq!(record.data, (record.qsl_idx as u32).to_le_bytes());
        }
    }
}

/// Runs a faulty null plugin in SingleStream with log files, returning the result and the
/// detail log text.
fn faulty_run(config: &str, name: &str) -> (mlperf_host::loadgen::TestResult, String) {
    let (result, detail, _) = faulty_run_in(
        config,
        name,
        TestScenario::SingleStream,
        Duration::from_millis(500),
    );
    (result, detail)
}

/// As [`faulty_run`], in `scenario` with `drain_timeout`; also returns the summary text.
fn faulty_run_in(
    config: &str,
    name: &str,
    scenario: TestScenario,
    drain_timeout: Duration,
) -> (mlperf_host::loadgen::TestResult, String, String) {
    let dir = std::env::temp_dir().join(format!("mlperf-faulty-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let sut = sut(&null_plugin(), config);
    let mut qsl = RecordingQsl::new(100, 100);
    let mut log = LogSettings {
        drain_timeout,
        ..LogSettings::default()
    };
    log.log_output.outdir = Some(dir.clone());
    let context = TestContext {
        provenance: sut.provenance(),
        ..TestContext::default()
    };
    let result = start_test_with(&sut, &mut qsl, &quick(scenario), &log, &context).unwrap();
    drop(sut);
    let files = result.log_files.clone().unwrap();
    let detail = std::fs::read_to_string(&files.detail).unwrap();
    let summary = std::fs::read_to_string(&files.summary).unwrap();
    for file in [&files.summary, &files.accuracy, &files.result] {
        assert!(file.is_file(), "{} written", file.display());
    }
    assert!(detail.contains("\"key\": \"result_validity\", \"value\": \"INVALID\""));
    assert!(detail.contains("\"key\": \"sut_plugin_sha256\""));
    std::fs::remove_dir_all(&dir).unwrap();
    (result, detail, summary)
}

#[test]
fn a_plugin_that_panics_mid_run_ends_it_invalid_with_its_message() {
    let (result, detail) = faulty_run("panic_after = 50", "panic");
    let StopReason::SutFailed(message) = &result.series[0].stop else {
        panic!("stop: {:?}", result.series[0].stop);
    };
    assert!(message.contains("issue_query"), "{message}");
    let validity = &result.performance.as_ref().unwrap().validity;
    assert!(!validity.valid);
    assert!(validity
        .reasons
        .iter()
        .any(|r| r.starts_with("The SUT failed: plugin null")));
    assert!(detail.contains("The SUT failed"));
}

#[test]
fn a_plugin_that_completes_a_sample_twice_ends_it_invalid() {
    let (result, _) = faulty_run("complete_twice_after = 20", "twice");
    assert!(result.anomalies.duplicate >= 1);
    let validity = &result.performance.as_ref().unwrap().validity;
    assert!(!validity.valid);
    assert!(validity
        .reasons
        .iter()
        .any(|r| r.contains("completions for samples not outstanding")));
}

#[test]
fn a_plugin_that_never_completes_a_sample_ends_it_invalid() {
    let (result, detail) = faulty_run("workers = 1\nnever_complete_after = 30", "never");
    assert_eq!(result.series[0].stop, StopReason::Stalled);
    let validity = &result.performance.as_ref().unwrap().validity;
    assert!(!validity.valid);
    assert!(!validity.all_samples_completed);
    assert!(detail.contains("samples never completed"));
}

#[test]
fn a_plugin_that_fails_from_a_worker_ends_an_offline_run_at_once() {
    // Offline issues its one query at once, so no later issue_query or flush_queries could
    // carry an error: the worker's fail() must end the run, well before the 60 s drain.
    let drain_timeout = LogSettings::default().drain_timeout;
    assert_eq!(drain_timeout, Duration::from_secs(60));
    let started = Instant::now();
    let (result, detail, summary) = faulty_run_in(
        "workers = 2\nfail_after = 30",
        "fail",
        TestScenario::Offline,
        drain_timeout,
    );
    let took = started.elapsed();
    assert!(took < Duration::from_secs(15), "the run took {took:?}");
    let expected = "plugin null failed: null plugin: fail_after = 30 reached, samples lost";
    assert_eq!(
        result.series[0].stop,
        StopReason::SutFailed(expected.to_owned())
    );
    let performance = result.performance.as_ref().unwrap();
    assert!(!performance.validity.valid);
    assert!(!performance.validity.all_samples_completed);
    assert!(performance
        .validity
        .reasons
        .contains(&format!("The SUT failed: {expected}")));
    assert!(detail.contains(&format!("The SUT failed: {expected}")));
    assert!(summary.contains(expected), "{summary}");
}
