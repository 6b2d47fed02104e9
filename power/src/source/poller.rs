//! The poller of the on-host sources (`rapl`, `hwmon`, `nvml`): a [`Meter`] read once a period
//! on its own thread between `start` and `stop` into a [`Trace`], as a [`PowerSource`]. Energy
//! counters are followed through wraps and resets; for a meter with counters only, the watts
//! are derived from them. Read failures during the run and counter resets become the trace's
//! notes.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use super::counter::WrappingCounter;
use super::{PowerSource, SourceError, SourceInfo};
use crate::clock::format_utc;
use crate::trace::{PowerSample, Trace};

/// The poll period when the spec names none.
pub(super) const DEFAULT_PERIOD: Duration = Duration::from_millis(100);

/// How many notes of one kind (failed reads, counter resets) a trace gets in full; the rest
/// are counted.
const NOTED: usize = 3;

/// One of a meter's energy counters.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct CounterKind {
    /// What it is, for notes: its file, `GPU 0 total energy`.
    pub name: String,
    pub joules_per_count: f64,
    /// The largest value it reaches before it wraps to 0; None for one that does not wrap
    /// (a decrease is then a reset to 0, as when a driver reloads).
    pub range: Option<u64>,
}

/// One poll of a meter.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Reading {
    /// Power now, for a meter that reads it.
    pub watts: Option<f64>,
    /// Raw counter values, one for each of the meter's [`CounterKind`]s.
    pub counts: Vec<u64>,
}

/// What a [`PolledSource`] reads each period, on its sampling thread.
pub(super) trait Meter: Send + 'static {
    /// The counters every [`Reading`] carries, in order (none for a power-only meter).
    fn counters(&self) -> Vec<CounterKind>;
    fn read(&mut self) -> Result<Reading, String>;
}

/// Notes of one kind: the first [`NOTED`] in full, then how many more there were.
struct Capped {
    /// `failed reads`, as in "4 more failed reads".
    what: &'static str,
    noted: usize,
    left_out: usize,
}

impl Capped {
    fn new(what: &'static str) -> Capped {
        Capped {
            what,
            noted: 0,
            left_out: 0,
        }
    }

    fn note(&mut self, trace: &mut Trace, text: impl FnOnce() -> String) {
        if self.noted < NOTED {
            self.noted += 1;
            trace.notes.push(text());
        } else {
            self.left_out += 1;
        }
    }

    /// The count of those left out, at the end of the run.
    fn close(&self, trace: &mut Trace) {
        if self.left_out > 0 {
            trace.notes.push(format!(
                "{} more {} after these, not listed",
                self.left_out, self.what
            ));
        }
    }
}

/// The poller's record between polls: the counters since the first poll and the energy at
/// the counter's last advance, from which the watts of counter-only meters are derived.
struct PollState {
    kinds: Vec<CounterKind>,
    counters: Option<Vec<WrappingCounter>>,
    last_advance: Option<(Instant, f64)>,
    failures: Capped,
    resets: Capped,
}

impl PollState {
    fn new(kinds: Vec<CounterKind>) -> PollState {
        PollState {
            kinds,
            counters: None,
            last_advance: None,
            failures: Capped::new("failed reads"),
            resets: Capped::new("counter resets"),
        }
    }

