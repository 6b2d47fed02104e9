//! What every series does around its issue loop, whichever loop issues it (one thread, or
//! Server's several): the opening (ids, the completion count to wait from, the progress
//! told) and the closing (flush, drain, and the SUT's failure while draining).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;

use super::completion::FAILED_SUT_DRAIN;
use super::diagnostics::Diagnostic;
use super::effective::EffectiveSettings;
use super::issue::{
    panic_message, report_stop, wait_for_completed, SequenceState, SeriesContext, StopReason,
};
use super::progress::SeriesGoal;
use super::query_gen::QueryGenerator;
use super::settings::{TestMode, TestScenario};
use super::sut_calls::SutCall;

/// Where a series begins: its first sample and query ids, and the completions before it.
pub(super) struct SeriesOpening {
    pub(super) sample_base: u64,
    pub(super) query_base: u64,
    pub(super) completed_at_start: u64,
    pub(super) samples_per_query: usize,
}

impl SeriesOpening {
    pub(super) fn new(
        ctx: &SeriesContext<'_>,
        sequence: &SequenceState,
        generator: &QueryGenerator,
    ) -> SeriesOpening {
        let sample_base = sequence.next_sample_id;
        ctx.shared
            .series_start
            .store(sample_base, Ordering::Release);
        SeriesOpening {
            sample_base,
            query_base: sequence.next_query_id,
            completed_at_start: ctx.shared.completed.load(Ordering::Acquire),
            samples_per_query: generator.samples_per_query(),
        }
    }

    /// The series' clock started at `start_ns`: a watching progress handle hears of it.
    pub(super) fn started(&self, ctx: &SeriesContext<'_>, mode: TestMode, start_ns: i64) {
        let Some(progress) = ctx.progress else {
            return;
        };
        let settings = ctx.settings;
        progress.series_started(
            mode == TestMode::AccuracyOnly,
            start_ns,
            self.sample_base,
            self.completed_at_start,
            SeriesGoal {
                min_duration_ms: settings.min_duration_ms,
                min_queries: settings.min_query_count,
                expected_queries: expected_query_count(settings),
            },
        );
    }

    /// Issuing ended with `stop` after `samples_issued`: flushes the SUT and waits for them
    /// (briefly when the SUT failed or panicked: it may never answer what it holds). Returns
    /// how many never completed, and the stop, which a failure while draining overrides.
    pub(super) fn close(
        &self,
        ctx: &SeriesContext<'_>,
        stop: StopReason,
        samples_issued: u64,
        mode: TestMode,
    ) -> (u64, StopReason) {
        if let Some(progress) = ctx.progress {
            progress.series_ended();
        }
        let target = self.completed_at_start + samples_issued;
        // A reported failure already shortens the drain (`Shared::drain_patience`); a panic
        // in issue_query is no report, so it is shortened here.
        let never_completed = match stop {
            StopReason::SutPanicked(_) => {
                let brief = SeriesContext {
                    drain_timeout: ctx.drain_timeout.min(FAILED_SUT_DRAIN),
                    ..*ctx
                };
                flush_and_drain(&brief, target)
            }
            _ => flush_and_drain(ctx, target),
        };
        (never_completed, stop_after_drain(ctx, stop, mode))
    }
}

/// A failure the SUT reported, or an abort, after issuing ended (while its samples drained:
/// in Offline, whose one query is issued at once, that is most of the run) still ends the
/// series as failed or aborted, and says so.
fn stop_after_drain(ctx: &SeriesContext<'_>, stop: StopReason, mode: TestMode) -> StopReason {
    if matches!(
        stop,
        StopReason::SutFailed(_) | StopReason::SutPanicked(_) | StopReason::Aborted
    ) {
        return stop;
    }
    let after = match ctx.shared.failure() {
        Some(message) => StopReason::SutFailed(message),
        None if ctx.abort.load(Ordering::Relaxed) => StopReason::Aborted,
        None => return stop,
    };
    report_stop(ctx.shared, &after, mode, false);
    after
}

/// What a test that gives up on samples says of them: it ends without them.
const LEFT_WITH_SUT: &str =
    "the SUT keeps them, and its threads are neither waited for nor stopped";

/// Flushes the SUT and waits for the series' samples; returns how many never completed.
fn flush_and_drain(ctx: &SeriesContext<'_>, target: u64) -> u64 {
    let shared = ctx.shared;
    // Issuing has ended.
    ctx.sut.issuer_idle();
    let flush = || {
        ctx.sut_calls
            .within(0, SutCall::FlushQueries, || ctx.sut.flush_queries())
    };
    if let Err(panic) = catch_unwind(AssertUnwindSafe(flush)) {
        shared.diagnostics.push(Diagnostic::error(
            "error_runtime",
            format!(
                "The SUT panicked in flush_queries: {}",
                panic_message(&panic)
            ),
        ));
    }
    if wait_for_completed(ctx, target) {
        return 0;
    }
    let never_completed = target.saturating_sub(shared.completed.load(Ordering::Acquire));
    if never_completed > 0 {
        // The wait is cut short once the SUT has reported a failure, and skipped once it is
        // gone.
        let patience = shared.drain_patience(ctx.drain_timeout, ctx.abort.load(Ordering::Relaxed));
        let why = match shared.failure() {
            Some(_) if shared.sut_lost() => "the SUT is gone".to_string(),
            Some(_) => format!("gave up after {patience:?} without a completion"),
            None if ctx.abort.load(Ordering::Relaxed) => format!(
                "the test was aborted, and its drain gave up {patience:?} after the abort (or the last completion); {LEFT_WITH_SUT}"
            ),
            None => format!(
                "gave up after {patience:?} without a completion (LogSettings::drain_timeout); {LEFT_WITH_SUT}"
            ),
        };
        shared.diagnostics.push(Diagnostic::error(
            "error_runtime",
            format!("{never_completed} samples never completed: {why}"),
        ));
    }
    never_completed
}

/// What a progress bar counts towards: the minimum query count, or the minimum duration at
/// the target rate when that is more (Offline: its one query).
fn expected_query_count(settings: &EffectiveSettings) -> u64 {
    if settings.scenario == TestScenario::Offline {
        return settings.min_query_count;
    }
    let by_time = settings.min_duration_ms as f64 / 1e3 * settings.target_qps;
    let by_time = if by_time.is_finite() && by_time > 0.0 {
        by_time.ceil().min(u64::MAX as f64) as u64
    } else {
        0
    };
    settings.min_query_count.max(by_time)
}
