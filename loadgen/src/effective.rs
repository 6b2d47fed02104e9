//! The effective settings LoadGen derives from the requested ones and the sample library
//! (the official `TestSettingsInternal`, spec §2.7).

use serde::Serialize;

use super::diagnostics::Diagnostic;
use super::settings::{TestMode, TestScenario, TestSettings};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffectiveSettings {
    pub requested: TestSettings,
    pub scenario: TestScenario,
    pub mode: TestMode,
    pub samples_per_query: u64,
    pub target_qps: f64,
    pub target_latency_ns: u64,
    pub target_latency_percentile: f64,
    pub max_async_queries: u64,
    pub target_duration_ms: u64,
    pub min_duration_ms: u64,
    pub max_duration_ms: u64,
    pub min_query_count: u64,
    pub max_query_count: u64,
    pub min_sample_count: u64,
    pub qsl_rng_seed: u64,
    pub sample_index_rng_seed: u64,
    pub schedule_rng_seed: u64,
    pub accuracy_log_rng_seed: u64,
    pub accuracy_log_probability: f64,
    pub accuracy_log_sampling_target: u64,
    pub print_timestamps: bool,
    pub performance_issue_unique: bool,
    pub performance_issue_same: bool,
    pub performance_issue_same_index: u64,
    pub performance_sample_count: u64,
    pub accuracy_sample_count: u64,
    pub sample_concatenate_permutation: bool,
    pub use_token_latencies: bool,
    pub server_ttft_latency: u64,
    pub server_tpot_latency: u64,
    pub infer_token_latencies: bool,
    pub token_latency_scaling_factor: u64,
}

impl EffectiveSettings {
    /// Derives the effective settings exactly as the official constructor does. Problems the
    /// official code logs (and carries on with) are returned beside the result.
    pub fn new(
        requested: &TestSettings,
        qsl_performance_sample_count: u64,
        qsl_total_sample_count: u64,
    ) -> (EffectiveSettings, Vec<Diagnostic>) {
        let r = requested;
        let mut diagnostics = Vec::new();
        let mut target_qps = 1.0;
        let mut target_latency_ns = 0;
        let max_async_queries;
        let target_latency_percentile;
        match r.scenario {
            TestScenario::SingleStream => {
                target_qps = 1e9 / r.single_stream_expected_latency_ns;
                max_async_queries = 1;
                target_latency_percentile = r.single_stream_target_latency_percentile;
            }
            TestScenario::MultiStream => {
                target_qps = 1e9 / r.multi_stream_expected_latency_ns;
                max_async_queries = 1;
                target_latency_percentile = r.multi_stream_target_latency_percentile;
            }
            TestScenario::Server => {
                if r.server_target_qps >= 0.0 {
                    target_qps = r.server_target_qps;
                } else {
                    diagnostics.push(Diagnostic::error(
                        "error_invalid_test_settings",
                        format!(
                            "Invalid value for server_target_qps requested. requested: {} using: {}",
                            r.server_target_qps, target_qps
                        ),
                    ));
                }
                target_latency_ns = r.server_target_latency_ns;
                target_latency_percentile = r.server_target_latency_percentile;
                max_async_queries = r.server_max_async_queries;
            }
            TestScenario::Offline => {
                target_latency_percentile = 0.99;
                if r.offline_expected_qps >= 0.0 {
                    target_qps = r.offline_expected_qps;
                } else {
                    diagnostics.push(Diagnostic::error(
                        "error_invalid_test_settings",
                        format!(
                            "Invalid value for offline_expected_qps requested. requested: {} using: {}",
                            r.offline_expected_qps, target_qps
                        ),
                    ));
                }
                max_async_queries = 1;
            }
        }

        let performance_sample_count = if r.performance_sample_count_override == 0 {
            qsl_performance_sample_count
        } else {
            r.performance_sample_count_override
        };
        let accuracy_sample_count = if r.accuracy_sample_count_override == 0 {
            qsl_total_sample_count
        } else {
            r.accuracy_sample_count_override
        };

        let mut samples_per_query = 1;
        if r.scenario == TestScenario::MultiStream {
            samples_per_query = r.multi_stream_samples_per_query;
        }
        let mut min_query_count = r.min_query_count;
        let mut target_duration_ms = r.min_duration_ms;
        if r.scenario == TestScenario::Offline {
            // 10% slack so the one query outlasts the minimum duration.
            let target_sample_count = (1.1 * ms_to_seconds(target_duration_ms) * target_qps) as u64;
            samples_per_query = if r.performance_issue_unique {
                performance_sample_count
            } else {
                min_query_count.max(target_sample_count)
            };
            min_query_count = 1;
            target_duration_ms = 0;
        }

        // Equal issue in SingleStream rounds the query count up to whole sets, using the
        // PSC the library reports (not the override) and adding a full set even when already
        // a multiple, as the official code does.
        if r.sample_concatenate_permutation && r.scenario == TestScenario::SingleStream {
            let expected_queries = (2.0 * ms_to_seconds(target_duration_ms) * target_qps) as u64;
            min_query_count = min_query_count.max(expected_queries);
            if qsl_performance_sample_count == 0 {
                diagnostics.push(Diagnostic::error(
                    "error_invalid_test_settings",
                    "sample_concatenate_permutation needs a non-zero performance sample count from the sample library",
                ));
            } else {
                min_query_count +=
                    qsl_performance_sample_count - (min_query_count % qsl_performance_sample_count);
            }
        }

        let min_sample_count = min_query_count.wrapping_mul(samples_per_query);

        if r.performance_issue_same && r.performance_issue_same_index >= performance_sample_count {
            diagnostics.push(Diagnostic::error(
                "error_invalid_test_settings",
                format!(
                    "Sample Idx to be repeated in performance_issue_same mode cannot be greater than loaded performance_sample_count. performance_issue_same_index: {} performance_sample_count: {}",
                    r.performance_issue_same_index, performance_sample_count
                ),
            ));
        }
        if r.performance_issue_unique && r.performance_issue_same {
            diagnostics.push(Diagnostic::error(
                "error_invalid_test_settings",
                format!(
                    "Performance_issue_unique and performance_issue_same, both cannot be true at the same time. performance_issue_unique: {} performance_issue_same: {}",
                    u8::from(r.performance_issue_unique),
                    u8::from(r.performance_issue_same)
                ),
            ));
        }

        let effective = EffectiveSettings {
            requested: r.clone(),
            scenario: r.scenario,
            mode: r.mode,
            samples_per_query,
            target_qps,
            target_latency_ns,
            target_latency_percentile,
            max_async_queries,
            target_duration_ms,
            min_duration_ms: r.min_duration_ms,
            max_duration_ms: r.max_duration_ms,
            min_query_count,
            max_query_count: r.max_query_count,
            min_sample_count,
            qsl_rng_seed: r.qsl_rng_seed,
            sample_index_rng_seed: r.sample_index_rng_seed,
            schedule_rng_seed: r.schedule_rng_seed,
            accuracy_log_rng_seed: r.accuracy_log_rng_seed,
            accuracy_log_probability: r.accuracy_log_probability,
            accuracy_log_sampling_target: r.accuracy_log_sampling_target,
            print_timestamps: r.print_timestamps,
            performance_issue_unique: r.performance_issue_unique,
            performance_issue_same: r.performance_issue_same,
            performance_issue_same_index: r.performance_issue_same_index,
            performance_sample_count,
            accuracy_sample_count,
            sample_concatenate_permutation: r.sample_concatenate_permutation,
            use_token_latencies: r.use_token_latencies,
            server_ttft_latency: r.server_ttft_latency,
            server_tpot_latency: r.server_tpot_latency,
            infer_token_latencies: r.infer_token_latencies,
            token_latency_scaling_factor: r.token_latency_scaling_factor,
        };
        (effective, diagnostics)
    }

