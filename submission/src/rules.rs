//! The rules a benchmark's submission is checked against, as data: read from a round's table
//! (`round.rs`) for MLPerf's own models, from a benchmark definition for ours
//! (`benchmark_rules.rs`).

use mlperf_loadgen::TestScenario;
use regex::Regex;

use crate::scenario::Scenario;

/// The seeds a round's runs must use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seeds {
    pub qsl_rng_seed: u64,
    pub sample_index_rng_seed: u64,
    pub schedule_rng_seed: u64,
}

/// The scenarios a system type must (and may) submit.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScenarioSet {
    pub required: Vec<Scenario>,
    pub optional: Vec<Scenario>,
}

/// An LLM's 99th-percentile token latency limits in one scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenLimits {
    pub ttft_ns: u64,
    pub tpot_ns: u64,
}

/// One benchmark's rules.
#[derive(Debug, Clone)]
pub struct Rules {
    pub benchmark: String,
    /// Where the rules come from, for messages.
    pub source: String,
    /// An LLM: its runs must measure token latencies.
    pub llm: bool,
    pub seeds: Seeds,
    pub min_duration_ms: u64,
    /// The largest accuracy log a tree may hold (the rest is replaced by its hash).
    pub max_accuracy_log_bytes: u64,
    /// Whether the network division may batch queries on the load-generating node.
    pub network_client_batching: bool,
    pub min_performance_sample_count: u64,
    pub dataset_size: u64,
    /// Samples an accuracy run must cover, unless a scenario has its own count.
    pub accuracy_sample_count: u64,
    pub accuracy_sample_counts: Vec<(Scenario, u64)>,
    /// The closed division's minimum samples in the Offline query.
    pub offline_min_samples_per_query: Option<u64>,
    /// (scenario, bound in ns).
    pub latency_bounds_ns: Vec<(Scenario, u64)>,
    pub token_latency_limits: Vec<(Scenario, TokenLimits)>,
    /// Minimum query counts of scenarios without early stopping.
    pub min_query_counts: Vec<(Scenario, u64)>,
    /// Scores accuracy.txt must reach, unless a scenario has its own.
    pub accuracy: Vec<AccuracyTarget>,
    pub accuracy_by_scenario: Vec<(Scenario, Vec<AccuracyTarget>)>,
    /// Scores accuracy.txt must not exceed (an LLM's answer length).
    pub accuracy_upper: Vec<AccuracyTarget>,
    /// How far TEST01's sampled scores may drift from the accuracy run's, per metric (%).
    pub test01_delta_percent: Vec<(String, f64)>,
    pub default_test01_delta_percent: f64,
    /// The detail-log key of the result, per LoadGen scenario, where it is not the usual one.
    pub result_fields: Vec<(TestScenario, String)>,
    /// SingleStream and MultiStream results reported in seconds rather than milliseconds (a
    /// video generator's latency).
    pub latency_in_seconds: bool,
    /// Files the accuracy folder must hold beside the logs: (sub-folder, file names without
    /// their extension), e.g. generated videos an auditor looks at.
    pub accuracy_files: Vec<(String, Vec<String>)>,
    pub compliance: Vec<String>,
    /// Per system type (`datacenter`, `edge`, `datacenter-edge`).
    pub scenarios: Vec<(String, ScenarioSet)>,
}

/// An accuracy.txt figure and its bound.
#[derive(Debug, Clone)]
pub struct AccuracyTarget {
    /// The metric (`acc`, `ROUGE1`, …).
    pub name: String,
    /// Matches a line at its start; the first group is the value.
    pub pattern: Regex,
    pub bound: f64,
    /// The bound's derivation, for messages.
    pub why: String,
}

impl AccuracyTarget {
    /// The value on `line`, when the line states it.
    pub fn score(&self, line: &str) -> Option<f64> {
        self.pattern.captures(line)?.get(1)?.as_str().parse().ok()
    }

    /// The first value `text` states.
    pub fn score_in(&self, text: &str) -> Option<f64> {
        text.lines().find_map(|line| self.score(line))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("benchmark {benchmark}: no submission rules (not one of the models of round {round}, and no benchmark definition with a [submission] section has this name)")]
    Missing { benchmark: String, round: String },
    #[error("benchmark {benchmark}: {message}")]
    Invalid { benchmark: String, message: String },
}

