//! The detail-log keys of each block, in the official order with the official value types
//! (spec §6.3).

use std::time::SystemTime;

use super::detail::DetailValue;
use crate::effective::EffectiveSettings;
use crate::results::{LatencyStats, PerformanceSummary, ScenarioMetrics};
use crate::settings::{TestScenario, TestSettings};

pub(crate) type Keys = Vec<(String, DetailValue)>;

fn push(keys: &mut Keys, key: &str, value: impl Into<DetailValue>) {
    keys.push((key.to_string(), value.into()));
}

/// The version block. We are not the official LoadGen: the version names this engine and the
/// LoadGen release it reproduces; there is no upstream git state or file hash to report.
pub(crate) fn version() -> Keys {
    let mut keys = Keys::new();
    push(
        &mut keys,
        "loadgen_version",
        format!(
            "6.0.17 compatible @ mlperf-host {}",
            env!("CARGO_PKG_VERSION")
        ),
    );
    push(&mut keys, "loadgen_build_date_local", "NA");
    push(&mut keys, "loadgen_build_date_utc", "NA");
    push(&mut keys, "loadgen_git_commit_date", "NA");
    push(&mut keys, "loadgen_git_log_message", "NA");
    // "NA" is what upstream writes when git is unavailable; it is not an uncommitted change.
    push(&mut keys, "loadgen_git_status_message", "NA");
    keys.push((
        "loadgen_file_sha1".to_string(),
        DetailValue::Map(Vec::new()),
    ));
    keys
}

pub(crate) fn requested(s: &TestSettings) -> Keys {
    let mut k = Keys::new();
    push(&mut k, "requested_scenario", s.scenario.as_str());
    push(&mut k, "requested_test_mode", s.mode.as_str());
    match s.scenario {
        TestScenario::SingleStream => {
            push(
                &mut k,
                "requested_single_stream_expected_latency_ns",
                s.single_stream_expected_latency_ns,
            );
            push(
                &mut k,
                "requested_single_stream_target_latency_percentile",
                s.single_stream_target_latency_percentile,
            );
        }
        TestScenario::MultiStream => {
            push(
                &mut k,
                "requested_multi_stream_expected_latency_ns",
                s.multi_stream_expected_latency_ns,
            );
            push(
                &mut k,
                "requested_multi_stream_target_latency_percentile",
                s.multi_stream_target_latency_percentile,
            );
            push(
                &mut k,
                "requested_multi_stream_samples_per_query",
                s.multi_stream_samples_per_query,
            );
        }
        TestScenario::Server => {
            push(&mut k, "requested_server_target_qps", s.server_target_qps);
            push(
                &mut k,
                "requested_server_target_latency_ns",
                s.server_target_latency_ns,
            );
            push(
                &mut k,
                "requested_server_target_latency_percentile",
                s.server_target_latency_percentile,
            );
            push(
                &mut k,
                "requested_server_coalesce_queries",
                s.server_coalesce_queries,
            );
            push(
                &mut k,
                "requested_server_find_peak_qps_decimals_of_precision",
                s.server_find_peak_qps_decimals_of_precision,
            );
            push(
                &mut k,
                "requested_server_find_peak_qps_boundary_step_size",
                s.server_find_peak_qps_boundary_step_size,
            );
            push(
                &mut k,
                "requested_server_max_async_queries",
                s.server_max_async_queries,
            );
            push(
                &mut k,
                "requested_server_num_issue_query_threads",
                s.server_num_issue_query_threads,
            );
        }
        TestScenario::Offline => {
            push(
                &mut k,
                "requested_offline_expected_qps",
                s.offline_expected_qps,
            );
        }
    }
    push(&mut k, "requested_min_duration_ms", s.min_duration_ms);
    push(&mut k, "requested_max_duration_ms", s.max_duration_ms);
    push(&mut k, "requested_min_query_count", s.min_query_count);
    push(&mut k, "requested_max_query_count", s.max_query_count);
    push(&mut k, "requested_qsl_rng_seed", s.qsl_rng_seed);
    push(
        &mut k,
        "requested_sample_index_rng_seed",
        s.sample_index_rng_seed,
    );
    push(&mut k, "requested_schedule_rng_seed", s.schedule_rng_seed);
    push(
        &mut k,
        "requested_accuracy_log_rng_seed",
        s.accuracy_log_rng_seed,
    );
    push(
        &mut k,
        "requested_accuracy_log_probability",
        s.accuracy_log_probability,
    );
    push(
        &mut k,
        "requested_accuracy_log_sampling_target",
        s.accuracy_log_sampling_target,
    );
    push(&mut k, "requested_print_timestamps", s.print_timestamps);
    push(
        &mut k,
        "requested_performance_issue_unique",
        s.performance_issue_unique,
    );
    push(
        &mut k,
        "requested_performance_issue_same",
        s.performance_issue_same,
    );
    push(
        &mut k,
        "requested_performance_issue_same_index",
        s.performance_issue_same_index,
    );
    push(
        &mut k,
        "requested_performance_sample_count_override",
        s.performance_sample_count_override,
    );
    push(
        &mut k,
        "requested_accuracy_sample_count_override",
        s.accuracy_sample_count_override,
    );
    push(
        &mut k,
        "requested_sample_concatenate_permutation",
        s.sample_concatenate_permutation,
    );
    if s.use_token_latencies {
        push(&mut k, "requested_use_token_latencies", true);
        if s.scenario != TestScenario::Offline {
            push(
                &mut k,
                "requested_server_ttft_latency",
                s.server_ttft_latency,
            );
            push(
                &mut k,
                "requested_server_tpot_latency",
                s.server_tpot_latency,
            );
        }
    }
    k
}

