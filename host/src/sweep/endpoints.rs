//! Each point as MLPerf Endpoints' client writes a run (one load point): `config.yaml` and
//! `performance/result_summary.json`, in the layout and with the metric definitions that the
//! submission checker's endpoints mode reads (matched against mlcommons/endpoints ea332753
//! and mlcommons/inference b66003e1: docs/endpoints-format.md), and the same figures as a
//! `:::ENDPTS` log (`endpts_log.rs`).

mod endpts_log;

use std::path::{Path, PathBuf};
use std::time::Duration;

use mlperf_loadgen::early_stopping::percentile_estimate;
use mlperf_serving::{Arrivals, LoadMode};
use serde_json::{json, Map, Value};

use super::SweepPoint;

/// The percentiles a stat block lists, as Endpoints keys them.
const GRID: [f64; 12] = [
    99.9, 99.0, 97.0, 95.0, 90.0, 80.0, 75.0, 50.0, 25.0, 10.0, 5.0, 1.0,
];
const HISTOGRAM_BUCKETS: usize = 30;

/// What a point's files say beyond its figures.
#[derive(Debug, Clone)]
pub struct EndpointsRun {
    /// The model's name (`model_params.name`).
    pub model: String,
    pub seed: u64,
    pub warmup: Duration,
    pub duration: Duration,
}

/// Writes point `index` (from 0) under `out/endpoints/point-N/`; returns that folder.
pub fn write_point(
    out: &Path,
    index: usize,
    point: &SweepPoint,
    run: &EndpointsRun,
) -> std::io::Result<PathBuf> {
    let dir = out.join("endpoints").join(format!("point-{}", index + 1));
    std::fs::create_dir_all(dir.join("performance"))?;
    std::fs::write(dir.join("config.yaml"), config_yaml(point, run))?;
    let summary =
        serde_json::to_string_pretty(&result_summary(point, run)).expect("a JSON value serializes");
    std::fs::write(dir.join("performance/result_summary.json"), summary)?;
    std::fs::write(
        dir.join(endpts_log::FILE_NAME),
        endpts_log::endpts_log(point, run),
    )?;
    Ok(dir)
}

/// `performance/result_summary.json`.
pub fn result_summary(point: &SweepPoint, run: &EndpointsRun) -> Value {
    let series = &point.series;
    let duration_ns = (point.summary.window_s * 1e9).round() as u64;
    let completed = series.e2e.len();
    let mut summary = Map::new();
    let mut put = |key: &str, value: Value| summary.insert(key.to_string(), value);
    put("version", json!(env!("CARGO_PKG_VERSION")));
    put("git_sha", Value::Null);
    // As the client at ea332753 writes it (a TODO there).
    put("test_started_at", json!(0));
    put("n_samples_issued", json!(series.issued));
    put("n_samples_completed", json!(completed));
    put("n_samples_failed", json!(series.failed));
    put(
        "duration_ns",
        if duration_ns == 0 {
            Value::Null
        } else {
            json!(duration_ns)
        },
    );
    let complete = series.unfinished == 0 && point.saturated.is_none();
    put(
        "state",
        json!(if complete { "complete" } else { "interrupted" }),
    );
    put("complete", json!(complete));
    put("ttft", stat_block(&series.ttft, true, true));
    put("tpot", stat_block(&series.tpot, false, true));
    put("latency", stat_block(&series.e2e, true, true));
    put(
        "output_sequence_lengths",
        stat_block(&series.output_tokens, true, false),
    );
    put(
        "input_sequence_lengths",
        stat_block(&series.input_tokens, true, false),
    );
    put("legacy_loadgen_window_duration_ns", Value::Null);
    // Completed answers and their output tokens per second of the window (the client's
    // definitions but for a Poisson load's legacy LoadGen window, which is not used here).
    put("qps", finite(point.summary.requests_per_s));
    put("tps", finite(point.summary.output_tokens_per_s));
    // The Endpoints submission checker's optional figure (endpoints-submission-cli 3ebc0641):
    // tps over the provisioned kW, which it recomputes and holds to 1 %.
    if let Some(per_kw) = point.tokens_per_s_per_provisioned_kw() {
        put("system_tps_per_kw", finite(per_kw));
    }
    // A plugin reports no finish reason: every answer is counted as `other`.
    put(
        "finish_reason_counts",
        json!({"stop": 0, "length": 0, "tool_calls": 0, "content_filter": 0,
               "function_call": 0, "other": completed}),
    );
    put(
        "run_config",
        json!({
            "load_pattern": load_pattern(&point.mode),
            "warmup": {
                "enabled": !run.warmup.is_zero(), "n_requests": null, "salt": false,
                "drain": false, "warmup_random_seed": run.seed,
            },
            "scheduler_random_seed": run.seed,
            "dataloader_random_seed": run.seed,
        }),
    );
    Value::Object(summary)
}

