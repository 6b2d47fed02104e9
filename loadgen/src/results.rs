//! Metrics and validity of a performance series (spec §4.7–4.8), computed as the official
//! `PerformanceSummary` computes them.

use serde::Serialize;

use super::early_stopping;
use super::effective::EffectiveSettings;
use super::ranked::RankedLatencies;
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
    /// `n` is the count the official code indexes and divides by (the sample count, which
    /// differs from `latencies.len()` only for malformed token runs).
    fn from_ranked(
        latencies: &RankedLatencies,
        n: usize,
        target_percentile: f64,
    ) -> Option<LatencyStats> {
        let len = latencies.len();
        if n == 0 {
            return None;
        }
        let (min_ns, max_ns, sum) = latencies.min_max_sum()?;
        let at = |p: f64| latencies.at(((n as f64 * p) as usize).min(len - 1));
        // Ascending ranks, so each selection only searches above the one before.
        let percentiles = REPORTED_PERCENTILES.iter().map(|&p| (p, at(p))).collect();
        Some(LatencyStats {
            min_ns,
            max_ns,
            mean_ns: (sum / n as i128) as i64,
            target_percentile,
            target_ns: at(target_percentile),
            percentiles,
        })
    }
}

/// Raw measurements of one performance series, latencies in ns.
#[derive(Debug, Clone, Default)]
pub(crate) struct PerformanceResult {
    pub(crate) sample_latencies: RankedLatencies,
    pub(crate) query_latencies: RankedLatencies,
    pub(crate) first_token_latencies: RankedLatencies,
    pub(crate) time_per_output_token: RankedLatencies,
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
    /// The test was aborted (`abort_test`, a signal), whatever it had measured by then.
    pub(crate) aborted: bool,
    /// The latest completion of the series (its start if none), engine clock ns.
    pub(crate) last_completion_ns: i64,
}

/// Token-run latency statistics (use_token_latencies); the token throughputs are in
/// [`ScenarioMetrics`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TokenSummary {
    pub token_count: i64,
    pub first_token: Option<LatencyStats>,
    pub time_per_output_token: Option<LatencyStats>,
}

/// The token throughputs every scenario but Offline reports.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenRates {
    /// tokens / final_query_all_samples_done_time.
    pub completed_tokens_per_second: f64,
    /// tokens / final_query_issued_time.
    pub tps_with_loadgen_overhead: f64,
    /// The official `result_token_throughput`: tokens per *nanosecond* (an upstream unit bug
    /// kept for compatibility).
    pub token_throughput_per_ns: f64,
}

/// SingleStream's token throughputs: the common ones and one without the LoadGen overhead.
#[derive(Debug, Clone, PartialEq)]
pub struct SingleStreamTokenRates {
    pub rates: TokenRates,
    /// tokens / (mean sample latency in s × samples).
    pub tps_without_loadgen_overhead: f64,
}

/// The throughputs and early-stopping estimates one scenario reports, computed once from the
/// measurements; the summary, the detail log and `result.json` only print them.
///
/// The divisions are plain IEEE ones, as upstream's: a run without samples or with a zero
/// duration yields the inf/NaN the official summary prints (`result.json` writes them as null).
#[derive(Debug, Clone, PartialEq)]
pub enum ScenarioMetrics {
    SingleStream {
        /// (samples − 1) / final_query_issued_time.
        qps_with_loadgen_overhead: f64,
        /// 1 / mean sample latency in s; inf without samples (no mean, taken as 0).
        qps_without_loadgen_overhead: f64,
        /// The early-stopping estimate at the target percentile: the headline.
        early_stopping_latency_ss: Option<i64>,
        /// The early-stopping estimate at the 99th percentile.
        early_stopping_latency_ms: Option<i64>,
        /// use_token_latencies.
        tokens: Option<SingleStreamTokenRates>,
    },
    MultiStream {
        /// The early-stopping estimate of the query latency at the target percentile: the
        /// headline.
        early_stopping_latency_ms: Option<i64>,
        /// use_token_latencies.
        tokens: Option<TokenRates>,
    },
    Server {
        /// (samples − 1) / final_query_scheduled_time.
        scheduled_samples_per_second: f64,
        /// (samples − 1) / final_query_all_samples_done_time: the headline.
        completed_samples_per_second: f64,
        /// use_token_latencies.
        tokens: Option<TokenRates>,
        /// infer_token_latencies (gptj-style): scaling factor × completed samples per second.
        inferred_completed_tokens_per_second: Option<f64>,
    },
    Offline {
        /// samples / max latency: the headline.
        samples_per_second: f64,
        /// use_token_latencies: tokens / max latency.
        tokens_per_second: Option<f64>,
        /// infer_token_latencies (gptj-style): scaling factor × samples per second.
        inferred_tokens_per_second: Option<f64>,
    },
}

