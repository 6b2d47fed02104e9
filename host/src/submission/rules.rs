//! The rules a benchmark's submission is checked against: the round's (`round.rs`) for
//! MLPerf's own models, the `[submission]` section of a benchmark definition for ours.

use regex::Regex;

use super::round::Round;
use super::tree::SCENARIOS;
use crate::benchmark::{Accuracy, Benchmark};

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
    pub required: Vec<String>,
    pub optional: Vec<String>,
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
    pub accuracy_sample_counts: Vec<(String, u64)>,
    /// The closed division's minimum samples in the Offline query.
    pub offline_min_samples_per_query: Option<u64>,
    /// (scenario, bound in ns).
    pub latency_bounds_ns: Vec<(String, u64)>,
    pub token_latency_limits: Vec<(String, TokenLimits)>,
    /// Minimum query counts of scenarios without early stopping.
    pub min_query_counts: Vec<(String, u64)>,
    /// Scores accuracy.txt must reach, unless a scenario has its own.
    pub accuracy: Vec<AccuracyTarget>,
    pub accuracy_by_scenario: Vec<(String, Vec<AccuracyTarget>)>,
    /// Scores accuracy.txt must not exceed (an LLM's answer length).
    pub accuracy_upper: Vec<AccuracyTarget>,
    /// How far TEST01's sampled scores may drift from the accuracy run's, per metric (%).
    pub test01_delta_percent: Vec<(String, f64)>,
    pub default_test01_delta_percent: f64,
    /// The detail-log key of the result, per LoadGen scenario, where it is not the usual one.
    pub result_fields: Vec<(String, String)>,
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
    /// The rules for `name`: the round's for its models, else the benchmark definition's.
    pub fn for_benchmark(name: &str, round: &Round) -> Result<Rules, RulesError> {
        if let Some(rules) = round.model(name) {
            return Ok(rules.clone());
        }
        let missing = || RulesError::Missing {
            benchmark: name.to_string(),
            round: round.name.clone(),
        };
        let benchmark = Benchmark::find(name).map_err(|_| missing())?;
        if benchmark.submission.is_none() {
            return Err(missing());
        }
        Rules::from_definition(&benchmark, round)
    }

    /// Our benchmark's own `[submission]` section, with the round's seeds and durations.
    pub fn from_definition(benchmark: &Benchmark, round: &Round) -> Result<Rules, RulesError> {
        let section = benchmark
            .submission
            .as_ref()
            .ok_or_else(|| RulesError::Missing {
                benchmark: benchmark.name.clone(),
                round: round.name.clone(),
            })?;
        let invalid = |message: String| RulesError::Invalid {
            benchmark: benchmark.name.clone(),
            message,
        };
        // Any LoadGen scenario the definition does not require may be submitted (Interactive
        // is a round's, for its LLMs).
        let scenario_set = |required: &[String]| ScenarioSet {
            required: required.to_vec(),
            optional: SCENARIOS
                .iter()
                .map(|s| s.to_string())
                .filter(|s| !required.contains(s))
                .collect(),
        };
        let mut both = section.required_scenarios_datacenter.clone();
        both.extend(section.required_scenarios_edge.iter().cloned());
        both.sort();
        both.dedup();
        Ok(Rules {
            benchmark: benchmark.name.clone(),
            source: benchmark.file.display().to_string(),
            llm: false,
            seeds: round.seeds,
            min_duration_ms: round.min_duration_ms,
            max_accuracy_log_bytes: round.max_accuracy_log_bytes,
            network_client_batching: round.network_client_batching,
            min_performance_sample_count: benchmark
                .performance_sample_count
                .map_or(section.dataset_size, |n| n as u64),
            dataset_size: section.dataset_size,
            accuracy_sample_count: section.dataset_size,
            accuracy_sample_counts: Vec::new(),
            offline_min_samples_per_query: Some(section.offline_min_samples_per_query),
            latency_bounds_ns: section
                .latency_bounds_ms
                .iter()
                .map(|(scenario, ms)| (scenario.clone(), (ms * 1e6).round() as u64))
                .collect(),
            token_latency_limits: Vec::new(),
            min_query_counts: Vec::new(),
            accuracy: accuracy_target(&benchmark.accuracy)
                .map_err(invalid)?
                .into_iter()
                .collect(),
            accuracy_by_scenario: Vec::new(),
            accuracy_upper: Vec::new(),
            test01_delta_percent: Vec::new(),
            default_test01_delta_percent: 1.0,
            result_fields: Vec::new(),
            latency_in_seconds: false,
            accuracy_files: Vec::new(),
            compliance: section.compliance.clone(),
            scenarios: vec![
                (
                    "datacenter".to_string(),
                    scenario_set(&section.required_scenarios_datacenter),
                ),
                (
                    "edge".to_string(),
                    scenario_set(&section.required_scenarios_edge),
                ),
                ("datacenter-edge".to_string(), scenario_set(&both)),
            ],
        })
    }

    pub fn latency_bound_ns(&self, scenario: &str) -> Option<u64> {
        lookup(&self.latency_bounds_ns, scenario).copied()
    }

    pub fn min_query_count(&self, scenario: &str) -> Option<u64> {
        lookup(&self.min_query_counts, scenario).copied()
    }

    pub fn token_limits(&self, scenario: &str) -> Option<TokenLimits> {
        lookup(&self.token_latency_limits, scenario).copied()
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

    pub fn accuracy_targets(&self, scenario: &str) -> &[AccuracyTarget] {
        lookup(&self.accuracy_by_scenario, scenario).map_or(&self.accuracy, |t| t)
    }

    pub fn accuracy_sample_count_for(&self, scenario: &str) -> u64 {
        lookup(&self.accuracy_sample_counts, scenario)
            .copied()
            .unwrap_or(self.accuracy_sample_count)
    }

    pub fn test01_delta_percent(&self, metric: &str) -> f64 {
        lookup(&self.test01_delta_percent, metric)
            .copied()
            .unwrap_or(self.default_test01_delta_percent)
    }

    /// The detail-log key of the result of a run of LoadGen scenario `scenario`.
    pub fn result_field(&self, scenario: &str) -> Option<&str> {
        match lookup(&self.result_fields, scenario) {
            Some(field) => Some(field),
            None => default_result_field(scenario),
        }
    }
}

