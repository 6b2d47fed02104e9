//! A power measurement: the files of the MLCommons power workflow and the checks power-dev's
//! `check.py` runs on its session, the LoadGen window inside the meter's samples, the ranging
//! rule, and what the measurement was made with.

use std::path::Path;

use mlperf_power::RunWindow;

use super::Context;
use crate::logs::DetailLog;
use crate::power_dev::{self, Verdict};
use crate::rule::Rule;
use crate::tree::{files, ScenarioDir, LOG_FILES, POWER_DEV_FILES};

/// The testing run's average power may be at most this far below the ranging run's.
const RANGING_TOLERANCE: f64 = 0.05;
/// What the official checker accepts in a power run's folder beside its logs and spl.txt.
const OPTIONAL_RUN_FILES: [&str; 5] = [
    "mlperf_log_accuracy.json",
    "mlperf_log_trace.json",
    "results.json",
    ".gitkeep",
    "spl.txt",
];

pub(super) fn check(context: &mut Context, target: &ScenarioDir, _performance_metric: Option<f64>) {
    let run = target.performance_run();
    let power_dir = target.power_dir();
    let power_dev = power_dir.is_dir();
    if !power_dev && !run.join("spl.txt").is_file() {
        return;
    }
    if power_dev {
        check_file_lists(context, target);
        check_session(context, &target.path().join("performance"));
    } else {
        context.warning(
            &power_dir,
            Rule::PowerLogs,
            "power measured by mlperf-host (spl.txt) without the MLCommons power client's and server's logs: the official checker files this result as performance only",
        );
    }
    let testing = average_in_window(context, &run);
    let ranging_dir = target.ranging_run();
    let ranging = if ranging_dir.is_dir() {
        for name in LOG_FILES.into_iter().chain(["spl.txt"]) {
            if !ranging_dir.join(name).is_file() {
                context.error(&ranging_dir.join(name), Rule::PowerFiles, "missing");
            }
        }
        average_in_window(context, &ranging_dir)
    } else {
        if power_dev {
            context.error(
                &ranging_dir,
                Rule::PowerFiles,
                "missing: a power result needs its ranging run",
            );
        }
        None
    };
    // A power-dev session's ranging rule is check.py's (in its time difference check).
    if let (false, Some(testing), Some(ranging)) = (power_dev, testing, ranging) {
        if testing < ranging * (1.0 - RANGING_TOLERANCE) {
            context.error(
                &run.join("spl.txt"),
                Rule::PowerRanging,
                format!("the testing run averages {testing:.3} W, more than 5 % below the ranging run's {ranging:.3} W"),
            );
        }
    }
    check_simulated(context, target);
}

/// The official checker's file lists: the runs hold their logs and spl.txt, `power/` the
/// client's and server's five files, and nothing else.
fn check_file_lists(context: &mut Context, target: &ScenarioDir) {
    let power_dir = target.power_dir();
    for name in POWER_DEV_FILES {
        if !power_dir.join(name).is_file() {
            context.error(
                &power_dir.join(name),
                Rule::PowerFiles,
                "missing (the MLCommons power client's and server's logs)",
            );
        }
    }
    let extras = |dir: &Path, allowed: &[&str]| -> Vec<String> {
        files(dir)
            .into_iter()
            .filter(|name| !allowed.contains(&name.as_str()))
            .collect()
    };
    let run_files: Vec<&str> = LOG_FILES.into_iter().chain(OPTIONAL_RUN_FILES).collect();
    for (dir, allowed) in [
        (target.performance_run(), run_files.as_slice()),
        (target.ranging_run(), run_files.as_slice()),
        (power_dir.clone(), &POWER_DEV_FILES[..]),
    ] {
        for name in extras(&dir, allowed) {
            context.error(
                &dir.join(&name),
                Rule::PowerFiles,
                "not a file of a power result: the official checker's file list for this folder rejects it",
            );
        }
    }
}