impl ScenarioMetrics {
    fn new(
        settings: &EffectiveSettings,
        pr: &PerformanceResult,
        sample_latency: Option<&LatencyStats>,
        estimates: EarlyStoppingEstimates,
    ) -> Self {
        let n = pr.sample_latencies.len() as f64;
        let tokens = pr.token_count as f64;
        let mean_latency_ns = sample_latency.map_or(0, |s| s.mean_ns) as f64;
        let use_tokens = settings.use_token_latencies;
        let inference_factor = settings
            .infer_token_latencies
            .then_some(settings.token_latency_scaling_factor as f64);
        let token_rates = || TokenRates {
            completed_tokens_per_second: tokens / pr.final_query_all_samples_done_time_s,
            tps_with_loadgen_overhead: tokens / pr.final_query_issued_time_s,
            token_throughput_per_ns: tokens / (mean_latency_ns * n),
        };
        match settings.scenario {
            TestScenario::SingleStream => ScenarioMetrics::SingleStream {
                qps_with_loadgen_overhead: (n - 1.0) / pr.final_query_issued_time_s,
                qps_without_loadgen_overhead: 1.0 / (mean_latency_ns / 1e9),
                early_stopping_latency_ss: estimates.latency_ss,
                early_stopping_latency_ms: estimates.latency_ms,
                tokens: use_tokens.then(|| SingleStreamTokenRates {
                    rates: token_rates(),
                    tps_without_loadgen_overhead: tokens / (mean_latency_ns / 1e9 * n),
                }),
            },
            TestScenario::MultiStream => ScenarioMetrics::MultiStream {
                early_stopping_latency_ms: estimates.latency_ms,
                tokens: use_tokens.then(token_rates),
            },
            TestScenario::Server => ScenarioMetrics::Server {
                scheduled_samples_per_second: (n - 1.0) / pr.final_query_scheduled_time_s,
                completed_samples_per_second: (n - 1.0) / pr.final_query_all_samples_done_time_s,
                tokens: use_tokens.then(token_rates),
                inferred_completed_tokens_per_second: inference_factor
                    .map(|factor| factor * (n - 1.0) / pr.final_query_all_samples_done_time_s),
            },
            TestScenario::Offline => ScenarioMetrics::Offline {
                samples_per_second: n / pr.max_latency_s,
                tokens_per_second: use_tokens.then(|| tokens / pr.max_latency_s),
                inferred_tokens_per_second: inference_factor
                    .map(|factor| factor * n / pr.max_latency_s),
            },
        }
    }

    /// The token throughputs of a token run not in Offline.
    pub fn token_rates(&self) -> Option<&TokenRates> {
        match self {
            ScenarioMetrics::SingleStream { tokens, .. } => tokens.as_ref().map(|t| &t.rates),
            ScenarioMetrics::MultiStream { tokens, .. }
            | ScenarioMetrics::Server { tokens, .. } => tokens.as_ref(),
            ScenarioMetrics::Offline { .. } => None,
        }
    }
}

/// The early-stopping latency estimates of a series (SingleStream: both; MultiStream:
/// `latency_ms`; Server and Offline: none).
struct EarlyStoppingEstimates {
    latency_ss: Option<i64>,
    latency_ms: Option<i64>,
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
#[derive(Debug, Clone, PartialEq)]
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
    /// The numbers this scenario reports; its variant is `scenario`'s.
    pub metrics: ScenarioMetrics,
    pub tokens: Option<TokenSummary>,
    pub early_stopping: EarlyStoppingReport,
    pub validity: Validity,
}

