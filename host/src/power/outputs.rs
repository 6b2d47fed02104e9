//! What a power run leaves in its log directory: each meter's trace in spl.txt's format and
//! power_summary.json.

use std::path::Path;

use mlperf_power::{spl, PerformanceFigures, PowerScenario, RunWindow, Scope};

use super::meters::Recording;
use super::result::{self, PowerResult, SourceResult};
use super::{PowerError, POWER_SUMMARY};

/// Removes what an earlier power run left in `dir` (traces, power_summary.json), so that
/// nothing stale is read as this run's.
pub fn clear_old_outputs(dir: &Path) -> Result<(), PowerError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let trace = name.starts_with("spl") && name.ends_with(".txt");
        if trace || name == POWER_SUMMARY {
            std::fs::remove_file(entry.path()).map_err(|source| PowerError::Remove {
                path: entry.path(),
                source,
            })?;
        }
    }
    Ok(())
}

/// Accounts a recording over a run's window.
/// The note of a meter plugin that ran in a process of its own.
pub const ISOLATED_NOTE: &str = "the meter plugin ran in a process of its own (--isolate process)";

pub fn account_recording(
    recording: &Recording,
    window: &RunWindow,
    scenario: PowerScenario,
    figures: &PerformanceFigures,
) -> Vec<SourceResult> {
    recording
        .infos
        .iter()
        .zip(&recording.traces)
        .zip(recording.isolated.iter().chain(std::iter::repeat(&false)))
        .map(|((info, trace), &isolated)| {
            let mut result = SourceResult::new(
                info.clone(),
                trace.as_ref().map_err(Clone::clone),
                window,
                scenario,
                figures,
            );
            if isolated {
                result.notes.push(ISOLATED_NOTE.into());
            }
            result
        })
        .collect()
}

/// Writes each meter's trace in spl.txt's line format into `dir`: the first wall meter's
/// (else the first meter's) to `spl.txt`, the name MLCommons' tools read; meter N's to
/// `spl-N.txt`.
pub fn write_traces(
    dir: &Path,
    recording: &Recording,
    results: &mut [SourceResult],
) -> Result<(), PowerError> {
    let main = recording
        .infos
        .iter()
        .position(|info| info.scope == Scope::Wall)
        .unwrap_or(0);
    for (index, (trace, result)) in recording.traces.iter().zip(results).enumerate() {
        let Ok(trace) = trace else { continue };
        let name = if index == main {
            "spl.txt".to_owned()
        } else {
            format!("spl-{}.txt", index + 1)
        };
        let mut text = String::new();
        for sample in &trace.samples {
            text.push_str(&spl::format_line(sample, &recording.mark));
            text.push('\n');
        }
        let path = dir.join(&name);
        std::fs::write(&path, text).map_err(|source| PowerError::Write { path, source })?;
        result.trace_file = Some(name);
    }
    Ok(())
}

/// power_summary.json in `dir`.
pub fn write_summary(dir: &Path, power: &PowerResult) -> Result<(), PowerError> {
    let mut text = serde_json::to_string_pretty(&result::to_json(power))
        .expect("a JSON value always serializes");
    text.push('\n');
    let path = dir.join(POWER_SUMMARY);
    std::fs::write(&path, text).map_err(|source| PowerError::Write { path, source })
}
