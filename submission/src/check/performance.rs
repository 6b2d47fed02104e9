//! A performance run's detail log against the rules: validity, seeds, sample counts, early
//! stopping, latency bounds, minimum duration and query count, network mode. The same checks
//! apply to a compliance test's performance run.

use std::path::Path;

use mlperf_loadgen::TestScenario;
use serde_json::Value;

use super::Context;
use crate::division::Division;
use crate::logs::DetailLog;
use crate::rule::Rule;
use crate::rules::{default_result_field, network_batching, Rules};
use crate::scenario::{logged_scenario, Scenario};
use crate::tree::{ScenarioDir, LOG_FILES};

/// Tolerated in a log's errors (a LoadGen built from a modified checkout).
const TOLERATED_ERROR: &str = "Loadgen built with uncommitted changes!";

/// The summary's lines a reader takes the run's result from, each with the detail-log key
/// LoadGen writes the same figure under.
const SUMMARY_FIGURES: [(&str, &str); 2] = [
    ("Samples per second:", "result_samples_per_second"),
    (
        "Completed samples per second",
        "result_completed_samples_per_sec",
    ),
];

/// The summary must say what the detail log says: the checks read the detail log, a reader
/// the summary, and an edited (or swapped) summary would otherwise pass.
fn check_summary_against_detail(context: &mut Context, path: &Path, text: &str, log: &DetailLog) {
    let line_after = |label: &str| {
        text.lines()
            .find_map(|line| line.trim_start().strip_prefix(label))
            .map(|rest| rest.trim_start_matches([' ', ':']).trim())
    };
    match (line_after("Result is :"), log.str("result_validity")) {
        (None, _) => context.error(
            path,
            Rule::SummaryMatchesDetail,
            "the summary has no `Result is :` line",
        ),
        (Some(shown), Some(logged)) if shown != logged => context.error(
            path,
            Rule::SummaryMatchesDetail,
            format!(
                "the summary says `Result is : {shown}`, the detail log's result_validity is \
                 {logged}: one was edited, or they are of different runs"
            ),
        ),
        _ => {}
    }
    // SingleStream's and MultiStream's figure: `90.0th percentile latency (ns) : N`.
    let percentile = text.lines().find_map(|line| {
        let (p, value) = line.split_once("th percentile latency (ns) :")?;
        Some((
            p.trim().parse::<f64>().ok()?,
            value.trim().parse::<f64>().ok()?,
        ))
    });
    if let Some((p, shown)) = percentile {
        let key = match log.str("effective_scenario") {
            Some("MultiStream") => format!("result_{p:.2}_percentile_per_query_latency_ns"),
            _ => format!("result_{p:.2}_percentile_latency_ns"),
        };
        if let Some(logged) = log.f64(&key).filter(|logged| *logged != shown) {
            context.error(
                path,
                Rule::SummaryMatchesDetail,
                format!("the summary's {p}th percentile latency {shown} ns is not the detail log's {key} {logged}"),
            );
        }
    }
    for (label, key) in SUMMARY_FIGURES {
        let shown = line_after(label).and_then(|v| v.parse::<f64>().ok());
        let (Some(shown), Some(logged)) = (shown, log.f64(key)) else {
            continue;
        };
        // The summary prints fewer digits than the detail log.
        if (shown - logged).abs() > 1e-4 * logged.abs().max(1.0) {
            context.error(
                path,
                Rule::SummaryMatchesDetail,
                format!("the summary's `{label}` {shown} is not the detail log's {key} {logged}"),
            );
        }
    }
}

/// Checks `performance/run_1/`; returns the result in the checker's unit (samples/s, queries/s
/// or ms) when the log gives one.
pub(crate) fn check(
    context: &mut Context,
    target: &ScenarioDir,
    rules: &Rules,
    system: &Value,
) -> Option<f64> {
    check_run(
        context,
        &target.performance_run(),
        target.scenario,
        target.submitter.division,
        rules,
        system,
    )
}