impl PerformanceSummary {
    /// The number the submission checker reads as this scenario's result.
    pub fn headline(&self) -> Option<f64> {
        match &self.metrics {
            ScenarioMetrics::SingleStream {
                early_stopping_latency_ss,
                ..
            } => early_stopping_latency_ss.map(|v| v as f64),
            ScenarioMetrics::MultiStream {
                early_stopping_latency_ms,
                ..
            } => early_stopping_latency_ms.map(|v| v as f64),
            ScenarioMetrics::Server {
                completed_samples_per_second,
                ..
            } => Some(*completed_samples_per_second),
            ScenarioMetrics::Offline {
                samples_per_second, ..
            } => Some(*samples_per_second),
        }
    }

    pub(crate) fn new(settings: &EffectiveSettings, pr: PerformanceResult) -> Self {
        let scenario = settings.scenario;
        let sample_count = pr.sample_latencies.len();
        let percentile = settings.target_latency_percentile;

        let sample_latency =
            LatencyStats::from_ranked(&pr.sample_latencies, sample_count, percentile);
        let query_latency = (scenario == TestScenario::MultiStream)
            .then(|| {
                LatencyStats::from_ranked(&pr.query_latencies, pr.query_latencies.len(), percentile)
            })
            .flatten();
        let overlatency_query_count = (scenario == TestScenario::Server).then(|| {
            let bound = settings.target_latency_ns as i64;
            pr.sample_latencies.count_above(bound)
        });
        let tokens = settings
            .use_token_latencies
            .then(|| token_summary(settings, &pr, sample_count));

        let (early_stopping, estimates) = evaluate_early_stopping(settings, &pr);
        let metrics = ScenarioMetrics::new(settings, &pr, sample_latency.as_ref(), estimates);
        let validity = evaluate_validity(
            settings,
            &pr,
            sample_latency.as_ref(),
            tokens.as_ref(),
            early_stopping.met,
        );
        PerformanceSummary {
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
            metrics,
            tokens,
            early_stopping,
            validity,
        }
    }
}

/// Early stopping: non-token runs test the sample (MultiStream: query) latencies against the
/// target latency; token runs test TPOT, then TTFT only if TPOT passed. The estimates are the
/// last test's that made them.
fn evaluate_early_stopping(
    settings: &EffectiveSettings,
    pr: &PerformanceResult,
) -> (EarlyStoppingReport, EarlyStoppingEstimates) {
    if !settings.use_token_latencies {
        let report = early_stopping_on(
            settings,
            pr,
            &pr.sample_latencies,
            settings.target_latency_ns as i64,
        );
        let estimates = EarlyStoppingEstimates {
            latency_ss: report.latency_ss,
            latency_ms: report.latency_ms,
        };
        let report = EarlyStoppingReport {
            met: report.passed,
            lines: report.lines,
            ttft_lines: None,
        };
        return (report, estimates);
    }
    let tpot = early_stopping_on(
        settings,
        pr,
        &pr.time_per_output_token,
        settings.server_tpot_latency as i64,
    );
    let ttft = tpot.passed.then(|| {
        early_stopping_on(
            settings,
            pr,
            &pr.first_token_latencies,
            settings.server_ttft_latency as i64,
        )
    });
    let estimates = EarlyStoppingEstimates {
        latency_ss: ttft.as_ref().and_then(|r| r.latency_ss).or(tpot.latency_ss),
        latency_ms: ttft.as_ref().and_then(|r| r.latency_ms).or(tpot.latency_ms),
    };
    let report = EarlyStoppingReport {
        met: tpot.passed && ttft.as_ref().is_some_and(|r| r.passed),
        lines: tpot.lines,
        ttft_lines: Some(ttft.map_or_else(Vec::new, |r| r.lines)),
    };
    (report, estimates)
}

