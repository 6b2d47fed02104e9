//! `abort_test` ends every running test of the process, so this test runs in a process of its own.

use crate::support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use mlperf_loadgen::{
    start_test, Completer, LogSettings, QuerySample, QuerySampleResponse, StopReason,
    SystemUnderTest, TestScenario, TestSettings,
};
use support::RecordingQsl;

/// Set at the first issue: the abort comes after it, however long start-up takes on a loaded
/// machine.
static ISSUED: AtomicBool = AtomicBool::new(false);

/// Completes each query 1 ms later from a worker thread.
struct SlowSut(Mutex<mpsc::Sender<(Vec<QuerySample>, Completer)>>);

impl SlowSut {
    fn start() -> SlowSut {
        let (sender, receiver) = mpsc::channel::<(Vec<QuerySample>, Completer)>();
        std::thread::spawn(move || {
            while let Ok((samples, completer)) = receiver.recv() {
                std::thread::sleep(Duration::from_millis(1));
                for s in samples {
                    completer.query_samples_complete(&[QuerySampleResponse::new(s.id, &[])]);
                }
            }
        });
        SlowSut(Mutex::new(sender))
    }
}

impl SystemUnderTest for SlowSut {
    fn name(&self) -> &str {
        "SlowSut"
    }
    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        ISSUED.store(true, Ordering::Relaxed);
        let _ = self
            .0
            .lock()
            .unwrap()
            .send((samples.to_vec(), completer.clone()));
    }
}

/// Calls `abort_test` 200 ms after the first issue.
fn abort_after_the_first_issue() -> std::thread::JoinHandle<()> {
    std::thread::spawn(|| {
        while !ISSUED.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(200));
        mlperf_loadgen::abort_test();
    })
}

#[test]
fn abort_test_ends_a_running_test_with_a_result() {
    if support::ran_in_own_process("abort::abort_test_ends_a_running_test_with_a_result") {
        return;
    }
    let sut = SlowSut::start();
    let mut qsl = RecordingQsl::new(100, 100);
    let settings = TestSettings {
        scenario: TestScenario::SingleStream,
        min_duration_ms: 0,
        min_query_count: 1_000_000,
        ..TestSettings::default()
    };
    let dir = std::env::temp_dir().join(format!("mlperf-abort-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut log = LogSettings {
        drain_timeout: Duration::from_secs(5),
        ..LogSettings::default()
    };
    log.log_output.outdir = Some(dir.clone());
    let aborter = abort_after_the_first_issue();
    let started = std::time::Instant::now();
    let result = start_test(&sut, &mut qsl, &settings, &log).unwrap();
    aborter.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(result.series[0].stop, StopReason::Aborted);
    assert!(result.series[0].queries_issued > 0);
    assert!(!result.performance.as_ref().unwrap().validity.valid);

    // An aborted run still leaves its summary and result, INVALID with the reason.
    let files = result.log_files.as_ref().unwrap();
    let summary = std::fs::read_to_string(&files.summary).unwrap();
    assert!(summary.contains("Result is : INVALID\n"), "{summary}");
    let detail = std::fs::read_to_string(&files.detail).unwrap();
    assert!(detail.contains("\"value\": \"Test aborted.\""));
    assert!(detail.contains("\"key\": \"result_validity\", \"value\": \"INVALID\""));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files.result).unwrap()).unwrap();
    assert_eq!(json["series"][0]["stop"], "Aborted");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_abort_ends_the_count_of_a_schedule_too_long_to_count() {
    if support::ran_in_own_process("abort::an_abort_ends_the_count_of_a_schedule_too_long_to_count")
    {
        return;
    }
    // 10^8 queries per second for 600 s: the Poisson schedule's count alone, draw by draw,
    // takes many minutes.
    let sut = InlineSut;
    let mut qsl = RecordingQsl::new(100, 100);
    let settings = TestSettings {
        scenario: TestScenario::Server,
        server_target_qps: 1e8,
        min_duration_ms: 600_000,
        ..TestSettings::default()
    };
    let log = LogSettings {
        drain_timeout: Duration::from_secs(5),
        ..LogSettings::default()
    };
    let aborter = abort_after_the_first_issue();
    let started = std::time::Instant::now();
    let result = start_test(&sut, &mut qsl, &settings, &log).unwrap();
    aborter.join().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(result.series[0].stop, StopReason::Aborted);
}

/// Completes each sample inline.
struct InlineSut;

impl SystemUnderTest for InlineSut {
    fn name(&self) -> &str {
        "InlineSut"
    }
    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        ISSUED.store(true, Ordering::Relaxed);
        for s in samples {
            completer.query_samples_complete(&[QuerySampleResponse::new(s.id, &[])]);
        }
    }
}