/// The load as Endpoints names it: `concurrency` or `poisson` (gamma and constant arrivals
/// and trace replays have no Endpoints name and keep ours).
fn load_pattern(mode: &LoadMode) -> Value {
    match *mode {
        LoadMode::Concurrency(n) => {
            json!({"type": "concurrency", "target_qps": null, "target_concurrency": n})
        }
        LoadMode::Rate {
            arrivals,
            max_concurrency,
        } => {
            let kind = match arrivals {
                Arrivals::Poisson { .. } => "poisson",
                Arrivals::Gamma { .. } => "gamma",
                Arrivals::Constant { .. } => "constant",
            };
            let mut pattern = json!({
                "type": kind, "target_qps": arrivals.rate(), "target_concurrency": max_concurrency,
            });
            if kind == "poisson" {
                pattern["use_legacy_loadgen_qps_metrics"] = json!(false);
            }
            pattern
        }
        LoadMode::Replay { max_concurrency } => json!({
            "type": "replay", "target_qps": null, "target_concurrency": max_concurrency,
        }),
    }
}

/// `config.yaml`: the run's settings (nulls left out, as the client writes them).
pub fn config_yaml(point: &SweepPoint, run: &EndpointsRun) -> String {
    let pattern = load_pattern(&point.mode);
    let mut load = format!("    type: {}\n", pattern["type"].as_str().unwrap_or(""));
    for key in ["target_qps", "target_concurrency"] {
        if !pattern[key].is_null() {
            load.push_str(&format!("    {key}: {}\n", pattern[key]));
        }
    }
    format!(
        "name: {name}\n\
         version: '1.0'\n\
         type: online\n\
         model_params:\n  name: {model}\n  streaming: 'on'\n\
         settings:\n  runtime:\n    min_duration_ms: {min_ms}\n    max_duration_ms: 0\n    \
         scheduler_random_seed: {seed}\n    dataloader_random_seed: {seed}\n  \
         load_pattern:\n{load}  warmup:\n    enabled: {warmup}\n  \
         early_stopping:\n    enabled: true\n",
        name = yaml_string(&format!(
            "mlperf-host sweep: {}",
            super::mode_label(&point.mode)
        )),
        model = yaml_string(&run.model),
        min_ms = run.duration.as_millis(),
        seed = run.seed,
        warmup = !run.warmup.is_zero(),
    )
}