pub(crate) fn effective(e: &EffectiveSettings) -> Keys {
    let mut k = Keys::new();
    push(&mut k, "effective_scenario", e.scenario.as_str());
    push(&mut k, "effective_test_mode", e.mode.as_str());
    push(&mut k, "effective_samples_per_query", e.samples_per_query);
    push(&mut k, "effective_target_qps", e.target_qps);
    push(&mut k, "effective_target_latency_ns", e.target_latency_ns);
    push(
        &mut k,
        "effective_target_latency_percentile",
        e.target_latency_percentile,
    );
    push(&mut k, "effective_max_async_queries", e.max_async_queries);
    push(&mut k, "effective_target_duration_ms", e.target_duration_ms);
    push(&mut k, "effective_min_duration_ms", e.min_duration_ms);
    push(&mut k, "effective_max_duration_ms", e.max_duration_ms);
    push(&mut k, "effective_min_query_count", e.min_query_count);
    push(&mut k, "effective_max_query_count", e.max_query_count);
    push(&mut k, "effective_min_sample_count", e.min_sample_count);
    push(&mut k, "effective_qsl_rng_seed", e.qsl_rng_seed);
    push(
        &mut k,
        "effective_sample_index_rng_seed",
        e.sample_index_rng_seed,
    );
    push(&mut k, "effective_schedule_rng_seed", e.schedule_rng_seed);
    push(
        &mut k,
        "effective_accuracy_log_rng_seed",
        e.accuracy_log_rng_seed,
    );
    push(
        &mut k,
        "effective_accuracy_log_probability",
        e.accuracy_log_probability,
    );
    push(
        &mut k,
        "effective_accuracy_log_sampling_target",
        e.accuracy_log_sampling_target,
    );
    push(&mut k, "effective_print_timestamps", e.print_timestamps);
    push(
        &mut k,
        "effective_performance_issue_unique",
        e.performance_issue_unique,
    );
    push(
        &mut k,
        "effective_performance_issue_same",
        e.performance_issue_same,
    );
    push(
        &mut k,
        "effective_performance_issue_same_index",
        e.performance_issue_same_index,
    );
    push(
        &mut k,
        "effective_performance_sample_count",
        e.performance_sample_count,
    );
    push(
        &mut k,
        "effective_accuracy_sample_count",
        e.accuracy_sample_count,
    );
    push(
        &mut k,
        "effective_sample_concatenate_permutation",
        e.sample_concatenate_permutation,
    );
    k
}

/// The query-generation keys upstream logs before issuing.
pub(crate) fn generated(count: u64, samples_per_query: u64, duration_ns: i64) -> Keys {
    let mut k = Keys::new();
    push(&mut k, "generated_query_count", count);
    push(&mut k, "generated_samples_per_query", samples_per_query);
    push(&mut k, "generated_query_duration", duration_ns);
    k
}

/// Upstream's logger contention counters; this logger has no contention to count.
pub(crate) fn logger_counters() -> Keys {
    [
        "logger_swap_request_slots_retry_count",
        "logger_swap_request_slots_retry_retry_count",
        "logger_swap_request_slots_retry_reencounter_count",
        "logger_start_reading_entries_retry_count",
        "logger_tls_total_log_cas_fail_count",
        "logger_tls_total_swap_buffers_slot_retry_count",
    ]
    .into_iter()
    .map(|key| (key.to_string(), DetailValue::UInt(0)))
    .collect()
}

