//! The PTDaemon meter as a [`PowerSource`]. The connection stays idle while the workload runs
//! (PTDaemon samples on its own and queues what was not read), and the samples are fetched
//! with `RL` at `stop`, so no thread of ours runs beside the workload. A daemon lost during
//! the run is found at `stop`, which then fails saying so.

use std::time::Duration;

use super::connection::{Connection, LinkError};
use super::protocol::{
    self, format_range, parse_identify, parse_ranges, parse_sample, parse_sample_count, Identity,
    Ranges, UncertaintySummary, WattsSummary, GO_REPLY, HELLO_REPLY, STOP_REPLY,
};
use super::Target;
use crate::source::{Phase, PowerSource, Provenance, Scope, SourceError, SourceInfo};
use crate::trace::{PowerSample, Trace};

/// The sampling interval asked of the analyzer, as MLCommons asks it (1 Hz).
const INTERVAL_MS: u32 = 1000;
/// The testing run's current range is this times the ranging run's maximum (MLCommons).
const AMPS_HEADROOM: f64 = 1.1;

/// The largest volts and amps of the ranging run, which set the testing run's ranges. None
/// where the meter gave no valid reading of that quantity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RangingMaxima {
    pub volts: Option<f64>,
    pub amps: Option<f64>,
}

impl RangingMaxima {
    fn of(samples: &[PowerSample]) -> RangingMaxima {
        let largest = |values: &mut dyn Iterator<Item = Option<f64>>| {
            values
                .flatten()
                .filter(|v| *v > 0.0 && v.is_finite())
                .reduce(f64::max)
        };
        RangingMaxima {
            volts: largest(&mut samples.iter().map(|s| s.volts)),
            amps: largest(&mut samples.iter().map(|s| s.amps)),
        }
    }
}

/// The meter's own statistics of the last measurement (`Watts`, `Uncertainty` after `Stop`):
/// the raw replies, and their parsed form where they parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct MeterReport {
    pub watts_reply: String,
    pub watts: Option<WattsSummary>,
    pub uncertainty_reply: String,
    pub uncertainty: Option<UncertaintySummary>,
}

impl MeterReport {
    /// The replies in words, one a line, for the trace's notes: `PTDaemon Watts: avg 200.1 W,
    /// min 199.5 W, max 201.0 W, 12 samples, 0 errors` and `PTDaemon Uncertainty: avg 0.30 %,
    /// max 0.41 %`; a reply that did not parse, as it came.
    pub fn notes(&self) -> Vec<String> {
        let watts = match self.watts {
            Some(w) if w.valid > 0 && w.average >= 0.0 => format!(
                "PTDaemon Watts: avg {:.1} W, min {:.1} W, max {:.1} W, {} samples, {} errors",
                w.average, w.min, w.max, w.samples, w.errors
            ),
            Some(w) => format!(
                "PTDaemon Watts: no valid reading, {} samples, {} errors",
                w.samples, w.errors
            ),
            None => format!(
                "PTDaemon Watts reply, not understood: {:?}",
                self.watts_reply
            ),
        };
        let uncertainty = match self.uncertainty {
            // A negative figure is one the meter does not know (SPEC's Dummy device).
            Some(u) if u.average < 0.0 => format!(
                "PTDaemon Uncertainty: not known ({} of {} samples unknown)",
                u.unknown, u.total
            ),
            Some(u) => {
                let mut text = format!(
                    "PTDaemon Uncertainty: avg {:.2} %, max {:.2} %",
                    u.average * 100.0,
                    u.max * 100.0
                );
                if u.invalid > 0 || u.unknown > 0 {
                    text += &format!(
                        " ({} of {} samples invalid, {} unknown)",
                        u.invalid, u.total, u.unknown
                    );
                }
                text
            }
            None => format!(
                "PTDaemon Uncertainty reply, not understood: {:?}",
                self.uncertainty_reply
            ),
        };
        vec![watts, uncertainty]
    }
}

pub struct PtdSource {
    spec: String,
    target: Target,
    /// None once the connection is lost or finished; `closed` says which.
    link: Option<Connection>,
    closed: Option<String>,
    identity: Identity,
    initial_ranges: Ranges,
    /// Whether `prepare` has changed the ranges, so `finish` must put them back.
    ranges_changed: bool,
    phase: Option<Phase>,
    measuring: bool,
    ranging_maxima: Option<RangingMaxima>,
    meter_report: Option<MeterReport>,
}