/// The checks on one run folder's logs; `scenario` is the folder's.
pub(crate) fn check_run(
    context: &mut Context,
    run: &Path,
    scenario: Scenario,
    division: Division,
    rules: &Rules,
    system: &Value,
) -> Option<f64> {
    let summary = run.join(LOG_FILES[0]);
    if !summary.is_file() {
        context.error(&summary, Rule::RequiredFile, "missing");
    }
    let path = run.join(LOG_FILES[1]);
    let log = context.detail_log(&path)?;
    context.official_loadgen(&path, &log, division);
    if let Ok(text) = std::fs::read_to_string(&summary) {
        check_summary_against_detail(context, &summary, &text, &log);
    }
    let filed_under = scenario;
    let logged = log.str("effective_scenario").unwrap_or("");
    let Some(logged_scenario) = logged_scenario(logged) else {
        context.error(
            &path,
            Rule::ScenarioMismatch,
            format!("the run's effective_scenario {logged:?} is not a LoadGen scenario; it is filed under {filed_under}"),
        );
        return None;
    };
    let inferred = logged_scenario != filed_under.loadgen();
    if inferred && !can_infer(filed_under, logged_scenario) {
        context.error(
            &path,
            Rule::ScenarioMismatch,
            format!("the run is {logged:?}, filed under {filed_under} (a result is inferred only for Offline from SingleStream or MultiStream, and for MultiStream from SingleStream)"),
        );
        return None;
    }
    // A run whose result is inferred for its folder is held to its own scenario's rules.
    let (folder, scenario) = if inferred {
        (Scenario::from(logged_scenario), logged_scenario)
    } else {
        (filed_under, filed_under.loadgen())
    };
    for error in log.errors.iter().filter(|e| !e.contains(TOLERATED_ERROR)) {
        context.warning(
            &path,
            Rule::LoadgenErrors,
            format!("LoadGen logged an error: {error}"),
        );
    }
    match log.str("result_validity") {
        Some("VALID") => {}
        other => context.error(
            &path,
            Rule::ResultValid,
            format!(
                "result_validity is {}, not VALID",
                other.unwrap_or("missing")
            ),
        ),
    }
    check_seeds(context, &path, &log, rules);
    let psc = log.u64("effective_performance_sample_count").unwrap_or(0);
    if psc < rules.min_performance_sample_count {
        context.error(
            &path,
            Rule::PerformanceSampleCount,
            format!(
                "effective_performance_sample_count {psc} is below the {} {} requires",
                rules.min_performance_sample_count, rules.benchmark
            ),
        );
    }
    if folder.has_early_stopping() {
        check_early_stopping(context, &path, &log, folder, rules);
    } else {
        check_latency_percentile(context, &path, &log, folder, rules);
        if let Some(required) = rules.min_query_count(folder) {
            let count = log.u64("effective_min_query_count").unwrap_or(0);
            if count < required {
                context.short(
                    &path,
                    Rule::MinQueryCount,
                    format!("effective_min_query_count {count} is below the required {required}"),
                );
            }
        }
    }
    match rules.offline_min_samples_per_query {
        Some(minimum) if scenario == TestScenario::Offline && division == Division::Closed => {
            let samples = log.u64("effective_samples_per_query").unwrap_or(0);
            if samples < minimum {
                context.short(
                    &path,
                    Rule::OfflineSamplesPerQuery,
                    format!(
                        "the Offline query has {samples} samples; {} requires at least {minimum}",
                        rules.benchmark
                    ),
                );
            }
        }
        _ => {}
    }
    let duration = log.u64("effective_min_duration_ms").unwrap_or(0);
    if duration < rules.min_duration_ms {
        context.short(
            &path,
            Rule::MinDuration,
            format!(
                "effective_min_duration_ms {duration} is below {} ({} s)",
                rules.min_duration_ms,
                rules.min_duration_ms / 1000
            ),
        );
    }
    check_network(context, &path, &log, division, system);
    if division == Division::Network {
        if let Some(problem) = network_batching(&log, rules.network_client_batching) {
            context.error(&path, Rule::NetworkBatching, problem);
        }
    }
    if rules.llm {
        check_token_latencies(context, &path, &log, folder, rules);
    }
    if inferred {
        let metric = inferred_metric(&log, filed_under);
        if filed_under == Scenario::MultiStream && metric == Some(0.0) {
            context.error(
                &path,
                Rule::InferredResult,
                format!("no MultiStream result can be inferred from this {logged_scenario} run: its early_stopping_latency_ms is 0 (too few queries for the estimate)"),
            );
        }
        return metric;
    }
    result_metric(&log, scenario, Some(rules))
}