/// power-dev's `check.py` on the session filed in `performance/`: a finding per check that
/// fails or warns. A simulated analyzer fails the analyzer checks by what it is: those, and
/// the simulation itself, are accepted under `--allow-short`.
fn check_session(context: &mut Context, session: &Path) {
    let report = match power_dev::check_session(session) {
        Ok(report) => report,
        Err(e) => {
            context.error(session, Rule::PowerSession, e.to_string());
            return;
        }
    };
    for (check, verdict) in &report.verdicts {
        let file = session.join(check.file());
        match verdict {
            Verdict::Passed => {}
            Verdict::Warning(message) => {
                context.warning(&file, check.rule(), format!("{}: {message}", check.title()))
            }
            Verdict::Failed(message) => {
                let message = format!("{}: {message}", check.title());
                if report.simulated.is_some() && check.fails_for_a_simulator() {
                    context.short(&file, check.rule(), message);
                } else {
                    context.error(&file, check.rule(), message);
                }
            }
        }
    }
    if let Some(reason) = report.simulated {
        context.short(
            &session.join("power/server.json"),
            Rule::PowerSimulated,
            reason,
        );
    }
}

/// The mean of the positive samples strictly inside the run's window, checking that the
/// meter's samples span the window.
fn average_in_window(context: &mut Context, run: &Path) -> Option<f64> {
    let spl = run.join("spl.txt");
    let detail = run.join(LOG_FILES[1]);
    let text = match std::fs::read_to_string(&spl) {
        Ok(text) => text,
        Err(_) => {
            context.error(&spl, Rule::PowerFiles, "missing");
            return None;
        }
    };
    let samples = match mlperf_power::spl::parse(&text) {
        Ok(samples) => samples,
        Err(e) => {
            context.error(&spl, Rule::PowerFormat, e);
            return None;
        }
    };
    let log = DetailLog::read(&detail).ok()?;
    let window = match (log.str("power_begin"), log.str("power_end")) {
        (Some(begin), Some(end)) => match RunWindow::parse(begin, end) {
            Ok(window) => window,
            Err(e) => {
                context.error(
                    &detail,
                    Rule::PowerWindow,
                    format!("power_begin/power_end: {e}"),
                );
                return None;
            }
        },
        _ => {
            context.error(
                &detail,
                Rule::PowerWindow,
                "no power_begin/power_end: the run window is unknown",
            );
            return None;
        }
    };
    let (first, last) = match (samples.first(), samples.last()) {
        (Some(first), Some(last)) => (first.0.time, last.0.time),
        _ => {
            context.error(&spl, Rule::PowerWindow, "no samples");
            return None;
        }
    };
    // The checker averages whatever samples fall inside the window: a first sample after
    // power_begin only means the workload started within the analyzer's sampling period.
    let utc = mlperf_power::clock::format_utc;
    if first > window.begin {
        context.warning(
            &spl,
            Rule::PowerWindow,
            format!(
                "the analyzer's first sample ({}) follows power_begin ({}): the workload started \
                 within the analyzer's sampling period; the metric is the mean of the samples \
                 inside the window, as the official checker computes it",
                utc(first),
                utc(window.begin)
            ),
        );
    }
    if last < window.end {
        context.warning(
            &spl,
            Rule::PowerWindow,
            format!(
                "the analyzer's last sample ({}) precedes power_end ({}): the samples stop before \
                 the run ends; the metric is the mean of the samples inside the window, as the \
                 official checker computes it",
                utc(last),
                utc(window.end)
            ),
        );
    }
    let inside: Vec<f64> = samples
        .iter()
        .filter(|(s, _)| s.time > window.begin && s.time < window.end && s.watts > 0.0)
        .map(|(s, _)| s.watts)
        .collect();
    if inside.is_empty() {
        context.error(
            &spl,
            Rule::PowerWindow,
            "no power samples inside the LoadGen window",
        );
        return None;
    }
    Some(inside.iter().sum::<f64>() / inside.len() as f64)
}

/// A measurement made with a simulated analyzer is no power result.
fn check_simulated(context: &mut Context, target: &ScenarioDir) {
    let summary = target.path().join("performance").join("power_summary.json");
    let Ok(text) = std::fs::read_to_string(&summary) else {
        return;
    };
    let simulated = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|json| json.get("simulated").and_then(serde_json::Value::as_bool))
        .unwrap_or(false);
    if simulated {
        context.short(
            &summary,
            Rule::PowerSimulated,
            "the power was measured with a simulated analyzer".to_string(),
        );
    }
}
