//! The null plugin's simulated power meter (behind `mlperf_power_plugin_entry`), to exercise
//! power plugins end to end: a constant draw, optionally with a sawtooth ripple, an exact
//! energy counter, and faults for the host's tests. Its readings are made up, and its info
//! says so.

use std::time::{Duration, Instant};

use mlperf_plugin_api::sdk::{
    Host, Level, PluginError, PowerInfo, PowerMeter, PowerReading, PowerScope,
};
use serde::Deserialize;

/// The meter's settings, from the TOML text of its own `create`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MeterConfig {
    /// The mean draw in watts.
    pub watts: f64,
    /// The period the meter reports (the host polls at it), in ms.
    pub period_ms: u64,
    /// A sawtooth on top of `watts`, from -ripple to +ripple over each ripple period (its mean
    /// over whole periods is `watts`).
    pub ripple_watts: f64,
    pub ripple_period_ms: u64,
    /// Report the draw as the whole system's at the wall (default: a component).
    pub wall: bool,
    /// Offer the cumulative energy counter.
    pub energy_counter: bool,
    /// Faults for the host's tests, counted in reads: the read after the first N fails, ...
    pub fail_after_reads: Option<u64>,
    /// ... panics, ...
    pub panic_after_reads: Option<u64>,
    /// ... or takes `stall_ms` before it answers.
    pub stall_after_reads: Option<u64>,
    pub stall_ms: u64,
}

impl Default for MeterConfig {
    fn default() -> Self {
        MeterConfig {
            watts: 150.0,
            period_ms: 100,
            ripple_watts: 0.0,
            ripple_period_ms: 1000,
            wall: false,
            energy_counter: true,
            fail_after_reads: None,
            panic_after_reads: None,
            stall_after_reads: None,
            stall_ms: 60_000,
        }
    }
}

impl MeterConfig {
    pub fn parse(text: &str) -> Result<MeterConfig, PluginError> {
        let bad =
            |message: String| PluginError::invalid_config(format!("null meter config: {message}"));
        let config: MeterConfig = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        if !(config.watts.is_finite() && config.watts >= 0.0) {
            return Err(bad(format!("watts = {} is not a power", config.watts)));
        }
        if !(config.ripple_watts.is_finite() && config.ripple_watts >= 0.0) {
            return Err(bad(format!(
                "ripple_watts = {} is not a power",
                config.ripple_watts
            )));
        }
        if config.period_ms == 0 || config.ripple_period_ms == 0 {
            return Err(bad(
                "period_ms and ripple_period_ms must be at least 1".into()
            ));
        }
        Ok(config)
    }

    fn ripple_period(&self) -> f64 {
        self.ripple_period_ms as f64 / 1000.0
    }

    /// The draw `seconds` after the meter was created.
    pub fn watts_at(&self, seconds: f64) -> f64 {
        let period = self.ripple_period();
        let phase = (seconds / period).fract();
        self.watts + self.ripple_watts * (2.0 * phase - 1.0)
    }

    /// The exact integral of [`watts_at`](Self::watts_at) from 0 to `seconds`: the ripple's
    /// whole periods add nothing, its last partial one r seconds long adds ripple·(r²/P − r).
    pub fn joules_at(&self, seconds: f64) -> f64 {
        let period = self.ripple_period();
        let partial = seconds % period;
        self.watts * seconds + self.ripple_watts * (partial * partial / period - partial)
    }
}

pub struct NullMeter {
    config: MeterConfig,
    created: Instant,
    reads: u64,
}

impl PowerMeter for NullMeter {
    fn create(config: &str, host: &Host) -> Result<Self, PluginError> {
        let config = MeterConfig::parse(config)?;
        host.logger().log(
            Level::Info,
            &format!(
                "null meter: simulated {} W ± {} W, every {} ms",
                config.watts, config.ripple_watts, config.period_ms
            ),
        );
        Ok(NullMeter {
            config,
            created: Instant::now(),
            reads: 0,
        })
    }

    fn info(&self) -> PowerInfo {
        let config = &self.config;
        PowerInfo {
            scope: if config.wall {
                PowerScope::Wall
            } else {
                PowerScope::Component
            },
            description: format!(
                "simulated draw of {} W (null plugin {})",
                config.watts,
                env!("CARGO_PKG_VERSION")
            ),
            period: Duration::from_millis(config.period_ms),
            has_energy_counter: config.energy_counter,
            simulated: true,
        }
    }

    fn read(&mut self) -> Result<PowerReading, PluginError> {
        let ordinal = self.reads;
        self.reads += 1;
        let config = &self.config;
        if config.fail_after_reads == Some(ordinal) {
            return Err(PluginError::device(format!(
                "null meter: fail_after_reads = {ordinal} reached"
            )));
        }
        if config.panic_after_reads == Some(ordinal) {
            panic!("null meter: panic_after_reads = {ordinal} reached");
        }
        if config.stall_after_reads == Some(ordinal) {
            std::thread::sleep(Duration::from_millis(config.stall_ms));
        }
        let seconds = self.created.elapsed().as_secs_f64();
        let reading = PowerReading::watts(config.watts_at(seconds));
        Ok(match config.energy_counter {
            true => reading.with_energy(config.joules_at(seconds)),
            false => reading,
        })
    }

    fn attributes(&self) -> Vec<(String, String)> {
        [
            ("vendor", "mlperf-host".to_owned()),
            ("device", "simulated".to_owned()),
            ("plugin", format!("null {}", env!("CARGO_PKG_VERSION"))),
            ("watts", self.config.watts.to_string()),
            ("ripple_watts", self.config.ripple_watts.to_string()),
            ("period_ms", self.config.period_ms.to_string()),
        ]
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_text_is_the_default_and_keys_are_checked() {
        assert_eq!(MeterConfig::parse("").unwrap(), MeterConfig::default());
        let config = MeterConfig::parse(
            "watts = 80.5\nperiod_ms = 5\nripple_watts = 10\nripple_period_ms = 200\nwall = true\n\
             energy_counter = false\nfail_after_reads = 3\npanic_after_reads = 4\n\
             stall_after_reads = 5\nstall_ms = 7\n",
        )
        .unwrap();
        assert_eq!(config.watts, 80.5);
        assert_eq!(config.stall_after_reads, Some(5));
        for bad in [
            "watt = 1",
            "watts = -1",
            "period_ms = 0",
            "ripple_watts = nan",
        ] {
            let error = MeterConfig::parse(bad).unwrap_err();
            assert_eq!(
                error.code,
                mlperf_plugin_api::ffi::ERROR_INVALID_CONFIG,
                "{bad}"
            );
        }
    }

    #[test]
    fn the_energy_counter_integrates_the_sawtooth() {
        let config =
            MeterConfig::parse("watts = 100\nripple_watts = 20\nripple_period_ms = 1000").unwrap();
        assert_eq!(config.watts_at(0.0), 80.0);
        assert!((config.watts_at(0.75) - 110.0).abs() < 1e-9);
        // Whole periods: the mean draw exactly.
        assert!((config.joules_at(3.0) - 300.0).abs() < 1e-9);
        // Numerically, over a partial period.
        let steps = 100_000;
        let dt = 2.4 / steps as f64;
        let sum: f64 = (0..steps)
            .map(|i| config.watts_at((i as f64 + 0.5) * dt) * dt)
            .sum();
        assert!((config.joules_at(2.4) - sum).abs() < 1e-3, "{sum}");
    }
}
