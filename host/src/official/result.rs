//! `result.json` of a test the official LoadGen ran: what its detail log says, under the names
//! the native engine's result.json uses where the figure is the same, beside what only the host
//! saw (samples issued and completed, an abort) and the run's provenance.
//! `schema/official-result.schema.json` describes it.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::logs::{self, DetailLog, DetailLogError, LoggedMessage};

/// The official engine's result.json.
#[derive(Debug, Clone, Serialize)]
pub struct OfficialResult {
    /// Always `official`: tells this document from the native engine's.
    pub engine: &'static str,
    /// `loadgen_version` as logged (`6.0.17 @ <git hash>`).
    pub loadgen_version: String,
    pub sut_name: String,
    pub qsl_name: String,
    pub qsl_total_sample_count: Option<u64>,
    pub qsl_performance_sample_count: Option<u64>,
    pub test_datetime: String,
    /// The `requested_*` entries, without the prefix, as logged.
    pub requested: Map<String, Value>,
    /// The `effective_*` entries, without the prefix, as logged.
    pub effective: Map<String, Value>,
    /// The performance result; null in accuracy runs and in runs that did not finish.
    pub performance: Option<LoggedPerformance>,
    /// Every error, warning and `generic_message` the log holds, in order.
    pub diagnostics: Vec<LoggedMessage>,
    /// What the host handed to the system under test and got back.
    pub samples: SampleCounts,
    /// Why the host ended the official engine, when it did (the run is then INVALID).
    pub aborted: Option<String>,
    pub log_files: OfficialLogFiles,
    /// What the native engine logs as `sut_*` entries (plugin path, sha256, …).
    pub provenance: Vec<(String, String)>,
}

/// Queries and samples that went through the host's adapter.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct SampleCounts {
    pub queries: u64,
    pub issued: u64,
    pub completed: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct OfficialLogFiles {
    pub summary: PathBuf,
    pub detail: PathBuf,
    pub accuracy: PathBuf,
    pub trace: PathBuf,
    pub result: PathBuf,
}

impl OfficialLogFiles {
    pub fn in_dir(dir: &Path) -> Self {
        OfficialLogFiles {
            summary: dir.join(logs::SUMMARY_LOG),
            detail: dir.join(logs::DETAIL_LOG),
            accuracy: dir.join(logs::ACCURACY_LOG),
            trace: dir.join(logs::TRACE_LOG),
            result: dir.join(logs::RESULT_JSON),
        }
    }
}

/// The performance result as the detail log states it.
#[derive(Debug, Clone, Serialize)]
pub struct LoggedPerformance {
    pub scenario: String,
    /// `result_query_count`.
    pub query_count: Option<u64>,
    pub sample_latency: Option<LoggedLatency>,
    /// MultiStream: the latency of whole queries.
    pub query_latency: Option<LoggedLatency>,
    pub overlatency_query_count: Option<u64>,
    pub qps_with_loadgen_overhead: Option<f64>,
    pub qps_without_loadgen_overhead: Option<f64>,
    pub scheduled_samples_per_second: Option<f64>,
    pub completed_samples_per_second: Option<f64>,
    pub samples_per_second: Option<f64>,
    pub early_stopping_latency_ss: Option<i64>,
    pub early_stopping_latency_ms: Option<i64>,
    pub early_stopping: LoggedEarlyStopping,
    pub validity: LoggedValidity,
    /// Every `result_*` and `early_stopping_*` entry as logged (token figures among them).
    pub logged: Map<String, Value>,
}

