//! The power result of a finished session read back from its files: the detail log's window
//! and figures, and spl.txt. `mlperf-host power report DIR` shows it for a run's directory
//! (ours: logs and spl.txt, a `ranging/` beside them) or a session of MLCommons' power client
//! (`run_1/` and `ranging/`).

use std::path::Path;
use std::time::Duration;

use mlperf_power::{
    spl, PerformanceFigures, PowerScenario, Provenance, RunWindow, Scope, SourceInfo, Trace,
};

use super::result::{PowerResult, SourceResult};
use super::PowerReadError;
use super::POWER_SUMMARY;
use crate::logs::{DetailLog, LogFiles};
use crate::power_dev;
use crate::tree::RUN_1;

/// The power result of a session directory.
pub fn report_dir(dir: &Path) -> Result<PowerResult, PowerReadError> {
    // A session's run_1/ is reported with its session's ranging run.
    let session = power_dev::session_of(dir);
    let dir = session.as_deref().unwrap_or(dir);
    if !dir.is_dir() {
        return Err(PowerReadError::NotADirectory(dir.to_path_buf()));
    }
    let testing = if dir.join(RUN_1).is_dir() {
        dir.join(RUN_1)
    } else {
        dir.to_path_buf()
    };
    let run = read_run(&testing, dir)?;
    let ranging_dir = dir.join("ranging");
    let ranging = if ranging_dir.join("spl.txt").is_file() {
        Some(vec![read_run(&ranging_dir, dir)?.source])
    } else {
        None
    };
    let mut result = PowerResult {
        window: run.window,
        scenario: run.scenario,
        figures: run.figures,
        sources: vec![run.source],
        ranging,
    };
    // spl.txt is the analyzer's: the ranging rule applies.
    result.compare_with_ranging(&[true]);
    Ok(result)
}

struct Run {
    window: RunWindow,
    scenario: PowerScenario,
    figures: PerformanceFigures,
    source: SourceResult,
}

fn read_run(dir: &Path, session: &Path) -> Result<Run, PowerReadError> {
    let LoggedRun {
        window,
        scenario,
        figures,
    } = read_logged_run(dir)?;
    let spl_path = dir.join("spl.txt");
    let text = std::fs::read_to_string(&spl_path).map_err(|source| PowerReadError::Read {
        path: spl_path.clone(),
        source,
    })?;
    let samples = spl::parse(&text).map_err(|message| PowerReadError::Invalid {
        path: spl_path.clone(),
        message,
    })?;
    let trace = Trace {
        samples: samples.into_iter().map(|(sample, _)| sample).collect(),
        ..Trace::default()
    };
    let info = source_info(&spl_path, &trace, session);
    let mut source = SourceResult::new(info, Ok(&trace), &window, scenario, &figures);
    source.trace_file = Some(spl_path.display().to_string());
    Ok(Run {
        window,
        scenario,
        figures,
        source,
    })
}

/// What the power checker reads from a run's detail log.
pub struct LoggedRun {
    pub window: RunWindow,
    pub scenario: PowerScenario,
    pub figures: PerformanceFigures,
}