/// The detail-log key of a LoadGen scenario's result as the checker reads it.
pub fn default_result_field(scenario: &str) -> Option<&'static str> {
    Some(match scenario {
        "Offline" => "result_samples_per_second",
        "Server" => "result_completed_samples_per_sec",
        "SingleStream" => "early_stopping_latency_ss",
        "MultiStream" => "early_stopping_latency_ms",
        _ => return None,
    })
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

fn lookup<'a, T>(list: &'a [(String, T)], key: &str) -> Option<&'a T> {
    list.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// `^NAME=<number>`: how mlperf-host's scorers state a metric in accuracy.txt.
fn own_pattern(name: &str) -> Regex {
    Regex::new(&format!(r"^{}=([\d.]+)", regex::escape(name))).expect("an escaped name")
}

/// The accuracy.txt value a run must reach, from the metric and its reference run.
fn accuracy_target(accuracy: &Accuracy) -> Result<Option<AccuracyTarget>, String> {
    let target = |name: &str, bound: f64, why: String| AccuracyTarget {
        name: name.to_string(),
        pattern: own_pattern(name),
        bound,
        why,
    };
    match accuracy {
        Accuracy::Top1 {
            reference: Some(reference),
            threshold,
            ..
        } => {
            let text = std::fs::read_to_string(reference)
                .map_err(|e| format!("{}: {e}", reference.display()))?;
            let json: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| format!("{}: invalid JSON: {e}", reference.display()))?;
            let top1 = json
                .get("onnxruntime_top1")
                .and_then(serde_json::Value::as_f64)
                .ok_or_else(|| format!("{}: no onnxruntime_top1", reference.display()))?;
            Ok(Some(target(
                "accuracy",
                100.0 * top1 * threshold,
                format!(
                    "{:.0} % of the reference {:.3} % ({})",
                    100.0 * threshold,
                    100.0 * top1,
                    reference.display()
                ),
            )))
        }
        Accuracy::Cosine { threshold, .. } => Ok(Some(target(
            "mean_cosine",
            *threshold,
            format!("mean cosine similarity to the reference embeddings >= {threshold}"),
        ))),
        Accuracy::Rouge { threshold, .. } => Ok(Some(target(
            "rouge1",
            100.0 * threshold,
            format!(
                "{:.0} % of the references' own rouge1 (100)",
                100.0 * threshold
            ),
        ))),
        Accuracy::Top1 {
            reference: None, ..
        } => Err("[accuracy] has no reference to hold a submission to".to_string()),
        Accuracy::Unavailable { .. } => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resnet_has_the_rounds_rules() {
        let round = Round::find(None).unwrap();
        let rules = Rules::for_benchmark("resnet50", &round).unwrap();
        assert_eq!(rules.latency_bound_ns("Server"), Some(15_000_000));
        assert_eq!(rules.offline_min_samples_per_query, Some(24_576));
        assert_eq!(rules.compliance, ["TEST01", "TEST04"]);
        assert!(rules.scenario_set("datacenter").is_none());
        assert_eq!(
            rules.scenario_set("edge,datacenter").unwrap().required,
            ["SingleStream", "MultiStream", "Offline", "Server"]
        );
    }

    #[test]
    fn our_own_benchmarks_take_the_rounds_seeds_and_their_own_sizes() {
        let round = Round::find(None).unwrap();
        let dir = std::env::temp_dir().join(format!("rules-own-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("tiny.toml");
        std::fs::write(
            &file,
            r#"
name = "tiny"
[dataset]
inputs = "inputs.npy"
[accuracy]
metric = "cosine"
embeddings = "embeddings.npy"
threshold = 0.99
[plugin]
name = "null"
[submission]
dataset_size = 100
required_scenarios_edge = ["SingleStream"]
"#,
        )
        .unwrap();
        let benchmark = Benchmark::read(&file).unwrap();
        let rules = Rules::from_definition(&benchmark, &round).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(rules.seeds, round.seeds);
        assert_eq!(rules.dataset_size, 100);
        assert_eq!(
            rules.scenario_set("edge").unwrap().required,
            ["SingleStream"]
        );
        assert!(rules
            .scenario_set("edge")
            .unwrap()
            .optional
            .contains(&"Offline".to_string()));
        assert_eq!(
            rules.accuracy[0].score("mean_cosine=0.9987 samples=100"),
            Some(0.9987)
        );
        let error = Rules::for_benchmark("no-such-model", &round)
            .unwrap_err()
            .to_string();
        assert!(error.contains("round v6.1"), "{error}");
    }

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