/// Whether a folder's result may be inferred from a run of `logged` scenario, as the checker
/// infers them: Offline from SingleStream or MultiStream, MultiStream from SingleStream.
fn can_infer(folder: Scenario, logged: TestScenario) -> bool {
    matches!(
        (folder, logged),
        (
            Scenario::Offline,
            TestScenario::SingleStream | TestScenario::MultiStream
        ) | (Scenario::MultiStream, TestScenario::SingleStream)
    )
}

/// The checker's inferred result for `folder` from a run of another scenario: Offline from
/// SingleStream is its QPS without LoadGen's overhead, Offline from MultiStream its samples
/// per query over the mean query latency, MultiStream from SingleStream eight times its
/// early-stopping 99th-percentile estimate (ms).
pub(crate) fn inferred_metric(log: &DetailLog, folder: Scenario) -> Option<f64> {
    match (folder, logged_scenario(log.str("effective_scenario")?)?) {
        (Scenario::Offline, TestScenario::SingleStream) => {
            log.f64("result_qps_without_loadgen_overhead")
        }
        (Scenario::Offline, TestScenario::MultiStream) => {
            let samples = log.f64("effective_samples_per_query")?;
            let mean_ms = log.f64("result_mean_query_latency_ns")? / 1e6;
            Some(samples * 1000.0 / mean_ms)
        }
        (Scenario::MultiStream, TestScenario::SingleStream) => {
            Some(log.f64("early_stopping_latency_ms")? * 8.0 / 1e6)
        }
        _ => None,
    }
}

/// A folder's result: its run's, or the one inferred from a run of another scenario.
pub(crate) fn folder_metric(
    log: &DetailLog,
    folder: Scenario,
    rules: Option<&Rules>,
) -> Option<f64> {
    let scenario = folder.loadgen();
    if log
        .str("effective_scenario")
        .is_some_and(|logged| logged_scenario(logged) != Some(scenario))
    {
        inferred_metric(log, folder)
    } else {
        result_metric(log, scenario, rules)
    }
}

/// An LLM's run measures token latencies; in Server and Interactive the 99th percentiles of
/// the first token's latency (TTFT) and the time per output token (TPOT) keep the limits.
fn check_token_latencies(
    context: &mut Context,
    path: &Path,
    log: &DetailLog,
    folder: Scenario,
    rules: &Rules,
) {
    if log.bool("requested_use_token_latencies") != Some(true) {
        context.error(
            path,
            Rule::TokenLatencies,
            format!(
                "{} is an LLM benchmark: the run must measure token latencies (use_token_latencies)",
                rules.benchmark
            ),
        );
        return;
    }
    if folder.loadgen() != TestScenario::Server {
        return;
    }
    let Some(limits) = rules.token_limits(folder) else {
        context.error(
            path,
            Rule::TokenLatencies,
            format!(
                "{} has no TTFT/TPOT limits for {folder} ({})",
                rules.benchmark, rules.source
            ),
        );
        return;
    };
    let ttft = log.u64("result_first_token_99.00_percentile_latency_ns");
    let tpot = log.u64("result_time_per_output_token_99.00_percentile_ns");
    let (Some(ttft), Some(tpot)) = (ttft, tpot) else {
        context.error(
            path,
            Rule::TokenLatencies,
            "the log has no 99th-percentile TTFT or TPOT (result_first_token_99.00_percentile_latency_ns, result_time_per_output_token_99.00_percentile_ns)",
        );
        return;
    };
    if ttft >= limits.ttft_ns || tpot >= limits.tpot_ns {
        context.error(
            path,
            Rule::TokenLatencies,
            format!(
                "99th-percentile TTFT {ttft} ns and TPOT {tpot} ns must be below {} ns and {} ns for {} {folder}",
                limits.ttft_ns, limits.tpot_ns, rules.benchmark
            ),
        );
    }
}

