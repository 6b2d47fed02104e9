//! Which rules hold a benchmark: the round's for its models, else the `[submission]` section
//! of our own benchmark definition, with the round's seeds and durations.

use regex::Regex;

use super::round::Round;
use super::rules::{AccuracyTarget, Rules, RulesError, ScenarioSet};
use crate::benchmark::{Accuracy, Benchmark};
use crate::scenario::Scenario;
use mlperf_loadgen::TestScenario;

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
        let scenario_set = |required: &[Scenario]| ScenarioSet {
            required: required.to_vec(),
            optional: TestScenario::ALL
                .map(Scenario::from)
                .into_iter()
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
                .map(|(scenario, ms)| (*scenario, (ms * 1e6).round() as u64))
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
        // A round's own benchmark is held to the round's target, not to one of ours.
        Accuracy::Imagenet { .. }
        | Accuracy::Coco
        | Accuracy::Kits19
        | Accuracy::Squad
        | Accuracy::Cnndm { .. }
        | Accuracy::Whisper { .. }
        | Accuracy::Unavailable { .. } => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resnet_has_the_rounds_rules() {
        let round = Round::find(None).unwrap();
        let rules = Rules::for_benchmark("resnet50", &round).unwrap();
        assert_eq!(rules.latency_bound_ns(Scenario::Server), Some(15_000_000));
        assert_eq!(rules.offline_min_samples_per_query, Some(24_576));
        assert_eq!(rules.compliance, ["TEST01", "TEST04"]);
        assert!(rules.scenario_set("datacenter").is_none());
        assert_eq!(
            rules.scenario_set("edge,datacenter").unwrap().required,
            [
                Scenario::SingleStream,
                Scenario::MultiStream,
                Scenario::Offline,
                Scenario::Server
            ]
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
            [Scenario::SingleStream]
        );
        assert!(rules
            .scenario_set("edge")
            .unwrap()
            .optional
            .contains(&Scenario::Offline));
        assert_eq!(
            rules.accuracy[0].score("mean_cosine=0.9987 samples=100"),
            Some(0.9987)
        );
        let error = Rules::for_benchmark("no-such-model", &round)
            .unwrap_err()
            .to_string();
        assert!(error.contains("round v6.1"), "{error}");
    }
}