impl PtdSource {
    /// Connects to the daemon and checks it is one: `Hello`, `Identify`, `RR` (the initial
    /// ranges, put back by `finish`).
    pub fn connect(spec: &str, target: Target) -> Result<PtdSource, SourceError> {
        let address = target.address.clone();
        let failed = |message: String| SourceError::Failed {
            name: spec.to_owned(),
            message,
        };
        let mut link = Connection::open(&address, target.timeout)
            .map_err(|e| failed(format!("cannot connect to PTDaemon at {address}: {e}")))?;
        let mut ask = |command: &str| {
            link.ask(command)
                .map_err(|e| failed(format!("PTDaemon at {address}: {e}")))
        };
        let hello = ask("Hello")?;
        if !hello.starts_with(HELLO_REPLY) {
            return Err(failed(format!(
                "{address} is not PTDaemon: it answered `Hello` with {hello:?} (expected \
                 {HELLO_REPLY:?})"
            )));
        }
        let identity = parse_identify(&ask("Identify")?)
            .map_err(|e| failed(format!("PTDaemon at {address}, `Identify`: {e}")))?;
        let initial_ranges = parse_ranges(&ask("RR")?)
            .map_err(|e| failed(format!("PTDaemon at {address}, `RR`: {e}")))?;
        Ok(PtdSource {
            spec: spec.to_owned(),
            target,
            link: Some(link),
            closed: None,
            identity,
            initial_ranges,
            ranges_changed: false,
            phase: None,
            measuring: false,
            ranging_maxima: None,
            meter_report: None,
        })
    }

    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The ranges the meter had when it was opened.
    pub fn initial_ranges(&self) -> Ranges {
        self.initial_ranges
    }

    /// What the last ranging run measured; the testing run's ranges come from it.
    pub fn ranging_maxima(&self) -> Option<RangingMaxima> {
        self.ranging_maxima
    }

    /// The meter's `Watts` and `Uncertainty` replies after the last `stop`.
    pub fn meter_report(&self) -> Option<&MeterReport> {
        self.meter_report.as_ref()
    }

    fn failed(&self, message: impl Into<String>) -> SourceError {
        SourceError::Failed {
            name: self.spec.clone(),
            message: message.into(),
        }
    }

    /// The open connection, or why there is none.
    fn link(&mut self) -> Result<&mut Connection, SourceError> {
        match self.link {
            Some(ref mut link) => Ok(link),
            None => Err(SourceError::Failed {
                name: self.spec.clone(),
                message: self
                    .closed
                    .clone()
                    .unwrap_or_else(|| "not connected".to_owned()),
            }),
        }
    }

    /// Forgets a connection that failed: after a timeout a late reply could be taken for the
    /// answer to the next command, so it is never used again.
    fn lose_link(&mut self, error: &LinkError) {
        self.link = None;
        self.closed = Some(format!(
            "the connection to PTDaemon at {} was lost earlier: {error}",
            self.target.address
        ));
    }

    fn ask_raw(&mut self, command: &str) -> Result<String, Result<LinkError, SourceError>> {
        let link = self.link().map_err(Err)?;
        link.ask(command).map_err(|error| {
            self.lose_link(&error);
            Ok(error)
        })
    }

    /// Sends `command` and returns its reply; a transport failure names the daemon.
    fn ask(&mut self, command: &str) -> Result<String, SourceError> {
        self.ask_raw(command).map_err(|error| match error {
            Ok(link_error) => {
                self.failed(format!("PTDaemon at {}: {link_error}", self.target.address))
            }
            Err(source_error) => source_error,
        })
    }

    /// `SR,<quantity>,<value>`, whose reply must be exactly `Range <quantity> changed` (the
    /// checker requires it of every SR).
    fn set_range(&mut self, quantity: char, value: &str) -> Result<(), SourceError> {
        let command = format!("SR,{quantity},{value}");
        let expected = format!("Range {quantity} changed");
        self.ranges_changed = true;
        let reply = self.ask(&command)?;
        if reply.trim() != expected {
            return Err(self.failed(format!(
                "PTDaemon at {} answered `{command}` with {reply:?} (expected {expected:?})",
                self.target.address
            )));
        }
        Ok(())
    }

