//! The energy of a run window from a trace, as MLPerf's power checker computes it (the mean of
//! the valid samples strictly inside the window, times its length), with cross-checks: the
//! trapezoid integral of the samples, the energy counter's difference where the meter has
//! one, and what may make the figure untrustworthy.

use std::time::{Duration, SystemTime};

use crate::clock::{format_utc, RunWindow};
use crate::trace::{PowerSample, Trace};

/// A trace accounted over a window.
#[derive(Debug, Clone, PartialEq)]
pub struct EnergyReport {
    pub window_seconds: f64,
    /// Valid samples strictly inside the window (the checker's).
    pub samples: usize,
    /// Samples inside the window the meter marked invalid (watts <= 0 or not finite).
    pub invalid_samples: usize,
    /// The checker's average power; None without samples.
    pub mean_watts: Option<f64>,
    /// mean_watts × window_seconds.
    pub energy_joules: Option<f64>,
    /// The piecewise-linear integral of the valid samples over the part of the window they span.
    pub trapezoid_joules: Option<f64>,
    /// The energy counter's increase over the window, interpolated at its ends.
    pub counter_joules: Option<f64>,
    pub min_watts: Option<f64>,
    pub max_watts: Option<f64>,
    /// The longest time between consecutive valid samples in the window, its ends included.
    pub largest_gap: Duration,
    /// Why the figure should not be trusted; empty when it can be.
    pub problems: Vec<String>,
    /// What to know about a figure that stands (the official checker accepts it).
    pub warnings: Vec<String>,
}

