//! Behaviour of the engine around the system under test: asynchronous completions, faults,
//! never hanging, accuracy logging, token latencies, and the validity rules.

use crate::support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Duration;

use mlperf_loadgen::{
    start_test, start_test_with, Completer, LogSettings, QuerySample, QuerySampleResponse,
    ScenarioMetrics, Severity, StopReason, SystemUnderTest, TestContext, TestMode, TestScenario,
    TestSettings,
};
use support::RecordingQsl;

fn quick(scenario: TestScenario) -> TestSettings {
    TestSettings {
        scenario,
        min_duration_ms: 0,
        min_query_count: 200,
        server_target_qps: 20_000.0,
        offline_expected_qps: 1000.0,
        ..TestSettings::default()
    }
}

fn short_drain() -> LogSettings {
    LogSettings {
        drain_timeout: Duration::from_millis(300),
        ..LogSettings::default()
    }
}

/// Completes from a worker thread, after an optional delay, skipping chosen sample indices.
struct WorkerSut {
    sender: Mutex<mpsc::Sender<(Vec<QuerySample>, Completer)>>,
}

impl WorkerSut {
    fn start(delay: Duration, drop_index: Option<usize>, duplicate: bool) -> WorkerSut {
        let (sender, receiver) = mpsc::channel::<(Vec<QuerySample>, Completer)>();
        std::thread::spawn(move || {
            while let Ok((samples, completer)) = receiver.recv() {
                std::thread::sleep(delay);
                for s in samples {
                    if Some(s.index) == drop_index {
                        continue;
                    }
                    let bytes = (s.index as u32).to_le_bytes();
                    let response = QuerySampleResponse::new(s.id, &bytes);
                    completer.query_samples_complete(&[response]);
                    if duplicate {
                        completer.query_samples_complete(&[response]);
                    }
                }
            }
        });
        WorkerSut {
            sender: Mutex::new(sender),
        }
    }
}

impl SystemUnderTest for WorkerSut {
    fn name(&self) -> &str {
        "WorkerSut"
    }
    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        let _ = self
            .sender
            .lock()
            .unwrap()
            .send((samples.to_vec(), completer.clone()));
    }
}

#[test]
fn completions_from_a_worker_thread_give_a_valid_run_in_every_scenario() {
    for scenario in TestScenario::ALL {
        let sut = WorkerSut::start(Duration::ZERO, None, false);
        let mut qsl = RecordingQsl::new(500, 100);
        let result = start_test(&sut, &mut qsl, &quick(scenario), &short_drain()).unwrap();
        let performance = result.performance.expect("performance result");
        assert!(performance.validity.all_samples_completed, "{scenario}");
        assert!(performance.sample_count > 0, "{scenario}");
        // 200 queries are enough for p90 early stopping (64) but not p99 (662, Server 459).
        let enough = matches!(scenario, TestScenario::SingleStream | TestScenario::Offline);
        assert_eq!(
            performance.validity.valid, enough,
            "{scenario}: {:?}",
            performance.validity
        );
        assert_eq!(
            performance.validity.early_stopping_met, enough,
            "{scenario}"
        );
        let settings = TestSettings {
            min_query_count: 700,
            ..quick(scenario)
        };
        let sut = WorkerSut::start(Duration::ZERO, None, false);
        let result = start_test(&sut, &mut qsl, &settings, &short_drain()).unwrap();
        let validity = result.performance.unwrap().validity;
        assert!(validity.valid, "{scenario}: {validity:?}");
    }
}

#[test]
fn a_sample_that_never_completes_ends_the_run_invalid_instead_of_hanging() {
    for scenario in [TestScenario::Server, TestScenario::Offline] {
        let sut = WorkerSut::start(Duration::ZERO, Some(7), false);
        let mut qsl = RecordingQsl::new(50, 50);
        let started = std::time::Instant::now();
        let result = start_test(&sut, &mut qsl, &quick(scenario), &short_drain()).unwrap();
        assert!(started.elapsed() < Duration::from_secs(20));
        let performance = result.performance.unwrap();
        assert!(!performance.validity.valid);
        assert!(!performance.validity.all_samples_completed);
        let reason = performance.validity.reasons.last().unwrap();
        assert!(reason.ends_with("samples never completed."), "{reason}");
        let never: u64 = result.series.iter().map(|s| s.never_completed).sum();
        assert!(never > 0);
        assert!(reason.starts_with(&never.to_string()));
        assert!(result
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error && d.message.contains("never completed")));
    }
}

#[test]
fn single_stream_stalls_do_not_hang_either() {
    let sut = WorkerSut::start(Duration::ZERO, Some(3), false);
    let mut qsl = RecordingQsl::new(10, 10);
    let result = start_test(
        &sut,
        &mut qsl,
        &quick(TestScenario::SingleStream),
        &short_drain(),
    )
    .unwrap();
    let performance = result.performance.unwrap();
    assert!(!performance.validity.valid);
    assert_eq!(result.series[0].never_completed, 1);
}

