//! A point's figures as a `:::ENDPTS` log (`mlperf_log_details.txt`): one record per line,
//! `:::ENDPTS ` and compact JSON (`key`, `value`, `time_ms`, `namespace`, `event_type`,
//! `metadata{is_error,is_warning}`), keyed by LoadGen's names. The submission checker's
//! LoadGen log parser reads such a file as it reads a `:::MLLOG` detail log (mlcommons/inference
//! b66003e1); the record shape and the idea of renaming the client's keys to LoadGen's come from
//! mlcommons/endpoints 3a0a26b9, the only client that wrote one (docs/endpoints-format.md §1.4).
//!
//! Each figure is the one the checker's endpoints parser reads for the same key from
//! `result_summary.json` and `config.yaml` (early-stopping estimates for the percentiles), so
//! the two routes agree. The file's name is not the detail log's (`mlperf_log_detail.txt` in
//! `performance/run_1/`), so its presence does not take the folder out of endpoints mode.

use serde_json::{json, Value};

use super::{load_pattern, EndpointsRun};
use crate::sweep::SweepPoint;

pub(super) const FILE_NAME: &str = "mlperf_log_details.txt";

const MARKER: &str = ":::ENDPTS";

/// The percentiles LoadGen logs, as its keys spell them and as the summary keys them.
const PERCENTILES: [(&str, &str); 5] = [
    ("50.00", "50.0"),
    ("90.00", "90.0"),
    ("95.00", "95.0"),
    ("99.00", "99.0"),
    ("99.90", "99.9"),
];

/// The log's text: LoadGen keys in the order the 3a0a26b9 client's mapping lists them; a
/// figure the summary lacks (an early-stopping estimate of too few answers) is left out, as the
/// endpoints parser leaves out a null.
pub(super) fn endpts_log(point: &SweepPoint, run: &EndpointsRun) -> String {
    let summary = super::result_summary(point, run);
    let pattern = load_pattern(&point.mode);
    let at = |path: &[&str]| -> Value {
        path.iter()
            .try_fold(&summary, |value, key| value.get(*key))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let mut records: Vec<(String, Value)> = Vec::new();
    let mut put = |key: &str, value: Value| records.push((key.to_string(), value));

    put("loadgen_version", json!(env!("CARGO_PKG_VERSION")));
    put("loadgen_git_commit_hash", at(&["git_sha"]));
    put("test_datetime", at(&["test_started_at"]));
    put("qsl_reported_total_count", at(&["n_samples_issued"]));
    put("qsl_reported_performance_count", at(&["n_samples_issued"]));
    // LoadGen's name for an online load, which a LoadGen log reader expects.
    put("effective_scenario", json!("Server"));
    put("effective_test_mode", json!("PerformanceOnly"));
    put("streaming", json!("on"));
    put("min_output_tokens", at(&["output_sequence_lengths", "min"]));
    put("max_output_tokens", at(&["output_sequence_lengths", "max"]));
    put(
        "mean_output_tokens",
        at(&["output_sequence_lengths", "avg"]),
    );
    put("load_pattern", pattern["type"].clone());
    put(
        "effective_min_duration_ms",
        json!(run.duration.as_millis() as u64),
    );
    put("effective_max_duration_ms", json!(0));
    put("effective_sample_index_rng_seed", json!(run.seed));
    put("effective_schedule_rng_seed", json!(run.seed));
    put("generated_query_count", at(&["n_samples_issued"]));
    put("generated_query_duration", at(&["duration_ns"]));
    put("effective_target_qps", pattern["target_qps"].clone());
    put("result_completed_samples_per_sec", at(&["qps"]));
    put(
        "effective_max_async_queries",
        pattern["target_concurrency"].clone(),
    );
    for (block, prefix, suffix) in [
        ("latency", "result_", "_latency_ns"),
        ("ttft", "result_first_token_", "_latency_ns"),
    ] {
        put(&format!("{prefix}min{suffix}"), at(&[block, "min"]));
        put(&format!("{prefix}max{suffix}"), at(&[block, "max"]));
        put(&format!("{prefix}mean{suffix}"), at(&[block, "avg"]));
        for (loadgen, grid) in PERCENTILES {
            put(
                &format!("{prefix}{loadgen}_percentile{suffix}"),
                at(&[block, "early_stopping_percentiles", grid]),
            );
        }
    }
    for (loadgen, grid) in PERCENTILES {
        put(
            &format!("result_time_per_output_token_{loadgen}_percentile_ns"),
            at(&["tpot", "early_stopping_percentiles", grid]),
        );
    }
    put("result_time_per_output_token_min", at(&["tpot", "min"]));
    put("result_time_per_output_token_max", at(&["tpot", "max"]));
    put("result_time_per_output_token_mean", at(&["tpot", "avg"]));
    put("result_completed_tokens_per_second", at(&["tps"]));
    put(
        "result_validity",
        json!(if point.valid() { "VALID" } else { "INVALID" }),
    );
    put("result_query_count", at(&["n_samples_completed"]));
    put("num_errors", at(&["n_samples_failed"]));

    let mut log = String::new();
    for (key, value) in records {
        if value.is_null() {
            continue;
        }
        // Fields in LoadGen's order (serde_json would sort them). Written after the point,
        // all at once: no record has a time of its own.
        log.push_str(&format!(
            "{MARKER} {{\"key\":{},\"value\":{value},\"time_ms\":0.0,\
             \"namespace\":\"mlperf::logging\",\"event_type\":\"POINT_IN_TIME\",\
             \"metadata\":{{\"is_error\":false,\"is_warning\":false}}}}",
            Value::String(key),
        ));
        log.push('\n');
    }
    log
}
