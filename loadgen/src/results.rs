//! Metrics and validity of a performance series (spec §4.7–4.8), computed as the official
//! `PerformanceSummary` computes them.

use serde::Serialize;

use super::early_stopping;
use super::effective::EffectiveSettings;
use super::settings::TestScenario;

/// The percentiles every summary reports besides the target one.
pub const REPORTED_PERCENTILES: [f64; 6] = [0.50, 0.90, 0.95, 0.97, 0.99, 0.999];

/// Statistics of one latency population, in ns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyStats {
    pub min_ns: i64,
    pub max_ns: i64,
    pub mean_ns: i64,
    pub target_percentile: f64,
    pub target_ns: i64,
    /// `(percentile, latency)` for each of [`REPORTED_PERCENTILES`].
    pub percentiles: Vec<(f64, i64)>,
}

impl LatencyStats {
    /// `sorted` ascending; `n` is the count the official code indexes and divides by (the
    /// sample count, which differs from `sorted.len()` only for malformed token runs).
    fn from_sorted(sorted: &[i64], n: usize, target_percentile: f64) -> Option<LatencyStats> {
        if sorted.is_empty() || n == 0 {
            return None;
        }
        let at = |p: f64| sorted[((n as f64 * p) as usize).min(sorted.len() - 1)];
        let sum: i128 = sorted.iter().map(|&l| i128::from(l)).sum();
        Some(LatencyStats {
            min_ns: sorted[0],
            max_ns: sorted[sorted.len() - 1],
            mean_ns: (sum / n as i128) as i64,
            target_percentile,
            target_ns: at(target_percentile),
            percentiles: REPORTED_PERCENTILES.iter().map(|&p| (p, at(p))).collect(),
        })
    }
}

/// Raw measurements of one performance series, latencies in ns.
#[derive(Debug, Clone, Default)]
pub(crate) struct PerformanceResult {
    pub(crate) sample_latencies: Vec<i64>,
    pub(crate) query_latencies: Vec<i64>,
    pub(crate) first_token_latencies: Vec<i64>,
    pub(crate) time_per_output_token: Vec<i64>,
    pub(crate) token_count: i64,
    pub(crate) queries_issued: u64,
    pub(crate) max_latency_s: f64,
    pub(crate) final_query_scheduled_time_s: f64,
    pub(crate) final_query_issued_time_s: f64,
    pub(crate) final_query_all_samples_done_time_s: f64,
    pub(crate) never_completed: u64,
    /// The SUT panicked or reported a failure during the series.
    pub(crate) sut_failure: Option<String>,
    /// Completions the engine refused so far (duplicates, unknown or late ids).
    pub(crate) refused_completions: u64,
}

/// Token-run statistics.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TokenSummary {
    pub token_count: i64,
    pub first_token: Option<LatencyStats>,
    pub time_per_output_token: Option<LatencyStats>,
    /// Not Offline: tokens / final_query_all_samples_done_time.
    pub completed_tokens_per_second: Option<f64>,
    /// Offline: tokens / max latency.
    pub tokens_per_second: Option<f64>,
    /// Not Offline: tokens / final_query_issued_time.
    pub tps_with_loadgen_overhead: Option<f64>,
    /// SingleStream: tokens / (mean latency in s × samples).
    pub tps_without_loadgen_overhead: Option<f64>,
    /// The official `result_token_throughput`: tokens per *nanosecond* (an upstream unit bug
    /// kept for compatibility).
    pub token_throughput_per_ns: Option<f64>,
}

/// The outcome of the early-stopping test, with the official text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EarlyStoppingReport {
    pub met: bool,
    /// Lines of the summary's "Early Stopping Result:" block (token runs: the TPOT test's).
    pub lines: Vec<String>,
    /// Token runs: the TTFT test's lines.
    pub ttft_lines: Option<Vec<String>>,
}

/// VALID or INVALID, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Validity {
    pub valid: bool,
    pub perf_constraints_met: bool,
    pub min_duration_met: bool,
    pub min_queries_met: bool,
    pub early_stopping_met: bool,
    /// Every sample issued in the series completed (the official LoadGen hangs otherwise).
    pub all_samples_completed: bool,
    /// The official recommendation strings for the failed checks, in the official order,
    /// followed by the engine's own (e.g. "N samples never completed").
    pub reasons: Vec<String>,
}