#[test]
fn no_series_starts_after_one_left_samples_with_the_sut() {
    // Accuracy mode over 4 loadable sets of 10. A healthy run loads all four; then a sample of
    // the first set never completes. The next load could replace memory the SUT still points
    // into, so the run stops after that series.
    let accuracy = TestSettings {
        mode: TestMode::AccuracyOnly,
        ..quick(TestScenario::Offline)
    };
    let mut qsl = RecordingQsl::new(40, 10);
    let sut = WorkerSut::start(Duration::ZERO, None, false);
    let result = start_test(&sut, &mut qsl, &accuracy, &short_drain()).unwrap();
    assert_eq!(result.series.len(), 4);
    let lost = qsl.loads[0][0];

    let mut qsl = RecordingQsl::new(40, 10);
    let sut = WorkerSut::start(Duration::ZERO, Some(lost), false);
    let result = start_test(&sut, &mut qsl, &accuracy, &short_drain()).unwrap();
    assert_eq!(result.series.len(), 1);
    assert_eq!(result.series[0].never_completed, 1);
    assert_eq!(qsl.loads.len(), 1);

    // A SubmissionRun skips its performance run for the same reason.
    let submission = TestSettings {
        mode: TestMode::SubmissionRun,
        ..accuracy
    };
    let sut = WorkerSut::start(Duration::ZERO, Some(lost), false);
    let result = start_test(&sut, &mut qsl, &submission, &short_drain()).unwrap();
    assert_eq!(result.series.len(), 1);
    assert!(result.performance.is_none());
}

#[test]
fn duplicate_and_unknown_completions_are_counted_and_make_the_run_invalid() {
    let sut = WorkerSut::start(Duration::ZERO, None, true);
    let mut qsl = RecordingQsl::new(100, 100);
    let result = start_test(&sut, &mut qsl, &quick(TestScenario::Server), &short_drain()).unwrap();
    assert_eq!(result.anomalies.duplicate, result.series[0].samples_issued);
    let validity = result.performance.unwrap().validity;
    assert!(validity.all_samples_completed);
    assert!(!validity.valid);
    assert!(validity
        .reasons
        .last()
        .unwrap()
        .contains("completions for samples not outstanding"));

    struct Stray;
    impl SystemUnderTest for Stray {
        fn name(&self) -> &str {
            "Stray"
        }
        fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
            let stray = mlperf_loadgen::ResponseId(u64::MAX);
            completer.query_samples_complete(&[QuerySampleResponse::new(stray, &[])]);
            completer.query_samples_complete(&[QuerySampleResponse::new(
                mlperf_loadgen::ResponseId(0),
                &[],
            )]);
            for s in samples {
                completer.query_samples_complete(&[QuerySampleResponse::new(s.id, &[])]);
            }
        }
    }
    let mut qsl = RecordingQsl::new(100, 100);
    let result = start_test(
        &Stray,
        &mut qsl,
        &quick(TestScenario::SingleStream),
        &short_drain(),
    )
    .unwrap();
    assert_eq!(
        result.anomalies.unknown,
        2 * result.series[0].queries_issued
    );
    assert!(!result.performance.unwrap().validity.valid);
}

#[test]
fn a_panicking_sut_ends_the_run_with_a_result() {
    struct Panics(AtomicU64);
    impl SystemUnderTest for Panics {
        fn name(&self) -> &str {
            "Panics"
        }
        fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
            if self.0.fetch_add(1, Ordering::Relaxed) == 5 {
                panic!("backend exploded");
            }
            for s in samples {
                completer.query_samples_complete(&[QuerySampleResponse::new(s.id, &[])]);
            }
        }
    }
    let mut qsl = RecordingQsl::new(100, 100);
    let sut = Panics(AtomicU64::new(0));
    let result = start_test(
        &sut,
        &mut qsl,
        &quick(TestScenario::SingleStream),
        &short_drain(),
    )
    .unwrap();
    assert_eq!(
        result.series[0].stop,
        StopReason::SutPanicked("backend exploded".into())
    );
    assert_eq!(result.series[0].queries_issued, 6);
    let performance = result.performance.unwrap();
    assert!(!performance.validity.valid);
    assert!(result
        .diagnostics
        .iter()
        .any(|d| d.message.contains("backend exploded")));
}

#[test]
fn accuracy_mode_logs_every_sample_of_every_set_once() {
    for scenario in TestScenario::ALL {
        let sut = support::RecordingSut::default();
        let mut qsl = RecordingQsl::new(250, 100);
        let settings = TestSettings {
            mode: TestMode::AccuracyOnly,
            ..quick(scenario)
        };
        let result = start_test(&sut, &mut qsl, &settings, &short_drain()).unwrap();
        assert!(result.performance.is_none());
        assert_eq!(qsl.loads.len(), 3, "{scenario}");
        let mut logged: Vec<usize> = result.accuracy_log.iter().map(|r| r.qsl_idx).collect();
        logged.sort_unstable();
        logged.dedup();
        assert_eq!(logged, (0..250).collect::<Vec<_>>(), "{scenario}");
        for record in &result.accuracy_log {
            assert_eq!(record.data, (record.qsl_idx as u32).to_le_bytes());
        }
        if scenario != TestScenario::MultiStream {
            assert_eq!(
                result.accuracy_log.len(),
                250,
                "{scenario}: each sample once"
            );
        }
    }
}

#[test]
fn accuracy_log_sampling_target_logs_about_that_many_performance_samples() {
    let sut = support::RecordingSut::default();
    let mut qsl = RecordingQsl::new(1000, 1000);
    let settings = TestSettings {
        min_query_count: 20_000,
        accuracy_log_rng_seed: 720_381_539_243_781_796,
        accuracy_log_sampling_target: 400,
        ..quick(TestScenario::SingleStream)
    };
    let result = start_test(&sut, &mut qsl, &settings, &short_drain()).unwrap();
    let logged = result.accuracy_log.len();
    assert!((300..=500).contains(&logged), "{logged} logged");
    assert!(result.performance.unwrap().validity.valid);
}

