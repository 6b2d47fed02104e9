//! The simulated analyzer: its ranges, a sampler thread at the `Go` interval stamping each
//! reading on the UTC wall clock, the queue of samples not yet read by `RL`, and the running
//! statistics `Watts` and `Uncertainty` report. It outlives client connections, as the
//! instrument outlives PTDaemon's clients.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::net::{Shutdown, TcpStream};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use mlperf_power::clock::format_utc;

use crate::args::{Config, Faults, Profile};

/// The power factor of the simulated load, so amps = watts / volts / PF and the ranging run's
/// maximum amps is what a real server would draw.
const POWER_FACTOR: f64 = 0.95;
/// PTDaemon's limit for an untimed measurement; older unread samples are dropped past it.
const MAX_SAMPLES: usize = 500_000;

/// Writes `<MM-DD-YYYY HH:MM:SS.mmm>: message` to stdout, as PTDaemon logs (the official
/// server keeps these lines as ptd_logs.txt). Output errors are ignored: whoever started the
/// simulator may have stopped reading.
pub(crate) fn say(message: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}: {message}", format_utc(SystemTime::now()));
    let _ = out.flush();
}

#[derive(Debug, Clone, Copy)]
struct Sample {
    time: SystemTime,
    watts: f64,
    volts: f64,
    amps: f64,
    power_factor: f64,
}

impl Sample {
    fn valid(&self) -> bool {
        self.watts > 0.0 && self.watts.is_finite()
    }

    /// `Time,<ts>,Watts,w,Volts,v,Amps,a,PF,pf`, numbers as C's `%f` writes them.
    fn line(&self) -> String {
        let number = |v: f64| {
            if v.is_nan() {
                "nan".to_owned()
            } else {
                format!("{v:.6}")
            }
        };
        format!(
            "Time,{},Watts,{},Volts,{},Amps,{},PF,{}",
            format_utc(self.time),
            number(self.watts),
            number(self.volts),
            number(self.amps),
            number(self.power_factor)
        )
    }
}

/// Running statistics of the current (or last) measurement.
#[derive(Debug, Clone, Copy, Default)]
struct Stats {
    samples: u64,
    errors: u64,
    sum: f64,
    min: Option<f64>,
    max: Option<f64>,
}

impl Stats {
    fn add(&mut self, sample: &Sample) {
        self.samples += 1;
        if !sample.valid() {
            self.errors += 1;
            return;
        }
        self.sum += sample.watts;
        self.min = Some(self.min.map_or(sample.watts, |m| m.min(sample.watts)));
        self.max = Some(self.max.map_or(sample.watts, |m| m.max(sample.watts)));
    }

    fn valid(&self) -> u64 {
        self.samples - self.errors
    }
}

/// One range setting: automatic, or fixed at a value.
#[derive(Debug, Clone, Copy)]
struct Range {
    auto: bool,
    value: f64,
}

/// What the sampler thread and the command handler share.
struct Shared {
    unread: VecDeque<Sample>,
    stats: Stats,
}

struct Running {
    stop: Sender<()>,
    sampler: JoinHandle<()>,
    mark: String,
}

