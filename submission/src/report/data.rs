//! What the report shows of one run folder, read from its files: the summary (verdict,
//! headline figures), the detail log (percentiles, token latencies, settings, provenance), the
//! trace (every sample's issue and latency), spl.txt and the power window.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Deserialize;

use super::ReportError;
use crate::logs::{DetailLog, DETAIL_LOG, RESULT_JSON, SUMMARY_LOG, TRACE_LOG};
use crate::power_dev;
use crate::results::{collect, ResultRow};

/// One run, as the report draws it.
pub struct RunData {
    pub dir: PathBuf,
    pub row: ResultRow,
    pub summary: String,
    /// `Result is : VALID` and the lines that say why (the checks, recommendations).
    pub verdict: Vec<String>,
    /// The summary's figures above the verdict: the scenario's metric, as printed.
    pub headline: Vec<(String, String)>,
    /// (percentile, latency ns) as the detail log gives them.
    pub percentiles: Vec<(f64, f64)>,
    /// Token latencies and rates (`result_*token*` keys).
    pub tokens: Vec<(String, String)>,
    pub settings: Vec<(String, String)>,
    pub provenance: Vec<(String, String)>,
    /// From the trace: each completed sample's (scheduled s, latency ns), by scheduled time.
    pub samples: Option<Vec<(f64, f64)>>,
    pub power: Option<PowerTrace>,
    /// A run over several devices: (device, samples, share) from result.json.
    pub devices: Vec<DeviceShare>,
    /// Where the latencies went, when the run divided them.
    pub breakdown: Option<super::breakdown::Breakdown>,
}

/// What one device of a run over several was given.
pub struct DeviceShare {
    pub device: String,
    pub samples: u64,
    pub share: f64,
}

/// Watts over the run's clock, and the window LoadGen measured in.
pub struct PowerTrace {
    /// (seconds from the first sample, watts).
    pub points: Vec<(f64, f64)>,
    /// The window in the same seconds.
    pub window: (f64, f64),
}

/// Reads the run folder `dir`.
pub fn read_run(dir: &Path) -> Result<RunData, ReportError> {
    // A power-dev session is reported by its testing run (with the session's power).
    if let Err(error) = std::fs::metadata(dir) {
        return Err(ReportError::Read {
            path: dir.to_path_buf(),
            message: error.to_string(),
        });
    }
    let testing = power_dev::session_of(dir).map(|session| session.join(power_dev::TESTING));
    let dir = testing.as_deref().unwrap_or(dir);
    let detail_path = dir.join(DETAIL_LOG);
    let summary_path = dir.join(SUMMARY_LOG);
    if !detail_path.is_file() || !summary_path.is_file() {
        return Err(ReportError::NotARun(dir.to_path_buf()));
    }
    let mut row = collect(&[dir.to_path_buf()])?
        .into_iter()
        .next()
        .ok_or_else(|| ReportError::NotARun(dir.to_path_buf()))?;
    let detail = DetailLog::read(&detail_path)?;
    // A run folder names no system: the report heads it with its SUT.
    if row.system.is_empty() {
        row.system = detail.str("sut_name").unwrap_or("-").to_string();
    }
    let summary = read_text(&summary_path)?;
    let (headline, verdict) = summary_parts(&summary);
    let percentiles = detail
        .with_prefix("result_")
        .into_iter()
        .filter_map(|(key, value)| {
            let percent = key
                .strip_prefix("result_")?
                .strip_suffix("_percentile_latency_ns")?;
            Some((percent.parse::<f64>().ok()?, value.as_f64()?))
        })
        .collect();
    let tokens = detail
        .with_prefix("result_")
        .into_iter()
        .filter(|(key, _)| key.contains("token"))
        .map(|(key, value)| (key.to_string(), value_text(value)))
        .collect();
    let settings = detail
        .with_prefix("effective_")
        .into_iter()
        .map(|(key, value)| (key.to_string(), value_text(value)))
        .collect();
    let provenance = PROVENANCE_PREFIXES
        .iter()
        .flat_map(|prefix| detail.with_prefix(prefix))
        .map(|(key, value)| (key.to_string(), value_text(value)))
        .collect();
    let trace = dir.join(TRACE_LOG);
    let samples = if trace.is_file() {
        Some(read_trace(&trace)?)
    } else {
        None
    };
    let power = read_power(dir)?;
    let result_json = read_result_json(&dir.join(RESULT_JSON));
    let devices = result_json.as_ref().map(read_devices).unwrap_or_default();
    let breakdown = result_json.as_ref().and_then(super::breakdown::read);
    Ok(RunData {
        dir: dir.to_path_buf(),
        row,
        summary,
        verdict,
        headline,
        percentiles,
        tokens,
        settings,
        provenance,
        samples,
        power,
        devices,
        breakdown,
    })
}