#[test]
fn submission_run_does_accuracy_then_performance_with_continuing_ids() {
    let sut = support::RecordingSut::default();
    let mut qsl = RecordingQsl::new(150, 100);
    let settings = TestSettings {
        mode: TestMode::SubmissionRun,
        ..quick(TestScenario::Offline)
    };
    let result = start_test(&sut, &mut qsl, &settings, &short_drain()).unwrap();
    let modes: Vec<TestMode> = result.series.iter().map(|s| s.mode).collect();
    assert_eq!(
        modes,
        [
            TestMode::AccuracyOnly,
            TestMode::AccuracyOnly,
            TestMode::PerformanceOnly
        ]
    );
    assert_eq!(result.series[1].first_sample_id, 100);
    assert_eq!(result.series[2].first_sample_id, 150);
    assert!(result.performance.unwrap().validity.valid);
}

/// Answers the first token, then the whole sample with `2 + index % 7` tokens.
struct TokenSut;

impl SystemUnderTest for TokenSut {
    fn name(&self) -> &str {
        "TokenSut"
    }
    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        for s in samples {
            let bytes = (s.index as u32).to_le_bytes();
            completer.first_token_complete(&[QuerySampleResponse::new(s.id, &bytes)]);
            completer.query_samples_complete(&[QuerySampleResponse::with_tokens(
                s.id,
                &bytes,
                2 + (s.index % 7) as i64,
            )]);
        }
    }
}

#[test]
fn token_runs_count_tokens_and_measure_first_token_latency() {
    for scenario in [
        TestScenario::Server,
        TestScenario::SingleStream,
        TestScenario::Offline,
    ] {
        let mut qsl = RecordingQsl::new(100, 100);
        let settings = TestSettings {
            use_token_latencies: true,
            ..quick(scenario)
        };
        let result = start_test(&TokenSut, &mut qsl, &settings, &short_drain()).unwrap();
        let performance = result.performance.unwrap();
        let tokens = performance.tokens.as_ref().expect("token summary");
        assert!(tokens.token_count >= 2 * performance.sample_count as i64);
        assert!(tokens.token_count <= 8 * performance.sample_count as i64);
        if scenario == TestScenario::Offline {
            assert!(tokens.first_token.is_none());
            let ScenarioMetrics::Offline {
                tokens_per_second, ..
            } = performance.metrics
            else {
                panic!("Offline metrics: {:?}", performance.metrics);
            };
            assert!(tokens_per_second.unwrap() > 0.0);
        } else {
            let ttft = tokens.first_token.as_ref().unwrap();
            let latency = performance.sample_latency.as_ref().unwrap();
            assert!(ttft.max_ns <= latency.max_ns);
            assert!(tokens.time_per_output_token.as_ref().unwrap().min_ns >= 0);
        }
        assert!(
            !result
                .diagnostics
                .iter()
                .any(|d| d.severity == Severity::Error),
            "{scenario}: {:?}",
            result.diagnostics
        );
    }
}

#[test]
fn too_many_outstanding_queries_stops_a_server_run() {
    let sut = WorkerSut::start(Duration::from_millis(50), None, false);
    let mut qsl = RecordingQsl::new(100, 100);
    let settings = TestSettings {
        server_max_async_queries: 3,
        ..quick(TestScenario::Server)
    };
    let result = start_test(&sut, &mut qsl, &settings, &short_drain()).unwrap();
    assert!(matches!(
        result.series[0].stop,
        StopReason::TooManyOutstanding { outstanding: 4, .. }
    ));
    assert!(result.diagnostics.iter().any(|d| d
        .message
        .contains("Ending early: Too many outstanding queries.")));
    assert!(!result.performance.unwrap().validity.valid);
}

#[test]
fn max_query_count_and_max_duration_stop_issuing() {
    let sut = support::RecordingSut::default();
    let mut qsl = RecordingQsl::new(100, 100);
    let settings = TestSettings {
        max_query_count: 50,
        ..quick(TestScenario::SingleStream)
    };
    let result = start_test(&sut, &mut qsl, &settings, &short_drain()).unwrap();
    assert_eq!(result.series[0].stop, StopReason::MaxQueryCount(50));
    assert_eq!(result.series[0].queries_issued, 50);

    let sut = WorkerSut::start(Duration::from_millis(2), None, false);
    let settings = TestSettings {
        max_duration_ms: 50,
        min_query_count: 100_000,
        ..quick(TestScenario::SingleStream)
    };
    let result = start_test(&sut, &mut qsl, &settings, &short_drain()).unwrap();
    assert!(matches!(result.series[0].stop, StopReason::MaxDuration(d) if d > 50_000_000));
}

#[test]
fn server_coalescing_merges_past_due_queries_into_one_call() {
    struct Counting(AtomicU64, AtomicU64);
    impl SystemUnderTest for Counting {
        fn name(&self) -> &str {
            "Counting"
        }
        fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
            self.0.fetch_add(1, Ordering::Relaxed);
            self.1.fetch_add(samples.len() as u64, Ordering::Relaxed);
            // Slow enough that later queries fall due meanwhile.
            std::thread::sleep(Duration::from_micros(500));
            for s in samples {
                completer.query_samples_complete(&[QuerySampleResponse::new(s.id, &[])]);
            }
        }
    }
    let sut = Counting(AtomicU64::new(0), AtomicU64::new(0));
    let mut qsl = RecordingQsl::new(100, 100);
    let settings = TestSettings {
        server_coalesce_queries: true,
        min_query_count: 2000,
        ..quick(TestScenario::Server)
    };
    let result = start_test(&sut, &mut qsl, &settings, &short_drain()).unwrap();
    let calls = sut.0.load(Ordering::Relaxed);
    let samples = sut.1.load(Ordering::Relaxed);
    assert_eq!(samples, result.series[0].queries_issued);
    assert!(calls * 2 < samples, "{calls} calls for {samples} queries");
    assert_eq!(result.series[0].generated_query_count, samples);
}

