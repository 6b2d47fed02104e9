//! A sweep point's power: the `--power` meters started before the point and stopped after
//! it, their readings (summed over the meters, which measure parts of one system side by side)
//! averaged over the point's steady window, against its output tokens.

use std::time::{Duration, SystemTime};

use mlperf_power::{sum_traces, Trace};

use crate::power::Recording;

/// A point's power figures.
#[derive(Debug, Clone, PartialEq)]
pub struct PointPower {
    pub mean_watts: f64,
    pub joules: f64,
    /// Readings inside the window.
    pub readings: usize,
    pub tokens_per_joule: f64,
    /// Output tokens/s per kW drawn (measured power; `--provisioned-power` gives the
    /// Endpoints figure, over provisioned power).
    pub tokens_per_s_per_kw: f64,
}

/// Where a monotonic instant falls on the wall clock the meters stamp readings with.
#[derive(Debug, Clone, Copy)]
pub(super) struct ClockPair {
    pub monotonic_ns: i64,
    pub wall: SystemTime,
}

impl ClockPair {
    pub(super) fn now() -> ClockPair {
        ClockPair {
            monotonic_ns: mlperf_loadgen::monotonic_ns(),
            wall: SystemTime::now(),
        }
    }

    fn wall_at(&self, monotonic_ns: i64) -> SystemTime {
        let delta = monotonic_ns - self.monotonic_ns;
        if delta >= 0 {
            self.wall + Duration::from_nanos(delta as u64)
        } else {
            self.wall - Duration::from_nanos(delta.unsigned_abs())
        }
    }
}

/// The power over `[from_ns, to_ns)` (monotonic), given the tokens generated in it; or why
/// there is none.
pub(super) fn point_power(
    recording: &Recording,
    clocks: ClockPair,
    from_ns: i64,
    to_ns: i64,
    output_tokens: f64,
) -> Result<PointPower, String> {
    let traces: Vec<&Trace> = recording
        .traces
        .iter()
        .zip(&recording.infos)
        .map(|(trace, info)| {
            trace
                .as_ref()
                .map_err(|why| format!("meter {}: {why}", info.name))
        })
        .collect::<Result<_, _>>()?;
    let total = sum_traces(&traces);
    let (from, to) = (clocks.wall_at(from_ns), clocks.wall_at(to_ns));
    let inside: Vec<f64> = total
        .samples
        .iter()
        .filter(|s| s.time >= from && s.time < to)
        .map(|s| if s.is_valid() { Some(s.watts) } else { None })
        .collect::<Option<_>>()
        .ok_or_else(|| "an invalid reading inside the window".to_string())?;
    if inside.is_empty() {
        return Err(
            "no reading inside the window (a point shorter than the meter's period)".to_string(),
        );
    }
    let mean_watts = inside.iter().sum::<f64>() / inside.len() as f64;
    let seconds = (to_ns - from_ns) as f64 / 1e9;
    let joules = mean_watts * seconds;
    Ok(PointPower {
        mean_watts,
        joules,
        readings: inside.len(),
        tokens_per_joule: output_tokens / joules,
        tokens_per_s_per_kw: (output_tokens / seconds) / (mean_watts / 1000.0),
    })
}