/// One official `EarlyStopping` evaluation; `latencies` sorted ascending. A run with samples
/// that never completed has fewer latencies than queries: it is INVALID anyway, and the test is
/// made on what was measured.
fn early_stopping_on(
    settings: &EffectiveSettings,
    pr: &PerformanceResult,
    latencies: &RankedLatencies,
    target_latency_ns: i64,
) -> early_stopping::EarlyStoppingReport {
    let p = settings.target_latency_percentile;
    let queries = pr.queries_issued;
    match settings.scenario {
        // Offline has no early-stopping test: it always passes, without text.
        TestScenario::Offline => early_stopping::EarlyStoppingReport {
            passed: true,
            lines: Vec::new(),
            latency_ss: None,
            latency_ms: None,
        },
        TestScenario::Server => {
            let overlatency = latencies.count_above(target_latency_ns);
            early_stopping::server_report_for(queries, overlatency, p)
        }
        TestScenario::SingleStream => {
            let n = queries.min(latencies.len() as u64);
            early_stopping::single_stream_report_by(n, p, |rank| latencies.at(rank))
        }
        TestScenario::MultiStream => {
            let n = queries.min(pr.query_latencies.len() as u64);
            early_stopping::multi_stream_report_by(n, p, |rank| pr.query_latencies.at(rank))
        }
    }
}

fn evaluate_validity(
    settings: &EffectiveSettings,
    pr: &PerformanceResult,
    sample_latency: Option<&LatencyStats>,
    tokens: Option<&TokenSummary>,
    early_stopping_met: bool,
) -> Validity {
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
        && pr.sample_latencies.len() as u64 >= settings.min_sample_count;

    let mut perf_reasons = Vec::new();
    if scenario == TestScenario::Server {
        if !settings.use_token_latencies {
            if sample_latency.is_some_and(|s| s.target_ns > settings.target_latency_ns as i64) {
                perf_reasons.push("Reduce target QPS to improve latency.".to_string());
            }
        } else if let Some(tokens) = tokens {
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
    if pr.aborted {
        reasons.push("The test was aborted before its end.".to_string());
    }
    if pr.refused_completions > 0 {
        reasons.push(format!(
            "The SUT sent {} completions for samples not outstanding (completed twice, or never issued).",
            pr.refused_completions
        ));
    }
    Validity {
        valid: min_duration_met
            && min_queries_met
            && perf_constraints_met
            && early_stopping_met
            && all_samples_completed
            && pr.sut_failure.is_none()
            && !pr.aborted
            && pr.refused_completions == 0,
        perf_constraints_met,
        min_duration_met,
        min_queries_met,
        early_stopping_met,
        all_samples_completed,
        reasons,
    }
}

fn token_summary(
    settings: &EffectiveSettings,
    pr: &PerformanceResult,
    sample_count: usize,
) -> TokenSummary {
    let percentile = settings.target_latency_percentile;
    TokenSummary {
        token_count: pr.token_count,
        first_token: LatencyStats::from_ranked(&pr.first_token_latencies, sample_count, percentile),
        time_per_output_token: LatencyStats::from_ranked(
            &pr.time_per_output_token,
            sample_count,
            percentile,
        ),
    }
}

/// `result.json`'s `performance` object: the metrics spread over the flat per-scenario keys it
/// has always had (the schema and host tools read them), null where a scenario reports none.
impl Serialize for PerformanceSummary {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut flat = FlatMetrics::default();
        let mut token_rates = FlatTokenRates::default();
        let mut inferred_tokens_per_second = None;
        match &self.metrics {
            ScenarioMetrics::SingleStream {
                qps_with_loadgen_overhead,
                qps_without_loadgen_overhead,
                early_stopping_latency_ss,
                early_stopping_latency_ms,
                tokens,
            } => {
                flat.qps_with_loadgen_overhead = Some(*qps_with_loadgen_overhead);
                flat.qps_without_loadgen_overhead = Some(*qps_without_loadgen_overhead);
                flat.early_stopping_latency_ss = *early_stopping_latency_ss;
                flat.early_stopping_latency_ms = *early_stopping_latency_ms;
                token_rates.tps_without_loadgen_overhead =
                    tokens.as_ref().map(|t| t.tps_without_loadgen_overhead);
            }
            ScenarioMetrics::MultiStream {
                early_stopping_latency_ms,
                ..
            } => flat.early_stopping_latency_ms = *early_stopping_latency_ms,
            ScenarioMetrics::Server {
                scheduled_samples_per_second,
                completed_samples_per_second,
                inferred_completed_tokens_per_second,
                ..
            } => {
                flat.scheduled_samples_per_second = Some(*scheduled_samples_per_second);
                flat.completed_samples_per_second = Some(*completed_samples_per_second);
                inferred_tokens_per_second = *inferred_completed_tokens_per_second;
            }
            ScenarioMetrics::Offline {
                samples_per_second,
                tokens_per_second,
                inferred_tokens_per_second: inferred,
            } => {
                flat.samples_per_second = Some(*samples_per_second);
                token_rates.tokens_per_second = *tokens_per_second;
                inferred_tokens_per_second = *inferred;
            }
        }
        if let Some(rates) = self.metrics.token_rates() {
            token_rates.completed_tokens_per_second = Some(rates.completed_tokens_per_second);
            token_rates.tps_with_loadgen_overhead = Some(rates.tps_with_loadgen_overhead);
            token_rates.token_throughput_per_ns = Some(rates.token_throughput_per_ns);
        }
        PerformanceSummaryJson {
            scenario: self.scenario,
            sample_count: self.sample_count,
            query_count: self.query_count,
            sample_latency: self.sample_latency.as_ref(),
            query_latency: self.query_latency.as_ref(),
            overlatency_query_count: self.overlatency_query_count,
            max_latency_s: self.max_latency_s,
            final_query_scheduled_time_s: self.final_query_scheduled_time_s,
            final_query_issued_time_s: self.final_query_issued_time_s,
            final_query_all_samples_done_time_s: self.final_query_all_samples_done_time_s,
            metrics: flat,
            tokens: self.tokens.as_ref().map(|latencies| TokenSummaryJson {
                latencies,
                rates: token_rates,
            }),
            inferred_tokens_per_second,
            early_stopping: &self.early_stopping,
            validity: &self.validity,
        }
        .serialize(serializer)
    }
}

/// The fields in `result.json`'s key order, which readers of older files may rely on.
#[derive(Serialize)]
struct PerformanceSummaryJson<'a> {
    scenario: TestScenario,
    sample_count: u64,
    query_count: u64,
    sample_latency: Option<&'a LatencyStats>,
    query_latency: Option<&'a LatencyStats>,
    overlatency_query_count: Option<u64>,
    max_latency_s: f64,
    final_query_scheduled_time_s: f64,
    final_query_issued_time_s: f64,
    final_query_all_samples_done_time_s: f64,
    #[serde(flatten)]
    metrics: FlatMetrics,
    tokens: Option<TokenSummaryJson<'a>>,
    inferred_tokens_per_second: Option<f64>,
    early_stopping: &'a EarlyStoppingReport,
    validity: &'a Validity,
}

