//! `SystemUnderTest::issuer_idle`: a SUT may keep something (a Python binding: the GIL) from
//! one `issue_query` to the next, and its completions may need it back. The engine must say
//! so before every wait and when an issuing thread stops, or the test deadlocks.

use crate::support;

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use mlperf_loadgen::{
    start_test, Completer, LogSettings, QuerySample, QuerySampleResponse, StopReason,
    SystemUnderTest, TestMode, TestScenario, TestSettings,
};
use support::RecordingQsl;

thread_local! {
    static HOLDING: Cell<bool> = const { Cell::new(false) };
}

/// Takes a shared "lock" in `issue_query` and keeps it until `issuer_idle`; its worker
/// completes a sample only while no issuing thread holds the lock.
struct LockKeepingSut {
    holders: &'static AtomicUsize,
    sender: Mutex<mpsc::Sender<(Vec<QuerySample>, Completer)>>,
}

impl LockKeepingSut {
    fn start() -> LockKeepingSut {
        let holders: &'static AtomicUsize = Box::leak(Box::new(AtomicUsize::new(0)));
        let (sender, receiver) = mpsc::channel::<(Vec<QuerySample>, Completer)>();
        std::thread::spawn(move || {
            while let Ok((samples, completer)) = receiver.recv() {
                // Gives up after a while, so a missing `issuer_idle` shows as a stall rather
                // than a hung test.
                let deadline = Instant::now() + Duration::from_secs(2);
                while holders.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
                    std::thread::yield_now();
                }
                if holders.load(Ordering::SeqCst) > 0 {
                    continue;
                }
                for sample in samples {
                    completer.query_samples_complete(&[QuerySampleResponse::new(sample.id, &[])]);
                }
            }
        });
        LockKeepingSut {
            holders,
            sender: Mutex::new(sender),
        }
    }
}

impl SystemUnderTest for LockKeepingSut {
    fn name(&self) -> &str {
        "lock-keeping"
    }

    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        if !HOLDING.replace(true) {
            self.holders.fetch_add(1, Ordering::SeqCst);
        }
        let sender = self.sender.lock().unwrap();
        sender.send((samples.to_vec(), completer.clone())).unwrap();
    }

    fn issuer_idle(&self) {
        if HOLDING.replace(false) {
            self.holders.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

fn run(settings: TestSettings) {
    let sut = LockKeepingSut::start();
    let mut qsl = RecordingQsl::new(64, 64);
    let log = LogSettings {
        drain_timeout: Duration::from_secs(5),
        ..LogSettings::default()
    };
    let result = start_test(&sut, &mut qsl, &settings, &log).expect("the test runs");
    for series in &result.series {
        assert!(
            matches!(
                series.stop,
                StopReason::MinimumsMet | StopReason::GeneratedQueriesIssued
            ),
            "{:?}: {:?}",
            settings.scenario,
            series.stop
        );
        assert_eq!(series.never_completed, 0, "{:?}", settings.scenario);
    }
    assert_eq!(
        sut.holders.load(Ordering::SeqCst),
        0,
        "an issuing thread ended holding the lock"
    );
}

fn quick(scenario: TestScenario) -> TestSettings {
    TestSettings {
        scenario,
        min_duration_ms: 0,
        min_query_count: 100,
        server_target_qps: 2_000.0,
        offline_expected_qps: 100.0,
        ..TestSettings::default()
    }
}

#[test]
fn every_scenario_lets_go_before_it_waits() {
    for scenario in TestScenario::ALL {
        run(quick(scenario));
    }
}

#[test]
fn accuracy_and_submission_runs_let_go_between_series() {
    for mode in [TestMode::AccuracyOnly, TestMode::SubmissionRun] {
        run(TestSettings {
            mode,
            ..quick(TestScenario::Server)
        });
    }
}

#[test]
fn each_issue_thread_lets_go() {
    run(TestSettings {
        server_num_issue_query_threads: 3,
        ..quick(TestScenario::Server)
    });
}

/// Records the deadlines `issuer_idle_until` is given and when the next query arrives.
#[derive(Default)]
struct DeadlineSut {
    /// (deadline, the next issue_query's arrival).
    waits: Mutex<Vec<(Instant, Option<Instant>)>>,
}

impl SystemUnderTest for DeadlineSut {
    fn name(&self) -> &str {
        "deadlines"
    }

    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        let now = Instant::now();
        if let Some(last) = self.waits.lock().unwrap().last_mut() {
            last.1.get_or_insert(now);
        }
        for sample in samples {
            completer.query_samples_complete(&[QuerySampleResponse::new(sample.id, &[])]);
        }
    }

    fn issuer_idle_until(&self, deadline: Instant) {
        self.waits.lock().unwrap().push((deadline, None));
    }
}

#[test]
fn a_wait_for_the_next_query_tells_the_sut_when_it_is_due() {
    let sut = DeadlineSut::default();
    let mut qsl = RecordingQsl::new(64, 64);
    let settings = TestSettings {
        server_target_qps: 500.0,
        min_query_count: 50,
        ..quick(TestScenario::Server)
    };
    start_test(&sut, &mut qsl, &settings, &LogSettings::default()).expect("the test runs");
    let waits = sut.waits.into_inner().unwrap();
    assert!(waits.len() >= 40, "{} waits before queries", waits.len());
    for (deadline, issued) in waits.iter().filter_map(|(d, i)| Some((*d, (*i)?))) {
        // The query goes out once it is due, and not long after (the deadline is its time).
        assert!(issued >= deadline, "issued before its deadline");
        assert!(
            issued - deadline < Duration::from_millis(50),
            "issued {:?} after the deadline",
            issued - deadline
        );
    }
}
