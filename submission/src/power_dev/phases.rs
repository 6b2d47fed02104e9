//! check.py's "Check time difference": the client's and server's clocks at each phase of both
//! runs, the LoadGen windows inside the workload's time, the two runs' durations, and the
//! testing run's average power against the ranging run's.

use std::path::Path;
use std::time::UNIX_EPOCH;

use super::checks::{fail, parse_python_float, warn, Outcome};
use super::descriptor::Descriptor;
use super::{RANGING, TESTING};
use crate::logs::DETAIL_LOG;

/// The largest difference between the client's and the server's clocks at a phase (seconds).
pub(super) const TIME_TOLERANCE: f64 = 0.8;
/// Daylight-saving time: check.py also accepts a window an hour late.
const DST_HOUR: f64 = 3600.0;

pub(super) fn check(client: &Descriptor, server: &Descriptor, session: &Path) -> Outcome {
    for (mode, phase) in [(RANGING, "ranging"), (TESTING, "testing")] {
        compare_clocks(
            &phase_times(client, phase),
            &phase_times(server, phase),
            mode,
        )?;
    }
    let (ranging_begin, ranging_end) = loadgen_window(&session.join(RANGING))?;
    let (testing_begin, testing_end) = loadgen_window(&session.join(TESTING))?;
    within_workload(
        ranging_begin,
        ranging_end,
        &phase_times(client, "ranging"),
        "ranging",
    )?;
    within_workload(
        testing_begin,
        testing_end,
        &phase_times(client, "testing"),
        "testing",
    )?;
    let ranging_duration = ranging_end - ranging_begin;
    let testing_duration = testing_end - testing_begin;
    let shorter = (ranging_duration - testing_duration) / ranging_duration;
    if shorter > 0.5 {
        // check.py ends the check here: the power comparison below is not made.
        return warn(format!(
            "Duration of the testing mode ({}) is lower than that of ranging mode ({}) by {} \
             percent which is more than the expected 5 percent limit.",
            python_round(testing_duration, 2),
            python_round(ranging_duration, 2),
            python_round(shorter * 100.0, 2)
        ));
    }
    let (ranging_watts, ranging_pf) =
        average_power(&session.join(RANGING), ranging_begin, ranging_end)?;
    let (testing_watts, testing_pf) =
        average_power(&session.join(TESTING), testing_begin, testing_end)?;
    let (ranging_watts, testing_watts) = (round_to(ranging_watts, 5), round_to(testing_watts, 5));
    let delta = round_to((testing_watts / ranging_watts - 1.0) * 100.0, 2);
    if delta <= -5.0 {
        return fail(format!(
            "Average power during the testing mode run is lower than that during the ranging run \
             by more than 5%. Observed delta is {}% with avg. ranging power {}, avg.testing power \
             {}, avg. ranging power factor {} and avg. testing power factor {}",
            python_float(delta),
            python_float(ranging_watts),
            python_float(testing_watts),
            python_float(round_to(ranging_pf, 5)),
            python_float(round_to(testing_pf, 5))
        ));
    }
    Ok(())
}

/// The first number of each of a run's phases (the time the side recorded it).
fn phase_times(descriptor: &Descriptor, phase: &str) -> Vec<Option<f64>> {
    descriptor.get("phases")[phase]
        .as_array()
        .map(|phases| phases.iter().map(|p| p[0].as_f64()).collect())
        .unwrap_or_default()
}

fn compare_clocks(client: &[Option<f64>], server: &[Option<f64>], mode: &str) -> Outcome {
    if client.len() != server.len() {
        return fail(format!("Phases amount is not equal for {mode} mode."));
    }
    for (i, (ours, theirs)) in client.iter().zip(server).enumerate() {
        let (Some(ours), Some(theirs)) = (ours, theirs) else {
            return fail(format!("phase {} of {mode} mode has no time", i + 1));
        };
        let difference = (ours - theirs).abs();
        if difference > TIME_TOLERANCE {
            return fail(format!(
                "The time difference for {} phase of {mode} mode is more than {}ms.Observed \
                 difference is {}ms",
                i + 1,
                TIME_TOLERANCE * 1000.0,
                python_float(difference * 1000.0)
            ));
        }
    }
    Ok(())
}

/// power_begin and power_end of the run in `dir` (seconds since the epoch, UTC), read as
/// check.py reads them: the first line naming each.
pub(super) fn loadgen_window(dir: &Path) -> Result<(f64, f64), super::checks::Verdict> {
    let file = dir.join(DETAIL_LOG);
    let failed = |message: String| super::checks::Verdict::Failed(message);
    let text = std::fs::read_to_string(&file)
        .map_err(|e| failed(format!("cannot read {}: {e}", file.display())))?;
    let time_of = |key: &str| -> Result<f64, super::checks::Verdict> {
        let line = text
            .lines()
            .find(|line| line.to_lowercase().contains(key))
            .ok_or_else(|| failed(format!("Can not get {key} time from {}", file.display())))?;
        timestamp_in(line).ok_or_else(|| {
            failed(format!(
                "Can not get {key} time from {}: no time in {}",
                file.display(),
                line.trim()
            ))
        })
    };
    Ok((time_of("power_begin")?, time_of("power_end")?))
}