#[derive(Default, Serialize)]
struct FlatMetrics {
    qps_with_loadgen_overhead: Option<f64>,
    qps_without_loadgen_overhead: Option<f64>,
    scheduled_samples_per_second: Option<f64>,
    completed_samples_per_second: Option<f64>,
    samples_per_second: Option<f64>,
    early_stopping_latency_ss: Option<i64>,
    early_stopping_latency_ms: Option<i64>,
}

/// `tokens`: the latency statistics, then every scenario's token-rate keys.
#[derive(Serialize)]
struct TokenSummaryJson<'a> {
    #[serde(flatten)]
    latencies: &'a TokenSummary,
    #[serde(flatten)]
    rates: FlatTokenRates,
}

#[derive(Default, Serialize)]
struct FlatTokenRates {
    completed_tokens_per_second: Option<f64>,
    tokens_per_second: Option<f64>,
    tps_with_loadgen_overhead: Option<f64>,
    tps_without_loadgen_overhead: Option<f64>,
    token_throughput_per_ns: Option<f64>,
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
            sample_latencies: latencies.into(),
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
        assert_eq!(
            summary.metrics,
            ScenarioMetrics::SingleStream {
                qps_with_loadgen_overhead: 63.0,
                qps_without_loadgen_overhead: 1e6,
                early_stopping_latency_ss: Some(1000),
                early_stopping_latency_ms: None,
                tokens: None,
            }
        );
        assert_eq!(summary.headline(), Some(1000.0));
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
        assert_eq!(
            summary.metrics,
            ScenarioMetrics::Server {
                scheduled_samples_per_second: 999.0 / 0.5,
                completed_samples_per_second: 999.0 / 0.999,
                tokens: None,
                inferred_completed_tokens_per_second: None,
            }
        );
        assert_eq!(summary.headline(), Some(999.0 / 0.999));
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
        assert_eq!(
            summary.metrics,
            ScenarioMetrics::Offline {
                samples_per_second: 2.0,
                tokens_per_second: None,
                inferred_tokens_per_second: None,
            }
        );
        assert!(summary.validity.valid, "{:?}", summary.validity);
        assert_eq!(summary.headline(), Some(2.0));
    }

    #[test]
    fn server_token_metrics_are_computed_from_the_measurements() {
        let settings = effective(TestSettings {
            scenario: TestScenario::Server,
            use_token_latencies: true,
            infer_token_latencies: true,
            token_latency_scaling_factor: 10,
            min_duration_ms: 0,
            min_query_count: 4,
            ..TestSettings::default()
        });
        let mut pr = result(vec![100, 200, 300, 400], 4);
        pr.token_count = 60;
        pr.first_token_latencies = vec![10; 4].into();
        pr.time_per_output_token = vec![1; 4].into();
        pr.final_query_scheduled_time_s = 0.5;
        pr.final_query_issued_time_s = 1.5;
        pr.final_query_all_samples_done_time_s = 2.0;
        let summary = PerformanceSummary::new(&settings, pr);
        assert_eq!(
            summary.metrics,
            ScenarioMetrics::Server {
                scheduled_samples_per_second: 3.0 / 0.5,
                completed_samples_per_second: 3.0 / 2.0,
                tokens: Some(TokenRates {
                    completed_tokens_per_second: 60.0 / 2.0,
                    tps_with_loadgen_overhead: 60.0 / 1.5,
                    // Mean latency 250 ns × 4 samples.
                    token_throughput_per_ns: 60.0 / 1000.0,
                }),
                inferred_completed_tokens_per_second: Some(10.0 * 3.0 / 2.0),
            }
        );
    }

    #[test]
    fn single_stream_without_samples_reports_the_official_infinities() {
        let settings = effective(TestSettings {
            use_token_latencies: true,
            ..TestSettings::default()
        });
        let pr = PerformanceResult {
            final_query_issued_time_s: 1.0,
            ..PerformanceResult::default()
        };
        let summary = PerformanceSummary::new(&settings, pr);
        let ScenarioMetrics::SingleStream {
            qps_with_loadgen_overhead,
            qps_without_loadgen_overhead,
            tokens: Some(tokens),
            ..
        } = summary.metrics
        else {
            panic!("SingleStream token metrics: {:?}", summary.metrics);
        };
        assert_eq!(qps_with_loadgen_overhead, -1.0);
        // No sample: the mean latency is 0, and 1 / 0 s is what the summary prints.
        assert_eq!(qps_without_loadgen_overhead, f64::INFINITY);
        assert!(tokens.tps_without_loadgen_overhead.is_nan());
    }

    #[test]
    fn result_json_spreads_the_metrics_over_the_flat_scenario_keys() {
        let settings = effective(TestSettings {
            scenario: TestScenario::Offline,
            use_token_latencies: true,
            min_duration_ms: 0,
            min_query_count: 2,
            ..TestSettings::default()
        });
        let mut pr = result(vec![500_000_000, 250_000_000], 1);
        pr.token_count = 8;
        let json = serde_json::to_value(PerformanceSummary::new(&settings, pr)).unwrap();
        assert_eq!(json["samples_per_second"], 4.0);
        assert_eq!(json["tokens"]["tokens_per_second"], 16.0);
        assert_eq!(json["tokens"]["token_count"], 8);
        for absent in [
            "qps_with_loadgen_overhead",
            "completed_samples_per_second",
            "early_stopping_latency_ss",
            "inferred_tokens_per_second",
        ] {
            assert!(json[absent].is_null(), "{absent}: {}", json[absent]);
        }
        assert!(json["tokens"]["completed_tokens_per_second"].is_null());
        let keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys.len(), 21, "{keys:?}");
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
