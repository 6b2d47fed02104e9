//! How long the full run with the tuned setting will take, from what the trials measured.

use mlperf_loadgen::{EffectiveSettings, TestScenario, TestSettings};

use super::Trial;

/// The full run's expected length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FullRunEstimate {
    pub seconds: f64,
    pub queries: u64,
}

/// The full run of `settings` (the tuned value applied) on the trial's sample library, at the
/// latency and rate `basis` measured.
pub fn estimate_full_run(settings: &TestSettings, basis: &Trial) -> FullRunEstimate {
    let (effective, _) = EffectiveSettings::new(
        settings,
        basis.performance_sample_count,
        basis.total_sample_count,
    );
    let min_duration_s = effective.target_duration_ms as f64 / 1e3;
    let min_queries = effective.min_query_count as f64;
    let (seconds, queries) = match effective.scenario {
        TestScenario::SingleStream | TestScenario::MultiStream => {
            // One query at a time: the run lasts until both minimums are met.
            let query_s = basis.mean_latency_ns / 1e9;
            let seconds = min_duration_s.max(min_queries * query_s);
            (seconds, (seconds / query_s).max(min_queries))
        }
        TestScenario::Offline => (
            effective.samples_per_query as f64 / basis.samples_per_second,
            1.0,
        ),
        TestScenario::Server => {
            let qps = effective.target_qps;
            let seconds = min_duration_s.max(min_queries / qps);
            (seconds, (seconds * qps).max(min_queries))
        }
    };
    FullRunEstimate {
        seconds,
        queries: queries.ceil() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::test_trial as trial;

    #[test]
    fn single_stream_lasts_the_longer_of_the_minimums() {
        let mut settings = TestSettings {
            scenario: TestScenario::SingleStream,
            min_duration_ms: 600_000,
            min_query_count: 1024,
            sample_concatenate_permutation: false,
            single_stream_expected_latency_ns: 1e6,
            ..TestSettings::default()
        };
        let fast = estimate_full_run(&settings, &trial(1e6, 1e3));
        assert_eq!(fast.seconds, 600.0);
        assert_eq!(fast.queries, 600_000);
        settings.min_query_count = 1_000_000;
        let counted = estimate_full_run(&settings, &trial(1e6, 1e3));
        assert_eq!(counted.seconds, 1000.0);
    }

    #[test]
    fn offline_issues_its_slack_over_the_measured_rate() {
        let settings = TestSettings {
            scenario: TestScenario::Offline,
            min_duration_ms: 600_000,
            min_query_count: 1,
            offline_expected_qps: 1000.0,
            ..TestSettings::default()
        };
        let estimate = estimate_full_run(&settings, &trial(1e6, 1000.0));
        assert!((estimate.seconds - 660.0).abs() < 1e-9, "{estimate:?}");
    }

    #[test]
    fn server_needs_its_queries_at_the_target_rate() {
        let settings = TestSettings {
            scenario: TestScenario::Server,
            min_duration_ms: 600_000,
            min_query_count: 270_336,
            server_target_qps: 100.0,
            sample_concatenate_permutation: false,
            ..TestSettings::default()
        };
        let estimate = estimate_full_run(&settings, &trial(1e6, 100.0));
        assert!((estimate.seconds - 2703.36).abs() < 1e-6, "{estimate:?}");
        assert_eq!(estimate.queries, 270_336);
    }
}
