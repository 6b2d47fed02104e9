//! `mlperf-host power report DIR`: the power checker's numbers from a session's `spl.txt` and
//! LoadGen detail log, so a submitter sees the result before uploading. DIR is a run's
//! output directory (ours: logs and spl.txt, a `ranging/` beside them) or a session of
//! MLCommons' power client (`run_1/` and `ranging/`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use mlperf_host::logs::{DetailLog, LogFiles};
use mlperf_host::submission::tree::RUN_1;
use mlperf_power::{
    spl, PerformanceFigures, PowerScenario, Provenance, RunWindow, Scope, SourceInfo, Trace,
};

use super::report::{self, PowerResult, SourceResult};

#[derive(clap::Subcommand, Debug)]
pub enum PowerCommand {
    /// Recompute the power checker's metric from a session's spl.txt and mlperf_log_detail.txt.
    Report(ReportArgs),
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Exit status: 0 when the power result is VALID, 3 when it is INVALID, 1 on \
an error."
)]
pub struct ReportArgs {
    /// A run's output directory (mlperf_log_detail.txt and spl.txt, maybe ranging/), or a
    /// power-client session (run_1/ and ranging/).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Print power_summary.json's object instead of the block.
    #[arg(long)]
    pub json: bool,
}

pub fn main(command: &PowerCommand) -> ExitCode {
    match command {
        PowerCommand::Report(args) => match report_main(args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(crate::cli::EXIT_INVALID),
            Err(error) => crate::cli::report_error(&error),
        },
    }
}

/// Prints the report; true when the power result is VALID.
fn report_main(args: &ReportArgs) -> anyhow::Result<bool> {
    let result = report_dir(&args.dir)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report::to_json(&result))?
        );
    } else {
        print!("{}", report::render(&result));
    }
    Ok(result.is_valid())
}

/// The power result of a session directory.
pub fn report_dir(dir: &Path) -> anyhow::Result<PowerResult> {
    if !dir.is_dir() {
        bail!("{} is not a directory", dir.display());
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

fn read_run(dir: &Path, session: &Path) -> anyhow::Result<Run> {
    let LoggedRun {
        window,
        scenario,
        figures,
    } = read_logged_run(dir)?;
    let spl_path = dir.join("spl.txt");
    let text = std::fs::read_to_string(&spl_path)
        .with_context(|| format!("cannot read {}", spl_path.display()))?;
    let samples = spl::parse(&text).map_err(|e| anyhow!("{}: {e}", spl_path.display()))?;
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
pub fn read_logged_run(dir: &Path) -> anyhow::Result<LoggedRun> {
    let detail_path = LogFiles::standard(dir).detail;
    let detail = DetailLog::read(&detail_path)?;
    // The last of repeated keys: a submission run's performance series comes after its
    // accuracy series.
    let string = |key: &str| -> anyhow::Result<String> {
        match detail.last(key) {
            Some(serde_json::Value::String(text)) => Ok(text.clone()),
            Some(other) => Ok(other.to_string()),
            None => Err(anyhow!("{}: no {key} entry", detail_path.display())),
        }
    };
    let number = |key: &str| detail.last(key).and_then(serde_json::Value::as_f64);
    let window = RunWindow::parse(&string("power_begin")?, &string("power_end")?)
        .map_err(|e| anyhow!("{}: {e}", detail_path.display()))?;
    let scenario = match string("effective_scenario")?.as_str() {
        "SingleStream" => PowerScenario::SingleStream,
        "MultiStream" => PowerScenario::MultiStream,
        "Server" => PowerScenario::Server,
        "Offline" => PowerScenario::Offline,
        other => bail!(
            "{}: effective_scenario {other:?} is not a scenario",
            detail_path.display()
        ),
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
        anyhow!(
            "{}: no performance result (was this a performance run?)",
            detail_path.display()
        )
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
    let ours = std::fs::read(session.join("power_summary.json"))
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