pub(crate) struct Meter {
    profile: Profile,
    volts: f64,
    interval_override: Option<Duration>,
    faults: Faults,
    sample_log: Option<Arc<Mutex<File>>>,
    volts_range: Range,
    amps_range: Range,
    shared: Arc<Mutex<Shared>>,
    running: Option<Running>,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // A panicked sampler leaves consistent data (each update is one push and one add).
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Meter {
    pub(crate) fn new(config: &Config, sample_log: Option<File>) -> Meter {
        Meter {
            profile: config.profile.clone(),
            volts: config.volts,
            interval_override: config.interval,
            faults: config.faults.clone(),
            sample_log: sample_log.map(|f| Arc::new(Mutex::new(f))),
            // A typical analyzer left in fixed ranges: 300 V, 20 A.
            volts_range: Range {
                auto: false,
                value: 300.0,
            },
            amps_range: Range {
                auto: false,
                value: 20.0,
            },
            shared: Arc::new(Mutex::new(Shared {
                unread: VecDeque::new(),
                stats: Stats::default(),
            })),
            running: None,
        }
    }

    /// SPEC's Dummy device (device type 0), with a version that cannot pass for a real
    /// PTDaemon's: the checker's real-meter checks then fail, as they must for made-up data.
    pub(crate) fn identify(&self) -> String {
        let interval = self.interval_override.map_or(1000, |i| i.as_millis());
        format!(
            "Dummy,{interval},1,1,1,1,0,0,0,version=0.0.0-sim-20261121,OS=Linux,mode=power,0,0,\
             1,0,0,no_cal_date,mlperf-host simulator"
        )
    }

    pub(crate) fn ranges(&self) -> String {
        let flag = |r: Range| u8::from(r.auto);
        format!(
            "Ranges,{},{},{},{}",
            flag(self.amps_range),
            self.amps_range.value,
            flag(self.volts_range),
            self.volts_range.value
        )
    }

    /// `SR,V|A,<Auto|value>`.
    pub(crate) fn set_range(&mut self, quantity: &str, value: &str) -> String {
        if self.running.is_some() {
            return "Error: Meter busy".into();
        }
        let setting = if value.eq_ignore_ascii_case("auto") {
            None
        } else {
            match value.parse::<f64>() {
                Ok(v) if v > 0.0 && v.is_finite() => Some(v),
                _ => return "Error in parameter".into(),
            }
        };
        let range = match quantity {
            "V" | "v" => &mut self.volts_range,
            "A" | "a" => &mut self.amps_range,
            _ => return "Error in parameter".into(),
        };
        match setting {
            None => range.auto = true,
            Some(v) => {
                *range = Range {
                    auto: false,
                    value: v,
                }
            }
        }
        format!("Range {} changed", quantity.to_ascii_uppercase())
    }

    /// `Go,<ms>,<rampup>[,<mark>]`: starts sampling. `client` is the connection to drop for
    /// the disconnect-after-go fault.
    pub(crate) fn go(
        &mut self,
        interval_ms: u64,
        rampup: u64,
        mark: &str,
        client: Option<TcpStream>,
    ) -> String {
        if self.running.is_some() {
            return "Error: measurement already running".into();
        }
        let interval = self
            .interval_override
            .unwrap_or(Duration::from_millis(interval_ms));
        {
            let mut shared = lock(&self.shared);
            shared.unread.clear();
            shared.stats = Stats::default();
        }
        let (stop, stopped) = mpsc::channel::<()>();
        let sampler = Sampler {
            profile: self.profile.clone(),
            volts: self.volts,
            interval,
            rampup,
            mark: mark.to_owned(),
            faults: self.faults.clone(),
            shared: Arc::clone(&self.shared),
            sample_log: self.sample_log.clone(),
            client: if self.faults.disconnect_after_go.is_some() {
                client
            } else {
                None
            },
        };
        let thread = std::thread::Builder::new()
            .name("sampler".into())
            .spawn(move || sampler.run(stopped));
        match thread {
            Ok(thread) => {
                say(&format!("Go with mark '{mark}'"));
                self.running = Some(Running {
                    stop,
                    sampler: thread,
                    mark: mark.to_owned(),
                });
                format!(
                    "Starting untimed measurement, maximum {MAX_SAMPLES} samples at \
                     {interval_ms}ms with {rampup} rampup samples"
                )
            }
            Err(error) => format!("Error: cannot start sampling: {error}"),
        }
    }

    /// `Stop`.
    pub(crate) fn stop(&mut self) -> String {
        match self.end_measurement() {
            Some(_) => {
                say("Completed test");
                "Stopping untimed measurement".into()
            }
            None => "Error: no measurement to stop".into(),
        }
    }

    /// Ends a measurement its client left running (the client went away).
    pub(crate) fn abandon(&mut self) {
        if let Some(mark) = self.end_measurement() {
            say(&format!(
                "WARNING: the client went away during the measurement '{mark}'; stopped it"
            ));
        }
    }

    fn end_measurement(&mut self) -> Option<String> {
        let running = self.running.take()?;
        let _ = running.stop.send(());
        let _ = running.sampler.join();
        Some(running.mark)
    }

    /// `RL` or `RL,<n>`: the header `Last N samples` and up to `limit` unread samples, oldest
    /// first; they are then read.
    pub(crate) fn read_samples(&mut self, limit: Option<usize>) -> Vec<String> {
        let mut shared = lock(&self.shared);
        let count = limit.map_or(shared.unread.len(), |n| n.min(shared.unread.len()));
        let mut lines = Vec::with_capacity(count + 1);
        lines.push(format!("Last {count} samples"));
        lines.extend(shared.unread.drain(..count).map(|s| s.line()));
        lines
    }

    /// `Watts,<avg>,<min>,<max>,<samples>,<errors>,<valid>` of the current or last measurement.
    pub(crate) fn watts(&self) -> String {
        let stats = lock(&self.shared).stats;
        let valid = stats.valid();
        let average = if valid > 0 {
            stats.sum / valid as f64
        } else {
            -1.0
        };
        format!(
            "Watts,{average:.6},{:.6},{:.6},{},{},{valid}",
            stats.min.unwrap_or(-1.0),
            stats.max.unwrap_or(-1.0),
            stats.samples,
            stats.errors
        )
    }

    /// `Uncertainty,<avg>,<min>,<max>,<total>,<invalid>,<valid>,<unknown>`: the Dummy device
    /// cannot estimate its uncertainty, so every sample's is unknown.
    pub(crate) fn uncertainty(&self) -> String {
        let total = lock(&self.shared).stats.samples;
        format!("Uncertainty,-1.000000,-1.000000,-1.000000,{total},0,0,{total}")
    }
}

/// The sampling thread of one measurement.
struct Sampler {
    profile: Profile,
    volts: f64,
    interval: Duration,
    rampup: u64,
    mark: String,
    faults: Faults,
    shared: Arc<Mutex<Shared>>,
    sample_log: Option<Arc<Mutex<File>>>,
    client: Option<TcpStream>,
}

impl Sampler {
    fn run(self, stopped: mpsc::Receiver<()>) {
        let mut next = Instant::now();
        let mut taken: u64 = 0;
        loop {
            next += self.interval;
            match stopped.recv_timeout(next.saturating_duration_since(Instant::now())) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => return,
            }
            taken += 1;
            if taken > self.rampup {
                self.record(self.sample(taken - self.rampup));
            }
            if self.faults.disconnect_after_go == Some(taken) {
                if let Some(client) = &self.client {
                    say("WARNING: dropping the client (fault disconnect-after-go)");
                    let _ = client.shutdown(Shutdown::Both);
                    // The meter is lost to its client: nothing more to sample for it.
                    return;
                }
            }
        }
    }

