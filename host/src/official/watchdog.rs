//! What the official engine lacks: it waits forever for samples that never complete and has no
//! way to hear that the SUT failed. The watchdog ends such a run: it lets the official library
//! flush its logs (`AbortTest`, given two seconds), has the caller record the verdict, and ends
//! the process.

use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mlperf_official_loadgen::Mode;

use super::sink::OfficialSink;
use super::{AbortReport, Watch};
use crate::loadgen::{ExternalProgress, TestMode};

/// How often the counters are looked at.
const POLL: Duration = Duration::from_millis(20);
/// How long the official library gets to flush its logs after `AbortTest`.
const FLUSH_GRACE: Duration = Duration::from_secs(2);
/// The exit status of a run the watchdog ended.
pub const EXIT_ABORTED: i32 = 1;

pub(crate) struct Watchdog {
    stopped: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

/// What the progress bar measures the test against.
pub(crate) struct Limits {
    pub(crate) mode: Mode,
    pub(crate) min_duration: Duration,
    pub(crate) min_queries: u64,
}

impl Watchdog {
    pub(crate) fn start(sink: Arc<OfficialSink>, watch: Watch, limits: Limits) -> Watchdog {
        let stopped = Arc::new((Mutex::new(false), Condvar::new()));
        let flag = Arc::clone(&stopped);
        let thread = std::thread::Builder::new()
            .name("official-watchdog".into())
            .spawn(move || watch_run(&sink, &watch, &limits, &flag))
            .expect("cannot start the official engine's watchdog thread");
        Watchdog {
            stopped,
            thread: Some(thread),
        }
    }

    /// The test returned: nothing more to watch.
    pub(crate) fn stop(mut self) {
        let (lock, wake) = &*self.stopped;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn watch_run(
    sink: &OfficialSink,
    watch: &Watch,
    limits: &Limits,
    stopped: &(Mutex<bool>, Condvar),
) {
    let (lock, wake) = stopped;
    let mut last_completed = 0;
    let started = Instant::now();
    let mut progress_at = started;
    let mut calls_ended = (0, 0, started);
    loop {
        {
            let guard = lock.lock().unwrap_or_else(|p| p.into_inner());
            let (guard, _) = wake
                .wait_timeout_while(guard, POLL, |stopped| !*stopped)
                .unwrap_or_else(|p| p.into_inner());
            if *guard {
                report_progress(sink, watch, limits, started, false);
                return;
            }
        }
        report_progress(sink, watch, limits, started, true);
        let issued = sink.issued.load(Ordering::Acquire);
        let completed = sink.completed.load(Ordering::Acquire);
        if let Some((number, name)) = (watch.interrupted)() {
            let report = AbortReport {
                reason: format!("interrupted by {name}"),
                counts: sink.counts(),
            };
            abort(report, watch, 128 + number);
        }
        let reason = if let Some(failure) = sink.failure() {
            Some(failure)
        } else if let Some(stall) = stalled_call(sink, watch, &mut calls_ended, completed) {
            Some(stall)
        } else {
            // Time without anything outstanding is not a stall.
            if completed != last_completed || completed >= issued {
                last_completed = completed;
                progress_at = Instant::now();
            }
            (progress_at.elapsed() >= watch.drain_timeout).then(|| {
                format!(
                    "no sample completed for {:.1} s with {} outstanding (--drain-timeout)",
                    watch.drain_timeout.as_secs_f64(),
                    issued - completed
                )
            })
        };
        if let Some(reason) = reason {
            abort(
                AbortReport {
                    reason,
                    counts: sink.counts(),
                },
                watch,
                EXIT_ABORTED,
            );
        }
    }
}

/// The reason to end the run when a call into the SUT is under way and, for
/// `watch.stall_timeout`, none has returned and no sample completed (one call may legitimately
/// answer a whole Offline query inline); `last` is the count of returned calls and of completed
/// samples last seen, and since when.
fn stalled_call(
    sink: &OfficialSink,
    watch: &Watch,
    last: &mut (u64, u64, Instant),
    completed: u64,
) -> Option<String> {
    let timeout = watch.stall_timeout?;
    let calls = &sink.sut_calls;
    let ended = calls.ended.load(Ordering::Acquire);
    if (ended, completed) != (last.0, last.1) || calls.begun.load(Ordering::Acquire) == ended {
        *last = (ended, completed, Instant::now());
        return None;
    }
    (last.2.elapsed() >= timeout).then(|| {
        let call = if calls.flushing.load(Ordering::Relaxed) {
            "flush_queries"
        } else {
            "issue_query"
        };
        format!(
            "{} {call} has not returned after {timeout:?} (--stall-timeout)",
            watch.sut_name
        )
    })
}

/// Hands the counters to the progress bar, if there is one.
fn report_progress(
    sink: &OfficialSink,
    watch: &Watch,
    limits: &Limits,
    started: Instant,
    running: bool,
) {
    let Some(progress) = &watch.progress else {
        return;
    };
    // The official library does not say which series runs: a SubmissionRun shows as one.
    let series = match limits.mode {
        Mode::AccuracyOnly => TestMode::AccuracyOnly,
        _ => TestMode::PerformanceOnly,
    };
    progress.report_external(&ExternalProgress {
        series: running.then_some(series),
        elapsed: started.elapsed(),
        min_duration: limits.min_duration,
        min_queries: limits.min_queries,
        // The official library's schedule is not visible from here.
        expected_queries: limits.min_queries,
        queries_issued: sink.queries.load(Ordering::Relaxed),
        samples_issued: sink.issued.load(Ordering::Relaxed),
        samples_completed: sink.completed.load(Ordering::Relaxed),
    });
}

/// Flushes what the official library logged, records the verdict and ends the process with
/// `status`.
fn abort(report: AbortReport, watch: &Watch, status: i32) -> ! {
    tracing::error!(reason = %report.reason, "aborting the official LoadGen");
    let (done, flushed) = mpsc::channel();
    // AbortTest may itself wait on the stuck test: it gets a bounded time.
    let _ = std::thread::Builder::new()
        .name("official-abort".into())
        .spawn(move || {
            mlperf_official_loadgen::abort_test();
            let _ = done.send(());
        });
    let _ = flushed.recv_timeout(FLUSH_GRACE);
    (watch.on_abort)(&report);
    mlperf_official_loadgen::exit_immediately(status)
}