fn check_seeds(context: &mut Context, path: &Path, log: &DetailLog, rules: &Rules) {
    for (key, expected) in [
        ("effective_qsl_rng_seed", rules.seeds.qsl_rng_seed),
        (
            "effective_sample_index_rng_seed",
            rules.seeds.sample_index_rng_seed,
        ),
        ("effective_schedule_rng_seed", rules.seeds.schedule_rng_seed),
    ] {
        let found = log.u64(key);
        if found != Some(expected) {
            context.error(
                path,
                Rule::Seeds,
                format!(
                    "{key} is {}, the rules' seed is {expected}",
                    found.map_or("missing".to_string(), |s| s.to_string())
                ),
            );
        }
    }
}

/// The latency bound of a folder's scenario, else of its LoadGen scenario.
fn latency_bound(rules: &Rules, folder: Scenario) -> Option<u64> {
    rules
        .latency_bound_ns(folder)
        .or_else(|| rules.latency_bound_ns(Scenario::from(folder.loadgen())))
}

/// Early stopping met, and the Server bound the estimate was made for within the rules'.
fn check_early_stopping(
    context: &mut Context,
    path: &Path,
    log: &DetailLog,
    scenario: Scenario,
    rules: &Rules,
) {
    if log.bool("early_stopping_met") != Some(true) {
        context.error(
            path,
            Rule::EarlyStopping,
            format!(
                "the early stopping condition was not met: {}",
                log.str("early_stopping_result")
                    .unwrap_or("(no early_stopping_result)")
            ),
        );
    }
    if let Some(bound) = latency_bound(rules, scenario) {
        let target = log.u64("effective_target_latency_ns").unwrap_or(u64::MAX);
        if target > bound {
            context.error(
                path,
                Rule::LatencyBound,
                format!("effective_target_latency_ns {target} exceeds the {bound} ns {} allows for {scenario}", rules.benchmark),
            );
        }
    }
}

/// Scenarios without early stopping keep their bound at the 99th percentile.
fn check_latency_percentile(
    context: &mut Context,
    path: &Path,
    log: &DetailLog,
    scenario: Scenario,
    rules: &Rules,
) {
    if let Some(bound) = latency_bound(rules, scenario) {
        let p99 = log
            .u64("result_99.00_percentile_latency_ns")
            .unwrap_or(u64::MAX);
        if p99 > bound {
            context.error(
                path,
                Rule::LatencyBound,
                format!("result_99.00_percentile_latency_ns {p99} exceeds the {bound} ns bound"),
            );
        }
    }
}

/// A network-division system is one, and its SUT says so.
fn check_network(
    context: &mut Context,
    path: &Path,
    log: &DetailLog,
    division: Division,
    system: &Value,
) {
    let is_network = system
        .get("is_network")
        .map(|v| match v {
            Value::Bool(b) => *b,
            Value::String(s) => s.eq_ignore_ascii_case("true"),
            _ => false,
        })
        .unwrap_or(false);
    let expected = division.requires_network_system();
    if expected.is_some_and(|e| e != is_network) {
        context.error(
            path,
            Rule::NetworkMode,
            format!("the system's is_network ({is_network}) does not fit the {division} division"),
        );
    }
    let sut_name = log.str("sut_name").unwrap_or("");
    if is_network && !sut_name.contains("Network SUT") {
        context.error(
            path,
            Rule::NetworkMode,
            format!("a network system's SUT name must contain \"Network SUT\"; it is {sut_name:?}"),
        );
    }
}

/// The result of a run of LoadGen scenario `scenario` as the checker reports it (latencies
/// in ms, or in s where the rules say), from the benchmark's own result field where its rules name one.
pub(crate) fn result_metric(
    log: &DetailLog,
    scenario: TestScenario,
    rules: Option<&Rules>,
) -> Option<f64> {
    let field = match rules {
        Some(rules) => rules.result_field(scenario),
        None => default_result_field(scenario),
    };
    let value = log.f64(field)?;
    let in_seconds = rules.is_some_and(|r| r.latency_in_seconds);
    Some(match Scenario::from(scenario).reports_latency() {
        true if in_seconds => value / 1e9,
        true => value / 1e6,
        false => value,
    })
}
