//! What `mlperf-host run` shows while a test runs: a progress bar on stderr (when it is a
//! terminal and not `--quiet`) and, at debug level, a `progress` log event, both fed by a thread
//! that polls the test's [`ProgressHandle`].

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use std::sync::Mutex;

use indicatif::{HumanCount, MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use mlperf_host::loadgen::{ProgressHandle, ProgressSnapshot, TestMode};

/// Nothing is drawn this early in a run, so short runs print nothing extra.
const SHOW_AFTER: Duration = Duration::from_secs(2);
/// How often the bar is refreshed.
const BAR_POLL: Duration = Duration::from_millis(200);
/// How often progress is logged at debug level.
const LOG_POLL: Duration = Duration::from_millis(500);
/// The bar's length: its position is in thousandths of the minimum run.
const BAR_LEN: u64 = 1000;

/// Where the bars of the runs go when something draws above them (`campaign`'s own bar).
static PARENT: Mutex<Option<MultiProgress>> = Mutex::new(None);

/// Draws each run's bar beneath `parent`'s bars from now on.
pub(crate) fn nest_under(parent: MultiProgress) {
    *PARENT.lock().unwrap_or_else(|e| e.into_inner()) = Some(parent);
}

/// Polls a [`ProgressHandle`] on a thread of its own, for the bar and the debug log.
pub(crate) struct ProgressWatcher {
    handle: ProgressHandle,
    stop: mpsc::Sender<()>,
    thread: Option<JoinHandle<()>>,
}

impl ProgressWatcher {
    /// A watcher, or `None` when nobody would see the progress (no bar to draw on stderr and
    /// no debug log): a watched test keeps each sample's scheduled time, which an unwatched one
    /// does not pay for. `bar`: the caller wants a bar (stderr is a terminal, not `--quiet`).
    pub(crate) fn start(bar: bool) -> Option<ProgressWatcher> {
        let log = tracing::enabled!(tracing::Level::DEBUG);
        // Hidden when stderr is not a terminal, or TERM is unset or dumb.
        let target = bar
            .then(|| ProgressDrawTarget::stderr_with_hz(10))
            .filter(|target| !target.is_hidden());
        if !log && target.is_none() {
            return None;
        }
        let handle = ProgressHandle::new();
        let (stop, stopped) = mpsc::channel::<()>();
        let poll = if target.is_some() { BAR_POLL } else { LOG_POLL };
        let mut poller = Poller {
            handle: handle.clone(),
            log,
            last_log: None,
            bar: target.map(LiveBar::new),
        };
        let thread = std::thread::Builder::new()
            .name("mlperf-progress".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(poll) {
                    poller.poll();
                }
                poller.finish();
            })
            .ok()?;
        Some(ProgressWatcher {
            handle,
            stop,
            thread: Some(thread),
        })
    }

    /// The handle to pass in `TestContext::progress`.
    pub(crate) fn handle(&self) -> ProgressHandle {
        self.handle.clone()
    }

    /// Stops polling, logs the final progress and clears the bar (before the summary prints).
    pub(crate) fn finish(mut self) {
        self.stop_thread();
    }

    fn stop_thread(&mut self) {
        let _ = self.stop.send(());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for ProgressWatcher {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// The polling thread's state.
struct Poller {
    handle: ProgressHandle,
    log: bool,
    last_log: Option<Instant>,
    bar: Option<LiveBar>,
}

impl Poller {
    /// Takes a snapshot only when the log or a visible bar wants one.
    fn poll(&mut self) {
        let now = Instant::now();
        let log_due = self.log
            && self
                .last_log
                .is_none_or(|at| now.saturating_duration_since(at) >= LOG_POLL);
        let bar_due = self.bar.as_ref().is_some_and(|bar| now >= bar.show_at);
        if !log_due && !bar_due {
            return;
        }
        let snapshot = self.handle.snapshot();
        if log_due {
            self.last_log = Some(now);
            self.log(&snapshot);
        }
        if let Some(bar) = self.bar.as_mut().filter(|_| bar_due) {
            bar.update(&snapshot);
        }
    }

    /// Clears the bar, then logs the final progress.
    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.clear();
        }
        if self.log {
            self.log(&self.handle.snapshot());
        }
    }

    /// The debug event, with the bar (if drawn) lifted off the terminal meanwhile.
    fn log(&self, snapshot: &ProgressSnapshot) {
        match self.bar.as_ref().and_then(|bar| bar.bar.as_ref()) {
            Some(bar) => bar.suspend(|| log_progress(snapshot)),
            None => log_progress(snapshot),
        }
    }
}

fn log_progress(progress: &ProgressSnapshot) {
    tracing::debug!(
        series = ?progress.series,
        elapsed_s = progress.elapsed.as_secs_f64(),
        min_duration_s = progress.min_duration.as_secs_f64(),
        queries_issued = progress.queries_issued,
        min_queries = progress.min_queries,
        samples_issued = progress.samples_issued,
        samples_completed = progress.samples_completed,
        throughput = progress.throughput,
        p99_latency = ?progress.p99_latency,
        "progress"
    );
}

/// What the test is doing, as the bar shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Issuing an accuracy series: every sample once, whatever the minimums say.
    Accuracy,
    /// Issuing a performance series, until both minimums are reached.
    Performance,
    /// A series is all issued; waiting for its last samples (most of an Offline run).
    Draining,
}

