//! check.py's "Check errors and warnings from PTD logs": PTDaemon's own log of the session
//! (`power/ptd_logs.txt`) must show the ranging measurement, Yokogawa's uncertainty checking
//! switched on before it, and no error outside ranging nor a warning during the load.

use std::path::Path;

use super::checks::{fail, warn, Outcome};
use super::descriptor::{repr, Descriptor};
use super::phases::{loadgen_window, seconds};
use super::{POWER, TESTING};

/// check.py's tolerance in milliseconds, which it adds to times in seconds: a warning counts
/// only more than 800 s inside the testing run.
const LOAD_MARGIN: f64 = 800.0;
/// Errors PTDaemon may log while it finds the ranges.
const RANGING_ERRORS: [&str; 6] = [
    "Can't evaluate uncertainty of this sample!",
    "Bad watts reading nan from ",
    "Bad amps reading nan from ",
    "Bad pf reading nan from ",
    "Bad volts reading nan from ",
    "Current appears to be too high for set range",
];
/// Errors accepted (as warnings) at any time.
const ACCEPTED_ERRORS: [&str; 1] = ["USB."];

/// A line's time: PTDaemon starts each with `MM-DD-YYYY HH:MM:SS.mmm`.
fn line_time(line: &str) -> Option<f64> {
    let stamp = line.get(..23)?;
    let bytes = stamp.as_bytes();
    let digits = |range: std::ops::Range<usize>| bytes[range].iter().all(u8::is_ascii_digit);
    let shaped = digits(0..2)
        && bytes[2] == b'-'
        && digits(3..5)
        && bytes[5] == b'-'
        && digits(6..10)
        && bytes[10] == b' '
        && digits(11..13)
        && bytes[13] == b':'
        && digits(14..16)
        && bytes[16] == b':'
        && digits(17..19)
        && digits(20..23);
    if !shaped {
        return None;
    }
    mlperf_power::clock::parse_utc(stamp).ok().map(seconds)
}

pub(super) fn check(_client: &Descriptor, server: &Descriptor, session: &Path) -> Outcome {
    let session_name = server.get("session_name");
    let session_name = session_name
        .as_str()
        .map_or_else(|| session_name.to_string(), str::to_string);
    let ranging_mark = format!("{session_name}_ranging");
    let (load_begin, load_end) = loadgen_window(&session.join(TESTING))?;
    let file = session.join(POWER).join("ptd_logs.txt");
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) => return fail(format!("cannot read {}: {e}", file.display())),
    };
    let lines: Vec<&str> = text.lines().collect();
    let go_line = format!(": Go with mark {}", repr(&ranging_mark));
    let mut ranging_start = None;
    let mut ranging_stop = None;
    for line in &lines {
        let (Some(time), Some(message)) = (line_time(line), line.get(23..)) else {
            continue;
        };
        let message = message.trim();
        if ranging_start.is_none() && message == go_line {
            ranging_start = Some(time);
        }
        if ranging_start.is_some() && message == ": Completed test" {
            ranging_stop = Some(time);
            break;
        }
    }
    let (Some(ranging_start), Some(ranging_stop)) = (ranging_start, ranging_stop) else {
        return fail("Can not find ranging time in ptd_logs.txt.");
    };
    let uncertainty =
        regex::Regex::new(r"Uncertainty checking for Yokogawa\S+ is activated").expect("a regex");
    match lines.iter().find(|line| uncertainty.is_match(line)) {
        None => {
            return fail(
                "ptd_logs.txt: Line 'Uncertainty checking for Yokogawa... is activated' is not found.",
            )
        }
        Some(line) => match line_time(line) {
            None => {
                return fail(
                    "ptd_logs.txt: Can not get timestamp for 'Uncertainty checking for Yokogawa... is activated' message.",
                )
            }
            Some(time) if time >= ranging_start => {
                return fail(
                    "ptd_logs.txt: Uncertainty checking Yokogawa... was activated after ranging mode was started.",
                )
            }
            Some(_) => {}
        },
    }
    let window = Window {
        ranging: (ranging_start, ranging_stop),
        load: (load_begin, load_end),
    };
    for line in &lines {
        if let Some(at) = line.find("WARNING:") {
            window.warning(line, line[at + "WARNING:".len()..].trim())?;
        }
        if let Some(at) = line.find("ERROR:") {
            window.error(line, line[at + "ERROR:".len()..].trim())?;
        }
    }
    Ok(())
}

struct Window {
    ranging: (f64, f64),
    load: (f64, f64),
}

impl Window {
    fn time(line: &str) -> Result<f64, super::checks::Verdict> {
        line_time(line).ok_or_else(|| {
            super::checks::Verdict::Failed(format!(
                "{} in ptd_logs.txt has no time stamp.",
                repr(line.trim())
            ))
        })
    }

    /// A warning during the load; an uncertainty above 1 % there fails.
    fn warning(&self, line: &str, problem: &str) -> Outcome {
        if problem.is_empty() {
            return Ok(());
        }
        let time = Self::time(line)?;
        if !(self.load.0 + LOAD_MARGIN < time && time < self.load.1 - LOAD_MARGIN) {
            return Ok(());
        }
        let too_uncertain = regex::Regex::new(
            r"Uncertainty \d+.\d+%, which is above 1.00% limit for the last sample!",
        )
        .expect("a regex");
        if too_uncertain.is_match(problem) {
            return fail(format!(
                "{} during testing phase. Test start time: {}, Log time: {}, Test stop time: {} ",
                repr(line.trim()),
                super::phases::python_float(self.load.0),
                super::phases::python_float(time),
                super::phases::python_float(self.load.1)
            ));
        }
        warn(format!(
            "{} in ptd_log.txt during load stage",
            repr(line.trim())
        ))
    }

    /// An error: accepted during ranging when it is one of ranging's usual ones.
    fn error(&self, line: &str, problem: &str) -> Outcome {
        if problem.is_empty() {
            return Ok(());
        }
        let time = Self::time(line)?;
        if ACCEPTED_ERRORS.contains(&problem) {
            return warn(format!(
                "{} in ptd_log.txt during testing stage but it is accepted. Treated as WARNING",
                repr(&line.trim().replace("ERROR", "Warning"))
            ));
        }
        if !(self.ranging.0 < time && time < self.ranging.1) {
            return fail(format!("{} in ptd_log.txt", repr(line.trim())));
        }
        if !RANGING_ERRORS
            .iter()
            .any(|usual| problem.starts_with(usual))
        {
            return warn(format!(
                "{} in ptd_log.txt during ranging stage. Treated as WARNING",
                repr(&line.trim().replace("ERROR", "Warning"))
            ));
        }
        Ok(())
    }
}