/// Everything the official `PerformanceSummary` reports for a performance series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerformanceSummary {
    pub scenario: TestScenario,
    pub sample_count: u64,
    pub query_count: u64,
    pub sample_latency: Option<LatencyStats>,
    /// MultiStream: per-query latency statistics.
    pub query_latency: Option<LatencyStats>,
    /// Server: latencies above the target.
    pub overlatency_query_count: Option<u64>,
    pub max_latency_s: f64,
    pub final_query_scheduled_time_s: f64,
    pub final_query_issued_time_s: f64,
    pub final_query_all_samples_done_time_s: f64,
    /// SingleStream.
    pub qps_with_loadgen_overhead: Option<f64>,
    pub qps_without_loadgen_overhead: Option<f64>,
    /// Server.
    pub scheduled_samples_per_second: Option<f64>,
    pub completed_samples_per_second: Option<f64>,
    /// Offline.
    pub samples_per_second: Option<f64>,
    /// SingleStream: the early-stopping estimate at the target percentile.
    pub early_stopping_latency_ss: Option<i64>,
    /// SingleStream: the 99th-percentile estimate; MultiStream: the target-percentile one.
    pub early_stopping_latency_ms: Option<i64>,
    pub tokens: Option<TokenSummary>,
    /// gptj-style inferred tokens/s (Offline) or completed tokens/s (Server).
    pub inferred_tokens_per_second: Option<f64>,
    pub early_stopping: EarlyStoppingReport,
    pub validity: Validity,
}

impl PerformanceSummary {
    /// The number the submission checker reads as this scenario's result.
    pub fn headline(&self) -> Option<f64> {
        match self.scenario {
            TestScenario::SingleStream => self.early_stopping_latency_ss.map(|v| v as f64),
            TestScenario::MultiStream => self.early_stopping_latency_ms.map(|v| v as f64),
            TestScenario::Server => self.completed_samples_per_second,
            TestScenario::Offline => self.samples_per_second,
        }
    }

    pub(crate) fn new(settings: &EffectiveSettings, mut pr: PerformanceResult) -> Self {
        let scenario = settings.scenario;
        let sample_count = pr.sample_latencies.len();
        pr.sample_latencies.sort_unstable();
        pr.query_latencies.sort_unstable();
        pr.first_token_latencies.sort_unstable();
        pr.time_per_output_token.sort_unstable();
        let percentile = settings.target_latency_percentile;

        let sample_latency =
            LatencyStats::from_sorted(&pr.sample_latencies, sample_count, percentile);
        let query_latency = (scenario == TestScenario::MultiStream)
            .then(|| {
                LatencyStats::from_sorted(&pr.query_latencies, pr.query_latencies.len(), percentile)
            })
            .flatten();
        let overlatency_query_count = (scenario == TestScenario::Server).then(|| {
            let bound = settings.target_latency_ns as i64;
            pr.sample_latencies.iter().filter(|&&l| l > bound).count() as u64
        });

        let n = sample_count as f64;
        let mut summary = PerformanceSummary {
            scenario,
            sample_count: sample_count as u64,
            query_count: pr.queries_issued,
            sample_latency,
            query_latency,
            overlatency_query_count,
            max_latency_s: pr.max_latency_s,
            final_query_scheduled_time_s: pr.final_query_scheduled_time_s,
            final_query_issued_time_s: pr.final_query_issued_time_s,
            final_query_all_samples_done_time_s: pr.final_query_all_samples_done_time_s,
            qps_with_loadgen_overhead: None,
            qps_without_loadgen_overhead: None,
            scheduled_samples_per_second: None,
            completed_samples_per_second: None,
            samples_per_second: None,
            early_stopping_latency_ss: None,
            early_stopping_latency_ms: None,
            tokens: None,
            inferred_tokens_per_second: None,
            early_stopping: EarlyStoppingReport {
                met: true,
                lines: Vec::new(),
                ttft_lines: None,
            },
            validity: Validity {
                valid: false,
                perf_constraints_met: true,
                min_duration_met: false,
                min_queries_met: false,
                early_stopping_met: true,
                all_samples_completed: pr.never_completed == 0,
                reasons: Vec::new(),
            },
        };
        match scenario {
            TestScenario::SingleStream => {
                summary.qps_with_loadgen_overhead = Some((n - 1.0) / pr.final_query_issued_time_s);
                summary.qps_without_loadgen_overhead = summary
                    .sample_latency
                    .as_ref()
                    .map(|s| 1.0 / (s.mean_ns as f64 / 1e9));
            }
            TestScenario::Server => {
                summary.scheduled_samples_per_second =
                    Some((n - 1.0) / pr.final_query_scheduled_time_s);
                summary.completed_samples_per_second =
                    Some((n - 1.0) / pr.final_query_all_samples_done_time_s);
            }
            TestScenario::Offline => {
                summary.samples_per_second = Some(n / pr.max_latency_s);
            }
            TestScenario::MultiStream => {}
        }
        if settings.use_token_latencies {
            summary.tokens = Some(token_summary(settings, &pr, sample_count));
        }
        if settings.infer_token_latencies {
            let factor = settings.token_latency_scaling_factor as f64;
            summary.inferred_tokens_per_second = match scenario {
                TestScenario::Offline => Some(factor * n / pr.max_latency_s),
                TestScenario::Server => {
                    Some(factor * (n - 1.0) / pr.final_query_all_samples_done_time_s)
                }
                _ => None,
            };
        }

        summary.evaluate_validity(settings, &pr);
        summary
    }