    /// The `number`-th sample (from 1) of the measurement, with the injected faults.
    fn sample(&self, number: u64) -> Sample {
        let every = |k: Option<u64>| k.is_some_and(|k| number.is_multiple_of(k));
        let time = SystemTime::now();
        if every(self.faults.invalid_every) {
            say("ERROR: Bad watts reading -1 (fault invalid-samples)");
            return Sample {
                time,
                watts: -1.0,
                volts: -1.0,
                amps: -1.0,
                power_factor: -1.0,
            };
        }
        if every(self.faults.nan_every) {
            say("ERROR: Bad watts reading nan (fault nan-samples)");
            return Sample {
                time,
                watts: f64::NAN,
                volts: self.volts,
                amps: f64::NAN,
                power_factor: f64::NAN,
            };
        }
        let watts = self.profile.watts(number - 1);
        Sample {
            time,
            watts,
            volts: self.volts,
            amps: watts / self.volts / POWER_FACTOR,
            power_factor: POWER_FACTOR,
        }
    }

    fn record(&self, sample: Sample) {
        {
            let mut shared = lock(&self.shared);
            if shared.unread.len() >= MAX_SAMPLES {
                shared.unread.pop_front();
            }
            shared.unread.push_back(sample);
            shared.stats.add(&sample);
        }
        if let Some(log) = &self.sample_log {
            let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
            let _ = writeln!(log, "{},Mark,{}", sample.line(), self.mark);
            let _ = log.flush();
        }
    }
}
