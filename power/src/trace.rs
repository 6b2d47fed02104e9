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

/// The sum of meters measuring parts of one system side by side (a system too big for one
/// analyzer): for each sample of the first, the sample nearest in time of each other meter,
/// added, as MLCommons' power server adds the lines of its analyzers, which sample in step. A
/// sum with an invalid reading in it is invalid (-1): part of the system went unmeasured.
pub fn sum_traces(traces: &[&Trace]) -> Trace {
    let Some((first, others)) = traces.split_first() else {
        return Trace::default();
    };
    let samples = first
        .samples
        .iter()
        .map(|sample| {
            let mut watts = sample.watts;
            let mut valid = sample.is_valid();
            for other in others {
                match nearest(&other.samples, sample.time) {
                    Some(reading) if reading.is_valid() => watts += reading.watts,
                    _ => valid = false,
                }
            }
            PowerSample::watts(sample.time, if valid { watts } else { -1.0 })
        })
        .collect();
    Trace {
        samples,
        ..Trace::default()
    }
}

/// The sample of `samples` (in time order) nearest `time`.
fn nearest(samples: &[PowerSample], time: SystemTime) -> Option<&PowerSample> {
    let after = samples.partition_point(|s| s.time < time);
    let distance = |s: &PowerSample| match s.time.duration_since(time) {
        Ok(d) => d,
        Err(e) => e.duration(),
    };
    [after.checked_sub(1), Some(after)]
        .into_iter()
        .flatten()
        .filter_map(|i| samples.get(i))
        .min_by_key(|s| distance(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn at(ms: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(1_800_000_000_000 + ms)
    }

    fn trace(points: &[(u64, f64)]) -> Trace {
        Trace {
            samples: points
                .iter()
                .map(|&(ms, watts)| PowerSample::watts(at(ms), watts))
                .collect(),
            ..Trace::default()
        }
    }

    #[test]
    fn meters_in_step_add_sample_by_sample() {
        let a = trace(&[(0, 195.0), (1000, 205.0), (2000, 210.0)]);
        let b = trace(&[(3, 118.0), (998, 122.0), (2004, -1.0)]);
        let sum = sum_traces(&[&a, &b]);
        let watts: Vec<f64> = sum.samples.iter().map(|s| s.watts).collect();
        assert_eq!(watts, [313.0, 327.0, -1.0]);
        assert_eq!(sum.samples[1].time, at(1000), "the first meter's clock");
        // A meter sampling faster contributes its sample nearest each of the first's.
        let fast = trace(&[
            (0, 10.0),
            (400, 11.0),
            (900, 12.0),
            (1400, 13.0),
            (1900, 14.0),
        ]);
        let watts: Vec<f64> = sum_traces(&[&a, &fast])
            .samples
            .iter()
            .map(|s| s.watts)
            .collect();
        assert_eq!(watts, [205.0, 217.0, 224.0]);
        assert_eq!(sum_traces(&[&a]).samples.len(), 3);
        assert!(sum_traces(&[&a, &Trace::default()])
            .samples
            .iter()
            .all(|s| !s.is_valid()));
    }
}