    /// The samples the daemon has not handed over yet: `RL,*,*` (multichannel), falling back
    /// as the official server does to `RL` (single channel) and `DC-RL` (DC meters).
    fn read_samples(&mut self) -> Result<Vec<PowerSample>, SourceError> {
        let mut command = "RL,*,*";
        let mut header = self.ask(command)?;
        if header.contains("Invalid number of parameters") {
            command = "RL";
            header = self.ask(command)?;
        } else if header.contains("Unknown command") {
            command = "DC-RL";
            header = self.ask(command)?;
        }
        let count = parse_sample_count(&header).map_err(|e| {
            self.failed(format!(
                "PTDaemon at {}, `{command}`: {e}",
                self.target.address
            ))
        })?;
        // All lines first, so a bad one does not leave the rest unread on the connection;
        // all within one timeout, so a daemon sending a line just in time each cannot stall.
        let mut lines = Vec::with_capacity(count.min(1 << 16));
        let deadline = std::time::Instant::now() + self.target.timeout;
        for _ in 0..count {
            let link = self.link()?;
            match link.read_line_by(command, deadline) {
                Ok(line) => lines.push(line),
                Err(error) => {
                    self.lose_link(&error);
                    return Err(self.failed(format!(
                        "PTDaemon at {}, after {} of the {count} samples of `{command}`: {error}",
                        self.target.address,
                        lines.len()
                    )));
                }
            }
        }
        lines
            .iter()
            .enumerate()
            .map(|(i, line)| {
                parse_sample(line).map_err(|e| {
                    self.failed(format!(
                        "PTDaemon at {}, sample {} of {count} from `{command}`: {e}: {line:?}",
                        self.target.address,
                        i + 1
                    ))
                })
            })
            .collect()
    }

    /// The meter's own statistics; informational, so a reply that does not parse is kept
    /// as text rather than failing the run.
    fn read_meter_report(&mut self) -> Result<MeterReport, SourceError> {
        let uncertainty_reply = self.ask("Uncertainty")?;
        let watts_reply = self.ask("Watts")?;
        Ok(MeterReport {
            watts: protocol::parse_watts(&watts_reply).ok(),
            watts_reply,
            uncertainty: protocol::parse_uncertainty(&uncertainty_reply).ok(),
            uncertainty_reply,
        })
    }

    fn went_away(&self, why: impl std::fmt::Display) -> SourceError {
        self.failed(format!(
            "PTDaemon at {} went away during the run: {why}",
            self.target.address
        ))
    }

    fn settle(&self) {
        if !self.target.settle.is_zero() {
            std::thread::sleep(self.target.settle);
        }
    }
}

impl PowerSource for PtdSource {
    fn info(&self) -> SourceInfo {
        SourceInfo {
            name: self.spec.clone(),
            scope: Scope::Wall,
            provenance: if self.identity.is_simulated() {
                Provenance::Simulated
            } else {
                Provenance::Ptd
            },
            period: Duration::from_millis(INTERVAL_MS.into()),
            identity: self.identity.reply.clone(),
        }
    }

    fn needs_ranging(&self) -> bool {
        true
    }

    fn prepare(&mut self, phase: Phase) -> Result<(), SourceError> {
        if self.measuring {
            return Err(self.failed("prepare during a measurement (stop it first)"));
        }
        let (volts, amps) = match phase {
            Phase::Ranging => {
                self.ranging_maxima = None;
                ("Auto".to_owned(), "Auto".to_owned())
            }
            Phase::Testing => {
                let maxima = self.ranging_maxima.ok_or_else(|| {
                    self.failed(
                        "the testing run needs a ranging run first: its ranges are the ranging \
                         run's maximum volts and 1.1 × its maximum amps",
                    )
                })?;
                let (Some(volts), Some(amps)) = (maxima.volts, maxima.amps) else {
                    return Err(self.failed(format!(
                        "the ranging run recorded no valid {} reading, so the testing run's \
                         ranges cannot be set",
                        if maxima.volts.is_none() {
                            "Volts"
                        } else {
                            "Amps"
                        }
                    )));
                };
                (format_range(volts), format_range(AMPS_HEADROOM * amps))
            }
        };
        self.set_range('V', &volts)?;
        self.set_range('A', &amps)?;
        self.phase = Some(phase);
        self.settle();
        Ok(())
    }

    fn start(&mut self, mark: &str) -> Result<(), SourceError> {
        if self.measuring {
            return Err(self.failed("started twice"));
        }
        if mark.contains([',', '\r', '\n']) {
            return Err(self.failed(format!(
                "mark {mark:?} cannot go into a PTDaemon `Go` command (no commas or line breaks)"
            )));
        }
        let command = if mark.is_empty() {
            format!("Go,{INTERVAL_MS},0")
        } else {
            format!("Go,{INTERVAL_MS},0,{mark}")
        };
        let reply = self.ask(&command)?;
        if !reply.starts_with(GO_REPLY) {
            return Err(self.failed(format!(
                "PTDaemon at {} answered `{command}` with {reply:?} (expected {GO_REPLY:?}…)",
                self.target.address
            )));
        }
        self.measuring = true;
        Ok(())
    }