pub(crate) fn power(begin: SystemTime, end: SystemTime) -> Keys {
    let mut k = Keys::new();
    push(&mut k, "power_begin", power_time(begin));
    push(&mut k, "power_end", power_time(end));
    k
}

/// `MM-DD-YYYY HH:MM:SS.mmm` in UTC, as upstream's DateTimeStringForPower.
pub(crate) fn power_time(time: SystemTime) -> String {
    let since_epoch = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let (year, month, day, hour, minute, second) = civil(since_epoch.as_secs());
    format!(
        "{month:02}-{day:02}-{year:04} {hour:02}:{minute:02}:{second:02}.{:03}",
        since_epoch.subsec_millis()
    )
}

/// `YYYY-MM-DDTHH:MM:SSZ` in UTC (upstream prints local time with a literal `Z`).
pub(crate) fn test_datetime(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (year, month, day, hour, minute, second) = civil(secs);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z")
}

/// Civil date and time of a Unix timestamp (proleptic Gregorian, UTC).
fn civil(secs: u64) -> (i64, u32, u32, u32, u32, u32) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (hour, minute, second) = (
        (rem / 3600) as u32,
        (rem % 3600 / 60) as u32,
        (rem % 60) as u32,
    );
    // Days to civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day, hour, minute, second)
}

/// `50.00`, `99.90`: upstream's DoubleToString(p × 100) with two decimals.
fn percent(p: f64) -> String {
    format!("{:.2}", p * 100.0)
}

fn latency_block(k: &mut Keys, prefix: &str, stats: Option<&LatencyStats>) {
    let stats = stats.cloned().unwrap_or_else(empty_stats);
    push(k, &format!("{prefix}min_latency_ns"), stats.min_ns);
    push(k, &format!("{prefix}max_latency_ns"), stats.max_ns);
    push(k, &format!("{prefix}mean_latency_ns"), stats.mean_ns);
    for (p, latency) in &stats.percentiles {
        push(
            k,
            &format!("{prefix}{}_percentile_latency_ns", percent(*p)),
            *latency,
        );
    }
}

fn empty_stats() -> LatencyStats {
    LatencyStats {
        min_ns: 0,
        max_ns: 0,
        mean_ns: 0,
        target_percentile: 0.0,
        target_ns: 0,
        percentiles: crate::results::REPORTED_PERCENTILES
            .iter()
            .map(|&p| (p, 0))
            .collect(),
    }
}