#[test]
fn invalid_settings_are_errors_not_panics() {
    let sut = support::RecordingSut::default();
    let mut qsl = RecordingQsl::new(0, 0);
    assert!(start_test(
        &sut,
        &mut qsl,
        &quick(TestScenario::SingleStream),
        &short_drain()
    )
    .is_err());
    let mut qsl = RecordingQsl::new(10, 10);
    let settings = TestSettings {
        server_target_qps: f64::INFINITY,
        ..quick(TestScenario::Server)
    };
    let error = start_test(&sut, &mut qsl, &settings, &short_drain()).unwrap_err();
    assert!(error.to_string().contains("qps"), "{error}");
    let settings = TestSettings {
        single_stream_expected_latency_ns: 0.1,
        min_duration_ms: 10,
        ..quick(TestScenario::SingleStream)
    };
    let error = start_test(&sut, &mut qsl, &settings, &short_drain()).unwrap_err();
    assert!(error.to_string().contains("0 ns"), "{error}");
}

#[test]
fn several_server_issue_threads_issue_the_same_schedule() {
    let log = LogSettings {
        record_query_schedule: true,
        ..short_drain()
    };
    let settings = TestSettings {
        min_query_count: 3000,
        ..quick(TestScenario::Server)
    };
    let single = support::RecordingSut::default();
    let mut qsl = RecordingQsl::new(500, 500);
    let reference = start_test(&single, &mut qsl, &settings, &log).unwrap();

    let threaded = support::RecordingSut::default();
    let settings = TestSettings {
        server_num_issue_query_threads: 3,
        ..settings
    };
    let mut qsl = RecordingQsl::new(500, 500);
    let result = start_test(&threaded, &mut qsl, &settings, &log).unwrap();

    assert_eq!(
        result.series[0].queries_issued,
        reference.series[0].queries_issued
    );
    assert_eq!(
        result.series[0].scheduled_offsets_ns,
        reference.series[0].scheduled_offsets_ns
    );
    let mut expected: Vec<usize> = single.queries.lock().unwrap().concat();
    let mut issued: Vec<usize> = threaded.queries.lock().unwrap().concat();
    expected.sort_unstable();
    issued.sort_unstable();
    assert_eq!(issued, expected);
    let performance = result.performance.unwrap();
    assert_eq!(performance.sample_count, 3000);
    assert!(performance.validity.valid, "{:?}", performance.validity);
}

#[test]
fn find_peak_performance_brackets_a_sut_of_known_capacity() {
    // One worker with 1 ms per query: about 1000 qps, beyond which latency grows without bound.
    let sut = WorkerSut::start(Duration::from_millis(1), None, false);
    let mut qsl = RecordingQsl::new(100, 100);
    let settings = TestSettings {
        mode: TestMode::FindPeakPerformance,
        server_target_qps: 100.0,
        server_target_latency_ns: 50_000_000,
        server_find_peak_qps_decimals_of_precision: -2,
        min_duration_ms: 300,
        min_query_count: 100,
        ..quick(TestScenario::Server)
    };
    let result = start_test(&sut, &mut qsl, &settings, &short_drain()).unwrap();
    let report = result.find_peak.expect("find-peak report");
    let peak = report.peak_qps.expect("a passing rate");
    assert!(
        (400.0..1600.0).contains(&peak),
        "peak {peak}, trials {:?}",
        report.trials
    );
    assert_eq!(report.trials[0], (100.0, true));
    // Widening doubles (step 1) until the first failure.
    assert!(report.trials.iter().any(|&(_, met)| !met));
    assert!(result.diagnostics.iter().any(|d| d
        .message
        .starts_with("FindPeakPerformance: Found peak performance field:")));

    let mut qsl = RecordingQsl::new(100, 100);
    let settings = TestSettings {
        mode: TestMode::FindPeakPerformance,
        ..quick(TestScenario::Offline)
    };
    let error = start_test(
        &support::RecordingSut::default(),
        &mut qsl,
        &settings,
        &short_drain(),
    );
    assert!(error.unwrap_err().to_string().contains("Server"));
}