/// A YAML scalar in single quotes (a quote doubled).
fn yaml_string(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn finite(value: f64) -> Value {
    if value.is_finite() {
        json!(value)
    } else {
        Value::Null
    }
}

/// A stat block: total, min, max, median, avg, std_dev (n − 1), percentiles at the grid
/// (the order statistic at floor(p/100 · (n − 1))), LoadGen's early-stopping estimates for
/// the grid's entries of 50 and above, and 30 log-spaced histogram buckets over [min, max].
fn stat_block(values: &[f64], integer: bool, early_stopping: bool) -> Value {
    let estimates_of = |sorted: &[f64]| -> Value {
        let n = sorted.len();
        GRID.iter()
            .filter(|&&p| p >= 50.0)
            .map(|&p| {
                let estimate = (n > 0)
                    .then(|| percentile_estimate(n as u64, p / 100.0).index())
                    .flatten()
                    .map(|index| sorted[index.min(n - 1)]);
                (grid_key(p), estimate.map_or(Value::Null, |v| json!(v)))
            })
            .collect::<Map<_, _>>()
            .into()
    };
    if values.is_empty() {
        return if early_stopping {
            json!({ "early_stopping_percentiles": estimates_of(&[]) })
        } else {
            json!({})
        };
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let n = sorted.len();
    let total: f64 = sorted.iter().sum();
    let avg = total / n as f64;
    let std_dev = if n > 1 {
        (sorted.iter().map(|v| (v - avg).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        f64::NAN
    };
    let lower = |p: f64| sorted[((p / 100.0) * (n - 1) as f64).floor() as usize];
    let number = |v: f64| {
        if integer {
            json!(v.round() as i64)
        } else {
            json!(v)
        }
    };
    let mut block = Map::new();
    block.insert("total".into(), number(total));
    block.insert("min".into(), number(sorted[0]));
    block.insert("max".into(), number(sorted[n - 1]));
    block.insert("median".into(), json!(lower(50.0)));
    block.insert("avg".into(), json!(avg));
    block.insert("std_dev".into(), finite(std_dev));
    block.insert(
        "percentiles".into(),
        GRID.iter()
            .map(|&p| (grid_key(p), json!(lower(p))))
            .collect::<Map<_, _>>()
            .into(),
    );
    if early_stopping {
        block.insert("early_stopping_percentiles".into(), estimates_of(&sorted));
    }
    block.insert("histogram".into(), histogram(&sorted));
    Value::Object(block)
}

/// `99.9` → "99.9", `50.0` → "50.0".
fn grid_key(p: f64) -> String {
    format!("{p:.1}")
}

/// Log-spaced buckets over [min, max] (linear when min is not positive), the last one closed.
fn histogram(sorted: &[f64]) -> Value {
    let (min, max) = (sorted[0], sorted[sorted.len() - 1]);
    let edge = |i: usize| {
        let f = i as f64 / HISTOGRAM_BUCKETS as f64;
        if min > 0.0 {
            min * (max / min).powf(f)
        } else {
            min + (max - min) * f
        }
    };
    let edges: Vec<f64> = (0..=HISTOGRAM_BUCKETS).map(edge).collect();
    let mut counts = vec![0u64; HISTOGRAM_BUCKETS];
    for &v in sorted {
        let bucket = edges[1..]
            .iter()
            .position(|&hi| v < hi)
            .unwrap_or(HISTOGRAM_BUCKETS - 1);
        counts[bucket] += 1;
    }
    json!({
        "buckets": edges.windows(2).map(|w| json!([w[0], w[1]])).collect::<Vec<_>>(),
        "counts": counts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlperf_serving::{series, summarize, RequestRecord, Slo, SteadyState};

    const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/endpoints");

    /// 1,000 answers, 10 ms apart, of known and varied times and lengths.
    fn known_point() -> SweepPoint {
        let ms = 1_000_000i64;
        let records: Vec<RequestRecord> = (0..1_000i64)
            .map(|i| {
                let sent = i * 10 * ms;
                let ttft = 50 * ms + (i * 7_919 % 1_000) * 100_000;
                let tokens = 1 + (i % 32) as u64;
                let tpot = 20 * ms + (i * 104_729 % 997) * 10_000;
                RequestRecord {
                    scheduled_ns: sent,
                    sent_ns: sent,
                    first_token_ns: Some(sent + ttft),
                    completed_ns: Some(sent + ttft + (tokens as i64 - 1) * tpot),
                    output_tokens: tokens,
                    input_tokens: Some(5 + (i % 50) as u64),
                    counted_tokens: None,
                    failed: false,
                }
            })
            .collect();
        let (from, to) = (0, 10_000 * ms);
        SweepPoint {
            mode: LoadMode::Concurrency(8),
            region: None,
            summary: summarize(&records, &[], from, to, &Slo::default()),
            series: series(&records, from, to),
            steady: SteadyState {
                from_ns: from,
                to_ns: to,
                dropped_bins: 0,
                bins: 10,
                steady: true,
                reason: String::new(),
            },
            abandoned: 0,
            saturated: None,
            power: None,
            provisioned: None,
            errors: Vec::new(),
            invalid: Vec::new(),
            requests: None,
        }
    }

    fn known_run() -> EndpointsRun {
        EndpointsRun {
            model: "smollm2".to_string(),
            seed: 7,
            warmup: Duration::from_secs(2),
            duration: Duration::from_secs(10),
        }
    }

    /// The files of the known point are those the official parser read (regenerate them with
    /// MLPERF_HOST_UPDATE_FIXTURES=1, then parse them again: tests/data/endpoints/README.md).
    #[test]
    fn the_files_are_those_the_official_parser_read() {
        let out = std::env::temp_dir().join(format!("mlperf-endpoints-{}", std::process::id()));
        let dir = write_point(&out, 0, &known_point(), &known_run()).unwrap();
        let fixture = Path::new(FIXTURE).join("point");
        for file in [
            "config.yaml",
            "performance/result_summary.json",
            endpts_log::FILE_NAME,
        ] {
            let written = std::fs::read_to_string(dir.join(file)).unwrap();
            if std::env::var_os("MLPERF_HOST_UPDATE_FIXTURES").is_some() {
                std::fs::create_dir_all(fixture.join(file).parent().unwrap()).unwrap();
                std::fs::write(fixture.join(file), &written).unwrap();
            }
            let committed = std::fs::read_to_string(fixture.join(file)).unwrap();
            assert_eq!(written, committed, "{file} differs from the fixture");
        }
        std::fs::remove_dir_all(&out).unwrap();
    }

    /// What the official parser read from them equals our own figures of the point.
    #[test]
    fn the_official_parser_reads_our_own_figures() {
        let point = known_point();
        let ours = super::super::point_json(&point);
        let parsed: Value = serde_json::from_str(
            &std::fs::read_to_string(Path::new(FIXTURE).join("parsed.json")).unwrap(),
        )
        .unwrap();
        let read = |key: &str| -> f64 {
            parsed[key]
                .as_f64()
                .unwrap_or_else(|| panic!("the parser read no {key}: {parsed}"))
        };
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        for (key, expected) in [
            ("result_completed_samples_per_sec", &ours["requests_per_s"]),
            (
                "result_completed_tokens_per_second",
                &ours["output_tokens_per_s"],
            ),
            ("result_query_count", &ours["completed"]),
            (
                "result_first_token_99.00_percentile_latency_ns",
                &ours["ttft_ns"]["early_stopping"]["p99"],
            ),
            (
                "result_first_token_90.00_percentile_latency_ns",
                &ours["ttft_ns"]["early_stopping"]["p90"],
            ),
            (
                "result_first_token_50.00_percentile_latency_ns",
                &ours["ttft_ns"]["early_stopping"]["p50"],
            ),
            (
                "result_time_per_output_token_99.00_percentile_ns",
                &ours["tpot_ns"]["early_stopping"]["p99"],
            ),
            (
                "result_99.00_percentile_latency_ns",
                &ours["e2e_ns"]["early_stopping"]["p99"],
            ),
            ("result_mean_latency_ns", &ours["e2e_ns"]["mean"]),
            ("result_max_latency_ns", &ours["e2e_ns"]["max"]),
            ("mean_output_tokens", &ours["output_tokens"]["mean"]),
            ("max_output_tokens", &ours["output_tokens"]["max"]),
        ] {
            let expected = expected.as_f64().unwrap_or_else(|| panic!("{key}: {ours}"));
            assert!(
                close(read(key), expected),
                "{key}: parsed {} against ours {expected}",
                read(key)
            );
        }
        assert_eq!(parsed["effective_scenario"], "online");
        assert_eq!(parsed["load_pattern"], "concurrency");
        assert_eq!(read("effective_min_duration_ms"), 10_000.0);
        assert_eq!(read("effective_schedule_rng_seed"), 7.0);
    }

    fn parsed(file: &str) -> Map<String, Value> {
        let text = std::fs::read_to_string(Path::new(FIXTURE).join(file)).unwrap();
        match serde_json::from_str(&text).unwrap() {
            Value::Object(map) => map,
            other => panic!("{file}: {other}"),
        }
    }

    /// The checker's LoadGen log parser reads from the `:::ENDPTS` log the very figures its
    /// endpoints parser reads from result_summary.json and config.yaml, under the same keys,
    /// and more (the verdict, the concurrency); only the names differ where a LoadGen log
    /// reader expects LoadGen's (the scenario, the version).
    #[test]
    fn the_endpts_log_says_what_the_endpoints_files_say() {
        let from_files = parsed("parsed.json");
        let from_log = parsed("parsed-log.json");
        let renamed = ["effective_scenario", "loadgen_version"];
        for (key, value) in &from_files {
            if renamed.contains(&key.as_str()) {
                continue;
            }
            assert_eq!(
                from_log.get(key),
                Some(value),
                "{key}: the log says {:?}, the files {value}",
                from_log.get(key)
            );
        }
        assert_eq!(from_log["effective_scenario"], "Server");
        assert_eq!(from_log["loadgen_version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(from_log["result_validity"], "VALID");
        assert_eq!(from_log["effective_max_async_queries"], 8);
    }

    /// An INVALID point says so, and an estimate that too few answers cannot give (the
    /// 99.9th of 1,000) is left out rather than written as null.
    #[test]
    fn the_endpts_log_carries_the_verdict_and_leaves_out_what_is_unknown() {
        let mut point = known_point();
        point.invalid.push("not steady".to_string());
        let log = endpts_log::endpts_log(&point, &known_run());
        let records: Vec<Value> = log
            .lines()
            .map(|line| {
                let json = line
                    .strip_prefix(":::ENDPTS ")
                    .expect("every line is marked");
                serde_json::from_str(json).unwrap()
            })
            .collect();
        let value = |key: &str| {
            records
                .iter()
                .find(|record| record["key"] == key)
                .map(|record| record["value"].clone())
        };
        assert_eq!(value("result_validity"), Some(json!("INVALID")));
        assert_eq!(value("result_99.90_percentile_latency_ns"), None);
        assert!(value("result_99.00_percentile_latency_ns").is_some());
        assert!(records
            .iter()
            .all(|record| record["metadata"]["is_error"] == false && !record["value"].is_null()));
    }
}