/// A latency distribution from its `result_*_latency_ns` entries.
#[derive(Debug, Clone, Serialize)]
pub struct LoggedLatency {
    pub min_ns: i64,
    pub max_ns: i64,
    pub mean_ns: i64,
    pub target_percentile: f64,
    /// The logged percentile equal to `target_percentile`, when one is.
    pub target_ns: Option<i64>,
    /// `[fraction, ns]`, ascending.
    pub percentiles: Vec<(f64, i64)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LoggedEarlyStopping {
    pub met: bool,
    /// `early_stopping_result`, one ` * ` line per statement (as the native result.json).
    pub lines: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LoggedValidity {
    /// `result_validity` is `VALID`.
    pub valid: bool,
    /// Logged only for Server and SingleStream-like latency-bound runs.
    pub perf_constraints_met: Option<bool>,
    pub min_duration_met: bool,
    pub min_queries_met: bool,
    pub early_stopping_met: bool,
    /// Every sample the system under test was handed was completed (counted by the host).
    pub all_samples_completed: bool,
}

impl OfficialResult {
    /// Reads the detail log in `dir`; a last line cut short (a run the host ended) is left out.
    pub fn read(
        dir: &Path,
        samples: SampleCounts,
        aborted: Option<String>,
        provenance: &[(String, String)],
    ) -> Result<OfficialResult, DetailLogError> {
        let files = OfficialLogFiles::in_dir(dir);
        let text = std::fs::read_to_string(&files.detail).map_err(|e| DetailLogError::Read {
            path: files.detail.clone(),
            message: e.to_string(),
        })?;
        let complete = match text.rfind('\n') {
            Some(end) => &text[..=end],
            None => "",
        };
        let log = if complete.is_empty() {
            DetailLog::default()
        } else {
            DetailLog::parse_from(&files.detail, complete)?
        };
        Ok(OfficialResult::from_log(
            &log, samples, aborted, provenance, files,
        ))
    }

    pub fn from_log(
        log: &DetailLog,
        samples: SampleCounts,
        aborted: Option<String>,
        provenance: &[(String, String)],
        log_files: OfficialLogFiles,
    ) -> OfficialResult {
        let text = |key: &str| log.str(key).unwrap_or_default().to_string();
        let all_samples_completed = aborted.is_none() && samples.completed == samples.issued;
        let performance = match aborted {
            Some(_) => None,
            None => LoggedPerformance::from_log(log, all_samples_completed),
        };
        OfficialResult {
            engine: "official",
            loadgen_version: text("loadgen_version"),
            sut_name: text("sut_name"),
            qsl_name: text("qsl_name"),
            qsl_total_sample_count: log.u64("qsl_reported_total_count"),
            qsl_performance_sample_count: log.u64("qsl_reported_performance_count"),
            test_datetime: text("test_datetime"),
            requested: stripped(log, "requested_"),
            effective: stripped(log, "effective_"),
            performance,
            diagnostics: log.messages.clone(),
            samples,
            aborted,
            log_files,
            provenance: provenance.to_vec(),
        }
    }

    /// Writes it (pretty JSON) to `log_files.result`.
    pub fn write(&self) -> std::io::Result<()> {
        let mut json = serde_json::to_vec_pretty(self)?;
        json.push(b'\n');
        let temporary = self.log_files.result.with_extension("json.partial");
        std::fs::write(&temporary, json)?;
        std::fs::rename(&temporary, &self.log_files.result)
    }
}

impl LoggedPerformance {
    /// None when the log holds no `result_validity` (an accuracy run).
    fn from_log(log: &DetailLog, all_samples_completed: bool) -> Option<LoggedPerformance> {
        let validity = log.str("result_validity")?;
        let target_percentile = log
            .f64("effective_target_latency_percentile")
            .unwrap_or(0.0);
        let integer = |key: &str| log.f64(key).map(|v| v as i64);
        let early_stopping_met = log.bool("early_stopping_met").unwrap_or(false);
        let mut logged = Map::new();
        for prefix in ["result_", "early_stopping_"] {
            for (key, value) in log.with_prefix(prefix) {
                logged.insert(key.to_string(), value.clone());
            }
        }
        Some(LoggedPerformance {
            scenario: log
                .str("effective_scenario")
                .unwrap_or_default()
                .to_string(),
            query_count: log.u64("result_query_count"),
            sample_latency: latency(log, "", "", target_percentile),
            query_latency: latency(log, "query_", "per_query_", target_percentile),
            overlatency_query_count: log.u64("result_overlatency_query_count"),
            qps_with_loadgen_overhead: log.f64("result_qps_with_loadgen_overhead"),
            qps_without_loadgen_overhead: log.f64("result_qps_without_loadgen_overhead"),
            scheduled_samples_per_second: log.f64("result_scheduled_samples_per_sec"),
            completed_samples_per_second: log.f64("result_completed_samples_per_sec"),
            samples_per_second: log.f64("result_samples_per_second"),
            early_stopping_latency_ss: integer("early_stopping_latency_ss"),
            early_stopping_latency_ms: integer("early_stopping_latency_ms"),
            early_stopping: LoggedEarlyStopping {
                met: early_stopping_met,
                lines: log
                    .str("early_stopping_result")
                    .unwrap_or_default()
                    .split(" * ")
                    .map(str::trim_end)
                    .filter(|line| !line.is_empty())
                    .map(|line| format!(" * {line}"))
                    .collect(),
            },
            validity: LoggedValidity {
                valid: validity == "VALID",
                perf_constraints_met: log.bool("result_perf_constraints_met"),
                min_duration_met: log.bool("result_min_duration_met").unwrap_or(false),
                min_queries_met: log.bool("result_min_queries_met").unwrap_or(false),
                early_stopping_met,
                all_samples_completed,
            },
            logged,
        })
    }
}

/// `result_{min,max,mean}_<bounds>latency_ns` and `result_<p>_percentile_<percentiles>latency_ns`
/// (MultiStream's per-query figures: `query_` and `per_query_`).
fn latency(
    log: &DetailLog,
    bounds: &str,
    percentiles: &str,
    target_percentile: f64,
) -> Option<LoggedLatency> {
    let bound = |which: &str| {
        log.f64(&format!("result_{which}_{bounds}latency_ns"))
            .map(|v| v as i64)
    };
    let (min_ns, max_ns, mean_ns) = (bound("min")?, bound("max")?, bound("mean")?);
    let suffix = format!("_percentile_{percentiles}latency_ns");
    // Sorted by key, which for the logged two-decimal percents is ascending.
    let percentiles: Vec<(f64, i64)> = log
        .with_prefix("result_")
        .into_iter()
        .filter_map(|(key, value)| {
            let percent = key.strip_prefix("result_")?.strip_suffix(&suffix)?;
            let percent: f64 = percent.parse().ok()?;
            // Logged with two decimals: 99.90 is 0.999 exactly as the settings give it.
            Some(((percent * 100.0).round() / 10_000.0, value.as_f64()? as i64))
        })
        .collect();
    let target_ns = percentiles
        .iter()
        .find(|(fraction, _)| (fraction - target_percentile).abs() < 1e-9)
        .map(|&(_, ns)| ns);
    Some(LoggedLatency {
        min_ns,
        max_ns,
        mean_ns,
        target_percentile,
        target_ns,
        percentiles,
    })
}

fn stripped(log: &DetailLog, prefix: &str) -> Map<String, Value> {
    log.with_prefix(prefix)
        .into_iter()
        .map(|(key, value)| (key[prefix.len()..].to_string(), value.clone()))
        .collect()
}
