//! `sim:WATTS`: a made-up constant draw, sampled like a real meter (on its own thread, once a
//! period, stamped on the wall clock), for demonstrations and tests. Labelled simulated
//! wherever it is reported.

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use super::{PowerSource, Provenance, Scope, SourceError, SourceInfo};
use crate::trace::{PowerSample, Trace};

pub struct Simulated {
    name: String,
    watts: f64,
    period: Duration,
    running: Option<(Sender<()>, JoinHandle<Trace>)>,
}

impl Simulated {
    pub fn constant(name: &str, watts: f64, period: Duration) -> Simulated {
        Simulated {
            name: name.to_owned(),
            watts,
            period,
            running: None,
        }
    }
}

impl PowerSource for Simulated {
    fn info(&self) -> SourceInfo {
        SourceInfo {
            name: self.name.clone(),
            scope: Scope::Wall,
            provenance: Provenance::Simulated,
            period: self.period,
            identity: format!("simulated constant {} W", self.watts),
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
        let (watts, period) = (self.watts, self.period);
        let sampler = std::thread::Builder::new()
            .name("power-sim".into())
            .spawn(move || {
                let mut trace = Trace::default();
                let mut next = Instant::now();
                loop {
                    trace
                        .samples
                        .push(PowerSample::watts(SystemTime::now(), watts));
                    next += period;
                    let wait = next.saturating_duration_since(Instant::now());
                    match stopped.recv_timeout(wait) {
                        Err(RecvTimeoutError::Timeout) => continue,
                        // Stopped: one last sample, so the trace covers the stop.
                        _ => {
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
}
