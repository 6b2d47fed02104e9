//! The files `submit` writes into a tree: a scenario folder's user.conf (from the run's
//! requested settings), measurements.json and README.md, and the code folder's README.md.

use mlperf_loadgen::TestScenario;
use serde_json::{json, Value};

use super::system::FILL_IN;
use super::tree::ScenarioDir;
use crate::logs::DetailLog;

/// measurements.json's field for the data set's sha256 (mlperf-host's; the checker ignores
/// fields it does not require).
pub const DATASET_SHA256_FIELD: &str = "dataset_sha256";

/// (requested_* log key, user.conf key, factor from the logged unit to the config's).
const USER_CONF_KEYS: [(&str, &str, f64); 17] = [
    ("requested_min_duration_ms", "min_duration", 1.0),
    ("requested_max_duration_ms", "max_duration", 1.0),
    ("requested_min_query_count", "min_query_count", 1.0),
    ("requested_max_query_count", "max_query_count", 1.0),
    (
        "requested_performance_sample_count_override",
        "performance_sample_count_override",
        1.0,
    ),
    ("requested_offline_expected_qps", "target_qps", 1.0),
    ("requested_server_target_qps", "target_qps", 1.0),
    ("requested_server_target_latency_ns", "target_latency", 1e-6),
    (
        "requested_single_stream_expected_latency_ns",
        "target_latency",
        1e-6,
    ),
    (
        "requested_multi_stream_expected_latency_ns",
        "target_latency",
        1e-6,
    ),
    (
        "requested_single_stream_target_latency_percentile",
        "target_latency_percentile",
        100.0,
    ),
    (
        "requested_multi_stream_target_latency_percentile",
        "target_latency_percentile",
        100.0,
    ),
    (
        "requested_server_target_latency_percentile",
        "target_latency_percentile",
        100.0,
    ),
    (
        "requested_multi_stream_samples_per_query",
        "samples_per_query",
        1.0,
    ),
    (
        "requested_sample_concatenate_permutation",
        "sample_concatenate_permutation",
        1.0,
    ),
    ("requested_server_coalesce_queries", "coalesce_queries", 1.0),
    (
        "requested_server_max_async_queries",
        "max_async_queries",
        1.0,
    ),
];

/// A user.conf that reproduces the run's requested settings over mlperf.conf.
pub fn user_conf(model: &str, scenario: TestScenario, log: &DetailLog) -> String {
    let mut text = format!(
        "# {model} {scenario}: the settings this run requested, written by mlperf-host submit\n\
         # from its detail log (mlperf.conf's rules apply under them).\n"
    );
    for (log_key, conf_key, factor) in USER_CONF_KEYS {
        if let Some(value) = log.f64(log_key) {
            text.push_str(&format!(
                "{model}.{scenario}.{conf_key} = {}\n",
                number(value * factor)
            ));
        }
    }
    text
}

/// The measurements.json fields, from what the backend plugin logged about its model, and the
/// data set's sha256 when the runs logged it.
pub fn measurements_json(log: &DetailLog, dataset_sha256: Option<&str>) -> String {
    let attribute = |name: &str| {
        log.str(&format!("sut_plugin_attribute_{name}"))
            .map(str::to_string)
    };
    let precision = attribute("precision");
    let weights = match (attribute("model"), attribute("model_sha")) {
        (Some(model), Some(sha)) => format!("{} (sha256 {sha})", file_name(&model)),
        (Some(model), None) => file_name(&model),
        _ => format!("{FILL_IN}the file of the starting weights"),
    };
    let or_fill = |value: Option<String>, what: &str| value.unwrap_or(format!("{FILL_IN}{what}"));
    let mut measurements = json!({
        "input_data_types": or_fill(precision.clone(), "the data types of the model's inputs"),
        "retraining": "No",
        "starting_weights_filename": weights,
        "weight_data_types": or_fill(precision, "the data types of the weights"),
        "weight_transformations": "No",
    });
    if let Some(digest) = dataset_sha256 {
        measurements[DATASET_SHA256_FIELD] = json!(digest);
    }
    let mut text = serde_json::to_string_pretty(&measurements).expect("a JSON object");
    text.push('\n');
    text
}

/// The scenario folder's README.md: how the results were made.
pub fn scenario_readme(target: &ScenarioDir, log: &DetailLog, sources: &[String]) -> String {
    let (benchmark, scenario) = (&target.benchmark, &target.scenario);
    let mut text = format!(
        "# {benchmark}, {scenario}, on {}\n\n\
         Measured with mlperf-host (LoadGen {}), backend plugin {} {}.\n\n\
         ## Reproduce\n\n```sh\n",
        target.system,
        log.str("loadgen_version").unwrap_or("?"),
        log.str("sut_plugin_name").unwrap_or("?"),
        log.str("sut_plugin_version").unwrap_or(""),
    );
    for mode in ["AccuracyOnly", "PerformanceOnly"] {
        text.push_str(&format!(
            "mlperf-host run --benchmark {benchmark} --scenario {scenario} --mode {mode} --user-conf user.conf --out {}\n",
            if mode == "AccuracyOnly" { "accuracy" } else { "performance" }
        ));
    }
    text.push_str("```\n\n## Filed from\n\n");
    for source in sources {
        text.push_str(&format!("- {source}\n"));
    }
    text
}

/// `code/<benchmark>/README.md`: the code that ran it.
pub fn code_readme(benchmark: &str, log: &DetailLog) -> String {
    let attributes: Vec<String> = log
        .with_prefix("sut_plugin_")
        .into_iter()
        .map(|(key, value)| format!("- `{key}`: {}", plain(value)))
        .collect();
    format!(
        "# {benchmark}\n\nRun by mlperf-host {} (`mlperf-host run --benchmark {benchmark}`), \
         with this backend plugin:\n\n{}\n",
        env!("CARGO_PKG_VERSION"),
        attributes.join("\n")
    )
}

pub fn src_readme() -> String {
    format!(
        "# Source\n\nThe results were measured with mlperf-host {}; code/ describes each \
         benchmark's backend.\n",
        env!("CARGO_PKG_VERSION")
    )
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn file_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

/// A config value: integers without a fraction, others as short as they round-trip.
fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_conf_converts_units() {
        let log = DetailLog::parse(concat!(
            ":::MLLOG {\"key\": \"requested_server_target_latency_ns\", \"value\": 15000000}\n",
            ":::MLLOG {\"key\": \"requested_min_duration_ms\", \"value\": 1000}\n",
            ":::MLLOG {\"key\": \"requested_server_target_latency_percentile\", \"value\": 0.99}\n",
        ))
        .unwrap();
        let text = user_conf("fmnist", TestScenario::Server, &log);
        assert!(
            text.contains("fmnist.Server.target_latency = 15\n"),
            "{text}"
        );
        assert!(
            text.contains("fmnist.Server.min_duration = 1000\n"),
            "{text}"
        );
        assert!(
            text.contains("fmnist.Server.target_latency_percentile = 99\n"),
            "{text}"
        );
    }
}