    fn stop(&mut self) -> Result<Trace, SourceError> {
        if !self.measuring {
            return Err(self.failed("stopped without a start"));
        }
        self.measuring = false;
        // A daemon that closed the connection during the run is reported at once, without the
        // settle wait.
        let gone = self.link().map(|link| link.peer_closed())?;
        if gone {
            self.link = None;
            let why = "it closed the connection";
            self.closed = Some(format!(
                "the connection to PTDaemon at {} was lost during a run: {why}",
                self.target.address
            ));
            return Err(self.went_away(why));
        }
        self.settle();
        let reply = match self.ask_raw("Stop") {
            Ok(reply) => reply,
            Err(Err(error)) => return Err(error),
            Err(Ok(error @ LinkError::Timeout { .. })) => {
                return Err(self.failed(format!("PTDaemon at {}: {error}", self.target.address)))
            }
            Err(Ok(error)) => return Err(self.went_away(error)),
        };
        if !reply.starts_with(STOP_REPLY) {
            return Err(self.failed(format!(
                "PTDaemon at {} answered `Stop` with {reply:?} (expected {STOP_REPLY:?})",
                self.target.address
            )));
        }
        let samples = self.read_samples()?;
        self.meter_report = Some(self.read_meter_report()?);
        if self.phase == Some(Phase::Ranging) {
            self.ranging_maxima = Some(RangingMaxima::of(&samples));
        }
        let notes = self
            .meter_report
            .as_ref()
            .map(MeterReport::notes)
            .unwrap_or_default();
        Ok(Trace {
            samples,
            notes,
            ..Trace::default()
        })
    }

    fn finish(&mut self) -> Result<(), SourceError> {
        if self.link.is_none() {
            return if self.ranges_changed {
                Err(self.failed(format!(
                    "cannot put the initial ranges back: {}",
                    self.closed.clone().unwrap_or_default()
                )))
            } else {
                Ok(())
            };
        }
        if self.measuring {
            // Left running by a failed run: end it, whatever the daemon answers.
            self.measuring = false;
            self.ask("Stop")?;
        }
        if self.ranges_changed {
            let (volts, amps) = (
                self.initial_ranges.restore_volts(),
                self.initial_ranges.restore_amps(),
            );
            self.set_range('V', &volts)?;
            self.set_range('A', &amps)?;
            self.ranges_changed = false;
        }
        self.link = None;
        self.closed = Some(format!(
            "the connection to PTDaemon at {} is finished",
            self.target.address
        ));
        Ok(())
    }
}

impl Drop for PtdSource {
    /// A measurement still running (a run that failed before `stop`) is ended, so the daemon
    /// is not left sampling; the reply is not waited for.
    fn drop(&mut self) {
        if self.measuring {
            if let Some(link) = self.link.as_mut() {
                let _ = link.send("Stop");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(watts: &str, uncertainty: &str) -> MeterReport {
        MeterReport {
            watts_reply: watts.into(),
            watts: protocol::parse_watts(watts).ok(),
            uncertainty_reply: uncertainty.into(),
            uncertainty: protocol::parse_uncertainty(uncertainty).ok(),
        }
    }

    #[test]
    fn the_meters_replies_become_notes() {
        let analyzer = report(
            "Watts,200.123,199.5,201.04,12,0,12",
            "Uncertainty,0.003,0.002,0.0041,12,0,12,0",
        );
        assert_eq!(
            analyzer.notes(),
            [
                "PTDaemon Watts: avg 200.1 W, min 199.5 W, max 201.0 W, 12 samples, 0 errors",
                "PTDaemon Uncertainty: avg 0.30 %, max 0.41 %",
            ]
        );
        let dummy = report(
            "Watts,-1.000000,-1.000000,-1.000000,0,0,0",
            "Uncertainty,-1.000000,-1.000000,-1.000000,7,0,0,7",
        );
        assert_eq!(
            dummy.notes(),
            [
                "PTDaemon Watts: no valid reading, 0 samples, 0 errors",
                "PTDaemon Uncertainty: not known (7 of 7 samples unknown)",
            ]
        );
        let odd = report("Error: Meter busy", "Uncertainty,0.01,0.005,0.02,10,2,7,1");
        assert_eq!(
            odd.notes(),
            [
                "PTDaemon Watts reply, not understood: \"Error: Meter busy\"",
                "PTDaemon Uncertainty: avg 1.00 %, max 2.00 % (2 of 10 samples invalid, 1 unknown)",
            ]
        );
    }
}