    /// The probability that a performance-mode sample is copied to the accuracy log (§4.6).
    pub fn accuracy_log_probability_for_series(&self) -> f64 {
        if self.accuracy_log_sampling_target == 0 {
            return self.accuracy_log_probability;
        }
        let mut expected = (self.target_qps * self.min_duration_ms as f64 / 1000.0) as u64;
        let minimum = if self.scenario == TestScenario::Offline {
            self.min_sample_count
        } else {
            expected = expected.wrapping_mul(self.samples_per_query);
            self.min_query_count.wrapping_mul(self.samples_per_query)
        };
        let expected = expected.max(minimum);
        self.accuracy_log_sampling_target as f64 / expected as f64
    }
}

fn ms_to_seconds(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(scenario: TestScenario) -> TestSettings {
        TestSettings {
            scenario,
            ..TestSettings::default()
        }
    }

    #[test]
    fn offline_query_size_is_slack_times_duration_times_qps() {
        let mut s = settings(TestScenario::Offline);
        s.offline_expected_qps = 20_000.0;
        s.min_duration_ms = 500;
        s.min_query_count = 24_576;
        let (e, _) = EffectiveSettings::new(&s, 1024, 5000);
        assert_eq!(e.samples_per_query, 24_576);
        assert_eq!(e.min_query_count, 1);
        assert_eq!(e.target_duration_ms, 0);
        assert_eq!(e.min_sample_count, 24_576);
        s.min_duration_ms = 600_000;
        let (e, _) = EffectiveSettings::new(&s, 1024, 5000);
        assert_eq!(e.samples_per_query, 13_200_000);
    }

    #[test]
    fn single_stream_equal_issue_adds_a_full_set_even_on_a_multiple() {
        let mut s = settings(TestScenario::SingleStream);
        s.sample_concatenate_permutation = true;
        s.min_duration_ms = 0;
        s.min_query_count = 150;
        let (e, _) = EffectiveSettings::new(&s, 100, 300);
        assert_eq!(e.min_query_count, 200);
        s.min_query_count = 200;
        let (e, _) = EffectiveSettings::new(&s, 100, 300);
        assert_eq!(e.min_query_count, 300);
        // llama2-70b example: mqc = max(100, 2*0.5*100) = 100 -> 1000.
        s.min_query_count = 100;
        s.min_duration_ms = 500;
        s.single_stream_expected_latency_ns = 10e6;
        let (e, _) = EffectiveSettings::new(&s, 1000, 1000);
        assert_eq!(e.min_query_count, 1000);
    }

    #[test]
    fn negative_server_qps_keeps_one_and_reports() {
        let mut s = settings(TestScenario::Server);
        s.server_target_qps = -5.0;
        let (e, d) = EffectiveSettings::new(&s, 10, 10);
        assert_eq!(e.target_qps, 1.0);
        assert_eq!(d.len(), 1);
        assert!(d[0].message.contains("server_target_qps"));
    }

    #[test]
    fn sampling_target_sets_probability() {
        let mut s = settings(TestScenario::Server);
        s.server_target_qps = 100.0;
        s.min_duration_ms = 10_000;
        s.min_query_count = 100;
        s.accuracy_log_sampling_target = 500;
        let (e, _) = EffectiveSettings::new(&s, 10, 10);
        assert_eq!(e.accuracy_log_probability_for_series(), 0.5);
    }
}