impl Rules {
    pub fn latency_bound_ns(&self, scenario: Scenario) -> Option<u64> {
        lookup(&self.latency_bounds_ns, &scenario).copied()
    }

    pub fn min_query_count(&self, scenario: Scenario) -> Option<u64> {
        lookup(&self.min_query_counts, &scenario).copied()
    }

    pub fn token_limits(&self, scenario: Scenario) -> Option<TokenLimits> {
        lookup(&self.token_latency_limits, &scenario).copied()
    }

    /// The scenarios a system type submits; None when the model is not part of the round
    /// for it. `system_type` is the description's (`datacenter,edge` in either order).
    pub fn scenario_set(&self, system_type: &str) -> Option<&ScenarioSet> {
        let key = match system_type {
            "datacenter,edge" | "edge,datacenter" => "datacenter-edge",
            other => other,
        };
        lookup(&self.scenarios, key)
    }

    pub fn accuracy_targets(&self, scenario: Scenario) -> &[AccuracyTarget] {
        lookup(&self.accuracy_by_scenario, &scenario).map_or(&self.accuracy, |t| t)
    }

    pub fn accuracy_sample_count_for(&self, scenario: Scenario) -> u64 {
        lookup(&self.accuracy_sample_counts, &scenario)
            .copied()
            .unwrap_or(self.accuracy_sample_count)
    }

    pub fn test01_delta_percent(&self, metric: &str) -> f64 {
        lookup(&self.test01_delta_percent, metric)
            .copied()
            .unwrap_or(self.default_test01_delta_percent)
    }

    /// The detail-log key of the result of a run of LoadGen scenario `scenario`.
    pub fn result_field(&self, scenario: TestScenario) -> &str {
        match lookup(&self.result_fields, &scenario) {
            Some(field) => field,
            None => default_result_field(scenario),
        }
    }
}

/// The detail-log key of a LoadGen scenario's result as the checker reads it.
pub fn default_result_field(scenario: TestScenario) -> &'static str {
    match scenario {
        TestScenario::Offline => "result_samples_per_second",
        TestScenario::Server => "result_completed_samples_per_sec",
        TestScenario::SingleStream => "early_stopping_latency_ss",
        TestScenario::MultiStream => "early_stopping_latency_ms",
    }
}

/// The detail-log key of the network plugin's batch size (its `max_batch` attribute).
pub const NETWORK_MAX_BATCH: &str = "sut_plugin_attribute_max_batch";

/// Why a network-division run breaks the rule against batching on the load-generating node:
/// its network plugin sent up to `max_batch` > 1 samples per request.
pub fn network_batching(log: &crate::logs::DetailLog, allowed: bool) -> Option<String> {
    let batch = log.u64(NETWORK_MAX_BATCH)?;
    (!allowed && batch > 1).then(|| {
        format!(
            "the network plugin batched up to {batch} samples per request (max_batch): the network division does not batch queries on the load-generating node; run with max_batch = 1"
        )
    })
}

fn lookup<'a, K: PartialEq + ?Sized, V>(
    list: &'a [(impl std::borrow::Borrow<K>, V)],
    key: &K,
) -> Option<&'a V> {
    list.iter().find(|(k, _)| k.borrow() == key).map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_network_division_refuses_batching_on_the_load_generating_node() {
        let log = |batch: &str| {
            crate::logs::DetailLog::parse(&format!(
                ":::MLLOG {{\"key\": \"{NETWORK_MAX_BATCH}\", \"value\": \"{batch}\"}}\n"
            ))
            .unwrap()
        };
        let problem = network_batching(&log("8"), false).unwrap();
        assert!(problem.contains("up to 8 samples per request"), "{problem}");
        assert_eq!(network_batching(&log("1"), false), None);
        assert_eq!(
            network_batching(&log("8"), true),
            None,
            "a round may allow it"
        );
        let plain =
            crate::logs::DetailLog::parse(":::MLLOG {\"key\": \"sut_name\", \"value\": \"x\"}\n")
                .unwrap();
        assert_eq!(network_batching(&plain, false), None);
    }
}
