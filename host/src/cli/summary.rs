//! What `mlperf-host run` reports while a test runs and when it ends.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use mlperf_host::loadgen::{ProgressHandle, ProgressSnapshot, TestMode, TestResult};

/// VALID or INVALID as `--require-valid` judges it: the performance result's validity; for an
/// AccuracyOnly run (no performance result) the absence of engine errors.
pub fn is_valid(result: &TestResult) -> bool {
    match &result.performance {
        Some(performance) => performance.validity.valid,
        None => result.effective.mode == TestMode::AccuracyOnly && result.error_count() == 0,
    }
}

/// The progress hook: called with each look at the running test, and once more at its end.
///
/// TODO(progress bar): draw an indicatif bar here (stderr is a terminal, not `--quiet`):
/// samples completed against `min_queries`, `elapsed` against `min_duration`, throughput and
/// the running p99. For now progress goes to the debug log.
pub fn on_progress(progress: &ProgressSnapshot) {
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

/// How often the watcher looks at the test.
const POLL: Duration = Duration::from_millis(500);

/// Polls a [`ProgressHandle`] on a thread of its own and feeds [`on_progress`].
pub struct ProgressWatcher {
    handle: ProgressHandle,
    stop: mpsc::Sender<()>,
    thread: Option<JoinHandle<()>>,
}

impl ProgressWatcher {
    /// A watcher, or `None` when nobody would see the progress: a watched test keeps each
    /// sample's scheduled time, which an unwatched one does not pay for.
    pub fn start() -> Option<ProgressWatcher> {
        if !tracing::enabled!(tracing::Level::DEBUG) {
            return None;
        }
        let handle = ProgressHandle::new();
        let (stop, stopped) = mpsc::channel::<()>();
        let polled = handle.clone();
        let thread = std::thread::Builder::new()
            .name("mlperf-progress".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(POLL) {
                    on_progress(&polled.snapshot());
                }
            })
            .ok()?;
        Some(ProgressWatcher {
            handle,
            stop,
            thread: Some(thread),
        })
    }

    /// The handle to pass in `LogSettings::progress`.
    pub fn handle(&self) -> ProgressHandle {
        self.handle.clone()
    }

    /// Stops polling and reports the final progress.
    pub fn finish(mut self) {
        self.stop_thread();
        on_progress(&self.handle.snapshot());
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