    fn evaluate_validity(&mut self, settings: &EffectiveSettings, pr: &PerformanceResult) {
        let scenario = settings.scenario;
        let min_duration_s = settings.min_duration_ms as f64 / 1000.0;
        let min_duration_met = match scenario {
            TestScenario::Offline => pr.max_latency_s >= min_duration_s,
            TestScenario::Server => pr.final_query_scheduled_time_s >= min_duration_s,
            TestScenario::SingleStream | TestScenario::MultiStream => {
                pr.final_query_issued_time_s >= min_duration_s
            }
        };
        let min_queries_met = pr.queries_issued >= settings.min_query_count
            && self.sample_count >= settings.min_sample_count;

        // Early stopping: non-token runs test the sample (MultiStream: query) latencies against
        // the target latency; token runs test TPOT, then TTFT only if TPOT passed.
        let queries = pr.queries_issued;
        let early_stopping_met;
        if !settings.use_token_latencies {
            let outcome = self.early_stopping_on(
                settings,
                queries,
                &pr.sample_latencies,
                &pr.query_latencies,
                settings.target_latency_ns as i64,
            );
            early_stopping_met = outcome.0;
            self.early_stopping = EarlyStoppingReport {
                met: outcome.0,
                lines: outcome.1,
                ttft_lines: None,
            };
        } else {
            let tpot = self.early_stopping_on(
                settings,
                queries,
                &pr.time_per_output_token,
                &pr.query_latencies,
                settings.server_tpot_latency as i64,
            );
            let ttft = if tpot.0 {
                self.early_stopping_on(
                    settings,
                    queries,
                    &pr.first_token_latencies,
                    &pr.query_latencies,
                    settings.server_ttft_latency as i64,
                )
            } else {
                (false, Vec::new())
            };
            early_stopping_met = tpot.0 && ttft.0;
            self.early_stopping = EarlyStoppingReport {
                met: early_stopping_met,
                lines: tpot.1,
                ttft_lines: Some(ttft.1),
            };
        }

        let mut perf_reasons = Vec::new();
        if scenario == TestScenario::Server {
            if !settings.use_token_latencies {
                if self
                    .sample_latency
                    .as_ref()
                    .is_some_and(|s| s.target_ns > settings.target_latency_ns as i64)
                {
                    perf_reasons.push("Reduce target QPS to improve latency.".to_string());
                }
            } else if let Some(tokens) = &self.tokens {
                if tokens
                    .first_token
                    .as_ref()
                    .is_some_and(|s| s.target_ns > settings.server_ttft_latency as i64)
                {
                    perf_reasons.push(
                        "TTFT constrain not met: Reduce target QPS to improve latency.".to_string(),
                    );
                }
                if tokens
                    .time_per_output_token
                    .as_ref()
                    .is_some_and(|s| s.target_ns > settings.server_tpot_latency as i64)
                {
                    perf_reasons.push(
                        "TPOT constrain not met: Reduce target QPS to improve latency.".to_string(),
                    );
                }
            }
        }
        let perf_constraints_met = perf_reasons.is_empty();
        let all_samples_completed = pr.never_completed == 0;

        let mut reasons = perf_reasons;
        if !min_duration_met {
            reasons.push(
                match scenario {
                    TestScenario::SingleStream | TestScenario::MultiStream => {
                        "Decrease the expected latency so the loadgen pre-generates more queries."
                    }
                    TestScenario::Server => {
                        "Increase the target QPS so the loadgen pre-generates more queries."
                    }
                    TestScenario::Offline => {
                        "Increase expected QPS so the loadgen pre-generates a larger (coalesced) query."
                    }
                }
                .to_string(),
            );
        }
        if !min_queries_met {
            reasons.push("The test exited early, before enough queries were issued.".to_string());
        }
        if !all_samples_completed {
            reasons.push(format!("{} samples never completed.", pr.never_completed));
        }
        if let Some(failure) = &pr.sut_failure {
            reasons.push(format!("The SUT failed: {failure}"));
        }
        if pr.refused_completions > 0 {
            reasons.push(format!(
                "The SUT sent {} completions for samples not outstanding (completed twice, or never issued).",
                pr.refused_completions
            ));
        }
        self.validity = Validity {
            valid: min_duration_met
                && min_queries_met
                && perf_constraints_met
                && early_stopping_met
                && all_samples_completed
                && pr.sut_failure.is_none()
                && pr.refused_completions == 0,
            perf_constraints_met,
            min_duration_met,
            min_queries_met,
            early_stopping_met,
            all_samples_completed,
            reasons,
        };
    }

