//! What a meter recorded: power samples stamped on the UTC wall clock, for meters that count
//! energy their counter readings, and notes of what else it said.

use std::time::SystemTime;

use serde::{Deserialize, Serialize};

/// One reading. `watts` <= 0 marks a sample the meter could not take (PTDaemon writes -1);
/// the checker's mean leaves such samples out.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PowerSample {
    pub time: SystemTime,
    pub watts: f64,
    pub volts: Option<f64>,
    pub amps: Option<f64>,
    pub power_factor: Option<f64>,
}

impl PowerSample {
    pub fn watts(time: SystemTime, watts: f64) -> PowerSample {
        PowerSample {
            time,
            watts,
            volts: None,
            amps: None,
            power_factor: None,
        }
    }

    /// A usable reading: positive and finite.
    pub fn is_valid(&self) -> bool {
        self.watts > 0.0 && self.watts.is_finite()
    }
}

/// A meter's record of one measurement, in time order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub samples: Vec<PowerSample>,
    /// Energy counter readings in joules (wraparound already corrected), for meters with one.
    pub energy: Vec<(SystemTime, f64)>,
    /// What the meter said beside its samples, one line each: PTDaemon's `Watts` and
    /// `Uncertainty` replies, reads that failed during the run, counter resets.
    pub notes: Vec<String>,
}