#[test]
fn audit_config_overrides_with_model_star_only() {
    let dir = std::env::temp_dir().join(format!("mlperf-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let audit = dir.join("audit.config");
    std::fs::write(
        &audit,
        "# TEST-like overrides\n*.SingleStream.min_query_count = 77\nresnet50.SingleStream.max_query_count = 5\n*.*.accuracy_log_rng_seed = 720381539243781796\n",
    )
    .unwrap();
    let context = TestContext {
        audit_config: Some(audit.clone()),
        ..TestContext::default()
    };
    let sut = support::RecordingSut::default();
    let mut qsl = RecordingQsl::new(100, 100);
    let settings = quick(TestScenario::SingleStream);
    let result = start_test_with(&sut, &mut qsl, &settings, &short_drain(), &context).unwrap();
    assert_eq!(result.effective.min_query_count, 77);
    assert_eq!(
        result.effective.max_query_count, 0,
        "model-specific audit lines never apply"
    );
    assert_eq!(
        result.effective.accuracy_log_rng_seed,
        720_381_539_243_781_796
    );
    assert_eq!(result.series[0].queries_issued, 77);
    assert!(result
        .diagnostics
        .iter()
        .any(|d| d.message.contains("Found Audit Config file")));

    std::fs::write(&audit, "*.*.min_query_count=3\n").unwrap();
    let error = start_test_with(&sut, &mut qsl, &settings, &short_drain(), &context).unwrap_err();
    assert!(error.to_string().contains("audit.config:1"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn inferred_token_throughput_scales_samples() {
    let sut = support::RecordingSut::default();
    let mut qsl = RecordingQsl::new(100, 100);
    let settings = TestSettings {
        infer_token_latencies: true,
        token_latency_scaling_factor: 69,
        ..quick(TestScenario::Offline)
    };
    let result = start_test(&sut, &mut qsl, &settings, &short_drain()).unwrap();
    let performance = result.performance.unwrap();
    let ScenarioMetrics::Offline {
        samples_per_second,
        inferred_tokens_per_second: Some(inferred),
        ..
    } = performance.metrics
    else {
        panic!("Offline inferred metrics: {:?}", performance.metrics);
    };
    assert!((inferred / samples_per_second - 69.0).abs() < 1e-9);
}

#[test]
fn a_run_that_generates_no_queries_reports_instead_of_crashing() {
    // The official wheel crashes here; the engine returns an INVALID result.
    let sut = support::RecordingSut::default();
    let mut qsl = RecordingQsl::new(10, 10);
    for scenario in TestScenario::ALL {
        let settings = TestSettings {
            min_query_count: 0,
            ..quick(scenario)
        };
        let result = start_test(&sut, &mut qsl, &settings, &short_drain());
        if scenario == TestScenario::Offline {
            // An Offline query of 0 samples cannot be issued: a clear error up front.
            let error = result.unwrap_err().to_string();
            assert!(error.contains("samples_per_query is 0"), "{error}");
            continue;
        }
        let performance = result.unwrap().performance.unwrap();
        assert_eq!(performance.query_count, 0, "{scenario}");
        assert!(!performance.validity.valid, "{scenario}");
    }
}

#[test]
fn token_accuracy_runs_log_first_token_bytes_and_counts() {
    for scenario in [TestScenario::Server, TestScenario::Offline] {
        let mut qsl = RecordingQsl::new(40, 20);
        let settings = TestSettings {
            mode: TestMode::AccuracyOnly,
            use_token_latencies: true,
            ..quick(scenario)
        };
        let result = start_test(&TokenSut, &mut qsl, &settings, &short_drain()).unwrap();
        assert_eq!(result.accuracy_log.len(), 40, "{scenario}");
        for record in &result.accuracy_log {
            let bytes = (record.qsl_idx as u32).to_le_bytes().to_vec();
            assert_eq!(record.data, bytes);
            assert_eq!(record.token_count, Some(2 + (record.qsl_idx % 7) as i64));
            if scenario == TestScenario::Offline {
                assert_eq!(record.token_data, None);
            } else {
                assert_eq!(record.token_data.as_deref(), Some(&bytes[..]));
            }
        }
    }
}

#[test]
fn bad_token_counts_are_errors_in_accuracy_runs_too() {
    struct OneToken;
    impl SystemUnderTest for OneToken {
        fn name(&self) -> &str {
            "OneToken"
        }
        fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
            for s in samples {
                completer.first_token_complete(&[QuerySampleResponse::new(s.id, &[])]);
                completer.query_samples_complete(&[QuerySampleResponse::with_tokens(s.id, &[], 1)]);
            }
        }
    }
    let mut qsl = RecordingQsl::new(30, 30);
    let settings = TestSettings {
        mode: TestMode::AccuracyOnly,
        use_token_latencies: true,
        ..quick(TestScenario::Server)
    };
    let result = start_test(&OneToken, &mut qsl, &settings, &short_drain()).unwrap();
    let errors: Vec<&str> = result
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        errors,
        ["Number of tokens need to be greater than 1 (30 samples)"]
    );
}

/// A sample library of 10 samples whose load or unload fails with the message given.
struct FailingLibrary {
    load: Option<&'static str>,
    unload: Option<&'static str>,
}

impl mlperf_loadgen::QuerySampleLibrary for FailingLibrary {
    fn name(&self) -> &str {
        "FailingLibrary"
    }
    fn total_sample_count(&self) -> usize {
        10
    }
    fn performance_sample_count(&self) -> usize {
        10
    }
    fn load_samples_to_ram(
        &mut self,
        _: &[mlperf_loadgen::QuerySampleIndex],
    ) -> Result<(), mlperf_loadgen::QslError> {
        self.load.map_or(Ok(()), |message| Err(message.into()))
    }
    fn unload_samples_from_ram(
        &mut self,
        _: &[mlperf_loadgen::QuerySampleIndex],
    ) -> Result<(), mlperf_loadgen::QslError> {
        self.unload.map_or(Ok(()), |message| Err(message.into()))
    }
}

#[test]
fn a_sample_library_that_fails_to_load_is_a_clear_error() {
    let sut = support::RecordingSut::default();
    let error = start_test(
        &sut,
        &mut FailingLibrary {
            load: Some("dataset file /data/missing.npy not found"),
            unload: None,
        },
        &quick(TestScenario::Offline),
        &short_drain(),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        error,
        "the sample library failed to load 10 samples: dataset file /data/missing.npy not found"
    );
    assert!(sut.queries.lock().unwrap().is_empty());
}

/// Runs `settings` with a progress handle read every 20 ms: the live snapshots, then the one
/// after the run.
fn watched(
    settings: &TestSettings,
) -> (
    Vec<mlperf_loadgen::ProgressSnapshot>,
    mlperf_loadgen::ProgressSnapshot,
) {
    let sut = WorkerSut::start(Duration::from_millis(1), None, false);
    let mut qsl = RecordingQsl::new(100, 100);
    let handle = mlperf_loadgen::ProgressHandle::new();
    let context = TestContext {
        progress: Some(handle.clone()),
        ..TestContext::default()
    };
    let done = std::sync::atomic::AtomicBool::new(false);
    let snapshots = std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            let mut seen = Vec::new();
            while !done.load(Ordering::Relaxed) {
                seen.push(handle.snapshot());
                std::thread::sleep(Duration::from_millis(20));
            }
            seen
        });
        start_test_with(&sut, &mut qsl, settings, &short_drain(), &context).unwrap();
        done.store(true, Ordering::Relaxed);
        watcher.join().unwrap()
    });
    let live = snapshots
        .into_iter()
        .filter(|s| s.series.is_some())
        .collect();
    (live, handle.snapshot())
}

