//! Power meters. Each is a [`PowerSource`]: started before the LoadGen run's first issue,
//! stopped after its last completion, sampling on its own thread in between, never on the
//! issue path. [`open`] makes one from its command-line spec.
//!
//! The meters themselves (and NVML) are the `meters` feature; without it this module holds
//! only the types a recorded trace and a system description are read with.

#[cfg(feature = "meters")]
mod counter;
mod gpus;
#[cfg(feature = "meters")]
mod hwmon;
#[cfg(feature = "meters")]
mod nvml;
#[cfg(feature = "meters")]
mod options;
#[cfg(feature = "meters")]
mod poller;
#[cfg(feature = "meters")]
pub mod ptd;
#[cfg(feature = "meters")]
mod rapl;
#[cfg(feature = "meters")]
mod simulated;
#[cfg(feature = "meters")]
mod sysfs;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use gpus::{GpuDescription, GpuInventory};
#[cfg(feature = "meters")]
pub use nvml::describe_gpus;
#[cfg(feature = "meters")]
pub use simulated::Simulated;

use crate::trace::Trace;

/// What a meter measures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Scope {
    /// The whole system at the wall socket (what MLPerf power results are).
    Wall,
    /// One component (a GPU, a CPU package); not MLPerf power.
    Component(String),
}

/// Where the readings come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Provenance {
    /// A power analyzer through SPEC PTDaemon.
    Ptd,
    /// Counters of this host (NVML, RAPL, hwmon, a power plugin).
    OnHost,
    /// Made up (`sim:`, the PTDaemon simulator): never a measurement.
    Simulated,
}

// Serde: the host hands these between its processes (a meter plugin isolated in its own).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceInfo {
    /// The spec it was opened from, e.g. "sim:200".
    pub name: String,
    pub scope: Scope,
    pub provenance: Provenance,
    /// The nominal time between samples.
    pub period: Duration,
    /// What the meter says it is (a PTDaemon Identify reply, a GPU name, ...).
    pub identity: String,
}

#[derive(Debug, thiserror::Error, Serialize, Deserialize)]
pub enum SourceError {
    #[error("power source {spec:?}: {message}")]
    Spec { spec: String, message: String },
    #[error("power source {name}: {message}")]
    Failed { name: String, message: String },
}

/// The two runs of MLCommons' power procedure: a ranging run with the analyzer's ranges on
/// automatic, then the testing run (the one that counts) at the ranges ranging measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    Ranging,
    Testing,
}

impl Phase {
    /// As in the official marks and directories: `ranging`, `testing`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Ranging => "ranging",
            Phase::Testing => "testing",
        }
    }
}

/// A power meter. The host calls, for each run: `prepare(phase)`, `start(mark)` before the
/// first issue, `stop()` after the last completion; and `finish()` once at the end.
pub trait PowerSource: Send {
    fn info(&self) -> SourceInfo;
    /// Whether the meter needs a ranging run before the testing run (a PTDaemon analyzer);
    /// when any source does, the host runs the workload twice.
    fn needs_ranging(&self) -> bool {
        false
    }
    /// Sets the meter up for a run (PTDaemon: automatic ranges for ranging, the measured
    /// maxima for testing).
    fn prepare(&mut self, _phase: Phase) -> Result<(), SourceError> {
        Ok(())
    }
    /// Begins sampling (on the source's own thread); `mark` names the measurement.
    fn start(&mut self, mark: &str) -> Result<(), SourceError>;
    /// Ends sampling and returns what was recorded since `start`.
    fn stop(&mut self) -> Result<Trace, SourceError>;
    /// After the last run: restores what `prepare` changed and lets go of the meter.
    fn finish(&mut self) -> Result<(), SourceError> {
        Ok(())
    }
}