impl Phase {
    /// `None` before the first series.
    fn of(progress: &ProgressSnapshot) -> Option<Phase> {
        match progress.series {
            Some(TestMode::AccuracyOnly) => Some(Phase::Accuracy),
            Some(_) => Some(Phase::Performance),
            None if progress.samples_issued > 0 => Some(Phase::Draining),
            None => None,
        }
    }
}

/// The bar on stderr, created [`SHOW_AFTER`] into the run.
struct LiveBar {
    show_at: Instant,
    /// Where the bar will draw, until it exists.
    target: Option<ProgressDrawTarget>,
    bar: Option<ProgressBar>,
    phase: Option<Phase>,
}

impl LiveBar {
    fn new(target: ProgressDrawTarget) -> LiveBar {
        LiveBar {
            show_at: Instant::now() + SHOW_AFTER,
            target: Some(target),
            bar: None,
            phase: None,
        }
    }

    fn update(&mut self, progress: &ProgressSnapshot) {
        let Some(phase) = Phase::of(progress) else {
            return;
        };
        if self.bar.is_none() {
            let Some(target) = self.target.take() else {
                return;
            };
            let parent = PARENT.lock().unwrap_or_else(|e| e.into_inner()).clone();
            self.bar = Some(match parent {
                Some(parent) => parent.add(ProgressBar::new(BAR_LEN)),
                None => ProgressBar::with_draw_target(Some(BAR_LEN), target),
            });
        }
        let Some(bar) = &self.bar else {
            return;
        };
        if self.phase != Some(phase) {
            self.phase = Some(phase);
            bar.set_style(style(phase));
        }
        // One draw per look: the builder sets the message without drawing (clones share the
        // bar), then `update` moves the bar, advances the spinner and draws.
        let _ = bar.clone().with_message(message(phase, progress));
        let position = position(phase, progress);
        bar.update(|state| state.set_pos(position));
    }

