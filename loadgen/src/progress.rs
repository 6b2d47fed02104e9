//! Live progress of a running test, for a progress bar: what has been issued and completed,
//! time against the minimum duration, and a running p99 latency. The engine only stores a few
//! counters (and, while someone watches, each sample's scheduled time); the watcher does the
//! arithmetic when it polls.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::completion::{Shared, DONE, TIME_MASK};
use super::recent_schedule::RECENT;
use super::settings::TestMode;

/// A handle the caller keeps to watch a test; pass a clone in `TestContext::progress`.
#[derive(Clone, Default)]
pub struct ProgressHandle {
    state: Arc<ProgressState>,
}

impl std::fmt::Debug for ProgressHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressHandle").finish_non_exhaustive()
    }
}

impl PartialEq for ProgressHandle {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.state, &other.state)
    }
}

/// One look at a running test.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressSnapshot {
    /// The mode of the series running now (`None` before the first and after the last).
    pub series: Option<TestMode>,
    pub elapsed: Duration,
    pub min_duration: Duration,
    pub min_queries: u64,
    /// The queries the series will likely issue: the larger of the minimum count and the
    /// minimum duration at the target rate (for a progress bar's denominator).
    pub expected_queries: u64,
    pub queries_issued: u64,
    pub samples_issued: u64,
    pub samples_completed: u64,
    /// Completed samples per second over the series so far.
    pub throughput: f64,
    /// The 99th percentile of the latencies of the most recent completions.
    pub p99_latency: Option<Duration>,
}

/// What [`ProgressHandle::report_external`] takes.
#[derive(Debug, Clone, Default)]
pub struct ExternalProgress {
    pub series: Option<TestMode>,
    pub elapsed: Duration,
    pub min_duration: Duration,
    pub min_queries: u64,
    pub expected_queries: u64,
    pub queries_issued: u64,
    pub samples_issued: u64,
    pub samples_completed: u64,
}

#[derive(Default)]
struct ProgressState {
    running: AtomicBool,
    accuracy: AtomicBool,
    start_ns: AtomicI64,
    now_ns: AtomicI64,
    min_duration_ms: AtomicU64,
    min_queries: AtomicU64,
    expected_queries: AtomicU64,
    sample_base: AtomicU64,
    queries_issued: AtomicU64,
    samples_issued: AtomicU64,
    completed_at_start: AtomicU64,
    completed: AtomicU64,
    /// Latencies of recent completions, refreshed by whoever takes a snapshot.
    window: Mutex<LatencyWindow>,
    /// Set by the engine: where to read completions and scheduled times from.
    source: Mutex<Option<Arc<Shared>>>,
}

#[derive(Default)]
struct LatencyWindow {
    next_seq: u64,
    recent: VecDeque<i64>,
}

/// Latencies kept for the running p99.
const WINDOW: usize = 50_000;
// The issuer may run ahead of a reader by the window again.
const _: () = assert!(RECENT as usize > WINDOW * 2);

impl ProgressHandle {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn snapshot(&self) -> ProgressSnapshot {
        let s = &self.state;
        let running = s.running.load(Ordering::Acquire);
        let source = s.source.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let now_ns = source
            .as_ref()
            .map_or(s.now_ns.load(Ordering::Relaxed), |shared| {
                shared.clock.now_ns()
            });
        let elapsed_ns = (now_ns - s.start_ns.load(Ordering::Relaxed)).max(0);
        let completed = source
            .as_ref()
            .map_or(s.completed.load(Ordering::Relaxed), |shared| {
                shared.completed.load(Ordering::Relaxed)
            })
            - s.completed_at_start.load(Ordering::Relaxed);
        let p99 = source
            .as_ref()
            .and_then(|shared| self.refresh_window(shared));
        ProgressSnapshot {
            series: running.then(|| {
                if s.accuracy.load(Ordering::Relaxed) {
                    TestMode::AccuracyOnly
                } else {
                    TestMode::PerformanceOnly
                }
            }),
            elapsed: Duration::from_nanos(elapsed_ns as u64),
            min_duration: Duration::from_millis(s.min_duration_ms.load(Ordering::Relaxed)),
            min_queries: s.min_queries.load(Ordering::Relaxed),
            expected_queries: s.expected_queries.load(Ordering::Relaxed),
            queries_issued: s.queries_issued.load(Ordering::Relaxed),
            samples_issued: s.samples_issued.load(Ordering::Relaxed),
            samples_completed: completed,
            throughput: if elapsed_ns > 0 {
                completed as f64 / (elapsed_ns as f64 / 1e9)
            } else {
                0.0
            },
            p99_latency: p99,
        }
    }