    /// Reads the meter once into `trace`: its energy since the first poll and its power, read
    /// or derived. A derived sample is the energy since the counter last advanced over the
    /// time since: a counter that updates slower than the poll would otherwise give 0 W
    /// samples (invalid to the checker) followed by doubled ones.
    fn poll(&mut self, meter: &mut dyn Meter, trace: &mut Trace) -> Result<(), String> {
        let reading = meter.read()?;
        let (time, instant) = (SystemTime::now(), Instant::now());
        if reading.counts.len() != self.kinds.len() {
            return Err(format!(
                "read {} energy counters where {} were expected",
                reading.counts.len(),
                self.kinds.len()
            ));
        }
        let mut derived_watts = None;
        if !self.kinds.is_empty() {
            let counters = self.counters.get_or_insert_with(|| {
                self.kinds
                    .iter()
                    .zip(&reading.counts)
                    .map(|(kind, &first)| WrappingCounter::new(kind.range, first))
                    .collect()
            });
            let mut joules = 0.0;
            for ((counter, kind), &raw) in counters.iter_mut().zip(&self.kinds).zip(&reading.counts)
            {
                if counter.resets_at(raw) {
                    let last = counter.last();
                    self.resets.note(trace, || {
                        format!(
                            "{}: energy counter {} went back from {last} to {raw}: taken as a \
                             reset to 0 and counted on from there",
                            format_utc(time),
                            kind.name
                        )
                    });
                }
                joules += counter.update(raw) as f64 * kind.joules_per_count;
            }
            trace.energy.push((time, joules));
            match self.last_advance {
                Some((since, before)) if joules > before => {
                    let seconds = instant.duration_since(since).as_secs_f64();
                    derived_watts = (seconds > 0.0).then(|| (joules - before) / seconds);
                    self.last_advance = Some((instant, joules));
                }
                Some(_) => {}
                None => self.last_advance = Some((instant, joules)),
            }
        }
        if let Some(watts) = reading.watts.or(derived_watts) {
            trace.samples.push(PowerSample::watts(time, watts));
        }
        Ok(())
    }

    /// A poll that failed during the run: a sample of -1 W, which the checker leaves out (as
    /// PTDaemon marks one), and a note.
    fn failed(&mut self, trace: &mut Trace, message: &str) {
        let time = SystemTime::now();
        trace.samples.push(PowerSample::watts(time, -1.0));
        self.failures.note(trace, || {
            format!(
                "{}: a read failed (a sample of -1 W): {message}",
                format_utc(time)
            )
        });
    }

    /// The counts of the notes left out, at the end of the run.
    fn close(&self, trace: &mut Trace) {
        self.failures.close(trace);
        self.resets.close(trace);
    }
}

/// The sampling thread: polls every `period` until told to stop, then once more at the next
/// tick, so the last interval is a whole period and the trace covers the stop. Tells `ready`
/// of its first sample, or of the failure that kept it from one (and then ends); a later
/// failed poll is a sample of -1 W and a note.
fn sample(
    mut meter: Box<dyn Meter>,
    period: Duration,
    stop: Receiver<()>,
    ready: Sender<Result<(), String>>,
) -> (Box<dyn Meter>, Trace) {
    let mut state = PollState::new(meter.counters());
    let mut trace = Trace::default();
    let mut ready = Some(ready);
    let mut next = Instant::now();
    let mut stopping = false;
    loop {
        match state.poll(meter.as_mut(), &mut trace) {
            Ok(()) if !trace.samples.is_empty() => {
                if let Some(ready) = ready.take() {
                    let _ = ready.send(Ok(()));
                }
            }
            Ok(()) => {}
            Err(message) => match ready.take() {
                Some(ready) => {
                    let _ = ready.send(Err(message));
                    return (meter, trace);
                }
                None => state.failed(&mut trace, &message),
            },
        }
        if stopping {
            state.close(&mut trace);
            return (meter, trace);
        }
        // A poll more than a period late starts the schedule afresh rather than catching up
        // in a burst of short intervals.
        next = (next + period).max(Instant::now());
        match stop.recv_timeout(next.saturating_duration_since(Instant::now())) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => {
                stopping = true;
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
            }
        }
    }
}

/// A [`Meter`] polled on its own thread between `start` and `stop`.
pub(super) struct PolledSource {
    info: SourceInfo,
    /// None while the sampling thread has it (or lost it by panicking).
    meter: Option<Box<dyn Meter>>,
    running: Option<Running>,
}

/// A sampling thread and the way to stop it; it hands the meter back with the trace.
struct Running {
    stop: Sender<()>,
    sampler: JoinHandle<(Box<dyn Meter>, Trace)>,
}