/// The first `MM-DD-YYYY HH:MM:SS.fff` in a line, as seconds since the epoch (UTC).
pub(super) fn timestamp_in(line: &str) -> Option<f64> {
    let bytes = line.as_bytes();
    (0..bytes.len()).find_map(|start| {
        let candidate = line.get(start..start + 23)?;
        let time = mlperf_power::clock::parse_utc(candidate).ok()?;
        (candidate.as_bytes()[2] == b'-' && candidate.as_bytes()[19] == b'.').then(|| seconds(time))
    })
}

pub(super) fn seconds(time: std::time::SystemTime) -> f64 {
    time.duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

fn within_workload(begin: f64, end: f64, phases: &[Option<f64>], mode: &str) -> Outcome {
    let (Some(Some(start)), Some(Some(stop))) = (phases.get(1), phases.get(2)) else {
        return fail(format!(
            "the client recorded no workload phases for {mode} mode"
        ));
    };
    let inside =
        |t: f64| (*start < t && t < *stop) || (*start < t - DST_HOUR && t - DST_HOUR < *stop);
    if !inside(begin) {
        return fail(format!(
            "Loadgen test begin time is not within {mode} mode time interval."
        ));
    }
    if !inside(end) {
        return fail(format!(
            "Loadgen test end time is not within {mode} mode time interval."
        ));
    }
    Ok(())
}

/// The mean watts and power factor of the samples of `dir/spl.txt` strictly inside the
/// window (positive ones only; -1 without any), as check.py averages them.
pub(super) fn average_power(
    dir: &Path,
    begin: f64,
    end: f64,
) -> Result<(f64, f64), super::checks::Verdict> {
    let file = dir.join("spl.txt");
    let text = std::fs::read_to_string(&file).map_err(|e| {
        super::checks::Verdict::Failed(format!("cannot read {}: {e}", file.display()))
    })?;
    let (mut watts, mut factors) = (Vec::new(), Vec::new());
    for line in text.lines().filter(|line| line.starts_with("Time")) {
        let fields: Vec<&str> = line.split(',').collect();
        let Some(time) = fields
            .get(1)
            .and_then(|t| mlperf_power::clock::parse_utc(t).ok())
            .map(seconds)
        else {
            return Err(super::checks::Verdict::Failed(format!(
                "{}: no time in {line:?}",
                file.display()
            )));
        };
        if time <= begin || time >= end {
            continue;
        }
        let number = |i: usize| fields.get(i).and_then(|f| parse_python_float(f));
        let (Some(power), Some(factor)) = (number(3), number(9)) else {
            return Err(super::checks::Verdict::Failed(format!(
                "{}: unreadable sample {line:?}",
                file.display()
            )));
        };
        if power > 0.0 {
            watts.push(power);
        }
        if factor > 0.0 {
            factors.push(factor);
        }
    }
    let mean = |values: &[f64]| {
        if values.is_empty() {
            -1.0
        } else {
            values.iter().sum::<f64>() / values.len() as f64
        }
    };
    Ok((mean(&watts), mean(&factors)))
}

/// Python's `round(x, digits)`: the nearest decimal, ties to even on the exact binary value.
pub(super) fn round_to(value: f64, digits: usize) -> f64 {
    format!("{value:.digits$}").parse().unwrap_or(value)
}

fn python_round(value: f64, digits: usize) -> String {
    python_float(round_to(value, digits))
}

/// Python's `str()` of a float: the shortest round-trip digits, `.0` on whole numbers.
pub(super) fn python_float(value: f64) -> String {
    let text = format!("{value}");
    if value.is_finite() && !text.contains('.') && !text.contains('e') {
        format!("{text}.0")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_and_printing_follow_python() {
        assert_eq!(round_to(2.675, 2), 2.67); // 2.675 is 2.67499999… in binary
        assert_eq!(round_to(-4.995, 2), -5.0); // -4.99500000000000010658… in binary
        assert_eq!(round_to(217.26666666666668, 5), 217.26667);
        assert_eq!(python_float(5.0), "5.0");
        assert_eq!(python_float(-4.99), "-4.99");
    }

    #[test]
    fn a_timestamp_is_found_inside_a_detail_log_line() {
        let line = r#":::MLLOG {"key": "power_begin", "value": "11-27-2026 18:45:01.250", "time_ms": 1.5}"#;
        let t = timestamp_in(line).unwrap();
        assert!((t - 1_795_805_101.25).abs() < 1e-6, "{t}");
        assert_eq!(timestamp_in("no time here"), None);
    }
}
