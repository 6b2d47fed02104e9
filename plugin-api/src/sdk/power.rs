//! [`PowerMeter`]: what a power plugin implements (ABI 1.1), and what it reports.

use std::time::Duration;

use super::{Host, PluginError};

/// What a meter measures. On-host telemetry (a card's sensor, a CPU package) is a
/// [`Component`](PowerScope::Component); only a meter at the system's wall socket is
/// [`Wall`](PowerScope::Wall), the power MLPerf power results are about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PowerScope {
    #[default]
    Component,
    Wall,
}

/// What [`PowerMeter::info`] says about the meter, asked once after `create`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PowerInfo {
    pub scope: PowerScope,
    /// What is measured, e.g. "NPU 0 board power (sensor INA3221)".
    pub description: String,
    /// The time between two readings the sensor supports: the host calls
    /// [`PowerMeter::read`] once a period (at most once a millisecond). Must not be zero.
    pub period: Duration,
    /// [`PowerReading::energy_joules`] is filled: a cumulative counter in joules.
    pub has_energy_counter: bool,
    /// Made-up readings: the host labels everything from the meter as simulated.
    pub simulated: bool,
}

impl PowerInfo {
    /// A component meter, without energy counter, not simulated.
    pub fn component(description: impl Into<String>, period: Duration) -> Self {
        PowerInfo {
            scope: PowerScope::Component,
            description: description.into(),
            period,
            has_energy_counter: false,
            simulated: false,
        }
    }
}

/// One reading; what the meter does not know stays `None`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PowerReading {
    /// Power now; NaN or <= 0 when the sensor had no reading this time.
    pub watts: f64,
    pub volts: Option<f64>,
    pub amps: Option<f64>,
    pub power_factor: Option<f64>,
    /// With [`PowerInfo::has_energy_counter`]: joules since a fixed origin, never decreasing
    /// (correct the counter's wraparound before reporting it).
    pub energy_joules: Option<f64>,
}

impl PowerReading {
    pub fn watts(watts: f64) -> Self {
        PowerReading {
            watts,
            ..PowerReading::default()
        }
    }

    pub fn with_energy(mut self, joules: f64) -> Self {
        self.energy_joules = Some(joules);
        self
    }
}

/// A power meter: one value per `create`, dropped at `destroy`. The host asks [`info`] once,
/// then calls [`read`] once a period from a sampling thread of its own while a run is
/// measured; the SDK serialises every call on the instance (hence only `Send`). A returned
/// error or a panic ends that measurement with its message; the benchmark result stands.
///
/// [`info`]: PowerMeter::info
/// [`read`]: PowerMeter::read
pub trait PowerMeter: Send + Sized + 'static {
    /// A meter configured by TOML text (empty when there is none), its own config, separate
    /// from any SUT's of the same library. Report bad settings with
    /// [`PluginError::invalid_config`].
    fn create(config: &str, host: &Host) -> Result<Self, PluginError>;

    fn info(&self) -> PowerInfo;

    /// The latest reading. Return promptly (well within the period): the latest value the
    /// sensor has, not the next one. The host stamps it with the wall clock.
    fn read(&mut self) -> Result<PowerReading, PluginError>;

    /// Key/value facts for the logs (vendor, device, sensor, firmware_version, ...). Asked
    /// once per instance.
    fn attributes(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}