impl PolledSource {
    pub(super) fn new(info: SourceInfo, meter: Box<dyn Meter>) -> PolledSource {
        PolledSource {
            info,
            meter: Some(meter),
            running: None,
        }
    }

    fn failed(&self, message: impl Into<String>) -> SourceError {
        SourceError::Failed {
            name: self.info.name.clone(),
            message: message.into(),
        }
    }

    /// How long `start` waits for the first sample: a counter-only meter gives its first one
    /// when its counter first advances, a period or so after the first poll.
    fn first_sample_wait(&self) -> Duration {
        (self.info.period * 3).max(Duration::from_secs(2))
    }
}

impl PowerSource for PolledSource {
    fn info(&self) -> SourceInfo {
        self.info.clone()
    }

    /// Returns once the first sample is in, so that a run issued right after is covered.
    fn start(&mut self, _mark: &str) -> Result<(), SourceError> {
        if self.running.is_some() {
            return Err(self.failed("started twice"));
        }
        let meter = self
            .meter
            .take()
            .ok_or_else(|| self.failed("its sampling thread panicked in an earlier run"))?;
        let (stop, stopped) = mpsc::channel();
        let (ready, first_sample) = mpsc::channel();
        let period = self.info.period;
        let sampler = std::thread::Builder::new()
            .name("power-on-host".into())
            .spawn(move || sample(meter, period, stopped, ready))
            .map_err(|e| self.failed(format!("cannot start its sampling thread: {e}")))?;
        let wait = self.first_sample_wait();
        let trouble = match first_sample.recv_timeout(wait) {
            Ok(Ok(())) => None,
            Ok(Err(message)) => Some(message),
            Err(RecvTimeoutError::Timeout) => Some(format!(
                "no reading in {wait:?}: its energy counter did not advance"
            )),
            Err(RecvTimeoutError::Disconnected) => {
                Some("its sampling thread ended before its first reading".into())
            }
        };
        match trouble {
            None => {
                self.running = Some(Running { stop, sampler });
                Ok(())
            }
            Some(message) => {
                let _ = stop.send(());
                if let Some(Ok((meter, _))) = join_within(sampler, self.stop_grace()) {
                    self.meter = Some(meter);
                }
                Err(self.failed(message))
            }
        }
    }

    fn stop(&mut self) -> Result<Trace, SourceError> {
        let Running { stop, sampler } = self
            .running
            .take()
            .ok_or_else(|| self.failed("not started"))?;
        let _ = stop.send(());
        let grace = self.stop_grace();
        let (meter, trace) = join_within(sampler, grace)
            .ok_or_else(|| {
                self.failed(format!(
                    "a read blocked for more than {grace:?}: the measurement is lost and the \
                     meter left behind"
                ))
            })?
            .map_err(|_| self.failed("its sampling thread panicked"))?;
        self.meter = Some(meter);
        Ok(trace)
    }
}

impl PolledSource {
    /// How long a stop waits for a read in progress: a blocked sensor or driver must not
    /// hold the run's end forever.
    fn stop_grace(&self) -> Duration {
        Duration::from_secs(5) + 3 * self.info.period
    }
}