#[test]
fn a_progress_handle_watches_the_run_live() {
    let settings = TestSettings {
        min_query_count: 150,
        ..quick(TestScenario::SingleStream)
    };
    let (live, after) = watched(&settings);
    assert!(live.len() >= 3, "{} live snapshots", live.len());
    assert!(live
        .windows(2)
        .all(|w| w[0].queries_issued <= w[1].queries_issued));
    let last = live.last().unwrap();
    assert!(last.queries_issued > 0 && last.samples_completed > 0);
    assert_eq!(last.series, Some(TestMode::PerformanceOnly));
    assert_eq!(last.min_queries, 150);
    let p99 = last.p99_latency.expect("a running p99");
    assert!(p99 >= Duration::from_millis(1), "{p99:?}");
    assert!(last.throughput > 10.0 && last.throughput < 2000.0);
    assert_eq!(after.series, None);
    assert_eq!(after.samples_completed, 150);
}

#[test]
fn a_progress_handle_watches_a_server_run_of_several_issue_threads() {
    let settings = TestSettings {
        min_query_count: 400,
        server_target_qps: 1000.0,
        server_num_issue_query_threads: 2,
        ..quick(TestScenario::Server)
    };
    let (live, after) = watched(&settings);
    assert!(live.len() >= 3, "{} live snapshots", live.len());
    assert!(live
        .windows(2)
        .all(|w| w[0].queries_issued <= w[1].queries_issued));
    assert!(
        live.iter()
            .any(|s| s.queries_issued > 0 && s.queries_issued < 400),
        "no snapshot saw issuing under way: {:?}",
        live.iter().map(|s| s.queries_issued).collect::<Vec<_>>()
    );
    let last = live.last().unwrap();
    assert_eq!(last.min_queries, 400);
    assert!(last.p99_latency.is_some());
    assert_eq!(after.series, None);
    assert!(after.samples_completed >= 400);
}

#[test]
fn a_failing_sut_ends_the_run_invalid_with_its_message() {
    struct Failing(AtomicU64);
    impl SystemUnderTest for Failing {
        fn name(&self) -> &str {
            "Failing"
        }
        fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
            for s in samples {
                completer.query_samples_complete(&[QuerySampleResponse::new(s.id, &[])]);
            }
            // Fails after the minimum query count was already met: still INVALID.
            if self.0.fetch_add(1, Ordering::Relaxed) == 300 {
                completer.fail("device lost");
            }
        }
    }
    let mut qsl = RecordingQsl::new(100, 100);
    let settings = TestSettings {
        min_query_count: 250,
        max_query_count: 1000,
        min_duration_ms: 50,
        single_stream_expected_latency_ns: 1000.0,
        ..quick(TestScenario::SingleStream)
    };
    let context = TestContext {
        provenance: vec![("plugin".into(), "libfailing.so".into())],
        ..TestContext::default()
    };
    let failing = Failing(AtomicU64::new(0));
    let result = start_test_with(&failing, &mut qsl, &settings, &short_drain(), &context).unwrap();
    assert_eq!(
        result.series[0].stop,
        StopReason::SutFailed("device lost".into())
    );
    let validity = &result.performance.as_ref().unwrap().validity;
    assert!(!validity.valid);
    assert_eq!(
        validity.reasons.last().unwrap(),
        "The SUT failed: device lost"
    );
    assert_eq!(
        result.provenance,
        [("plugin".to_string(), "libfailing.so".to_string())]
    );
}

#[test]
fn a_failure_after_the_last_issue_ends_the_drain_early_and_the_run_invalid() {
    // Answers the first sample of each query from a thread, then fails: the rest is lost. In
    // Offline the one query is already issued, in MultiStream the issuer waits for the query
    // to complete before the next: neither may wait out the 60 s drain timeout.
    struct FailsLater;
    impl SystemUnderTest for FailsLater {
        fn name(&self) -> &str {
            "FailsLater"
        }
        fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
            let (first, completer) = (samples[0].id, completer.clone());
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                completer.query_samples_complete(&[QuerySampleResponse::new(first, &[])]);
                completer.fail("device lost");
            });
        }
    }
    let log = LogSettings::default();
    assert_eq!(log.drain_timeout, Duration::from_secs(60));
    for settings in [
        quick(TestScenario::Offline),
        quick(TestScenario::MultiStream),
    ] {
        let mut qsl = RecordingQsl::new(100, 100);
        let started = std::time::Instant::now();
        let result = start_test(&FailsLater, &mut qsl, &settings, &log).unwrap();
        let took = started.elapsed();
        let scenario = settings.scenario;
        assert!(took < Duration::from_secs(15), "{scenario}: {took:?}");
        assert_eq!(
            result.series[0].stop,
            StopReason::SutFailed("device lost".into()),
            "{scenario}"
        );
        assert!(result.series[0].never_completed > 0, "{scenario}");
        let validity = &result.performance.as_ref().unwrap().validity;
        assert!(!validity.valid, "{scenario}");
        assert!(
            validity
                .reasons
                .contains(&"The SUT failed: device lost".to_string()),
            "{scenario}: {:?}",
            validity.reasons
        );
    }
}