/// The result block of a performance run (spec §6.3 items 9–12).
pub(crate) fn result(p: &PerformanceSummary, e: &EffectiveSettings) -> Keys {
    let mut k = Keys::new();
    let v = &p.validity;
    push(
        &mut k,
        "result_validity",
        if v.valid { "VALID" } else { "INVALID" },
    );
    if p.scenario == TestScenario::Server {
        push(
            &mut k,
            "result_perf_constraints_met",
            v.perf_constraints_met,
        );
    }
    push(&mut k, "result_min_duration_met", v.min_duration_met);
    push(&mut k, "result_min_queries_met", v.min_queries_met);
    push(&mut k, "early_stopping_met", v.early_stopping_met);
    if !v.valid {
        push(&mut k, "result_invalid_reason", invalid_reason(&v.reasons));
    }
    let joined = |lines: &[String]| lines.join(" ");
    if e.use_token_latencies {
        let ttft = p.early_stopping.ttft_lines.as_deref().unwrap_or_default();
        push(&mut k, "early_stopping_ttft_result", joined(ttft));
        push(
            &mut k,
            "early_stopping_tpot_result",
            joined(&p.early_stopping.lines),
        );
    } else {
        push(
            &mut k,
            "early_stopping_result",
            joined(&p.early_stopping.lines),
        );
    }
    push(&mut k, "result_query_count", p.query_count);
    if let Some(over) = p.overlatency_query_count {
        push(&mut k, "result_overlatency_query_count", over);
    }
    match &p.metrics {
        ScenarioMetrics::SingleStream {
            qps_with_loadgen_overhead,
            qps_without_loadgen_overhead,
            early_stopping_latency_ss,
            early_stopping_latency_ms,
            ..
        } => {
            push(
                &mut k,
                "result_qps_with_loadgen_overhead",
                *qps_with_loadgen_overhead,
            );
            push(
                &mut k,
                "result_qps_without_loadgen_overhead",
                *qps_without_loadgen_overhead,
            );
            push(
                &mut k,
                "early_stopping_latency_ss",
                early_stopping_latency_ss.unwrap_or(0),
            );
            push(
                &mut k,
                "early_stopping_latency_ms",
                early_stopping_latency_ms.unwrap_or(0),
            );
        }
        ScenarioMetrics::MultiStream {
            early_stopping_latency_ms,
            ..
        } => {
            let stats = p.query_latency.clone().unwrap_or_else(empty_stats);
            push(&mut k, "result_min_query_latency_ns", stats.min_ns);
            push(&mut k, "result_max_query_latency_ns", stats.max_ns);
            push(&mut k, "result_mean_query_latency_ns", stats.mean_ns);
            for (percentile, latency) in &stats.percentiles {
                push(
                    &mut k,
                    &format!(
                        "result_{}_percentile_per_query_latency_ns",
                        percent(*percentile)
                    ),
                    *latency,
                );
            }
            push(
                &mut k,
                "early_stopping_latency_ms",
                early_stopping_latency_ms.unwrap_or(0),
            );
        }
        ScenarioMetrics::Server {
            scheduled_samples_per_second,
            completed_samples_per_second,
            ..
        } => {
            push(
                &mut k,
                "result_scheduled_samples_per_sec",
                *scheduled_samples_per_second,
            );
            push(
                &mut k,
                "result_completed_samples_per_sec",
                *completed_samples_per_second,
            );
        }
        ScenarioMetrics::Offline {
            samples_per_second, ..
        } => {
            push(&mut k, "result_samples_per_second", *samples_per_second);
        }
    }
    latency_block(&mut k, "result_", p.sample_latency.as_ref());
    // Not Offline: upstream interleaves the token latencies with the token rates.
    if let (Some(tokens), Some(rates)) = (&p.tokens, p.metrics.token_rates()) {
        latency_block(&mut k, "result_first_token_", tokens.first_token.as_ref());
        push(
            &mut k,
            "result_token_throughput_with_loadgen_overhead",
            rates.tps_with_loadgen_overhead,
        );
        push(
            &mut k,
            "result_token_throughput",
            rates.token_throughput_per_ns,
        );
        let tpot = tokens
            .time_per_output_token
            .clone()
            .unwrap_or_else(empty_stats);
        for (percentile, latency) in &tpot.percentiles {
            push(
                &mut k,
                &format!(
                    "result_time_per_output_token_{}_percentile_ns",
                    percent(*percentile)
                ),
                *latency,
            );
        }
        push(&mut k, "result_time_to_output_token_min", tpot.min_ns);
        push(&mut k, "result_time_to_output_token_max", tpot.max_ns);
        push(&mut k, "result_time_to_output_token_mean", tpot.mean_ns);
        push(
            &mut k,
            "result_completed_tokens_per_second",
            rates.completed_tokens_per_second,
        );
    }
    match &p.metrics {
        ScenarioMetrics::Offline {
            tokens_per_second,
            inferred_tokens_per_second,
            ..
        } => {
            if let Some(tokens_per_second) = tokens_per_second {
                push(&mut k, "result_tokens_per_second", *tokens_per_second);
            }
            if let Some(inferred) = inferred_tokens_per_second {
                push(&mut k, "result_inferred_tokens_per_second", *inferred);
            }
        }
        ScenarioMetrics::Server {
            inferred_completed_tokens_per_second: Some(inferred),
            ..
        } => push(
            &mut k,
            "result_inferred_completed_tokens_per_second",
            *inferred,
        ),
        _ => {}
    }
    k
}

/// Upstream joins its recommendations with spaces (newlines too) into one string.
fn invalid_reason(reasons: &[String]) -> String {
    let mut text = String::new();
    for reason in reasons {
        text.push_str(&reason.replace('\n', " "));
        if !reason.starts_with("The test exited early") {
            text.push(' ');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn power_and_test_times_are_utc() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_795_761_295_055);
        assert_eq!(power_time(t), "11-27-2026 06:34:55.055");
        assert_eq!(test_datetime(t), "2026-11-27T06:34:55Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(test_datetime(leap), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn invalid_reason_joins_like_upstream() {
        let reasons = vec![
            "Reduce target QPS to improve latency.".to_string(),
            "Increase the target QPS so the loadgen pre-generates more queries.".to_string(),
            "The test exited early, before enough queries were issued.".to_string(),
        ];
        assert_eq!(
            invalid_reason(&reasons),
            "Reduce target QPS to improve latency. Increase the target QPS so the loadgen pre-generates more queries. The test exited early, before enough queries were issued."
        );
    }
}