    /// One official `EarlyStopping` evaluation; `latencies` sorted ascending. A run with
    /// samples that never completed has fewer latencies than queries: it is INVALID anyway,
    /// and the test is made on what was measured.
    fn early_stopping_on(
        &mut self,
        settings: &EffectiveSettings,
        queries: u64,
        latencies: &[i64],
        query_latencies: &[i64],
        target_latency_ns: i64,
    ) -> (bool, Vec<String>) {
        let p = settings.target_latency_percentile;
        let report = match settings.scenario {
            TestScenario::Offline => return (true, Vec::new()),
            TestScenario::Server => {
                early_stopping::server_report(queries, latencies, target_latency_ns, p)
            }
            TestScenario::SingleStream => {
                let n = queries.min(latencies.len() as u64);
                early_stopping::single_stream_report(n, p, latencies)
            }
            TestScenario::MultiStream => {
                let n = queries.min(query_latencies.len() as u64);
                early_stopping::multi_stream_report(n, p, query_latencies)
            }
        };
        if report.latency_ss.is_some() {
            self.early_stopping_latency_ss = report.latency_ss;
        }
        if report.latency_ms.is_some() {
            self.early_stopping_latency_ms = report.latency_ms;
        }
        (report.passed, report.lines)
    }
}

fn token_summary(
    settings: &EffectiveSettings,
    pr: &PerformanceResult,
    sample_count: usize,
) -> TokenSummary {
    let scenario = settings.scenario;
    let percentile = settings.target_latency_percentile;
    let n = sample_count as f64;
    let tokens = pr.token_count as f64;
    let first_token =
        LatencyStats::from_sorted(&pr.first_token_latencies, sample_count, percentile);
    let time_per_output_token =
        LatencyStats::from_sorted(&pr.time_per_output_token, sample_count, percentile);
    let mean_s = pr
        .sample_latencies
        .iter()
        .map(|&l| i128::from(l))
        .sum::<i128>()
        .checked_div(sample_count as i128)
        .unwrap_or(0) as f64;
    TokenSummary {
        token_count: pr.token_count,
        first_token,
        time_per_output_token,
        completed_tokens_per_second: (scenario != TestScenario::Offline)
            .then(|| tokens / pr.final_query_all_samples_done_time_s),
        tokens_per_second: (scenario == TestScenario::Offline).then(|| tokens / pr.max_latency_s),
        tps_with_loadgen_overhead: (scenario != TestScenario::Offline)
            .then(|| tokens / pr.final_query_issued_time_s),
        tps_without_loadgen_overhead: (scenario == TestScenario::SingleStream)
            .then(|| tokens / (mean_s / 1e9 * n)),
        token_throughput_per_ns: (scenario != TestScenario::Offline).then(|| tokens / (mean_s * n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::TestSettings;

    fn effective(requested: TestSettings) -> EffectiveSettings {
        EffectiveSettings::new(&requested, 1024, 5000).0
    }

    fn result(latencies: Vec<i64>, queries: u64) -> PerformanceResult {
        PerformanceResult {
            max_latency_s: *latencies.iter().max().unwrap() as f64 / 1e9,
            sample_latencies: latencies,
            queries_issued: queries,
            ..PerformanceResult::default()
        }
    }

    #[test]
    fn percentiles_take_element_floor_n_p_and_mean_truncates() {
        let settings = effective(TestSettings {
            min_duration_ms: 0,
            min_query_count: 10,
            ..TestSettings::default()
        });
        let latencies: Vec<i64> = (1..=10).rev().map(|v| v * 100 + 1).collect();
        let summary = PerformanceSummary::new(&settings, result(latencies, 10));
        let stats = summary.sample_latency.unwrap();
        assert_eq!((stats.min_ns, stats.max_ns), (101, 1001));
        assert_eq!(stats.mean_ns, 551);
        // p90 of 10 sorted values is element 9.
        assert_eq!(stats.target_ns, 1001);
        assert_eq!(stats.percentiles[0], (0.50, 601));
        assert_eq!(stats.percentiles[5], (0.999, 1001));
    }

    #[test]
    fn single_stream_needs_64_queries_for_early_stopping() {
        let settings = effective(TestSettings {
            min_duration_ms: 0,
            min_query_count: 10,
            ..TestSettings::default()
        });
        let mut pr = result(vec![1000; 63], 63);
        pr.final_query_issued_time_s = 1.0;
        let summary = PerformanceSummary::new(&settings, pr);
        assert!(!summary.validity.valid);
        assert!(!summary.validity.early_stopping_met);
        // An early-stopping failure adds no reason, as upstream.
        assert!(summary.validity.reasons.is_empty());
        assert_eq!(
            summary.early_stopping.lines,
            [
                " * Only processed 63 queries.",
                " * Need to process at least 64 queries for early stopping."
            ]
        );
        let mut pr = result(vec![1000; 64], 64);
        pr.final_query_issued_time_s = 1.0;
        let summary = PerformanceSummary::new(&settings, pr);
        assert!(summary.validity.valid, "{:?}", summary.validity);
        assert_eq!(summary.early_stopping_latency_ss, Some(1000));
        assert_eq!(summary.qps_with_loadgen_overhead, Some(63.0));
        assert_eq!(summary.qps_without_loadgen_overhead, Some(1e6));
    }

    #[test]
    fn server_counts_latencies_above_the_bound_and_checks_the_percentile() {
        let settings = effective(TestSettings {
            scenario: TestScenario::Server,
            server_target_latency_ns: 1000,
            min_duration_ms: 1000,
            min_query_count: 100,
            ..TestSettings::default()
        });
        let mut latencies = vec![500; 990];
        latencies.extend([1000; 5]);
        latencies.extend([1001; 5]);
        let mut pr = result(latencies, 1000);
        pr.final_query_scheduled_time_s = 0.5;
        pr.final_query_all_samples_done_time_s = 0.999;
        let summary = PerformanceSummary::new(&settings, pr);
        assert_eq!(summary.overlatency_query_count, Some(5));
        assert_eq!(summary.sample_latency.as_ref().unwrap().target_ns, 1000);
        assert!(summary.validity.perf_constraints_met);
        assert_eq!(summary.completed_samples_per_second, Some(999.0 / 0.999));
        assert_eq!(summary.scheduled_samples_per_second, Some(999.0 / 0.5));
        assert!(!summary.validity.min_duration_met);
        assert_eq!(
            summary.validity.reasons,
            ["Increase the target QPS so the loadgen pre-generates more queries."]
        );

        let mut latencies = vec![500; 980];
        latencies.extend([5000; 20]);
        let mut pr = result(latencies, 1000);
        pr.final_query_scheduled_time_s = 2.0;
        pr.final_query_all_samples_done_time_s = 2.0;
        let summary = PerformanceSummary::new(&settings, pr);
        assert!(!summary.validity.perf_constraints_met);
        assert!(!summary.validity.early_stopping_met);
        assert_eq!(
            summary.validity.reasons,
            ["Reduce target QPS to improve latency."]
        );
        assert_eq!(summary.early_stopping.lines[0], " * Run unsuccessful.");
    }

    #[test]
    fn offline_throughput_is_samples_over_the_longest_latency() {
        let settings = effective(TestSettings {
            scenario: TestScenario::Offline,
            min_duration_ms: 1000,
            min_query_count: 4,
            offline_expected_qps: 1.0,
            ..TestSettings::default()
        });
        let summary = PerformanceSummary::new(
            &settings,
            result(
                vec![250_000_000, 500_000_000, 2_000_000_000, 1_000_000_000],
                1,
            ),
        );
        assert_eq!(summary.samples_per_second, Some(2.0));
        assert!(summary.validity.valid, "{:?}", summary.validity);
        assert_eq!(summary.headline(), Some(2.0));
    }

    #[test]
    fn samples_that_never_completed_make_the_run_invalid() {
        let settings = effective(TestSettings {
            scenario: TestScenario::Offline,
            min_duration_ms: 0,
            min_query_count: 3,
            ..TestSettings::default()
        });
        let mut pr = result(vec![1, 2, 3], 1);
        pr.never_completed = 2;
        let summary = PerformanceSummary::new(&settings, pr);
        assert!(!summary.validity.valid);
        assert!(!summary.validity.all_samples_completed);
        assert_eq!(
            summary.validity.reasons.last().unwrap(),
            "2 samples never completed."
        );
    }
}