/// Joins `thread` if it ends within `grace`; else leaves it behind (None).
fn join_within<T>(thread: JoinHandle<T>, grace: Duration) -> Option<std::thread::Result<T>> {
    let deadline = Instant::now() + grace;
    while !thread.is_finished() {
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Some(thread.join())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;
    use crate::source::{Provenance, Scope};

    /// Replays a script of readings, one a poll, then holds the last; counts its reads.
    struct Scripted {
        kinds: Vec<CounterKind>,
        script: Vec<Result<Reading, String>>,
        reads: Arc<AtomicUsize>,
    }

    impl Scripted {
        fn new(kinds: Vec<CounterKind>, script: Vec<Result<Reading, String>>) -> Scripted {
            Scripted {
                kinds,
                script,
                reads: Arc::default(),
            }
        }
    }

    impl Meter for Scripted {
        fn counters(&self) -> Vec<CounterKind> {
            self.kinds.clone()
        }
        fn read(&mut self) -> Result<Reading, String> {
            let next = self.reads.fetch_add(1, Ordering::SeqCst);
            self.script[next.min(self.script.len() - 1)].clone()
        }
    }

    /// `meter` polled every 2 ms.
    fn polled(meter: Scripted) -> PolledSource {
        let info = SourceInfo {
            name: "scripted".into(),
            scope: Scope::Component("test".into()),
            provenance: Provenance::OnHost,
            period: Duration::from_millis(2),
            identity: "a script".into(),
        };
        PolledSource::new(info, Box::new(meter))
    }

    fn microjoules(name: &str, range: Option<u64>) -> CounterKind {
        CounterKind {
            name: name.into(),
            joules_per_count: 1e-6,
            range,
        }
    }

    fn counting(counts: &[u64]) -> Result<Reading, String> {
        Ok(Reading {
            watts: None,
            counts: counts.to_vec(),
        })
    }

    fn watts(watts: f64) -> Result<Reading, String> {
        Ok(Reading {
            watts: Some(watts),
            counts: Vec::new(),
        })
    }

    #[test]
    fn the_poller_sums_corrects_and_derives() {
        // Two counters in µJ, the second wrapping at 1 J; a poll where nothing advances.
        let kinds = vec![microjoules("a", None), microjoules("b", Some(1_000_000))];
        let counts = [
            [5_000_000, 900_000],
            [5_500_000, 950_000],
            [5_500_000, 950_000],
            [6_000_000, 100_000],
        ];
        let script = counts.iter().map(|c| counting(c)).collect();
        let mut meter = Scripted::new(kinds.clone(), script);
        let mut state = PollState::new(kinds);
        let mut trace = Trace::default();
        for _ in 0..counts.len() {
            state.poll(&mut meter, &mut trace).unwrap();
            std::thread::sleep(Duration::from_millis(5));
        }
        let joules: Vec<f64> = trace.energy.iter().map(|&(_, j)| j).collect();
        // 0; 0.5 + 0.05; the same; + 0.5 + (1 - 0.95 + 0.1).
        let expected = [0.0, 0.55, 0.55, 1.2];
        for (got, want) in joules.iter().zip(expected) {
            assert!((got - want).abs() < 1e-9, "{joules:?}");
        }
        // A wrap is no news.
        assert!(trace.notes.is_empty(), "{:?}", trace.notes);
        // No sample at the first poll nor where the counter stood still; each derived one is
        // the energy since the last advance over its time.
        assert_eq!(trace.samples.len(), 2);
        let at = |i: usize| trace.energy[i].0;
        let seconds = |a: SystemTime, b: SystemTime| b.duration_since(a).unwrap().as_secs_f64();
        assert_eq!(trace.samples[0].time, at(1));
        assert_eq!(trace.samples[1].time, at(3));
        for (sample, from, to) in [(&trace.samples[0], 0, 1), (&trace.samples[1], 1, 3)] {
            let want = (joules[to] - joules[from]) / seconds(at(from), at(to));
            assert!(
                (sample.watts - want).abs() / want < 0.05,
                "{} W, want {want} W",
                sample.watts
            );
        }
    }

    #[test]
    fn the_poller_takes_a_meters_own_watts() {
        let kinds = vec![CounterKind {
            name: "GPU 0 total energy".into(),
            joules_per_count: 1e-3,
            range: None,
        }];
        let script = vec![
            Ok(Reading {
                watts: Some(300.0),
                counts: vec![1_000],
            }),
            Ok(Reading {
                watts: Some(310.0),
                counts: vec![4_000],
            }),
        ];
        let mut meter = Scripted::new(kinds.clone(), script);
        let mut state = PollState::new(kinds);
        let mut trace = Trace::default();
        state.poll(&mut meter, &mut trace).unwrap();
        state.poll(&mut meter, &mut trace).unwrap();
        let watts: Vec<f64> = trace.samples.iter().map(|s| s.watts).collect();
        assert_eq!(watts, [300.0, 310.0]);
        assert_eq!(trace.energy[1].1, 3.0);
    }

    #[test]
    fn resets_are_noted_the_first_few_in_full() {
        // A counter without a range that goes on by 30 µJ and back by 10, five times.
        let kinds = vec![microjoules("/sys/x/energy1_input", None)];
        let mut script = vec![counting(&[100])];
        for k in 0..5u64 {
            script.push(counting(&[130 + 20 * k]));
            script.push(counting(&[120 + 20 * k]));
        }
        let polls = script.len();
        let mut meter = Scripted::new(kinds.clone(), script);
        let mut state = PollState::new(kinds);
        let mut trace = Trace::default();
        for _ in 0..polls {
            state.poll(&mut meter, &mut trace).unwrap();
        }
        state.close(&mut trace);
        // Five advances of 30 µJ, and after each reset its whole reading: 120 + 140 + … + 200.
        let total = trace.energy.last().unwrap().1;
        assert!((total - 950e-6).abs() < 1e-12, "{total}");
        assert_eq!(trace.notes.len(), NOTED + 1, "{:?}", trace.notes);
        assert!(
            trace.notes[0].contains(
                "energy counter /sys/x/energy1_input went back from 130 to 120: taken as a \
                 reset to 0"
            ),
            "{}",
            trace.notes[0]
        );
        assert_eq!(
            trace.notes[NOTED],
            "2 more counter resets after these, not listed"
        );
    }

    #[test]
    fn failed_reads_during_the_run_are_samples_of_minus_one_and_notes() {
        let mut script = vec![watts(100.0)];
        script.extend((1..=5).map(|k| Err(format!("cannot read sensor ({k})"))));
        script.push(watts(120.0));
        let meter = Scripted::new(Vec::new(), script);
        let reads = Arc::clone(&meter.reads);
        let mut source = polled(meter);
        source.start("testing").unwrap();
        let waited = Instant::now();
        while reads.load(Ordering::SeqCst) < 8 && waited.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(2));
        }
        let trace = source.stop().unwrap();
        let watts: Vec<f64> = trace.samples.iter().map(|s| s.watts).collect();
        assert_eq!(&watts[..7], [100.0, -1.0, -1.0, -1.0, -1.0, -1.0, 120.0]);
        assert_eq!(trace.notes.len(), NOTED + 1, "{:?}", trace.notes);
        for (k, note) in trace.notes[..NOTED].iter().enumerate() {
            assert!(
                note.ends_with(&format!(
                    ": a read failed (a sample of -1 W): cannot read sensor ({})",
                    k + 1
                )),
                "{note}"
            );
        }
        assert_eq!(
            trace.notes[NOTED],
            "2 more failed reads after these, not listed"
        );
        // The next run starts with no notes.
        source.start("again").unwrap();
        let trace = source.stop().unwrap();
        assert!(trace.notes.is_empty(), "{:?}", trace.notes);
    }

    #[test]
    fn a_first_read_that_fails_fails_the_start() {
        let meter = Scripted::new(Vec::new(), vec![Err("no such sensor".into()), watts(5.0)]);
        let mut source = polled(meter);
        let error = source.start("testing").unwrap_err().to_string();
        assert_eq!(error, "power source scripted: no such sensor");
        source.start("testing").unwrap();
        assert!(source.start("testing").is_err());
        assert!(source
            .stop()
            .unwrap()
            .samples
            .iter()
            .all(|s| s.watts == 5.0));
        assert!(source.stop().is_err());
    }

    #[test]
    fn a_thread_that_does_not_end_in_time_is_left_behind() {
        let slow = std::thread::spawn(|| std::thread::sleep(Duration::from_millis(300)));
        let started = Instant::now();
        assert!(join_within(slow, Duration::from_millis(30)).is_none());
        assert!(started.elapsed() < Duration::from_millis(250));
        let quick = std::thread::spawn(|| 7);
        assert_eq!(
            join_within(quick, Duration::from_secs(5)).unwrap().unwrap(),
            7
        );
    }
}