    fn clear(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The message takes what is left of the terminal's width and is cut there (`wide_msg`), so
/// the bar stays on one line.
fn style(phase: Phase) -> ProgressStyle {
    let template = match phase {
        Phase::Accuracy => "{spinner} accuracy {wide_msg}",
        Phase::Performance => "{spinner} performance [{bar:20}] {percent:>3}% {wide_msg}",
        Phase::Draining => "{spinner} draining [{bar:20}] {percent:>3}% {wide_msg}",
    };
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .tick_chars("|/-\\ ")
        .progress_chars("=> ")
}

/// How far the phase is, in [`BAR_LEN`]ths. A performance series ends once both the minimum
/// duration and the minimum query count are reached: the lesser of the two fractions. A
/// draining one, once every issued sample is done.
fn position(phase: Phase, progress: &ProgressSnapshot) -> u64 {
    let fraction = |done: f64, of: f64| if of > 0.0 { done / of } else { 1.0 };
    let done = match phase {
        Phase::Accuracy => 0.0,
        Phase::Performance => {
            let time = fraction(
                progress.elapsed.as_secs_f64(),
                progress.min_duration.as_secs_f64(),
            );
            let queries = fraction(progress.queries_issued as f64, progress.min_queries as f64);
            time.min(queries)
        }
        Phase::Draining => fraction(
            progress.samples_completed as f64,
            progress.samples_issued as f64,
        ),
    };
    (done.clamp(0.0, 1.0) * BAR_LEN as f64) as u64
}

/// How long until a performance series has both its minimum duration and its minimum query
/// count, at the rate it has issued so far; None before it has issued anything.
fn eta(progress: &ProgressSnapshot) -> Option<Duration> {
    let by_time = progress.min_duration.saturating_sub(progress.elapsed);
    let left = progress.min_queries.saturating_sub(progress.queries_issued);
    if left == 0 {
        return Some(by_time);
    }
    let elapsed = progress.elapsed.as_secs_f64();
    if progress.queries_issued == 0 || elapsed <= 0.0 {
        return None;
    }
    let rate = progress.queries_issued as f64 / elapsed;
    let by_queries = Duration::try_from_secs_f64(left as f64 / rate).ok()?;
    Some(by_time.max(by_queries))
}

/// `1.2s/10m00s, issued 12/1,024 queries, ETA 9m59s, 12 samples done, 9.8 samples/s, p99
/// 1.06ms`. The queries' denominator is what the series will likely issue: the minimum count,
/// or the minimum duration at the target rate when that is more.
fn message(phase: Phase, progress: &ProgressSnapshot) -> String {
    let elapsed = clock(progress.elapsed);
    let issued = HumanCount(progress.queries_issued);
    let done = HumanCount(progress.samples_completed);
    let counts = match phase {
        Phase::Accuracy => format!("{elapsed}, issued {issued} queries, {done} samples done"),
        Phase::Performance => format!(
            "{elapsed}/{}, issued {issued}/{} queries, ETA {}, {done} samples done",
            clock(progress.min_duration),
            HumanCount(progress.min_queries.max(progress.expected_queries)),
            eta(progress).map_or_else(|| "-".to_string(), clock)
        ),
        Phase::Draining => format!(
            "{elapsed}, {done}/{} samples done",
            HumanCount(progress.samples_issued)
        ),
    };
    let throughput = if progress.throughput < 100.0 {
        format!("{:.1}", progress.throughput.max(0.0))
    } else {
        HumanCount(progress.throughput.round() as u64).to_string()
    };
    let p99 = progress
        .p99_latency
        .map_or_else(|| "-".to_string(), latency);
    format!("{counts}, {throughput} samples/s, p99 {p99}")
}

/// `12.3s`, `4m05s`, `1h02m`.
fn clock(duration: Duration) -> String {
    let secs = duration.as_secs();
    if secs < 60 {
        format!("{:.1}s", duration.as_secs_f64())
    } else if secs < 3600 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{}h{:02}m", secs / 3600, secs % 3600 / 60)
    }
}

/// Three significant digits in ns, us, ms or s: `850ns`, `12.3us`, `1.06ms`, `2.50s`.
fn latency(duration: Duration) -> String {
    let ns = duration.as_nanos() as f64;
    let (value, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "us")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let decimals = if value < 10.0 {
        2
    } else if value < 100.0 {
        1
    } else {
        0
    };
    if unit == "ns" {
        format!("{value:.0}{unit}")
    } else {
        format!("{value:.decimals$}{unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(elapsed_ms: u64, issued: u64) -> ProgressSnapshot {
        ProgressSnapshot {
            series: Some(TestMode::PerformanceOnly),
            elapsed: Duration::from_millis(elapsed_ms),
            min_duration: Duration::from_secs(10),
            min_queries: 100,
            expected_queries: 50,
            queries_issued: issued,
            samples_issued: issued,
            samples_completed: issued,
            throughput: 1234.4,
            p99_latency: Some(Duration::from_micros(1060)),
        }
    }

    #[test]
    fn position_is_the_lesser_fraction() {
        let performance = |progress: &ProgressSnapshot| position(Phase::Performance, progress);
        assert_eq!(performance(&snapshot(5_000, 100)), 500);
        assert_eq!(performance(&snapshot(10_000, 25)), 250);
        assert_eq!(performance(&snapshot(20_000, 500)), BAR_LEN);
        let mut no_minimums = snapshot(0, 0);
        no_minimums.min_duration = Duration::ZERO;
        no_minimums.min_queries = 0;
        assert_eq!(performance(&no_minimums), BAR_LEN);
        let mut draining = snapshot(3_000, 1);
        draining.series = None;
        draining.samples_issued = 400;
        draining.samples_completed = 100;
        assert_eq!(Phase::of(&draining), Some(Phase::Draining));
        assert_eq!(position(Phase::Draining, &draining), 250);
        draining.samples_issued = 0;
        assert_eq!(Phase::of(&draining), None);
    }

    #[test]
    fn message_reads() {
        assert_eq!(
            message(Phase::Performance, &snapshot(65_000, 1500)),
            "1m05s/10.0s, issued 1,500/100 queries, ETA 0.0s, 1,500 samples done, 1,234 samples/s, \
             p99 1.06ms"
        );
        // The denominator is the larger of the minimum and the expected count: a fast Server
        // run at 1,000 qps for 10 s issues 10,000 queries, not the minimum 100.
        let mut server = snapshot(2_000, 2_000);
        server.expected_queries = 10_000;
        assert_eq!(
            message(Phase::Performance, &server),
            "2.0s/10.0s, issued 2,000/10,000 queries, ETA 8.0s, 2,000 samples done, 1,234 \
             samples/s, p99 1.06ms"
        );
        let mut accuracy = snapshot(1_300, 3);
        accuracy.throughput = 2.44;
        accuracy.p99_latency = None;
        assert_eq!(
            message(Phase::Accuracy, &accuracy),
            "1.3s, issued 3 queries, 3 samples done, 2.4 samples/s, p99 -"
        );
        accuracy.samples_issued = 8;
        assert_eq!(
            message(Phase::Draining, &accuracy),
            "1.3s, 3/8 samples done, 2.4 samples/s, p99 -"
        );
    }

    #[test]
    fn the_eta_waits_for_both_minimums_at_the_rate_so_far() {
        // 10 of 100 queries in 5 s (of a 10 s minimum): 45 s more at 2 queries/s.
        let slow = snapshot(5_000, 10);
        assert_eq!(eta(&slow), Some(Duration::from_secs(45)));
        // The count is reached: the duration is what is left.
        assert_eq!(eta(&snapshot(4_000, 500)), Some(Duration::from_secs(6)));
        assert_eq!(eta(&snapshot(0, 0)), None);
    }

    #[test]
    fn latency_units() {
        assert_eq!(latency(Duration::from_nanos(850)), "850ns");
        assert_eq!(latency(Duration::from_nanos(12_345)), "12.3us");
        assert_eq!(latency(Duration::from_micros(1_060)), "1.06ms");
        assert_eq!(latency(Duration::from_millis(2_500)), "2.50s");
        assert_eq!(latency(Duration::from_millis(250)), "250ms");
    }
}
