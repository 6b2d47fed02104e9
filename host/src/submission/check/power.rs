//! A power measurement: the files of the MLCommons power workflow, the LoadGen window inside
//! the meter's samples, the ranging rule, and what the measurement was made with.

use std::path::Path;

use mlperf_power::RunWindow;

use super::Context;
use crate::logs::DetailLog;
use crate::submission::tree::{ScenarioDir, LOG_FILES, POWER_DEV_FILES};

/// The testing run's average power may be at most this far below the ranging run's.
const RANGING_TOLERANCE: f64 = 0.05;

pub fn check(context: &mut Context, target: &ScenarioDir, _performance_metric: Option<f64>) {
    let run = target.performance_run();
    let power_dir = target.power_dir();
    let power_dev = power_dir.is_dir();
    if !power_dev && !run.join("spl.txt").is_file() {
        return;
    }
    if power_dev {
        for name in POWER_DEV_FILES {
            if !power_dir.join(name).is_file() {
                context.error(
                    &power_dir.join(name),
                    "power-files",
                    "missing (the MLCommons power client's and server's logs)",
                );
            }
        }
    } else {
        context.warning(
            &power_dir,
            "power-logs",
            "power measured by mlperf-host (spl.txt) without the MLCommons power client's and server's logs: the official checker files this result as performance only",
        );
    }
    let testing = average_in_window(context, &run);
    let ranging_dir = target.ranging_run();
    let ranging = if ranging_dir.is_dir() {
        for name in LOG_FILES.into_iter().chain(["spl.txt"]) {
            if !ranging_dir.join(name).is_file() {
                context.error(&ranging_dir.join(name), "power-files", "missing");
            }
        }
        average_in_window(context, &ranging_dir)
    } else {
        if power_dev {
            context.error(
                &ranging_dir,
                "power-files",
                "missing: a power result needs its ranging run",
            );
        }
        None
    };
    if let (Some(testing), Some(ranging)) = (testing, ranging) {
        if testing < ranging * (1.0 - RANGING_TOLERANCE) {
            context.error(
                &run.join("spl.txt"),
                "power-ranging",
                format!("the testing run averages {testing:.3} W, more than 5 % below the ranging run's {ranging:.3} W"),
            );
        }
    }
    check_simulated(context, target);
}

/// The mean of the positive samples strictly inside the run's window, checking that the
/// meter's samples span the window.
fn average_in_window(context: &mut Context, run: &Path) -> Option<f64> {
    let spl = run.join("spl.txt");
    let detail = run.join(LOG_FILES[1]);
    let text = match std::fs::read_to_string(&spl) {
        Ok(text) => text,
        Err(_) => {
            context.error(&spl, "power-files", "missing");
            return None;
        }
    };
    let samples = match mlperf_power::spl::parse(&text) {
        Ok(samples) => samples,
        Err(e) => {
            context.error(&spl, "power-format", e);
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
                    "power-window",
                    format!("power_begin/power_end: {e}"),
                );
                return None;
            }
        },
        _ => {
            context.error(
                &detail,
                "power-window",
                "no power_begin/power_end: the run window is unknown",
            );
            return None;
        }
    };
    let (first, last) = match (samples.first(), samples.last()) {
        (Some(first), Some(last)) => (first.0.time, last.0.time),
        _ => {
            context.error(&spl, "power-window", "no samples");
            return None;
        }
    };
    if first > window.begin || last < window.end {
        context.error(
            &spl,
            "power-window",
            format!(
                "the samples ({} to {}) do not span the LoadGen window ({} to {})",
                mlperf_power::clock::format_utc(first),
                mlperf_power::clock::format_utc(last),
                mlperf_power::clock::format_utc(window.begin),
                mlperf_power::clock::format_utc(window.end)
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
            "power-window",
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
            "power-simulated",
            "the power was measured with a simulated analyzer".to_string(),
        );
    }
}
