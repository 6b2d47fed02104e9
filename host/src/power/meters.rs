//! `--power SOURCE`: the meters around `mlperf-host run`. They are opened (and a meter that
//! cannot be reached refused) before anything runs, started a sampling period before the
//! first issue and stopped a period after the last completion, each sampling on its own
//! thread. The run's power
//! result goes to the console after the summary, to result.json and to power_summary.json;
//! the LoadGen logs stay as LoadGen writes them.

pub mod report;
pub mod report_command;

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use mlperf_host::loadgen::TestMode;
use mlperf_host::plugin::power as power_plugin;
use mlperf_power::{
    spl, PerformanceFigures, Phase, PowerScenario, PowerSource, RunWindow, Scope, SourceInfo, Trace,
};

use report::{PowerResult, SourceResult};

/// The meters of one `mlperf-host run`. Dropped (on any path, errors included), they are
/// finished: a PTDaemon analyzer gets its ranges back.
pub struct Meters {
    meters: Vec<Box<dyn PowerSource>>,
    /// Names this session's measurements: `<session>_ranging`, `<session>_testing`.
    session: String,
}

/// The longest margin kept around a run, whatever period a meter claims.
const MOST_MARGIN: Duration = Duration::from_secs(10);

/// What the meters recorded over one run.
pub struct Recording {
    pub infos: Vec<SourceInfo>,
    pub traces: Vec<Result<Trace, String>>,
    pub mark: String,
}

impl Meters {
    /// Opens every `--power` spec; None without any. A meter that cannot be opened is an
    /// error here, before the run.
    pub fn open(specs: &[String]) -> anyhow::Result<Option<Meters>> {
        if specs.is_empty() {
            return Ok(None);
        }
        let mut meters = Vec::new();
        for spec in specs {
            let meter = match spec.strip_prefix("plugin:") {
                Some(plugin) => open_plugin(spec, plugin),
                None => mlperf_power::source::open(spec),
            }
            .with_context(|| format!("--power {spec}: the meter cannot be used"))?;
            tracing::info!(source = %spec, identity = %meter.info().identity, "power meter ready");
            meters.push(meter);
        }
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        Ok(Some(Meters {
            meters,
            session: format!("mlperf-host-{started}"),
        }))
    }

    /// Whether a meter (a PTDaemon analyzer) needs a ranging run before the testing run.
    pub fn needs_ranging(&self) -> bool {
        self.meters.iter().any(|m| m.needs_ranging())
    }

    /// Prepares and starts every meter for `phase`. On an error the meters already started
    /// are stopped, and the run does not begin.
    pub fn start(&mut self, phase: Phase) -> anyhow::Result<String> {
        let mark = format!("{}_{}", self.session, phase.as_str());
        for index in 0..self.meters.len() {
            let meter = &mut self.meters[index];
            let name = meter.info().name;
            let started = meter
                .prepare(phase)
                .and_then(|()| meter.start(&mark))
                .with_context(|| {
                    format!("--power {name}: cannot start the {} run", phase.as_str())
                });
            if let Err(error) = started {
                for meter in &mut self.meters[..index] {
                    let _ = meter.stop();
                }
                return Err(error);
            }
        }
        // Every meter samples before the first issue (a PTDaemon analyzer's first sample
        // comes about a period after Go, so two).
        std::thread::sleep(2 * self.margin());
        Ok(mark)
    }

    /// The longest sampling period of the meters (at most [`MOST_MARGIN`]): the margin kept
    /// on both sides of a run.
    fn margin(&self) -> Duration {
        self.meters
            .iter()
            .map(|m| m.info().period)
            .max()
            .unwrap_or_default()
            .min(MOST_MARGIN)
    }

    /// Which meters need a ranging run (the ranging rule applies to those).
    pub fn ranged(&self) -> Vec<bool> {
        self.meters.iter().map(|m| m.needs_ranging()).collect()
    }

    /// Stops every meter; a meter that failed leaves its reason in place of a trace.
    pub fn stop(&mut self, mark: String) -> Recording {
        // And at least once after the last completion.
        std::thread::sleep(self.margin());
        let infos = self.meters.iter().map(|m| m.info()).collect();
        let traces = self
            .meters
            .iter_mut()
            .map(|meter| {
                let mut trace = meter.stop().map_err(|e| e.to_string())?;
                // As spl.txt and the checker will read them: whole milliseconds.
                for sample in &mut trace.samples {
                    sample.time = truncate_to_millis(sample.time);
                }
                Ok(trace)
            })
            .collect();
        Recording {
            infos,
            traces,
            mark,
        }
    }
}

impl Drop for Meters {
    /// Lets go of the meters (PTDaemon: restores its ranges); failures are only warned of.
    fn drop(&mut self) {
        for meter in &mut self.meters {
            if let Err(error) = meter.finish() {
                tracing::warn!("{error}");
            }
        }
    }
}

fn truncate_to_millis(time: SystemTime) -> SystemTime {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    UNIX_EPOCH + Duration::from_millis(since.as_millis() as u64)
}

/// Removes what an earlier power run left in `dir` (traces, power_summary.json), so that
/// nothing stale is read as this run's.
pub fn clear_old_outputs(dir: &Path) -> anyhow::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let trace = name.starts_with("spl") && name.ends_with(".txt");
        if trace || name == "power_summary.json" {
            std::fs::remove_file(entry.path())
                .with_context(|| format!("cannot remove the old {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// `plugin:PATH|NAME[?key=value&…]`, the power meter of a plugin library.
fn open_plugin(
    spec: &str,
    argument: &str,
) -> Result<Box<dyn PowerSource>, mlperf_power::SourceError> {
    let (library, config) = power_plugin::parse_plugin_power_spec(argument);
    power_plugin::open_power_plugin(spec, &library, &config)
}

/// Power is measured over a performance run.
pub fn check_mode(mode: TestMode) -> anyhow::Result<()> {
    if mode == TestMode::AccuracyOnly {
        bail!("--power measures performance runs; an AccuracyOnly run has no power result (use --mode PerformanceOnly or SubmissionRun)");
    }
    Ok(())
}

/// Accounts a recording over a run's window.
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
        .map(|(info, trace)| {
            SourceResult::new(
                info.clone(),
                trace.as_ref().map_err(Clone::clone),
                window,
                scenario,
                figures,
            )
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
) -> anyhow::Result<()> {
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
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        result.trace_file = Some(name);
    }
    Ok(())
}

/// power_summary.json in `dir`, and the same object as result.json's `power` member.
pub fn write_summary(dir: &Path, result: &PowerResult) -> anyhow::Result<()> {
    let json = report::to_json(result);
    let path = dir.join("power_summary.json");
    let mut text = serde_json::to_string_pretty(&json)?;
    text.push('\n');
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;

    let result_path = dir.join(mlperf_host::logs::RESULT_JSON);
    let Ok(existing) = std::fs::read(&result_path) else {
        return Ok(());
    };
    let mut whole: serde_json::Value = serde_json::from_slice(&existing)
        .with_context(|| format!("cannot read back {}", result_path.display()))?;
    if let Some(object) = whole.as_object_mut() {
        object.insert("power".into(), json);
    }
    let mut text = serde_json::to_vec_pretty(&whole)?;
    text.push(b'\n');
    let temporary = dir.join(".result.json.power");
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, &result_path))
        .with_context(|| format!("cannot rewrite {}", result_path.display()))
}