#[test]
fn every_query_is_prepared_before_it_is_issued() {
    #[derive(Default)]
    struct Staging {
        prepared: Mutex<Vec<Vec<u64>>>,
        issued: Mutex<Vec<Vec<u64>>>,
    }
    impl SystemUnderTest for Staging {
        fn name(&self) -> &str {
            "Staging"
        }
        fn prepare_query(&self, samples: &[QuerySample]) {
            self.prepared
                .lock()
                .unwrap()
                .push(samples.iter().map(|s| s.id.0).collect());
        }
        fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
            self.issued
                .lock()
                .unwrap()
                .push(samples.iter().map(|s| s.id.0).collect());
            for s in samples {
                completer.query_samples_complete(&[QuerySampleResponse::new(s.id, &[])]);
            }
        }
    }
    for scenario in TestScenario::ALL {
        let sut = Staging::default();
        let mut qsl = RecordingQsl::new(100, 100);
        start_test(&sut, &mut qsl, &quick(scenario), &short_drain()).unwrap();
        let prepared = sut.prepared.into_inner().unwrap();
        let issued = sut.issued.into_inner().unwrap();
        assert!(!issued.is_empty());
        // Issued in the order prepared; at most one prepared query is left over.
        assert_eq!(&prepared[..issued.len()], &issued[..], "{scenario}");
        assert!(prepared.len() <= issued.len() + 1, "{scenario}");
    }
}

/// The loaded set's bytes, one per position in the set; the sample at position k answers with
/// a pointer to byte k (as a SUT answering from host memory does). Rewritten at each load.
struct SetMemory {
    bytes: std::cell::UnsafeCell<[u8; 10]>,
    position: Mutex<std::collections::BTreeMap<usize, usize>>,
}

// SAFETY: the engine reloads the set only after every response pointing into it was copied,
// which is what the test below checks; nothing else writes the bytes.
unsafe impl Sync for SetMemory {}

static SET_MEMORY: SetMemory = SetMemory {
    bytes: std::cell::UnsafeCell::new([0; 10]),
    position: Mutex::new(std::collections::BTreeMap::new()),
};

struct SetQsl;

impl mlperf_loadgen::QuerySampleLibrary for SetQsl {
    fn name(&self) -> &str {
        "SetQsl"
    }
    fn total_sample_count(&self) -> usize {
        30
    }
    fn performance_sample_count(&self) -> usize {
        10
    }
    fn load_samples_to_ram(&mut self, indices: &[usize]) -> Result<(), mlperf_loadgen::QslError> {
        let mut position = SET_MEMORY.position.lock().unwrap();
        position.clear();
        for (k, &index) in indices.iter().enumerate() {
            // SAFETY: see SetMemory.
            unsafe { (*SET_MEMORY.bytes.get())[k] = index as u8 };
            position.insert(index, k);
        }
        Ok(())
    }
    fn unload_samples_from_ram(&mut self, _: &[usize]) -> Result<(), mlperf_loadgen::QslError> {
        Ok(())
    }
}

/// Answers from a worker with a pointer into the loaded set, taking its time over each
/// response bound for the accuracy log (as a SUT fetching it from a device does).
struct SlowCopySut(Mutex<mpsc::Sender<(QuerySample, Completer)>>);

impl SystemUnderTest for SlowCopySut {
    fn name(&self) -> &str {
        "SlowCopySut"
    }
    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        let sender = self.0.lock().unwrap();
        for sample in samples {
            let _ = sender.send((*sample, completer.clone()));
        }
    }
}

#[test]
fn accuracy_copies_finish_before_the_next_set_replaces_the_memory_they_read() {
    let (sender, receiver) = mpsc::channel::<(QuerySample, Completer)>();
    std::thread::spawn(move || {
        while let Ok((sample, completer)) = receiver.recv() {
            let k = SET_MEMORY.position.lock().unwrap()[&sample.index];
            // SAFETY: see SetMemory; one byte of the static array.
            let data = unsafe {
                std::slice::from_raw_parts(SET_MEMORY.bytes.get().cast::<u8>().add(k), 1)
            };
            let response = QuerySampleResponse::new(sample.id, data);
            completer.query_samples_complete_with(&[response], |_| {
                std::thread::sleep(Duration::from_millis(30))
            });
        }
    });
    let sut = SlowCopySut(Mutex::new(sender));
    let settings = TestSettings {
        mode: TestMode::AccuracyOnly,
        ..quick(TestScenario::SingleStream)
    };
    let result = start_test(&sut, &mut SetQsl, &settings, &LogSettings::default()).unwrap();
    assert_eq!(result.accuracy_log.len(), 30);
    for record in &result.accuracy_log {
        assert_eq!(
            record.data,
            [record.qsl_idx as u8],
            "sample {} logged another set's byte",
            record.qsl_idx
        );
    }
}

