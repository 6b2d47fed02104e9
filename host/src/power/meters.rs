//! The meters around a run. They are opened (and a meter that cannot be reached refused)
//! before anything runs, started a sampling period before the first issue and stopped a
//! period after the last completion, each sampling on its own thread.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mlperf_power::{Phase, PowerSource, SourceInfo, Trace};

use super::PowerError;
use crate::plugin::isolated::{IsolatedMeter, Isolation};
use crate::plugin::power as power_plugin;

/// The meters of one run. Dropped (on any path, errors included), they are
/// finished: a PTDaemon analyzer gets its ranges back.
pub struct Meters {
    /// Shared with a [`MetersFinisher`] only: the session's thread is the one user otherwise.
    meters: Arc<Mutex<Vec<Box<dyn PowerSource>>>>,
    /// Which meters run in a process of their own (`--isolate process`), in order.
    isolated: Vec<bool>,
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
    /// Which meters ran in a process of their own, in order.
    pub isolated: Vec<bool>,
}

impl Meters {
    /// Opens every `--power` spec; None without any. A meter that cannot be opened is an
    /// error here, before the run. With `isolation` (`--isolate process`) a meter plugin is
    /// opened in a process of its own.
    pub fn open(
        specs: &[String],
        isolation: Option<&Isolation>,
    ) -> Result<Option<Meters>, PowerError> {
        if specs.is_empty() {
            return Ok(None);
        }
        let mut meters = Vec::new();
        let mut isolated = Vec::new();
        for spec in specs {
            isolated.push(spec.starts_with("plugin:") && isolation.is_some());
            let meter = match (spec.strip_prefix("plugin:"), isolation) {
                (Some(_), Some(isolation)) => IsolatedMeter::spawn(spec, isolation)
                    .map(|meter| Box::new(meter) as Box<dyn PowerSource>),
                (Some(plugin), None) => open_plugin(spec, plugin),
                (None, _) => mlperf_power::source::open(spec),
            }
            .map_err(|source| PowerError::Open {
                spec: spec.clone(),
                source,
            })?;
            tracing::info!(source = %spec, identity = %meter.info().identity, "power meter ready");
            meters.push(meter);
        }
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        Ok(Some(Meters {
            meters: Arc::new(Mutex::new(meters)),
            isolated,
            session: format!("mlperf-host-{started}"),
        }))
    }

    fn meters(&self) -> MutexGuard<'_, Vec<Box<dyn PowerSource>>> {
        self.meters.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Finishes the meters from elsewhere (a test abandoned in a call ends the process).
    pub fn finisher(&self) -> MetersFinisher {
        MetersFinisher(Arc::clone(&self.meters))
    }

    /// Whether a meter (a PTDaemon analyzer) needs a ranging run before the testing run.
    pub fn needs_ranging(&self) -> bool {
        self.meters().iter().any(|m| m.needs_ranging())
    }

    /// Prepares and starts every meter for `phase`. On an error the meters already started
    /// are stopped, and the run does not begin.
    pub fn start(&mut self, phase: Phase) -> Result<String, PowerError> {
        let mark = format!("{}_{}", self.session, phase.as_str());
        let margin = self.margin();
        let mut meters = self.meters();
        for index in 0..meters.len() {
            let meter = &mut meters[index];
            let name = meter.info().name;
            let started = meter
                .prepare(phase)
                .and_then(|()| meter.start(&mark))
                .map_err(|source| PowerError::Start {
                    name,
                    phase: phase.as_str(),
                    source,
                });
            if let Err(error) = started {
                for meter in &mut meters[..index] {
                    let _ = meter.stop();
                }
                return Err(error);
            }
        }
        drop(meters);
        // Every meter samples before the first issue (a PTDaemon analyzer's first sample
        // comes about a period after Go, so two).
        std::thread::sleep(2 * margin);
        Ok(mark)
    }

    /// The longest sampling period of the meters (at most [`MOST_MARGIN`]): the margin kept
    /// on both sides of a run.
    fn margin(&self) -> Duration {
        self.meters()
            .iter()
            .map(|m| m.info().period)
            .max()
            .unwrap_or_default()
            .min(MOST_MARGIN)
    }

    /// Which meters need a ranging run (the ranging rule applies to those).
    pub fn ranged(&self) -> Vec<bool> {
        self.meters().iter().map(|m| m.needs_ranging()).collect()
    }

    /// Stops every meter; a meter that failed leaves its reason in place of a trace.
    pub fn stop(&mut self, mark: String) -> Recording {
        // And at least once after the last completion.
        std::thread::sleep(self.margin());
        let mut meters = self.meters();
        let infos = meters.iter().map(|m| m.info()).collect();
        let traces = meters
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
            isolated: self.isolated.clone(),
        }
    }
}

impl Drop for Meters {
    /// Lets go of the meters (PTDaemon: restores its ranges); failures are only warned of.
    fn drop(&mut self) {
        self.finisher().finish();
    }
}

/// Finishes a run's meters from another place than the session's thread.
#[derive(Clone)]
pub struct MetersFinisher(Arc<Mutex<Vec<Box<dyn PowerSource>>>>);

impl MetersFinisher {
    /// Finishes every meter not finished yet (PTDaemon: ends a measurement left running and
    /// restores its ranges); failures are only warned of.
    pub fn finish(&self) {
        let mut meters = self.0.lock().unwrap_or_else(|p| p.into_inner());
        for mut meter in meters.drain(..) {
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

/// `plugin:PATH|NAME[?key=value&…]`, the power meter of a plugin library.
fn open_plugin(
    spec: &str,
    argument: &str,
) -> Result<Box<dyn PowerSource>, mlperf_power::SourceError> {
    let (library, config) = power_plugin::parse_plugin_power_spec(argument);
    power_plugin::open_power_plugin(spec, &library, &config)
}
