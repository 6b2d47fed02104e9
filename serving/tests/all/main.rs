//! The load modes against a simulated server whose service time is known: what a point
//! measures (concurrency, rate, dispersion of arrivals) is what was asked.

mod simulated;

use std::time::Duration;

use mlperf_serving::{
    run_point, steady_window, summarize, Arrivals, LoadMode, PointPlan, PointRun, RequestRecords,
    SaturationRule, Slo, SteadyRule, FAILED_IN_A_ROW_STOP,
};
use simulated::SimulatedServer;

const MS: i64 = 1_000_000;

fn plan(mode: LoadMode, seconds: f64) -> PointPlan {
    PointPlan {
        mode,
        duration: Duration::from_secs_f64(seconds),
        max_requests: None,
        samples: 10,
        seed: 1,
        drain_timeout: Duration::from_secs(5),
        saturation: None,
        schedule: None,
    }
}

/// Coefficient of variation of the gaps between sends.
fn dispersion(run: &PointRun) -> f64 {
    let gaps: Vec<f64> = run
        .records
        .windows(2)
        .map(|w| (w[1].scheduled_ns - w[0].scheduled_ns) as f64)
        .collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let variance = gaps.iter().map(|g| (g - mean) * (g - mean)).sum::<f64>() / gaps.len() as f64;
    variance.sqrt() / mean
}

/// Fails every request it is sent at once, or only those of even id.
struct FailingServer {
    every: bool,
}

impl mlperf_serving::Target for FailingServer {
    fn send(&self, id: usize, _sample: usize, records: &std::sync::Arc<RequestRecords>) {
        let failed = self.every || id.is_multiple_of(2);
        records.complete(id, mlperf_loadgen::monotonic_ns(), 0, failed);
    }
}

#[test]
fn a_hundred_failures_in_a_row_stop_the_point_and_one_answer_between_resets_the_count() {
    let failing = FailingServer { every: true };
    let run = run_point(&failing, &plan(LoadMode::Concurrency(4), 30.0)).unwrap();
    assert_eq!(
        run.records.len(),
        FAILED_IN_A_ROW_STOP,
        "stopped at the hundredth"
    );
    assert!(run.records.iter().all(|r| r.failed));
    assert_eq!(
        run.failing.as_deref(),
        Some("100 requests in a row failed: the point was stopped")
    );
    // A server failing half its requests is measured, not stopped.
    let half = FailingServer { every: false };
    let mut capped = plan(LoadMode::Concurrency(1), 30.0);
    capped.max_requests = Some(3 * FAILED_IN_A_ROW_STOP);
    let run = run_point(&half, &capped).unwrap();
    assert_eq!(run.records.len(), 3 * FAILED_IN_A_ROW_STOP);
    assert!(run.failing.is_none() && run.request_count_reached);
}

/// Tests whose verdict rests on timings (a latency bound, a rate, a comparison of two runs'
/// speeds): `scripts/test.sh` runs every `timed` test alone, one after another, after the
/// rest, so that no other test takes the CPU they measure.
mod timed {
    use super::*;

    #[test]
    fn a_replay_sends_each_request_at_its_recorded_time_on_its_own_sample() {
        // A trace of bursts: 5 requests 1 ms apart every 100 ms, 4 bursts.
        let times: Vec<i64> = (0..20).map(|k| (k / 5) * 100 * MS + (k % 5) * MS).collect();
        let server = SimulatedServer::new(Duration::from_millis(1), Duration::from_millis(3), 4);
        let mut replay = plan(
            LoadMode::Replay {
                max_concurrency: None,
            },
            1.0,
        );
        replay.samples = 20;
        replay.schedule = Some(times.clone().into());
        let run = run_point(&*server, &replay).unwrap();
        assert_eq!(
            run.records.len(),
            20,
            "one request per line, then issuing ends"
        );
        for (record, &at) in run.records.iter().zip(&times) {
            assert_eq!(record.scheduled_ns - run.start_ns, at);
            // Sent on time (a generous bound for a loaded 2-core machine).
            assert!(record.sent_ns - record.scheduled_ns < 5 * MS);
        }
        // Request k went to sample k: each of the first ten samples once.
        assert_eq!(server.samples_seen(), vec![1; 10]);
        // Issuing stopped after the last line, not at the end of the second.
        assert!(run.issue_end_ns - run.start_ns < 500 * MS);
        // Without its times a replay cannot run.
        replay.schedule = None;
        assert!(run_point(&*server, &replay).is_err());
    }

