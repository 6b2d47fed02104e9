//! A round's rules as data (`configs/rounds/<round>.toml`): the seeds, the minimum duration,
//! and per MLPerf model its sample counts, scenarios per system type, accuracy targets, latency
//! bounds and compliance tests. `--round` selects another file; without it, v6.1 (the file in
//! the repository, else the copy built in).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mlperf_loadgen::TestScenario;
use regex::Regex;
use serde::Deserialize;

use super::rules::{AccuracyTarget, Rules, ScenarioSet, Seeds, TokenLimits};
use crate::scenario::Scenario;

/// The round `check` applies when none is named.
pub const DEFAULT_ROUND: &str = "v6.1";
const BUILT_IN: &str = include_str!("../../configs/rounds/v6.1.toml");

#[derive(Debug, thiserror::Error)]
pub enum RoundError {
    #[error("round {name}: not found (searched {searched})")]
    NotFound { name: String, searched: String },
    #[error("{path}: {message}")]
    Read { path: String, message: String },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

/// One round: the rules every run of a submission shares, and each model's own.
#[derive(Debug, Clone)]
pub struct Round {
    pub name: String,
    /// The file the rules came from, for messages.
    pub source: String,
    pub seeds: Seeds,
    pub min_duration_ms: u64,
    pub max_accuracy_log_bytes: u64,
    /// Whether the network division may batch queries on the load-generating node.
    pub network_client_batching: bool,
    aliases: BTreeMap<String, String>,
    models: BTreeMap<String, Rules>,
}

impl Round {
    /// `spec`: a path to a `.toml` file, or a round's name looked up in `configs/rounds/`
    /// under the working directory and the repository the executable was built in; None is
    /// [`DEFAULT_ROUND`], built in when no file is found.
    pub fn find(spec: Option<&str>) -> Result<Round, RoundError> {
        let name = spec.unwrap_or(DEFAULT_ROUND);
        if name.ends_with(".toml") || name.contains(std::path::MAIN_SEPARATOR) {
            return Round::read(Path::new(name));
        }
        let candidates = search_paths(name);
        if let Some(path) = candidates.iter().find(|p| p.is_file()) {
            return Round::read(path);
        }
        if name == DEFAULT_ROUND {
            return Round::parse(BUILT_IN, "configs/rounds/v6.1.toml (built in)");
        }
        Err(RoundError::NotFound {
            name: name.to_string(),
            searched: candidates
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    pub fn read(path: &Path) -> Result<Round, RoundError> {
        let text = std::fs::read_to_string(path).map_err(|e| RoundError::Read {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Round::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, source: &str) -> Result<Round, RoundError> {
        let invalid = |message: String| RoundError::Invalid {
            path: source.to_string(),
            message,
        };
        let raw: RawRound = toml::from_str(text).map_err(|e| invalid(e.to_string()))?;
        let seeds = Seeds {
            qsl_rng_seed: seed(&raw.seeds.qsl_rng_seed, "seeds.qsl_rng_seed").map_err(invalid)?,
            sample_index_rng_seed: seed(
                &raw.seeds.sample_index_rng_seed,
                "seeds.sample_index_rng_seed",
            )
            .map_err(invalid)?,
            schedule_rng_seed: seed(&raw.seeds.schedule_rng_seed, "seeds.schedule_rng_seed")
                .map_err(invalid)?,
        };
        let mut patterns = BTreeMap::new();
        for (metric, pattern) in &raw.accuracy_patterns {
            let regex = Regex::new(&format!("^(?:{pattern})")).map_err(|e| {
                invalid(format!(
                    "accuracy_patterns.{metric}: not a regular expression: {e}"
                ))
            })?;
            if regex.captures_len() < 2 {
                return Err(invalid(format!(
                    "accuracy_patterns.{metric}: no group to read the value from"
                )));
            }
            patterns.insert(metric.clone(), regex);
        }
        for (alias, model) in &raw.aliases {
            if !raw.models.contains_key(model) {
                return Err(invalid(format!(
                    "aliases.{alias}: {model:?} is not one of the round's models"
                )));
            }
        }
        let context = ModelContext {
            round: &raw.round,
            source,
            seeds,
            min_duration_ms: raw.min_duration_ms,
            max_accuracy_log_bytes: raw.max_accuracy_log_bytes,
            network_client_batching: raw.network_client_batching,
            patterns: &patterns,
        };
        let mut models = BTreeMap::new();
        for (name, model) in raw.models {
            let rules = context
                .rules(&name, model)
                .map_err(|message| invalid(format!("models.{name}: {message}")))?;
            models.insert(name, rules);
        }
        Ok(Round {
            name: raw.round,
            source: source.to_string(),
            seeds,
            min_duration_ms: raw.min_duration_ms,
            max_accuracy_log_bytes: raw.max_accuracy_log_bytes,
            network_client_batching: raw.network_client_batching,
            aliases: raw.aliases,
            models,
        })
    }

    /// The round's own name for a folder name (`resnet50` → `resnet`), when it is one of its
    /// models.
    pub fn model_name<'a>(&'a self, benchmark: &'a str) -> Option<&'a str> {
        if self.models.contains_key(benchmark) {
            return Some(benchmark);
        }
        self.aliases.get(benchmark).map(String::as_str)
    }

    /// The rules of one of the round's models.
    pub fn model(&self, benchmark: &str) -> Option<&Rules> {
        self.models.get(self.model_name(benchmark)?)
    }

    pub fn models(&self) -> impl Iterator<Item = &Rules> {
        self.models.values()
    }
}

fn search_paths(name: &str) -> Vec<PathBuf> {
    crate::benchmark::config_search_paths(Path::new("rounds").join(format!("{name}.toml")))
}

fn seed(text: &str, key: &str) -> Result<u64, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("{key}: {text:?} is not an unsigned 64-bit integer"))
}

/// What every model of the round shares, to build its rules.
struct ModelContext<'a> {
    round: &'a str,
    source: &'a str,
    seeds: Seeds,
    min_duration_ms: u64,
    max_accuracy_log_bytes: u64,
    network_client_batching: bool,
    patterns: &'a BTreeMap<String, Regex>,
}

impl ModelContext<'_> {
    fn rules(&self, name: &str, model: RawModel) -> Result<Rules, String> {
        let targets = |bounds: &[RawBound], key: &str| -> Result<Vec<AccuracyTarget>, String> {
            bounds.iter().map(|bound| self.target(bound, key)).collect()
        };
        let mut accuracy_by_scenario = Vec::new();
        for (name, bounds) in &model.accuracy_by_scenario {
            let scenario = scenario(name, "accuracy_by_scenario")?;
            accuracy_by_scenario.push((scenario, targets(bounds, "accuracy_by_scenario")?));
        }
        let (accuracy_sample_count, accuracy_sample_counts) = match model.accuracy_sample_count {
            None => (model.dataset_size, Vec::new()),
            Some(RawCount::All(n)) => (n, Vec::new()),
            Some(RawCount::ByScenario(counts)) => (
                model.dataset_size,
                keyed_by_scenario(counts, "accuracy_sample_count")?,
            ),
        };
        let mut scenarios = Vec::new();
        for (system_type, set) in model.scenarios {
            if !SYSTEM_TYPES.contains(&system_type.as_str()) {
                return Err(format!(
                    "scenarios.{system_type}: not a system type ({})",
                    SYSTEM_TYPES.join(", ")
                ));
            }
            let list = |names: &[String]| -> Result<Vec<Scenario>, String> {
                names
                    .iter()
                    .map(|name| scenario(name, "scenarios"))
                    .collect()
            };
            scenarios.push((
                system_type,
                ScenarioSet {
                    required: list(&set.required)?,
                    optional: list(&set.optional)?,
                },
            ));
        }
        let default_delta = if name.contains("99.9") { 0.1 } else { 1.0 };
        Ok(Rules {
            benchmark: name.to_string(),
            source: format!("MLPerf Inference {} rules ({})", self.round, self.source),
            llm: model.llm,
            seeds: self.seeds,
            min_duration_ms: model.min_duration_ms.unwrap_or(self.min_duration_ms),
            max_accuracy_log_bytes: self.max_accuracy_log_bytes,
            network_client_batching: self.network_client_batching,
            min_performance_sample_count: model.performance_sample_count,
            dataset_size: model.dataset_size,
            accuracy_sample_count,
            accuracy_sample_counts,
            offline_min_samples_per_query: model.offline_min_samples_per_query,
            latency_bounds_ns: keyed_by_scenario(model.latency_ns, "latency_ns")?,
            token_latency_limits: keyed_by_scenario(model.token_latency_ns, "token_latency_ns")?
                .into_iter()
                .map(|(scenario, limits)| {
                    let limits = TokenLimits {
                        ttft_ns: limits.ttft,
                        tpot_ns: limits.tpot,
                    };
                    (scenario, limits)
                })
                .collect(),
            min_query_counts: keyed_by_scenario(model.min_queries, "min_queries")?,
            accuracy: targets(&model.accuracy, "accuracy")?,
            accuracy_by_scenario,
            accuracy_upper: targets(&model.accuracy_upper, "accuracy_upper")?,
            test01_delta_percent: model.test01_accuracy_delta_percent.into_iter().collect(),
            default_test01_delta_percent: default_delta,
            result_fields: result_fields(model.result_field)?,
            latency_in_seconds: model.latency_in_seconds,
            accuracy_files: model.accuracy_files.into_iter().collect(),
            compliance: model.compliance,
            scenarios,
        })
    }

    fn target(&self, bound: &RawBound, key: &str) -> Result<AccuracyTarget, String> {
        let pattern = self.patterns.get(&bound.metric).ok_or_else(|| {
            format!(
                "{key}: metric {:?} has no entry in [accuracy_patterns]",
                bound.metric
            )
        })?;
        let (value, why) = match (bound.value, bound.reference, bound.fraction) {
            (Some(value), None, None) => (value, format!("{} {value}", bound.metric)),
            (None, Some(reference), Some(fraction)) => (
                reference * fraction,
                format!(
                    "{} % of the reference {} {reference}",
                    // 110 rather than 110.00000000000001: the fraction in percent, shortest.
                    (fraction * 100.0 * 1e9).round() / 1e9,
                    bound.metric
                ),
            ),
            _ => {
                return Err(format!(
                    "{key}: {:?} needs either `value` or both `reference` and `fraction`",
                    bound.metric
                ))
            }
        };
        Ok(AccuracyTarget {
            name: bound.metric.clone(),
            pattern: pattern.clone(),
            bound: value,
            why,
        })
    }
}

/// The system types a system description may name, as the round's tables key them.
pub const SYSTEM_TYPES: [&str; 3] = ["datacenter", "edge", "datacenter-edge"];

/// The scenario a round table's `key` names.
fn scenario(name: &str, key: &str) -> Result<Scenario, String> {
    name.parse().map_err(|e| format!("{key}: {e}"))
}

/// `result_field`, keyed by the LoadGen scenario of the run whose log holds it.
fn result_fields(fields: BTreeMap<String, String>) -> Result<Vec<(TestScenario, String)>, String> {
    keyed_by_scenario(fields, "result_field")?
        .into_iter()
        .map(|(scenario, field)| match scenario.is_loadgen() {
            true => Ok((scenario.loadgen(), field)),
            false => Err(format!(
                "result_field: {scenario} is not a LoadGen scenario (its runs are {}: key the field so)",
                scenario.loadgen()
            )),
        })
        .collect()
}

/// A round table's per-scenario values, their keys read as scenarios.
fn keyed_by_scenario<T>(
    values: BTreeMap<String, T>,
    key: &str,
) -> Result<Vec<(Scenario, T)>, String> {
    values
        .into_iter()
        .map(|(name, value)| Ok((scenario(&name, key)?, value)))
        .collect()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRound {
    round: String,
    min_duration_ms: u64,
    max_accuracy_log_bytes: u64,
    #[serde(default)]
    network_client_batching: bool,
    seeds: RawSeeds,
    #[serde(default)]
    aliases: BTreeMap<String, String>,
    accuracy_patterns: BTreeMap<String, String>,
    models: BTreeMap<String, RawModel>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSeeds {
    qsl_rng_seed: String,
    sample_index_rng_seed: String,
    schedule_rng_seed: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    #[serde(default)]
    llm: bool,
    performance_sample_count: u64,
    dataset_size: u64,
    accuracy_sample_count: Option<RawCount>,
    offline_min_samples_per_query: Option<u64>,
    min_duration_ms: Option<u64>,
    #[serde(default)]
    scenarios: BTreeMap<String, RawScenarioSet>,
    accuracy: Vec<RawBound>,
    #[serde(default)]
    accuracy_by_scenario: BTreeMap<String, Vec<RawBound>>,
    #[serde(default)]
    accuracy_upper: Vec<RawBound>,
    #[serde(default)]
    test01_accuracy_delta_percent: BTreeMap<String, f64>,
    #[serde(default)]
    latency_ns: BTreeMap<String, u64>,
    #[serde(default)]
    token_latency_ns: BTreeMap<String, RawTokenLimits>,
    #[serde(default)]
    min_queries: BTreeMap<String, u64>,
    #[serde(default)]
    result_field: BTreeMap<String, String>,
    #[serde(default)]
    latency_in_seconds: bool,
    #[serde(default)]
    accuracy_files: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    compliance: Vec<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawCount {
    All(u64),
    ByScenario(BTreeMap<String, u64>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenarioSet {
    #[serde(default)]
    required: Vec<String>,
    #[serde(default)]
    optional: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBound {
    metric: String,
    value: Option<f64>,
    reference: Option<f64>,
    fraction: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTokenLimits {
    ttft: u64,
    tpot: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v61() -> Round {
        Round::parse(BUILT_IN, "v6.1.toml").unwrap()
    }

    #[test]
    fn the_built_in_round_has_the_checkers_values() {
        let round = v61();
        assert_eq!(round.name, "v6.1");
        assert_eq!(round.seeds.schedule_rng_seed, 16159082839903944936);
        assert_eq!(round.seeds.qsl_rng_seed, 2085463073848966840);
        assert_eq!(round.models().count(), 21);
        let resnet = round.model("resnet50").unwrap();
        assert_eq!(resnet.benchmark, "resnet");
        assert_eq!(resnet.latency_bound_ns(Scenario::Server), Some(15_000_000));
        assert_eq!(resnet.offline_min_samples_per_query, Some(24_576));
        assert_eq!(resnet.min_query_count(Scenario::MultiStream), Some(270_336));
        assert_eq!(resnet.accuracy[0].bound, 76.46 * 0.99);
        assert_eq!(resnet.compliance, ["TEST01", "TEST04"]);
        let llama = round.model("llama3_1-8b").unwrap();
        assert!(llama.llm);
        assert_eq!(
            llama.token_limits(Scenario::Interactive),
            Some(TokenLimits {
                ttft_ns: 500_000_000,
                tpot_ns: 30_000_000
            })
        );
        assert_eq!(llama.accuracy_targets(Scenario::Offline).len(), 5);
        assert_eq!(llama.accuracy_upper[0].bound, 8167644.0 * 1.1);
        let qwen = round.model("qwen3-vl-235b-a22b").unwrap();
        assert_eq!(qwen.accuracy_sample_count_for(Scenario::Interactive), 8000);
        assert_eq!(qwen.accuracy_sample_count_for(Scenario::Offline), 48289);
        assert_eq!(
            qwen.accuracy_targets(Scenario::Interactive)[0].bound,
            0.7878 * 0.99
        );
        assert_eq!(
            round.model("gpt-oss-120b").unwrap().compliance,
            ["TEST07", "TEST09"]
        );
        let wan = round.model("wan-2.2-t2v-a14b").unwrap();
        assert!(wan.latency_in_seconds && !resnet.latency_in_seconds);
        assert_eq!(wan.accuracy_files[0].0, "videos");
        assert_eq!(wan.accuracy_files[0].1.len(), 10);
        assert_eq!(round.model("e2e-rag-qna").unwrap().min_duration_ms, 0);
        assert!(round.model("retinanet").is_none());
    }

    #[test]
    fn the_checkers_accuracy_lines_are_read() {
        let round = v61();
        let score = |model: &str, scenario: &str, line: &str| -> Vec<Option<f64>> {
            round
                .model(model)
                .unwrap()
                .accuracy_targets(scenario.parse().unwrap())
                .iter()
                .map(|t| t.score(line))
                .collect()
        };
        assert_eq!(
            score(
                "resnet",
                "Offline",
                "accuracy=76.012%, good=38006, total=50000"
            ),
            [Some(76.012)]
        );
        assert_eq!(
            score(
                "bert-99",
                "Offline",
                "{\"exact_match\": 83.6, \"f1\": 90.88}"
            ),
            [Some(90.88)]
        );
        assert_eq!(
            score("llama3.1-8b", "Offline", "{'rouge1': 38.81, 'rouge2': 15.95, 'rougeL': 24.5, 'rougeLsum': 35.8, 'gen_len': 8200000, 'gen_num': 13368}"),
            [Some(38.81), Some(15.95), Some(24.5), Some(35.8), Some(8200000.0)]
        );
        assert_eq!(
            score(
                "whisper",
                "Offline",
                "Word Error Rate: 2.06%, accuracy=97.94%"
            ),
            [Some(97.94)]
        );
        assert_eq!(score("resnet", "Offline", "no score here"), [None]);
    }

    #[test]
    fn a_broken_round_is_refused_naming_the_key() {
        let broken = BUILT_IN.replace(
            "schedule_rng_seed = \"16159082839903944936\"",
            "schedule_rng_seed = \"-1\"",
        );
        let error = Round::parse(&broken, "r.toml").unwrap_err().to_string();
        assert!(
            error.contains("r.toml") && error.contains("seeds.schedule_rng_seed"),
            "{error}"
        );
        let broken = BUILT_IN.replace("metric = \"F1\"", "metric = \"F2\"");
        let error = Round::parse(&broken, "r.toml").unwrap_err().to_string();
        assert!(
            error.contains("models.bert-99") && error.contains("\"F2\""),
            "{error}"
        );
        let broken = BUILT_IN.replace("\"Offline\", \"Server\"]", "\"Offline\", \"Sever\"]");
        let error = Round::parse(&broken, "r.toml").unwrap_err().to_string();
        assert!(error.contains("\"Sever\" is not a scenario"), "{error}");
        // A result field belongs to the LoadGen scenario whose log holds it.
        let broken = BUILT_IN.replacen(
            "result_field = { Offline = \"result_tokens_per_second\", Server =",
            "result_field = { Offline = \"result_tokens_per_second\", Interactive =",
            1,
        );
        assert_ne!(broken, BUILT_IN);
        let error = Round::parse(&broken, "r.toml").unwrap_err().to_string();
        assert!(
            error.contains("result_field: Interactive is not a LoadGen scenario"),
            "{error}"
        );
        let error = Round::find(Some("v0.0")).unwrap_err().to_string();
        assert!(error.contains("round v0.0: not found"), "{error}");
    }
}