/// result.json, when it is there and reads (the logs are what the report stands on).
fn read_result_json(path: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// result.json's `devices` (written for a run with `--devices`); none when it has none.
fn read_devices(json: &serde_json::Value) -> Vec<DeviceShare> {
    let Some(devices) = json.get("devices").and_then(|d| d.as_array()) else {
        return Vec::new();
    };
    devices
        .iter()
        .filter_map(|d| {
            Some(DeviceShare {
                device: format!("{} ({})", d.get("ordinal")?, d.get("name")?.as_str()?),
                samples: d.get("samples")?.as_u64()?,
                share: d.get("share")?.as_f64()?,
            })
        })
        .collect()
}

/// The detail log's keys that say what ran: the SUT and its plugin, the LoadGen, the time.
const PROVENANCE_PREFIXES: [&str; 5] =
    ["sut_", "qsl_", "loadgen_version", "test_datetime", "host_"];

fn read_text(path: &Path) -> Result<String, ReportError> {
    std::fs::read_to_string(path).map_err(|e| ReportError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn value_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The summary's figures between `Mode` and `Result is`, and the verdict lines after it up to
/// the additional stats.
fn summary_parts(summary: &str) -> (Vec<(String, String)>, Vec<String>) {
    let mut headline = Vec::new();
    let mut verdict = Vec::new();
    let mut section = 0;
    for line in summary.lines() {
        if line.starts_with("Mode") {
            section = 1;
            continue;
        }
        if line.starts_with("Result is") {
            section = 2;
        }
        if line.starts_with("=====") && section == 2 {
            break;
        }
        match section {
            1 => {
                if let Some((label, value)) = line.split_once(':') {
                    headline.push((label.trim().to_string(), value.trim().to_string()));
                }
            }
            2 if !line.trim().is_empty() => verdict.push(line.to_string()),
            _ => {}
        }
    }
    (headline, verdict)
}

/// A sample's begin event in the trace: one line of its own, as both engines write it.
#[derive(Deserialize)]
struct SampleBegin {
    ts: f64,
    args: SampleArgs,
}

#[derive(Deserialize)]
struct SampleArgs {
    complete_ns: i64,
}

/// Every completed sample's (scheduled s, latency ns), ordered by scheduled time. Read line by
/// line: the official LoadGen's trace is not JSON as a whole (some of its other events are not
/// well-formed), but each sample's begin event is a line of JSON in either engine's trace.
fn read_trace(path: &Path) -> Result<Vec<(f64, f64)>, ReportError> {
    let text = read_text(path)?;
    let mut samples = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if !(line.starts_with("{\"name\":\"Sample\"") && line.contains("\"ph\":\"b\"")) {
            continue;
        }
        let event: SampleBegin = serde_json::from_str(line.trim_end().trim_end_matches(','))
            .map_err(|e| ReportError::Read {
                path: path.to_path_buf(),
                message: format!("line {}: not a sample event: {e}", number + 1),
            })?;
        // A sample that never completed is logged with complete_ns = -1.
        if event.args.complete_ns >= 0 {
            samples.push((event.ts / 1e6, event.args.complete_ns as f64));
        }
    }
    samples.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(samples)
}

/// spl.txt and the window of a power run, in seconds from the first power sample.
fn read_power(dir: &Path) -> Result<Option<PowerTrace>, ReportError> {
    let spl = dir.join("spl.txt");
    if !spl.is_file() {
        return Ok(None);
    }
    let text = read_text(&spl)?;
    let samples = mlperf_power::spl::parse(&text).map_err(|message| ReportError::Read {
        path: spl.clone(),
        message,
    })?;
    let Some(first) = samples.first().map(|(s, _)| s.time) else {
        return Ok(None);
    };
    let seconds = |time: SystemTime| match time.duration_since(first) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    };
    let window = crate::power::read_logged_run(dir)
        .map_err(|e| ReportError::Read {
            path: dir.join(DETAIL_LOG),
            message: crate::error_chain(&e),
        })?
        .window;
    Ok(Some(PowerTrace {
        points: samples
            .iter()
            .map(|(sample, _)| (seconds(sample.time), sample.watts))
            .collect(),
        window: (seconds(window.begin), seconds(window.end)),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_splits_into_figures_and_verdict() {
        let summary = "SUT name : null\nScenario : Server\nMode     : PerformanceOnly\n\
            Completed samples per second    : 482.50\nResult is : INVALID\n  Min duration satisfied : NO\n\
            Recommendations:\n * Increase the target QPS\n\n=====\nAdditional Stats\n";
        let (headline, verdict) = summary_parts(summary);
        assert_eq!(
            headline,
            vec![(
                "Completed samples per second".to_string(),
                "482.50".to_string()
            )]
        );
        assert_eq!(verdict[0], "Result is : INVALID");
        assert_eq!(verdict.last().unwrap(), " * Increase the target QPS");
    }

    #[test]
    fn the_trace_is_read_a_sample_line_at_a_time() {
        let dir = std::env::temp_dir().join(format!("report-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("trace.json");
        // As the official LoadGen writes it: other events need not be well-formed.
        std::fs::write(
            &path,
            "{\"traceEvents\":[\n\
             {\"name\":\"LogDetail\",\"ph\":\"X\",\"args\":{\"key\":\"\"loadgen_version\"\"}},\n\
             {\"name\":\"Sample\",\"cat\":\"default\",\"ph\":\"b\",\"pid\":1,\"id\":1,\"ts\":2000.5,\"args\":{\"sample_seq\":1,\"complete_ns\":1500}},\n\
             {\"name\":\"Sample\",\"cat\":\"default\",\"ph\":\"e\", \"pid\":1,\"id\":1,\"ts\":2002.0},\n\
             {\"name\":\"Sample\",\"cat\":\"default\",\"ph\":\"b\",\"pid\":1,\"id\":0,\"ts\":1000.0,\"args\":{\"sample_seq\":0,\"complete_ns\":2500}},\n\
             {\"name\":\"Sample\",\"cat\":\"default\",\"ph\":\"b\",\"pid\":1,\"id\":2,\"ts\":3000.0,\"args\":{\"sample_seq\":2,\"complete_ns\":-1}},\n\
             {\"name\":\"LastTrace\"}\n]}\n",
        )
        .unwrap();
        let samples = read_trace(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(samples, vec![(0.001, 2500.0), (0.0020005, 1500.0)]);
    }
}