    #[test]
    fn a_closed_loop_keeps_its_concurrency_and_the_rate_follows_the_service_time() {
        // 8 in flight, 4 ms each: 2,000 requests a second.
        let server = SimulatedServer::new(Duration::from_millis(1), Duration::from_millis(4), 5);
        let run = run_point(&*server, &plan(LoadMode::Concurrency(8), 2.0)).unwrap();
        assert_eq!(run.abandoned, 0);
        let summary = summarize(
            &run.records,
            &run.token_gaps,
            run.start_ns,
            run.issue_end_ns,
            &Slo::default(),
        );
        assert_eq!(summary.max_concurrency, 8);
        assert!(
            summary.mean_concurrency > 7.6,
            "mean concurrency {}",
            summary.mean_concurrency
        );
        assert!(
            (summary.requests_per_s / 2000.0 - 1.0).abs() < 0.1,
            "{} requests/s",
            summary.requests_per_s
        );
        // TTFT 1 ms, then 4 more tokens over 3 ms.
        assert!(
            (summary.ttft.p50 / MS as f64 - 1.0).abs() < 0.3,
            "{:?}",
            summary.ttft
        );
        assert!(
            (summary.tpot.p50 / MS as f64 - 0.75).abs() < 0.2,
            "{:?}",
            summary.tpot
        );
        assert!(summary.e2e.p50 >= 4.0 * MS as f64);
        // Samples go round: 10 of them.
        assert!(server.samples_seen().iter().all(|&n| n > 0));
    }

    #[test]
    fn poisson_gamma_and_constant_arrivals_keep_their_rate_and_dispersion() {
        for (arrivals, cv) in [
            (Arrivals::Poisson { rate: 1000.0 }, 1.0),
            (
                Arrivals::Gamma {
                    rate: 1000.0,
                    burstiness: 0.25,
                },
                2.0,
            ),
            (Arrivals::Constant { rate: 1000.0 }, 0.0),
        ] {
            let server =
                SimulatedServer::new(Duration::from_millis(1), Duration::from_millis(2), 3);
            let mode = LoadMode::Rate {
                arrivals,
                max_concurrency: None,
            };
            let run = run_point(&*server, &plan(mode, 3.0)).unwrap();
            let summary = summarize(
                &run.records,
                &run.token_gaps,
                run.start_ns,
                run.start_ns + 3_000 * MS,
                &Slo::default(),
            );
            // About 3,000 arrivals: the rate within 10 % (a gamma of CV 2 strays further than
            // a Poisson process over a few seconds), the dispersion within 0.15.
            assert!(
                (summary.requests_per_s / 1000.0 - 1.0).abs() < 0.1,
                "{arrivals:?}: {} requests/s",
                summary.requests_per_s
            );
            let measured = dispersion(&run);
            assert!((measured - cv).abs() < 0.15, "{arrivals:?}: cv {measured}");
            // Each request left when it was due, give or take the timer (a virtual
            // machine's wake-ups run late by up to about a millisecond): within two mean
            // gaps, where arrivals held back by answers would fall further behind each one.
            assert!(
                summary.send_lateness.p90 < 2.0 * MS as f64,
                "{arrivals:?}: {:?}",
                summary.send_lateness
            );
        }
    }

    #[test]
    fn a_concurrency_cap_holds_the_rate_to_what_the_server_can_take() {
        // 2,000 a second asked; 4 in flight at 4 ms each allow 1,000.
        let server = SimulatedServer::new(Duration::from_millis(1), Duration::from_millis(4), 2);
        let mode = LoadMode::Rate {
            arrivals: Arrivals::Poisson { rate: 2000.0 },
            max_concurrency: Some(4),
        };
        let run = run_point(&*server, &plan(mode, 2.0)).unwrap();
        let summary = summarize(
            &run.records,
            &run.token_gaps,
            run.start_ns,
            run.issue_end_ns,
            &Slo::default(),
        );
        assert_eq!(summary.max_concurrency, 4);
        // Within 15 %: the simulated server's 4 ms sleeps overrun on a loaded machine.
        assert!(
            (summary.requests_per_s / 1000.0 - 1.0).abs() < 0.15,
            "{} requests/s",
            summary.requests_per_s
        );
        // Arrivals wait for room: they are sent later and later.
        assert!(
            summary.send_lateness.p90 > 100.0 * MS as f64,
            "{:?}",
            summary.send_lateness
        );
    }

    #[test]
    fn goodput_counts_only_requests_within_every_slo() {
        // A server that saturates: each request takes 5 ms, one at a time, so beyond 200 a second
        // requests queue and their TTFT grows.
        let server = SimulatedServer::serial(Duration::from_millis(5), 4);
        let slo = Slo {
            ttft_ns: Some(20.0 * MS as f64),
            ..Slo::default()
        };
        let mut goodput = Vec::new();
        for rate in [100.0, 400.0] {
            let mode = LoadMode::Rate {
                arrivals: Arrivals::Constant { rate },
                max_concurrency: None,
            };
            let run = run_point(&*server, &plan(mode, 1.0)).unwrap();
            let summary = summarize(
                &run.records,
                &run.token_gaps,
                run.start_ns,
                run.start_ns + 1_000 * MS,
                &slo,
            );
            goodput.push((summary.requests_per_s, summary.goodput_per_s));
        }
        // Below saturation every answered request meets the SLO; above it, few do.
        let (rate, good) = goodput[0];
        assert!((good - rate).abs() < 1e-9 && rate > 90.0, "{goodput:?}");
        let (_, good) = goodput[1];
        assert!(good < 20.0, "{goodput:?}");
    }