    /// The counters of a test another engine runs (the official LoadGen), as its adapter
    /// counts them: no latency window, `elapsed` since the test started.
    pub fn report_external(&self, report: &ExternalProgress) {
        let s = &self.state;
        s.accuracy.store(
            report.series == Some(TestMode::AccuracyOnly),
            Ordering::Relaxed,
        );
        s.start_ns.store(0, Ordering::Relaxed);
        s.now_ns
            .store(report.elapsed.as_nanos() as i64, Ordering::Relaxed);
        s.min_duration_ms
            .store(report.min_duration.as_millis() as u64, Ordering::Relaxed);
        s.min_queries.store(report.min_queries, Ordering::Relaxed);
        s.expected_queries
            .store(report.expected_queries, Ordering::Relaxed);
        s.queries_issued
            .store(report.queries_issued, Ordering::Relaxed);
        s.samples_issued
            .store(report.samples_issued, Ordering::Relaxed);
        s.completed_at_start.store(0, Ordering::Relaxed);
        s.completed
            .store(report.samples_completed, Ordering::Relaxed);
        s.running.store(report.series.is_some(), Ordering::Release);
    }

    /// Reads the completions since the last look and returns the window's p99.
    fn refresh_window(&self, shared: &Shared) -> Option<Duration> {
        let s = &self.state;
        let mut window = s.window.lock().unwrap_or_else(|p| p.into_inner());
        let base = s.sample_base.load(Ordering::Relaxed);
        let end = base + s.samples_issued.load(Ordering::Acquire);
        // Only the newest completions matter: skip what would fall out of the window anyway.
        window.next_seq = window
            .next_seq
            .max(base)
            .max(end.saturating_sub(WINDOW as u64));
        let mut seq = window.next_seq;
        while seq < end {
            let status = shared
                .slots
                .status
                .get(seq)
                .map_or(0, |x| x.load(Ordering::Acquire));
            if status & DONE == 0 {
                break;
            }
            // The window trails the newest issue by at most WINDOW samples, well inside the
            // ring (an issuer that laps it meanwhile only blurs one displayed p99).
            let scheduled = shared.recent_schedule.get(seq);
            let latency = (status & TIME_MASK) as i64 - scheduled;
            if window.recent.len() == WINDOW {
                window.recent.pop_front();
            }
            window.recent.push_back(latency);
            seq += 1;
        }
        window.next_seq = seq;
        if window.recent.is_empty() {
            return None;
        }
        let mut sorted: Vec<i64> = window.recent.iter().copied().collect();
        let k = (sorted.len() as f64 * 0.99) as usize;
        let k = k.min(sorted.len() - 1);
        let (_, p99, _) = sorted.select_nth_unstable(k);
        Some(Duration::from_nanos((*p99).max(0) as u64))
    }
}

/// When a performance series may end, as the progress shows it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SeriesGoal {
    pub(crate) min_duration_ms: u64,
    pub(crate) min_queries: u64,
    pub(crate) expected_queries: u64,
}

/// The engine's side of a handle.
pub(crate) struct ProgressRecorder {
    state: Arc<ProgressState>,
}

impl ProgressRecorder {
    pub(crate) fn new(handle: &ProgressHandle, shared: &Arc<Shared>) -> Self {
        *handle
            .state
            .source
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(Arc::clone(shared));
        ProgressRecorder {
            state: Arc::clone(&handle.state),
        }
    }

    pub(crate) fn series_started(
        &self,
        accuracy: bool,
        start_ns: i64,
        sample_base: u64,
        completed_at_start: u64,
        goal: SeriesGoal,
    ) {
        let s = &self.state;
        s.accuracy.store(accuracy, Ordering::Relaxed);
        s.start_ns.store(start_ns, Ordering::Relaxed);
        s.sample_base.store(sample_base, Ordering::Relaxed);
        s.completed_at_start
            .store(completed_at_start, Ordering::Relaxed);
        s.min_duration_ms
            .store(goal.min_duration_ms, Ordering::Relaxed);
        s.min_queries.store(goal.min_queries, Ordering::Relaxed);
        s.expected_queries
            .store(goal.expected_queries, Ordering::Relaxed);
        s.queries_issued.store(0, Ordering::Relaxed);
        s.samples_issued.store(0, Ordering::Relaxed);
        s.running.store(true, Ordering::Release);
    }

    /// After each issue: the series' totals so far.
    #[inline]
    pub(crate) fn issued(&self, queries: u64, samples: u64) {
        self.state.queries_issued.store(queries, Ordering::Relaxed);
        self.state.samples_issued.store(samples, Ordering::Release);
    }

    /// [`Self::issued`] from one of several issue threads, whose totals may arrive out of order.
    pub(crate) fn issued_at_least(&self, queries: u64, samples: u64) {
        self.state
            .queries_issued
            .fetch_max(queries, Ordering::Relaxed);
        self.state
            .samples_issued
            .fetch_max(samples, Ordering::Release);
    }

    pub(crate) fn series_ended(&self) {
        self.state.running.store(false, Ordering::Release);
    }
}

impl Drop for ProgressRecorder {
    fn drop(&mut self) {
        let s = &self.state;
        let mut source = s.source.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(shared) = source.take() {
            // Freeze the counters for later snapshots.
            s.now_ns.store(shared.clock.now_ns(), Ordering::Relaxed);
            s.completed
                .store(shared.completed.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        s.running.store(false, Ordering::Release);
    }
}