#[test]
fn max_duration_bounds_a_run_whose_schedule_is_too_long_to_count() {
    let inline = crate::stalled_sut::Paced::new(Duration::ZERO, Duration::ZERO);
    // 10^8 queries per second for 600 s: counting the Poisson schedule draw by draw, before
    // and after issuing, takes many minutes; max_duration_ms ends the run in about its time.
    let settings = TestSettings {
        scenario: TestScenario::Server,
        server_target_qps: 1e8,
        min_duration_ms: 600_000,
        max_duration_ms: 300,
        ..TestSettings::default()
    };
    let mut qsl = RecordingQsl::new(100, 100);
    let started = std::time::Instant::now();
    let result = start_test(&inline, &mut qsl, &settings, &short_drain()).unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(15), "took {took:?}");
    let series = &result.series[0];
    assert!(
        matches!(series.stop, StopReason::MaxDuration(_)),
        "{:?}",
        series.stop
    );
    // One count, estimated once: the detail log's generated_query_count is the result's.
    let warnings: Vec<_> = result
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning && d.message.contains("too long to count"))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0]
            .message
            .contains(&format!("({})", series.generated_query_count)),
        "{}",
        warnings[0].message
    );
    // The estimate is the mean: 6 * 10^10 queries within a fraction of a percent.
    let ratio = series.generated_query_count as f64 / 6e10;
    assert!(
        (ratio - 1.0).abs() < 0.001,
        "{}",
        series.generated_query_count
    );
    assert!(!result.performance.unwrap().validity.valid);
}

/// Answers inline, except one query it holds past 2^32 ns (4.3 s): its latency is kept whole
/// beside the narrow ones, and the schedule's gap after it too.
struct OneSlowQuery {
    issued: AtomicU64,
    hold: Duration,
}

impl SystemUnderTest for OneSlowQuery {
    fn name(&self) -> &str {
        "OneSlowQuery"
    }
    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        if self.issued.fetch_add(1, Ordering::Relaxed) == 3 {
            std::thread::sleep(self.hold);
        }
        for s in samples {
            completer.query_samples_complete(&[QuerySampleResponse::new(s.id, &[])]);
        }
    }
}

#[test]
fn a_latency_and_a_schedule_gap_past_four_seconds_are_measured_whole() {
    let hold = Duration::from_millis(4_400);
    let sut = OneSlowQuery {
        issued: AtomicU64::new(0),
        hold,
    };
    // 20, so that the 90th percentile (rank 18) is not the held query.
    let queries = 20;
    let settings = TestSettings {
        min_query_count: queries,
        max_query_count: queries,
        ..quick(TestScenario::SingleStream)
    };
    let mut qsl = RecordingQsl::new(16, 16);
    let result = start_test(&sut, &mut qsl, &settings, &short_drain()).unwrap();
    let performance = result.performance.expect("a performance result");
    let latencies = performance.sample_latency.expect("sample latencies");
    let hold_ns = hold.as_nanos() as i64;
    assert_eq!(performance.sample_count, queries);
    // The held query is the slowest; every other one took well under a second.
    assert!(latencies.max_ns >= hold_ns, "{latencies:?}");
    assert!(latencies.max_ns < hold_ns + 1_000_000_000, "{latencies:?}");
    assert!(latencies.min_ns >= 0 && latencies.min_ns < 100_000_000);
    let p90 = latencies
        .percentiles
        .iter()
        .find(|(p, _)| *p == 0.90)
        .unwrap()
        .1;
    assert!(p90 < 100_000_000, "{latencies:?}");
    let mean_floor = hold_ns / queries as i64;
    assert!(latencies.mean_ns >= mean_floor && latencies.mean_ns < mean_floor + 100_000_000);
    // The queries after the held one were scheduled (issued) after it completed.
    assert!(performance.final_query_scheduled_time_s >= hold.as_secs_f64());
    assert!(performance.final_query_scheduled_time_s < hold.as_secs_f64() + 1.0);
    assert!(performance.max_latency_s >= hold.as_secs_f64());
}

/// Records the threads its calls come from; answers inline.
#[derive(Default)]
struct ThreadRecordingSut(Mutex<Vec<std::thread::ThreadId>>);

impl SystemUnderTest for ThreadRecordingSut {
    fn name(&self) -> &str {
        "ThreadRecordingSut"
    }
    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        self.0.lock().unwrap().push(std::thread::current().id());
        let responses: Vec<_> = samples
            .iter()
            .map(|s| QuerySampleResponse::new(s.id, &[]))
            .collect();
        completer.query_samples_complete(&responses);
    }
}

#[test]
fn the_issue_loop_runs_on_the_calling_thread_when_asked() {
    let caller = std::thread::current().id();
    for scenario in TestScenario::ALL {
        for on_caller in [false, true] {
            let sut = ThreadRecordingSut::default();
            let context = TestContext {
                issue_on_calling_thread: on_caller,
                ..TestContext::default()
            };
            let result = start_test_with(
                &sut,
                &mut RecordingQsl::new(64, 64),
                &quick(scenario),
                &short_drain(),
                &context,
            )
            .unwrap();
            assert!(result.performance.is_some(), "{scenario}");
            let threads = sut.0.lock().unwrap();
            assert!(!threads.is_empty(), "{scenario}");
            assert!(
                threads.iter().all(|&t| (t == caller) == on_caller),
                "{scenario}, on the caller's thread: {on_caller}"
            );
        }
    }
}

#[test]
fn an_unload_that_fails_keeps_the_result_and_logs_the_error() {
    let sut = ThreadRecordingSut::default();
    let result = start_test(
        &sut,
        &mut FailingLibrary {
            load: None,
            unload: Some("KeyboardInterrupt"),
        },
        &quick(TestScenario::Offline),
        &short_drain(),
    )
    .unwrap();
    assert!(result.performance.is_some());
    let errors: Vec<_> = result
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.message.clone())
        .collect();
    assert_eq!(
        errors,
        ["the sample library failed to unload 10 samples: KeyboardInterrupt"]
    );
}
