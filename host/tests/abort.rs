//! `abort_test` ends every running test of the process, so it has a test binary of its own.

mod support;

use std::sync::{mpsc, Mutex};
use std::time::Duration;

use mlperf_host::loadgen::{
    start_test, Completer, LogSettings, QuerySample, QuerySampleResponse, StopReason,
    SystemUnderTest, TestScenario, TestSettings,
};
use support::RecordingQsl;

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
        let _ = self
            .0
            .lock()
            .unwrap()
            .send((samples.to_vec(), completer.clone()));
    }
}

#[test]
fn abort_test_ends_a_running_test_with_a_result() {
    let sut = SlowSut::start();
    let mut qsl = RecordingQsl::new(100, 100);
    let settings = TestSettings {
        scenario: TestScenario::SingleStream,
        min_duration_ms: 0,
        min_query_count: 1_000_000,
        ..TestSettings::default()
    };
    let log = LogSettings {
        drain_timeout: Duration::from_secs(5),
        ..LogSettings::default()
    };
    let aborter = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(200));
        mlperf_host::loadgen::abort_test();
    });
    let started = std::time::Instant::now();
    let result = start_test(&sut, &mut qsl, &settings, &log).unwrap();
    aborter.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(result.series[0].stop, StopReason::Aborted);
    assert!(result.series[0].queries_issued > 0);
    assert!(!result.performance.unwrap().validity.valid);
}