/// The window (power_begin, power_end), the scenario and the result figures, as the detail
/// log in `dir` gives them.
pub fn read_logged_run(dir: &Path) -> Result<LoggedRun, PowerReadError> {
    let detail_path = LogFiles::standard(dir).detail;
    let detail = DetailLog::read(&detail_path)?;
    let invalid = |message: String| PowerReadError::Invalid {
        path: detail_path.clone(),
        message,
    };
    // The last of repeated keys: a submission run's performance series comes after its
    // accuracy series.
    let string = |key: &str| -> Result<String, PowerReadError> {
        match detail.last(key) {
            Some(serde_json::Value::String(text)) => Ok(text.clone()),
            Some(other) => Ok(other.to_string()),
            None => Err(invalid(format!("no {key} entry"))),
        }
    };
    let number = |key: &str| detail.last(key).and_then(serde_json::Value::as_f64);
    let window =
        RunWindow::parse(&string("power_begin")?, &string("power_end")?).map_err(invalid)?;
    let scenario = match string("effective_scenario")?.as_str() {
        "SingleStream" => PowerScenario::SingleStream,
        "MultiStream" => PowerScenario::MultiStream,
        "Server" => PowerScenario::Server,
        "Offline" => PowerScenario::Offline,
        other => {
            return Err(invalid(format!(
                "effective_scenario {other:?} is not a scenario"
            )))
        }
    };
    // The checker's keys; token runs report tokens per second.
    let (tokens, per_second) = match scenario {
        PowerScenario::Offline => match number("result_tokens_per_second") {
            Some(tokens) => (true, Some(tokens)),
            None => (false, number("result_samples_per_second")),
        },
        PowerScenario::Server => match number("result_completed_tokens_per_second") {
            Some(tokens) => (true, Some(tokens)),
            None => (false, number("result_completed_samples_per_sec")),
        },
        _ => (false, Some(0.0)),
    };
    let per_second = per_second.ok_or_else(|| {
        invalid("no performance result (was this a performance run?)".to_string())
    })?;
    let figures = PerformanceFigures {
        per_second,
        tokens,
        query_count: number("result_query_count").unwrap_or(0.0) as u64,
        samples_per_query: number("effective_samples_per_query").unwrap_or(1.0) as u64,
    };
    Ok(LoggedRun {
        window,
        scenario,
        figures,
    })
}

/// What made the trace: where `mlperf-host run --power` wrote it, its power_summary.json
/// says (the source whose trace is spl.txt); otherwise it is taken as an analyzer's through
/// PTDaemon, as in a session of MLCommons' power client.
fn source_info(spl_path: &Path, trace: &Trace, session: &Path) -> SourceInfo {
    let period = median_spacing(trace).unwrap_or(Duration::from_secs(1));
    let ours = std::fs::read(session.join(POWER_SUMMARY))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok());
    let file = spl_path.file_name().and_then(|f| f.to_str()).unwrap_or("");
    let written = ours.as_ref().and_then(|json| {
        json["sources"]
            .as_array()?
            .iter()
            .find(|s| s["trace_file"].as_str().is_some_and(|t| t.ends_with(file)))
            .cloned()
    });
    if let (None, Some(analyzer)) = (&written, power_dev::analyzer(session)) {
        // A power-dev session: its server recorded what PTDaemon drove.
        return SourceInfo {
            name: spl_path.display().to_string(),
            scope: Scope::Wall,
            provenance: if analyzer.simulated.is_some() {
                Provenance::Simulated
            } else {
                Provenance::Ptd
            },
            period,
            identity: format!("PTDaemon analyzer: {}", analyzer.identify),
        };
    }
    let Some(source) = written else {
        return SourceInfo {
            name: spl_path.display().to_string(),
            scope: Scope::Wall,
            provenance: Provenance::Ptd,
            period,
            identity: "spl.txt of a power analyzer (PTDaemon)".into(),
        };
    };
    let scope = match source["scope"].as_str() {
        Some(scope) if scope.starts_with("component") => Scope::Component(
            scope
                .trim_start_matches("component")
                .trim_start_matches(':')
                .trim()
                .to_owned(),
        ),
        _ => Scope::Wall,
    };
    let provenance = match source["provenance"].as_str() {
        Some("ptdaemon") => Provenance::Ptd,
        Some("on-host") => Provenance::OnHost,
        // Anything else (simulated, unreadable) is never taken for a measurement.
        _ => Provenance::Simulated,
    };
    SourceInfo {
        name: spl_path.display().to_string(),
        scope,
        provenance,
        period,
        identity: source["identity"].as_str().unwrap_or("").to_owned(),
    }
}

fn median_spacing(trace: &Trace) -> Option<Duration> {
    let mut gaps: Vec<Duration> = trace
        .samples
        .windows(2)
        .filter_map(|pair| pair[1].time.duration_since(pair[0].time).ok())
        .collect();
    gaps.sort();
    gaps.get(gaps.len() / 2).copied()
}
