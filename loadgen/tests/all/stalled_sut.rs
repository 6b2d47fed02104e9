//! A SUT call that does not return: with `LogSettings::sut_call_timeout` the test is given up
//! INVALID with every log written while the call still runs; without, the engine waits.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use mlperf_loadgen::testing::NullQsl;
use mlperf_loadgen::{
    start_test_with, AbandonHook, Completer, LogSettings, QuerySample, QuerySampleResponse,
    SystemUnderTest, TestContext, TestMode, TestScenario, TestSettings,
};

/// Completes inline; its `stall_at`-th issue_query (or its flush) blocks until `release`.
struct StallingSut {
    issued: AtomicU64,
    stall_at: u64,
    stall_in_flush: bool,
    release: Arc<AtomicBool>,
}

impl StallingSut {
    fn block(&self) {
        while !self.release.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl SystemUnderTest for StallingSut {
    fn name(&self) -> &str {
        "stalling"
    }

    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        if self.issued.fetch_add(1, Ordering::Relaxed) + 1 == self.stall_at {
            self.block();
        }
        for sample in samples {
            completer.query_samples_complete(&[QuerySampleResponse::new(sample.id, &[1])]);
        }
    }

    fn flush_queries(&self) {
        if self.stall_in_flush {
            self.block();
        }
    }
}

/// Completes every sample inline, after `per_query` at each call and `per_sample` before
/// each sample.
pub(crate) struct Paced {
    per_query: Duration,
    per_sample: Duration,
}

impl Paced {
    pub(crate) fn new(per_query: Duration, per_sample: Duration) -> Self {
        Paced {
            per_query,
            per_sample,
        }
    }
}

impl SystemUnderTest for Paced {
    fn name(&self) -> &str {
        "paced"
    }

    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        if !self.per_query.is_zero() {
            std::thread::sleep(self.per_query);
        }
        for sample in samples {
            if !self.per_sample.is_zero() {
                std::thread::sleep(self.per_sample);
            }
            completer.query_samples_complete(&[QuerySampleResponse::new(sample.id, &[1])]);
        }
    }
}

fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mlperf-stall-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn settings(scenario: TestScenario, mode: TestMode) -> TestSettings {
    TestSettings {
        scenario,
        mode,
        min_duration_ms: 0,
        min_query_count: 2000,
        server_target_qps: 50_000.0,
        ..TestSettings::default()
    }
}

/// Runs until the hook sees the abandoned result, then lets the stalled call return.
fn run_abandoned(
    name: &str,
    sut: &StallingSut,
    settings: &TestSettings,
) -> (mlperf_loadgen::TestResult, Duration, PathBuf) {
    let dir = out_dir(name);
    let mut log = LogSettings {
        sut_call_timeout: Some(Duration::from_millis(200)),
        ..LogSettings::default()
    };
    log.log_output.outdir = Some(dir.clone());
    let (seen, hooked) = mpsc::channel();
    let release = Arc::clone(&sut.release);
    let started = Instant::now();
    let context = TestContext {
        on_abandoned: Some(AbandonHook(Arc::new(move |result| {
            // Every file is written before the hook runs, with the call still blocked.
            let files = result.log_files.as_ref().unwrap();
            let written = files.summary.is_file() && files.result.is_file();
            let _ = seen.send((started.elapsed(), written, release.load(Ordering::Relaxed)));
            release.store(true, Ordering::Relaxed);
        }))),
        ..TestContext::default()
    };
    let mut qsl = NullQsl {
        total: 64,
        performance: 64,
    };
    let result = start_test_with(sut, &mut qsl, settings, &log, &context).unwrap();
    let (when, written, released_before) = hooked.try_recv().expect("the hook ran");
    assert!(written, "{name}: the logs were written before the hook");
    assert!(!released_before, "{name}: the call was still running");
    assert!(
        when >= Duration::from_millis(200) && when < Duration::from_secs(5),
        "{name}: abandoned after {when:?}"
    );
    (result, when, dir)
}

fn stalling(stall_at: u64, stall_in_flush: bool) -> StallingSut {
    StallingSut {
        issued: AtomicU64::new(0),
        stall_at,
        stall_in_flush,
        release: Arc::new(AtomicBool::new(false)),
    }
}