impl EnergyReport {
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Accounts `trace` over `window`; `period` is the meter's nominal sampling period.
pub fn account(trace: &Trace, window: &RunWindow, period: Duration) -> EnergyReport {
    let inside: Vec<&PowerSample> = trace
        .samples
        .iter()
        .filter(|s| window.contains(s.time))
        .collect();
    let valid: Vec<&PowerSample> = inside.iter().copied().filter(|s| s.is_valid()).collect();
    let seconds = window.seconds();
    let mean = (!valid.is_empty())
        .then(|| valid.iter().map(|s| s.watts).sum::<f64>() / valid.len() as f64);
    let watts = valid.iter().map(|s| s.watts);
    let mut report = EnergyReport {
        window_seconds: seconds,
        samples: valid.len(),
        invalid_samples: inside.len() - valid.len(),
        mean_watts: mean,
        energy_joules: mean.map(|w| w * seconds),
        trapezoid_joules: trapezoid(&trace.samples, window),
        counter_joules: counter_difference(&trace.energy, window),
        min_watts: watts.clone().reduce(f64::min),
        max_watts: watts.reduce(f64::max),
        largest_gap: largest_gap(&valid, window),
        problems: Vec::new(),
        warnings: Vec::new(),
    };
    if valid.is_empty() {
        report
            .problems
            .push("no valid power sample inside the run window".into());
    }
    // The checker averages the samples inside the window, whatever lies outside it: a first
    // sample after power_begin (or a last before power_end) only says the run started (or
    // ended) within the meter's sampling period.
    let first = trace.samples.first().map(|s| s.time);
    let last = trace.samples.last().map(|s| s.time);
    if let Some(first) = first.filter(|t| *t > window.begin) {
        report.warnings.push(format!(
            "the meter's first sample ({}) follows the run's start ({}): the run started within \
             the meter's sampling period; the mean is of the samples inside the window, as the \
             official checker takes it",
            format_utc(first),
            format_utc(window.begin)
        ));
    }
    if let Some(last) = last.filter(|t| *t < window.end) {
        report.warnings.push(format!(
            "the meter's last sample ({}) precedes the run's end ({}): the mean is of the samples \
             inside the window, as the official checker takes it",
            format_utc(last),
            format_utc(window.end)
        ));
    }
    // Samples a period apart fit this many times strictly inside the window, at the least.
    let expected = ((seconds / period.as_secs_f64().max(1e-9)).floor() - 1.0).max(1.0);
    if !valid.is_empty() && (valid.len() as f64) < 0.9 * expected {
        report.problems.push(format!(
            "{} valid samples in a {seconds:.3} s window where a meter sampling every {period:?} \
             gives at least {expected}",
            valid.len(),
        ));
    }
    report
}

/// The longest stretch of the window without a valid sample.
fn largest_gap(valid: &[&PowerSample], window: &RunWindow) -> Duration {
    let mut times = vec![window.begin];
    times.extend(valid.iter().map(|s| s.time));
    times.push(window.end);
    times
        .windows(2)
        .map(|pair| pair[1].duration_since(pair[0]).unwrap_or_default())
        .max()
        .unwrap_or_default()
}

fn seconds_between(from: SystemTime, to: SystemTime) -> f64 {
    match to.duration_since(from) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

/// The integral of the piecewise-linear curve through the valid samples, over the part of
/// the window it spans (clipped at the window's ends by interpolation).
fn trapezoid(samples: &[PowerSample], window: &RunWindow) -> Option<f64> {
    let points: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.is_valid())
        .map(|s| (seconds_between(window.begin, s.time), s.watts))
        .collect();
    let end = window.seconds();
    let mut joules = 0.0;
    let mut covered = false;
    for pair in points.windows(2) {
        let ((t0, w0), (t1, w1)) = (pair[0], pair[1]);
        let (from, to) = (t0.max(0.0), t1.min(end));
        if to <= from || t1 <= t0 {
            continue;
        }
        let at = |t: f64| w0 + (w1 - w0) * (t - t0) / (t1 - t0);
        joules += (at(from) + at(to)) / 2.0 * (to - from);
        covered = true;
    }
    covered.then_some(joules)
}

/// The counter's value at `time`, interpolated between the readings around it.
fn counter_at(readings: &[(SystemTime, f64)], time: SystemTime) -> Option<f64> {
    let after = readings.iter().position(|(t, _)| *t >= time)?;
    let (t1, e1) = readings[after];
    if after == 0 {
        return (t1 == time).then_some(e1);
    }
    let (t0, e0) = readings[after - 1];
    let span = seconds_between(t0, t1);
    Some(e0 + (e1 - e0) * seconds_between(t0, time) / span)
}

fn counter_difference(readings: &[(SystemTime, f64)], window: &RunWindow) -> Option<f64> {
    Some(counter_at(readings, window.end)? - counter_at(readings, window.begin)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    fn at(seconds: f64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_000_000) + Duration::from_secs_f64(seconds)
    }

    /// One sample a second from 0 s to `count - 1` s, of `watts(i)`.
    fn trace(count: usize, watts: impl Fn(usize) -> f64) -> Trace {
        Trace {
            samples: (0..count)
                .map(|i| PowerSample::watts(at(i as f64), watts(i)))
                .collect(),
            ..Trace::default()
        }
    }

    #[test]
    fn the_checker_mean_takes_valid_samples_strictly_inside() {
        // Window (2 s, 7 s): samples at 3, 4, 5, 6 s; the one at 2 s and at 7 s are out.
        let window = RunWindow {
            begin: at(2.0),
            end: at(7.0),
        };
        let trace = trace(10, |i| if i == 5 { -1.0 } else { 100.0 + i as f64 });
        let report = account(&trace, &window, Duration::from_secs(1));
        assert_eq!(report.samples, 3);
        assert_eq!(report.invalid_samples, 1);
        // (103 + 104 + 106) / 3
        let mean = report.mean_watts.unwrap();
        assert!((mean - 313.0 / 3.0).abs() < 1e-12, "{mean}");
        assert!((report.energy_joules.unwrap() - mean * 5.0).abs() < 1e-9);
        assert_eq!(
            (report.min_watts, report.max_watts),
            (Some(103.0), Some(106.0))
        );
        // 4 s to 6 s: the invalid sample at 5 s is skipped.
        assert_eq!(report.largest_gap, Duration::from_secs(2));
        // 3 of the 4 samples that fit: too thin a record to trust.
        assert_eq!(
            report.problems,
            ["3 valid samples in a 5.000 s window where a meter sampling every 1s gives at least 4"]
        );
    }

    #[test]
    fn fifty_samples_at_about_200_watts() {
        // 50 samples at 200.2 W inside a 50.016 s window: 10013.2032 J.
        let window = RunWindow {
            begin: at(0.5),
            end: at(50.516),
        };
        let trace = trace(52, |_| 200.2);
        let report = account(&trace, &window, Duration::from_secs(1));
        assert_eq!(report.samples, 50);
        let energy = report.energy_joules.unwrap();
        assert!((energy - 10_013.203_2).abs() < 1e-6, "{energy}");
        let trapezoid = report.trapezoid_joules.unwrap();
        assert!((trapezoid - 10_013.203_2).abs() < 1e-6, "{trapezoid}");
    }

    #[test]
    fn the_trapezoid_interpolates_at_the_window_ends() {
        // A ramp of 100 W + 10 W/s, window (0.5 s, 3.5 s): the mean of the ramp there is
        // 120 W, so 360 J; the checker mean of the samples at 1, 2, 3 s is also 120 W.
        let window = RunWindow {
            begin: at(0.5),
            end: at(3.5),
        };
        let report = account(
            &trace(5, |i| 100.0 + 10.0 * i as f64),
            &window,
            Duration::from_secs(1),
        );
        assert!((report.trapezoid_joules.unwrap() - 360.0).abs() < 1e-9);
        assert!((report.energy_joules.unwrap() - 360.0).abs() < 1e-9);
    }

    #[test]
    fn a_counter_is_read_at_the_window_ends() {
        let mut trace = trace(5, |_| 50.0);
        trace.energy = (0..5)
            .map(|i| (at(i as f64), 1000.0 + 50.0 * i as f64))
            .collect();
        let window = RunWindow {
            begin: at(0.25),
            end: at(3.75),
        };
        let report = account(&trace, &window, Duration::from_secs(1));
        assert!((report.counter_joules.unwrap() - 175.0).abs() < 1e-9);
    }

    #[test]
    fn a_trace_that_misses_the_window_or_thins_out_is_flagged() {
        let window = RunWindow {
            begin: at(0.5),
            end: at(20.5),
        };
        let short = account(&trace(10, |_| 100.0), &window, Duration::from_secs(1));
        assert!(short.warnings.iter().any(|p| p.contains("last sample")));
        assert!(short.problems.iter().any(|p| p.contains("9 valid samples")));
        let none = account(&Trace::default(), &window, Duration::from_secs(1));
        assert_eq!(none.mean_watts, None);
        assert!(none
            .problems
            .iter()
            .any(|p| p.contains("no valid power sample")));
        assert!(!none.is_valid());
    }
}