    #[test]
    fn a_request_cap_ends_the_point_and_a_stuck_server_is_abandoned() {
        let server = SimulatedServer::new(Duration::from_millis(1), Duration::from_millis(1), 2);
        let mut capped = plan(LoadMode::Concurrency(2), 10.0);
        capped.max_requests = Some(50);
        let run = run_point(&*server, &capped).unwrap();
        assert_eq!(run.records.len(), 50);
        assert!(run.records.iter().all(|r| r.completed_ns.is_some()));
        assert!(run.request_count_reached);

        let stuck = SimulatedServer::never();
        let mut plan = plan(LoadMode::Concurrency(3), 0.2);
        plan.drain_timeout = Duration::from_millis(50);
        // Its cap is never reached: the duration ends it.
        plan.max_requests = Some(4);
        let run = run_point(&*stuck, &plan).unwrap();
        assert_eq!((run.records.len(), run.abandoned), (3, 3));
        assert!(!run.request_count_reached);
    }

    #[test]
    fn a_server_saturating_at_a_known_rate_ends_the_point_early_with_the_reason() {
        // One request at a time, 5 ms each: 200 a second at most.
        let server = SimulatedServer::serial(Duration::from_millis(5), 4);
        let watched = |rate: f64, cap: Option<usize>, seconds: f64| {
            let mut plan = plan(
                LoadMode::Rate {
                    arrivals: Arrivals::Poisson { rate },
                    max_concurrency: cap,
                },
                seconds,
            );
            plan.saturation = Some(SaturationRule {
                check_every: Duration::from_millis(250),
                ..SaturationRule::default()
            });
            plan.drain_timeout = Duration::from_secs(20);
            run_point(&*server, &plan).unwrap()
        };
        // Twice what it can take: the queue and TTFT grow, the 10 s point ends within a few
        // seconds (5 checks of 250 ms at the least).
        let run = watched(400.0, None, 10.0);
        let reason = run.saturated.expect("over-saturated");
        assert!(reason.contains("requests in flight"), "{reason}");
        let lasted = (run.issue_end_ns - run.start_ns) as f64 / 1e9;
        assert!((1.0..5.0).contains(&lasted), "{lasted} s: {reason}");
        // Capped at 4 in flight, the pile waits in the client: arrivals fall behind.
        let run = watched(400.0, Some(4), 10.0);
        let reason = run.saturated.expect("over-saturated");
        assert!(reason.contains("late"), "{reason}");
        // Half of what it can take: never stopped, and steady.
        let run = watched(100.0, None, 3.0);
        assert_eq!(run.saturated, None);
        let verdict = steady_window(
            &run.records,
            run.start_ns,
            run.start_ns + 3_000 * MS,
            &SteadyRule::default(),
        );
        assert!(verdict.steady, "{}", verdict.reason);
    }

    #[test]
    fn a_point_whose_queue_keeps_growing_is_not_steady() {
        // 300 a second against 200 a second, not stopped: requests in flight grow throughout.
        let server = SimulatedServer::serial(Duration::from_millis(5), 4);
        let mode = LoadMode::Rate {
            arrivals: Arrivals::Constant { rate: 300.0 },
            max_concurrency: None,
        };
        let mut plan = plan(mode, 2.0);
        plan.drain_timeout = Duration::from_secs(10);
        let run = run_point(&*server, &plan).unwrap();
        let verdict = steady_window(
            &run.records,
            run.start_ns,
            run.start_ns + 2_000 * MS,
            &SteadyRule::default(),
        );
        assert!(!verdict.steady, "{}", verdict.reason);
        assert!(verdict.reason.contains("in flight"), "{}", verdict.reason);
    }

    #[test]
    fn a_point_issues_for_its_whole_duration_even_when_one_request_outlasts_it() {
        // One request in flight taking 1 s, in a point of 300 ms: the window is the 300 ms, not
        // the instant of the one send (a rate over it would be absurd).
        let server = SimulatedServer::new(Duration::from_millis(500), Duration::from_secs(1), 4);
        let run = run_point(&*server, &plan(LoadMode::Concurrency(1), 0.3)).unwrap();
        assert_eq!(run.records.len(), 1);
        assert_eq!(run.issue_end_ns - run.start_ns, 300 * MS);
        let summary = summarize(
            &run.records,
            &run.token_gaps,
            run.start_ns,
            run.issue_end_ns,
            &Slo::default(),
        );
        assert!(
            (summary.requests_per_s - 1.0 / 0.3).abs() < 1e-9,
            "{summary:?}"
        );
    }
}