#[test]
fn a_stalled_issue_query_ends_the_test_invalid_with_every_log_written() {
    for (name, scenario, mode) in [
        (
            "single",
            TestScenario::SingleStream,
            TestMode::PerformanceOnly,
        ),
        ("server", TestScenario::Server, TestMode::PerformanceOnly),
        ("accuracy", TestScenario::Offline, TestMode::AccuracyOnly),
    ] {
        let stall_at = if scenario == TestScenario::Offline {
            1
        } else {
            50
        };
        let sut = stalling(stall_at, false);
        let (result, _, dir) = run_abandoned(name, &sut, &settings(scenario, mode));
        let reason = "stalling issue_query has not returned after 200ms";
        assert_eq!(result.abandoned.as_deref(), Some(reason), "{name}");
        assert!(result.performance.is_none() && result.series.is_empty());
        assert!(result.error_count() >= 1);

        let summary = std::fs::read_to_string(dir.join("mlperf_log_summary.txt")).unwrap();
        assert!(
            summary.contains("Result is : INVALID\n"),
            "{name}: {summary}"
        );
        assert!(
            summary.contains(&format!(" * The test was abandoned: {reason}.\n")),
            "{name}: {summary}"
        );
        assert!(
            summary.ends_with("See detailed log.\n"),
            "{name}: {summary}"
        );

        // The detail log is whole: every line JSON, the validity and the error in it.
        let detail = std::fs::read_to_string(dir.join("mlperf_log_detail.txt")).unwrap();
        let keys: Vec<serde_json::Value> = detail
            .lines()
            .map(|line| serde_json::from_str(line.trim_start_matches(":::MLLOG ")).unwrap())
            .collect();
        let value = |key: &str| {
            keys.iter()
                .rev()
                .find(|line| line["key"] == key)
                .map(|line| line["value"].clone())
        };
        assert_eq!(value("result_validity"), Some("INVALID".into()), "{name}");
        assert_eq!(value("result_invalid_reason"), Some(reason.into()));
        assert!(value("num_errors").unwrap().as_u64().unwrap() >= 1);
        assert!(detail.contains("the test was abandoned with the call still running"));

        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap())
                .unwrap();
        assert_eq!(json["abandoned"], reason);
        if let Some(python) = crate::result_schema::python_or_skip("stalled_sut") {
            let report = crate::result_schema::validate(&python, &[dir.join("result.json")]);
            assert!(report[0].1.is_empty(), "{name}: {:?}", report[0].1);
        }
        if mode == TestMode::AccuracyOnly {
            let accuracy = std::fs::read_to_string(dir.join("mlperf_log_accuracy.json")).unwrap();
            serde_json::from_str::<serde_json::Value>(&accuracy).expect("the accuracy log is JSON");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn a_stalled_flush_is_abandoned_too() {
    let sut = stalling(0, true);
    let (result, _, dir) = run_abandoned(
        "flush",
        &sut,
        &settings(TestScenario::Offline, TestMode::PerformanceOnly),
    );
    assert_eq!(
        result.abandoned.as_deref(),
        Some("stalling flush_queries has not returned after 200ms")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A test of `sut` with `settings` and calls into the SUT bounded by `timeout`, unlogged.
fn run_with_timeout(
    sut: &Paced,
    settings: &TestSettings,
    timeout: Duration,
) -> mlperf_loadgen::TestResult {
    let log = LogSettings {
        sut_call_timeout: Some(timeout),
        ..LogSettings::default()
    };
    let mut qsl = NullQsl {
        total: 64,
        performance: 64,
    };
    start_test_with(sut, &mut qsl, settings, &log, &TestContext::default()).unwrap()
}

#[test]
fn calls_shorter_than_the_timeout_and_runs_without_one_are_left_alone() {
    // Every call slow, none beyond the bound: a normal result.
    let slow = Paced::new(Duration::from_millis(20), Duration::ZERO);
    let mut settings = settings(TestScenario::SingleStream, TestMode::PerformanceOnly);
    settings.min_query_count = 20;
    let result = run_with_timeout(&slow, &settings, Duration::from_millis(150));
    assert_eq!(result.abandoned, None);
    assert_eq!(result.series[0].queries_issued, 20);
    assert!(result.performance.is_some());

    // No timeout (the official behaviour): a call of 400 ms is waited for.
    let sut = stalling(5, false);
    let release = Arc::clone(&sut.release);
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        release.store(true, Ordering::Relaxed);
    });
    let mut qsl = NullQsl {
        total: 64,
        performance: 64,
    };
    let result = start_test_with(
        &sut,
        &mut qsl,
        &settings,
        &LogSettings::default(),
        &TestContext::default(),
    )
    .unwrap();
    releaser.join().unwrap();
    assert_eq!(result.abandoned, None);
    assert_eq!(result.series[0].queries_issued, 20);
}

#[test]
fn one_long_call_that_keeps_completing_samples_is_no_stall() {
    // Offline answered inline: one issue_query for the whole run, 1 ms a sample, far longer
    // than the timeout; it completes samples all along, so it is waited for.
    let inline = Paced::new(Duration::ZERO, Duration::from_millis(1));
    let mut settings = settings(TestScenario::Offline, TestMode::PerformanceOnly);
    settings.min_query_count = 400;
    let result = run_with_timeout(&inline, &settings, Duration::from_millis(100));
    assert_eq!(result.abandoned, None);
    assert_eq!(result.series[0].samples_issued, 400);
    assert_eq!(result.series[0].never_completed, 0);
}
