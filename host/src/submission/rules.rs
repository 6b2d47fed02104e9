//! The rules a benchmark's submission is checked against: MLPerf's v6.1 values for its own
//! models, the `[submission]` section of a benchmark definition for ours.

use crate::benchmark::{Accuracy, Benchmark};

/// The seeds of the v6.1 rules (mlperf.conf); a submission's runs must use them.
pub const QSL_RNG_SEED: u64 = 2085463073848966840;
pub const SAMPLE_INDEX_RNG_SEED: u64 = 2747215439041700203;
pub const SCHEDULE_RNG_SEED: u64 = 16159082839903944936;
/// The minimum duration of a performance run.
pub const MIN_DURATION_MS: u64 = 600_000;
/// The largest accuracy log a tree may hold (the rest is replaced by its hash).
pub const MAX_ACCURACY_LOG_BYTES: u64 = 10 * 1024;

/// One benchmark's rules.
#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    pub benchmark: String,
    /// Where the rules come from, for messages.
    pub source: String,
    pub min_performance_sample_count: u64,
    /// Samples an accuracy run must cover.
    pub dataset_size: u64,
    pub offline_min_samples_per_query: u64,
    /// (scenario, bound in ns).
    pub latency_bounds_ns: Vec<(String, u64)>,
    /// Minimum query counts of scenarios without early stopping.
    pub min_query_counts: Vec<(String, u64)>,
    pub accuracy: Option<AccuracyTarget>,
    pub compliance: Vec<String>,
    pub required_scenarios_datacenter: Vec<String>,
    pub required_scenarios_edge: Vec<String>,
}

/// An accuracy.txt line `NAME=VALUE…` whose value must reach `minimum`.
#[derive(Debug, Clone, PartialEq)]
pub struct AccuracyTarget {
    pub name: &'static str,
    pub minimum: f64,
    /// The target's derivation, for messages.
    pub why: String,
}

#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("benchmark {0}: no submission rules (not an MLPerf model with built-in rules, and its definition has no [submission] section)")]
    Missing(String),
    #[error("benchmark {benchmark}: {message}")]
    Invalid { benchmark: String, message: String },
}

impl Rules {
    /// The rules for `name`: MLPerf's own for its models, else the benchmark definition's.
    pub fn for_benchmark(name: &str) -> Result<Rules, RulesError> {
        if let Some(rules) = official(name) {
            return Ok(rules);
        }
        let benchmark = Benchmark::find(name).map_err(|_| RulesError::Missing(name.to_string()))?;
        Rules::from_definition(&benchmark)
    }

    pub fn from_definition(benchmark: &Benchmark) -> Result<Rules, RulesError> {
        let section = benchmark
            .submission
            .as_ref()
            .ok_or_else(|| RulesError::Missing(benchmark.name.clone()))?;
        let invalid = |message: String| RulesError::Invalid {
            benchmark: benchmark.name.clone(),
            message,
        };
        Ok(Rules {
            benchmark: benchmark.name.clone(),
            source: benchmark.file.display().to_string(),
            min_performance_sample_count: benchmark
                .performance_sample_count
                .map_or(section.dataset_size, |n| n as u64),
            dataset_size: section.dataset_size,
            offline_min_samples_per_query: section.offline_min_samples_per_query,
            latency_bounds_ns: section
                .latency_bounds_ms
                .iter()
                .map(|(scenario, ms)| (scenario.clone(), (ms * 1e6).round() as u64))
                .collect(),
            min_query_counts: Vec::new(),
            accuracy: accuracy_target(&benchmark.accuracy).map_err(invalid)?,
            compliance: section.compliance.clone(),
            required_scenarios_datacenter: section.required_scenarios_datacenter.clone(),
            required_scenarios_edge: section.required_scenarios_edge.clone(),
        })
    }

    pub fn latency_bound_ns(&self, scenario: &str) -> Option<u64> {
        self.latency_bounds_ns
            .iter()
            .find(|(s, _)| s == scenario)
            .map(|(_, ns)| *ns)
    }

    pub fn min_query_count(&self, scenario: &str) -> Option<u64> {
        self.min_query_counts
            .iter()
            .find(|(s, _)| s == scenario)
            .map(|(_, n)| *n)
    }
}

/// The accuracy.txt value a run must reach, from the metric and its reference run.
fn accuracy_target(accuracy: &Accuracy) -> Result<Option<AccuracyTarget>, String> {
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
            Ok(Some(AccuracyTarget {
                name: "accuracy",
                minimum: 100.0 * top1 * threshold,
                why: format!(
                    "{:.0} % of the reference {:.3} % ({})",
                    100.0 * threshold,
                    100.0 * top1,
                    reference.display()
                ),
            }))
        }
        Accuracy::Cosine { threshold, .. } => Ok(Some(AccuracyTarget {
            name: "mean_cosine",
            minimum: *threshold,
            why: format!("mean cosine similarity to the reference embeddings >= {threshold}"),
        })),
        Accuracy::Rouge { threshold, .. } => Ok(Some(AccuracyTarget {
            name: "rouge1",
            minimum: 100.0 * threshold,
            why: format!(
                "{:.0} % of the references' own rouge1 (100)",
                100.0 * threshold
            ),
        })),
        Accuracy::Top1 {
            reference: None, ..
        } => Err("[accuracy] has no reference to hold a submission to".to_string()),
        Accuracy::Unavailable { .. } => Ok(None),
    }
}

/// MLPerf's v6.1 rules for the models we carry (`resnet50`, whose submission name is
/// `resnet`).
fn official(name: &str) -> Option<Rules> {
    match name {
        "resnet" | "resnet50" => Some(Rules {
            benchmark: "resnet".to_string(),
            source: "MLPerf Inference v6.1 rules".to_string(),
            min_performance_sample_count: 1024,
            dataset_size: 50_000,
            offline_min_samples_per_query: 24_576,
            latency_bounds_ns: vec![("Server".to_string(), 15_000_000)],
            min_query_counts: vec![("Offline".to_string(), 1)],
            accuracy: Some(AccuracyTarget {
                name: "accuracy",
                minimum: 76.46 * 0.99,
                why: "99 % of the FP32 reference 76.46 %".to_string(),
            }),
            compliance: vec!["TEST01".to_string(), "TEST04".to_string()],
            required_scenarios_datacenter: vec!["Server".to_string(), "Offline".to_string()],
            required_scenarios_edge: ["SingleStream", "MultiStream", "Offline"]
                .map(String::from)
                .to_vec(),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resnet_has_the_official_rules() {
        let rules = Rules::for_benchmark("resnet50").unwrap();
        assert_eq!(rules.latency_bound_ns("Server"), Some(15_000_000));
        assert_eq!(rules.offline_min_samples_per_query, 24_576);
        assert_eq!(rules.compliance, ["TEST01", "TEST04"]);
    }
}