/// Opens the source `spec` names; a spec is `KIND:ARGUMENT`, options after `?` as
/// `key=value` joined by `&`:
///
/// - `sim:WATTS` or `sim:FILE` (a constant draw, or a recorded trace replayed), with
///   `?period_ms=MS` (1000): simulated, wall scope, never a measurement;
/// - `ptd://HOST:PORT`, with `?settle=SECS` (10) and `timeout=SECS` (15): SPEC PTDaemon, wall
///   power;
/// - `nvml[:INDEX]`, with `?period_ms=MS` (100) and `lib=PATH`: an NVIDIA GPU (0 by default);
/// - `rapl[:ZONE,…]`, with `?period_ms=MS` (100) and `root=PATH` (`/sys`): CPU RAPL zones;
/// - `hwmon[:CHIP,…]`, with `?period_ms=MS` (100) and `root=PATH` (`/sys`): hwmon sensors.
///
/// The last three are component figures. A kind without an argument takes its options
/// directly (`rapl?period_ms=20`). `plugin:PATH` is the host's: it loads plugins.
#[cfg(feature = "meters")]
pub fn open(spec: &str) -> Result<Box<dyn PowerSource>, SourceError> {
    let (kind, argument) = options::split_kind(spec);
    match kind {
        "sim" => open_simulated(spec, argument),
        "ptd" => ptd::open(spec, argument.trim_start_matches("//")),
        "nvml" => nvml::open(spec, argument),
        "rapl" => open_sysfs(spec, argument, rapl::open),
        "hwmon" => open_sysfs(spec, argument, hwmon::open),
        other => Err(options::spec_error(
            spec,
            format!(
                "unknown kind {other:?} (known: sim:WATTS|FILE, ptd://HOST:PORT, nvml[:INDEX], \
                 rapl[:ZONE,…], hwmon[:CHIP,…])"
            ),
        )),
    }
}

/// `rapl` and `hwmon`: sources read from sysfs, polled.
#[cfg(feature = "meters")]
fn open_sysfs(
    spec: &str,
    argument: &str,
    open: fn(&sysfs::SysfsSpec) -> Result<poller::PolledSource, SourceError>,
) -> Result<Box<dyn PowerSource>, SourceError> {
    Ok(Box::new(open(&sysfs::SysfsSpec::parse(spec, argument)?)?))
}

/// `sim:WATTS` or `sim:FILE` (a recorded trace), each with an optional `?period_ms=N`
/// (default 1000, as PTDaemon samples).
#[cfg(feature = "meters")]
fn open_simulated(spec: &str, argument: &str) -> Result<Box<dyn PowerSource>, SourceError> {
    let argument = options::Argument::parse(spec, argument, &["period_ms=MS"])?;
    let period = argument.period(Duration::from_secs(1))?;
    let what = argument.base;
    if what.is_empty() {
        return Err(
            argument.error("sim: takes a power in watts (sim:200) or a trace file (sim:FILE)")
        );
    }
    if let Ok(watts) = what.parse::<f64>() {
        if !(watts > 0.0 && watts.is_finite()) {
            return Err(argument.error(format!("{watts} W: a simulated draw must be positive")));
        }
        return Ok(Box::new(Simulated::constant(spec, watts, period)));
    }
    let readings =
        Simulated::read_trace(std::path::Path::new(what)).map_err(|e| argument.error(e))?;
    Ok(Box::new(Simulated::replay(spec, readings, period, what)))
}

#[cfg(all(test, feature = "meters"))]
mod tests {
    use super::*;

    #[test]
    fn specs_are_checked() {
        let source = open("sim:200").unwrap();
        let info = source.info();
        assert_eq!(info.provenance, Provenance::Simulated);
        assert_eq!(info.scope, Scope::Wall);
        assert_eq!(info.period, Duration::from_secs(1));
        let fast = open("sim:150?period_ms=20").unwrap().info();
        assert_eq!(fast.period, Duration::from_millis(20));
        assert!(fast.identity.contains("150 W"));
        for (spec, words) in [
            ("sim:/nonexistent/trace.txt", "cannot read"),
            ("sim:-5", "positive"),
            ("sim:", "sim:200"),
            ("sim:200?period_ms=0", "period_ms"),
            ("sim:200?rate=3", "unknown option"),
            ("ptdx://h:1", "unknown kind \"ptdx"),
        ] {
            let error = open(spec).map(|_| ()).unwrap_err().to_string();
            assert!(
                error.contains(words) && error.contains(spec),
                "{spec}: {error}"
            );
        }
    }
}
