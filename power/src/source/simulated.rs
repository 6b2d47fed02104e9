//! `sim:WATTS` and `sim:FILE`: a made-up constant draw, or a recorded trace replayed, sampled
//! like a real meter (on its own thread, once a period, stamped on the wall clock), for
//! demonstrations and tests. Labelled simulated wherever it is reported.

use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use super::{PowerSource, Provenance, Scope, SourceError, SourceInfo};
use crate::spl;
use crate::trace::{PowerSample, Trace};

pub struct Simulated {
    name: String,
    /// Replayed one a period, from the start again when they run out.
    watts: Vec<f64>,
    identity: String,
    period: Duration,
    running: Option<(Sender<()>, JoinHandle<Trace>)>,
}

impl Simulated {
    pub fn constant(name: &str, watts: f64, period: Duration) -> Simulated {
        Simulated {
            name: name.to_owned(),
            watts: vec![watts],
            identity: format!("simulated constant {watts} W"),
            period,
            running: None,
        }
    }

    /// Replays `watts` (at least one value) one a period, cycling.
    pub fn replay(name: &str, watts: Vec<f64>, period: Duration, origin: &str) -> Simulated {
        Simulated {
            name: name.to_owned(),
            identity: format!("simulated replay of {} readings from {origin}", watts.len()),
            watts,
            period,
            running: None,
        }
    }

    /// The readings of a recorded trace: spl.txt lines (`Time,…,Watts,W,…`), or one power in
    /// watts a line; blank lines and `#` comments are skipped. Errors name the file and line.
    pub fn read_trace(path: &Path) -> Result<Vec<f64>, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut watts = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let reading = if line.starts_with("Time,") {
                spl::parse_line(line).map(|(sample, _)| sample.watts)
            } else {
                line.parse::<f64>()
                    .map_err(|_| format!("{line:?} is neither a spl.txt line nor watts"))
            };
            let reading = reading.map_err(|e| format!("{}:{}: {e}", path.display(), number + 1))?;
            if !reading.is_finite() {
                return Err(format!(
                    "{}:{}: {reading} W is not a power",
                    path.display(),
                    number + 1
                ));
            }
            watts.push(reading);
        }
        if watts.is_empty() {
            return Err(format!("{} holds no readings", path.display()));
        }
        Ok(watts)
    }
}

impl PowerSource for Simulated {
    fn info(&self) -> SourceInfo {
        SourceInfo {
            name: self.name.clone(),
            scope: Scope::Wall,
            provenance: Provenance::Simulated,
            period: self.period,
            identity: self.identity.clone(),
        }
    }

    fn start(&mut self, _mark: &str) -> Result<(), SourceError> {
        if self.running.is_some() {
            return Err(SourceError::Failed {
                name: self.name.clone(),
                message: "started twice".into(),
            });
        }
        let (stop, stopped) = mpsc::channel::<()>();
        let (readings, period) = (self.watts.clone(), self.period);
        let sampler = std::thread::Builder::new()
            .name("power-sim".into())
            .spawn(move || {
                let mut trace = Trace::default();
                let mut next = Instant::now();
                let mut readings = readings.iter().copied().cycle();
                loop {
                    let watts = readings.next().unwrap_or_default();
                    trace
                        .samples
                        .push(PowerSample::watts(SystemTime::now(), watts));
                    next += period;
                    let wait = next.saturating_duration_since(Instant::now());
                    match stopped.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => continue,
                        // Stopped: one last sample, so the trace covers the stop.
                        _ => {
                            let watts = readings.next().unwrap_or_default();
                            trace
                                .samples
                                .push(PowerSample::watts(SystemTime::now(), watts));
                            return trace;
                        }
                    }
                }
            })
            .map_err(|e| SourceError::Failed {
                name: self.name.clone(),
                message: format!("cannot start its sampling thread: {e}"),
            })?;
        self.running = Some((stop, sampler));
        Ok(())
    }

    fn stop(&mut self) -> Result<Trace, SourceError> {
        let failed = |message: &str| SourceError::Failed {
            name: self.name.clone(),
            message: message.into(),
        };
        let (stop, sampler) = self.running.take().ok_or_else(|| failed("not started"))?;
        let _ = stop.send(());
        sampler
            .join()
            .map_err(|_| failed("its sampling thread panicked"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{account, RunWindow};

    #[test]
    fn samples_every_period_around_the_window() {
        let period = Duration::from_millis(10);
        let mut meter = Simulated::constant("sim:150", 150.0, period);
        meter.start("test").unwrap();
        std::thread::sleep(Duration::from_millis(15));
        let begin = SystemTime::now();
        std::thread::sleep(Duration::from_millis(200));
        let window = RunWindow {
            begin,
            end: SystemTime::now(),
        };
        std::thread::sleep(Duration::from_millis(15));
        let trace = meter.stop().unwrap();
        assert!(trace.samples.windows(2).all(|w| w[0].time <= w[1].time));
        let report = account(&trace, &window, period);
        assert_eq!(report.mean_watts, Some(150.0));
        // About 20 samples in 200 ms; a loaded machine may delay a few.
        assert!(report.samples >= 10, "{report:?}");
        assert!(meter.stop().is_err());
    }

    #[test]
    fn replays_a_recorded_trace_in_a_cycle() {
        let dir = std::env::temp_dir().join(format!("mlperf-power-sim-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("trace.txt");
        std::fs::write(
            &path,
            "# watts\n100\n\nTime,11-21-2026 10:00:00.000,Watts,300.5,Volts,230,Amps,1.3,PF,0.99,Mark,x\n",
        )
        .unwrap();
        assert_eq!(Simulated::read_trace(&path).unwrap(), vec![100.0, 300.5]);
        let period = Duration::from_millis(5);
        let mut meter = Simulated::replay("sim", vec![100.0, 300.5], period, "trace.txt");
        meter.start("test").unwrap();
        std::thread::sleep(Duration::from_millis(40));
        let trace = meter.stop().unwrap();
        let watts: Vec<f64> = trace.samples.iter().map(|s| s.watts).collect();
        assert!(watts.len() >= 3, "{watts:?}");
        assert!(watts
            .chunks(2)
            .all(|pair| pair[0] == 100.0 && pair.get(1).is_none_or(|w| *w == 300.5)));

        std::fs::write(&path, "100\nabc\n").unwrap();
        let error = Simulated::read_trace(&path).unwrap_err();
        assert!(
            error.contains("trace.txt:2") && error.contains("abc"),
            "{error}"
        );
        std::fs::write(&path, "# nothing\n").unwrap();
        assert!(Simulated::read_trace(&path)
            .unwrap_err()
            .contains("no readings"));
        assert!(Simulated::read_trace(&dir.join("absent"))
            .unwrap_err()
            .contains("cannot read"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
