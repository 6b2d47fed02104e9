//! The issue loop of one series of queries (spec §4.4): runs on the engine's dedicated thread,
//! waits with sleep-then-spin for Server's scheduled nanosecond, and stops exactly where the
//! official LoadGen stops.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use super::completion::{Completer, Shared, LOG};
use super::diagnostics::Diagnostic;
use super::effective::EffectiveSettings;
use super::progress::ProgressRecorder;
use super::query_gen::{CountLimit, QueryGenerator};
use super::rng::{generate_canonical, Mt19937};
use super::schedule::Schedule;
use super::series::SeriesOpening;
use super::settings::{TestMode, TestScenario};
use super::sut::SystemUnderTest;
use super::sut_calls::{SutCall, SutCalls};
use super::types::QuerySample;

/// Sequence ids and the fixed-seed engine that gives every generated sample its accuracy-log
/// value, shared by all series of a test (the official `SequenceGen`).
pub(crate) struct SequenceState {
    pub(crate) next_sample_id: u64,
    /// Query ids run on across series, as sample ids do.
    pub(crate) next_query_id: u64,
    accuracy_rng: Mt19937,
    /// How many samples' values the engine has produced.
    accuracy_position: u64,
}

impl SequenceState {
    pub(crate) fn new() -> Self {
        SequenceState {
            next_sample_id: 0,
            next_query_id: 0,
            accuracy_rng: Mt19937::new(u64::from(Mt19937::DEFAULT_SEED)),
            accuracy_position: 0,
        }
    }

    /// The accuracy-log value of sample `id`. Ids are asked for in increasing order; values of
    /// skipped ids are drawn and dropped so the stream stays aligned with the official one.
    fn accuracy_value(&mut self, id: u64) -> f64 {
        while self.accuracy_position < id {
            generate_canonical(&mut self.accuracy_rng);
            self.accuracy_position += 1;
        }
        self.accuracy_position += 1;
        generate_canonical(&mut self.accuracy_rng)
    }
}

/// Why issuing ended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum StopReason {
    /// Every generated query was issued.
    GeneratedQueriesIssued,
    MinimumsMet,
    TooManyOutstanding {
        issued: u64,
        outstanding: u64,
    },
    MaxQueryCount(u64),
    MaxDuration(i64),
    SutPanicked(String),
    /// The SUT reported a failure through `Completer::fail`.
    SutFailed(String),
    /// A SingleStream/MultiStream query never completed, so the next could not be issued.
    Stalled,
    Aborted,
    ArenaFull,
}

/// What one series did, in raw times (ns since the test clock origin).
pub(crate) struct SeriesOutcome {
    pub(crate) sample_base: u64,
    /// The id of the series' first query.
    pub(crate) query_base: u64,
    pub(crate) samples_issued: u64,
    pub(crate) queries_issued: u64,
    pub(crate) samples_per_query: usize,
    pub(crate) query_scheduled_ns: Schedule,
    /// Each issued query's issue time (only when tracing).
    pub(crate) query_issued_ns: Vec<i64>,
    pub(crate) start_ns: i64,
    /// Wall clock when issuing began (`power_begin`).
    pub(crate) power_begin: SystemTime,
    pub(crate) final_query_issued_ns: i64,
    pub(crate) stop: StopReason,
    pub(crate) ran_out_of_generated_queries: bool,
    pub(crate) generated_query_count: u64,
    pub(crate) generated_query_duration_ns: i64,
    /// Samples still not completed when the drain gave up.
    pub(crate) never_completed: u64,
    /// The generated count past the issued queries is estimated (see `CountLimit`).
    pub(crate) count_estimated: bool,
}

#[derive(Clone, Copy)]
pub(crate) struct SeriesContext<'a> {
    pub(crate) sut: &'a dyn SystemUnderTest,
    /// Marks the calls into the SUT, for the stall watch.
    pub(crate) sut_calls: &'a SutCalls,
    pub(crate) shared: &'a Shared,
    pub(crate) completer: &'a Completer,
    pub(crate) settings: &'a EffectiveSettings,
    pub(crate) drain_timeout: Duration,
    /// LogSettings::issue_spin.
    pub(crate) issue_spin_ns: i64,
    pub(crate) abort: &'a std::sync::atomic::AtomicBool,
    /// Keep what the trace file and the series observer read: each query's issue time and
    /// each sample's index.
    pub(crate) trace: bool,
    pub(crate) progress: Option<&'a ProgressRecorder>,
}

/// Per-series state of the issue loop.
pub(super) struct Issuer<'a, 'c> {
    ctx: &'c SeriesContext<'a>,
    pub(super) sequence: &'c mut SequenceState,
    log_all: bool,
    log_probability: f64,
    log_offset: f64,
    track_index: bool,
}

impl<'a, 'c> Issuer<'a, 'c> {
    pub(super) fn new(
        ctx: &'c SeriesContext<'a>,
        sequence: &'c mut SequenceState,
        mode: TestMode,
    ) -> Self {
        let settings = ctx.settings;
        let accuracy = mode == TestMode::AccuracyOnly;
        let mut offset_rng = Mt19937::new(settings.accuracy_log_rng_seed);
        let log_offset = generate_canonical(&mut offset_rng);
        let log_probability = settings.accuracy_log_probability_for_series();
        Issuer {
            ctx,
            sequence,
            log_all: accuracy,
            log_probability: if accuracy { 0.0 } else { log_probability },
            log_offset,
            track_index: accuracy || log_probability > 0.0 || ctx.trace,
        }
    }

    /// Generates the next query into `out` and readies its slots, so that nothing but the
    /// issue itself happens once its time comes. `None` when generation is complete.
    fn prepare(
        &mut self,
        generator: &mut QueryGenerator,
        out: &mut Vec<QuerySample>,
    ) -> Option<Result<i64, StopReason>> {
        out.clear();
        let delta = generator.next_query(out)?;
        if !self.ready_slots(out) {
            return Some(Err(StopReason::ArenaFull));
        }
        let sut = self.ctx.sut;
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| sut.prepare_query(out))) {
            return Some(Err(StopReason::SutPanicked(panic_message(&panic))));
        }
        Some(Ok(delta))
    }

    /// Readies the slots of freshly generated samples (the generator numbered them
    /// consecutively) and publishes their ids to completers.
    pub(super) fn ready_slots(&mut self, samples: &[QuerySample]) -> bool {
        let shared = self.ctx.shared;
        let Some(last) = samples.last() else {
            return true;
        };
        let end = last.id.0;
        if !shared.slots.status.ensure(end)
            || (self.track_index && !shared.slots.qsl_index.ensure(end))
            || (shared.use_tokens
                && !(shared.slots.first_token.ensure(end) && shared.slots.n_tokens.ensure(end)))
        {
            return false;
        }
        if samples.len() >= PREFAULT_MIN_SAMPLES {
            // A large (Offline) query: its slots' first writes would otherwise page-fault in
            // the completions, on the clock.
            shared.slots.status.prefault(samples[0].id.0 - 1, end);
        }
        if self.log_all || self.log_probability > 0.0 || self.track_index {
            for sample in samples {
                let seq = sample.id.0 - 1;
                let logged = self.log_all
                    || (self.log_probability > 0.0 && {
                        let value = self.sequence.accuracy_value(seq);
                        let shifted = if value + self.log_offset < 1.0 {
                            value + self.log_offset
                        } else {
                            value + self.log_offset - 1.0
                        };
                        shifted <= self.log_probability
                    });
                // Fresh slots are zero: only the accuracy-log flag needs writing.
                if logged {
                    if let Some(slot) = shared.slots.status.get(seq) {
                        slot.store(LOG, Ordering::Relaxed);
                    }
                }
                if self.track_index {
                    if let Some(slot) = shared.slots.qsl_index.get(seq) {
                        slot.store(sample.index as u64, Ordering::Relaxed);
                    }
                }
            }
        }
        // Publishing the new end makes these ids valid for completers.
        shared.issued_end.store(end, Ordering::Release);
        true
    }
}

/// Queries of at least this many samples have their status pages faulted in ahead.
const PREFAULT_MIN_SAMPLES: usize = 4096;

/// Hands one query to the SUT from issuing thread `thread`; a panic in the SUT becomes an
/// error message.
pub(super) fn issue(
    ctx: &SeriesContext<'_>,
    samples: &[QuerySample],
    thread: usize,
) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| {
        ctx.sut_calls.within(thread, SutCall::IssueQuery, || {
            ctx.sut.issue_query(samples, ctx.completer)
        })
    }))
    .map_err(|panic| panic_message(&panic))
}

pub(crate) fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_string()
    }
}

/// Issues one series: every query of `generator` (or fewer, when a stop rule fires), then
/// flushes and drains.
pub(crate) fn run_series(
    ctx: &SeriesContext<'_>,
    sequence: &mut SequenceState,
    generator: &mut QueryGenerator,
    mode: TestMode,
) -> SeriesOutcome {
    let settings = ctx.settings;
    let shared = ctx.shared;
    let scenario = settings.scenario;
    let accuracy = mode == TestMode::AccuracyOnly;
    let opening = SeriesOpening::new(ctx, sequence, generator);
    let (sample_base, completed_at_start, spq) = (
        opening.sample_base,
        opening.completed_at_start,
        opening.samples_per_query,
    );
    let mut issuer = Issuer::new(ctx, sequence, mode);
    // Reserved address space costs nothing until touched; growing by copying mid-run would
    // stall the issue loop.
    let expected = generator.expected_queries().min(1 << 27) as usize;
    let mut query_scheduled_ns = Schedule::reserving(expected);
    let mut query_issued_ns: Vec<i64> = Vec::new();
    if !shared
        .slots
        .status
        .ensure(sample_base + (expected * spq) as u64)
    {
        shared.slots.status.ensure(sample_base);
    }

    let mut current: Vec<QuerySample> = Vec::with_capacity(spq);
    let mut next: Vec<QuerySample> = Vec::with_capacity(spq);
    let mut queries_issued: u64 = 0;
    let mut samples_issued: u64 = 0;
    let mut final_query_issued_ns = 0;
    let mut ran_out = scenario != TestScenario::Server;
    let mut stop = StopReason::GeneratedQueriesIssued;
    let target_duration_ns = settings.target_duration_ms as i64 * 1_000_000;
    let coalesce = scenario == TestScenario::Server && settings.requested.server_coalesce_queries;
    let wait_for_previous = matches!(
        scenario,
        TestScenario::SingleStream | TestScenario::MultiStream
    );

    // The official LoadGen generates every query before its clock starts; here the next query
    // (and, when coalescing, the one after) is always ready before its wait begins, so
    // generation stays outside the timed windows.
    let mut pending = issuer.prepare(generator, &mut current);
    let mut lookahead = None;
    let power_begin = SystemTime::now();
    let start_ns = shared.clock.now_ns();
    opening.started(ctx, mode, start_ns);
    loop {
        let delta = match pending.take() {
            None => break,
            Some(Err(reason)) => {
                stop = reason;
                ran_out = false;
                break;
            }
            Some(Ok(delta)) => delta,
        };
        if ctx.abort.load(Ordering::Relaxed) {
            stop = StopReason::Aborted;
            ran_out = false;
            break;
        }
        if let Some(message) = shared.failure() {
            stop = StopReason::SutFailed(message);
            ran_out = false;
            break;
        }
        if coalesce && lookahead.is_none() {
            lookahead = issuer.prepare(generator, &mut next);
        }
        if wait_for_previous
            && queries_issued > 0
            && !wait_for_completed(ctx, completed_at_start + samples_issued)
        {
            stop = match shared.failure() {
                Some(message) => StopReason::SutFailed(message),
                None => StopReason::Stalled,
            };
            ran_out = false;
            break;
        }
        let now = match scenario {
            TestScenario::Server => {
                let scheduled = start_ns + delta;
                wait_until(ctx, scheduled);
                query_scheduled_ns.push(scheduled);
                shared.clock.now_ns()
            }
            TestScenario::Offline => {
                query_scheduled_ns.push(start_ns);
                shared.clock.now_ns()
            }
            TestScenario::SingleStream | TestScenario::MultiStream => {
                let now = shared.clock.now_ns();
                query_scheduled_ns.push(now);
                now
            }
        };
        let mut issued_now = 1;
        // Past-due queries ride along in the same call, each keeping its own schedule.
        while let Some(Ok(offset)) = lookahead {
            if start_ns + offset > now {
                break;
            }
            query_scheduled_ns.push(start_ns + offset);
            current.append(&mut next);
            issued_now += 1;
            lookahead = issuer.prepare(generator, &mut next);
        }
        final_query_issued_ns = now;
        if ctx.trace {
            query_issued_ns.resize(query_scheduled_ns.len(), now);
        }
        if ctx.progress.is_some() {
            let scheduled = query_scheduled_ns.last().unwrap_or(now);
            let first = current.first().map_or(0, |s| s.id.0 - 1);
            shared
                .recent_schedule
                .record(first, current.len() as u64, scheduled);
        }
        let result = issue(ctx, &current, 0);
        queries_issued += issued_now;
        samples_issued += current.len() as u64;
        if let Some(progress) = ctx.progress {
            progress.issued(queries_issued, samples_issued);
        }
        // Ready the next query while the SUT works on this one.
        if let Some(prepared) = lookahead.take() {
            std::mem::swap(&mut current, &mut next);
            pending = Some(prepared);
        } else {
            pending = issuer.prepare(generator, &mut current);
        }
        if let Err(message) = result {
            stop = StopReason::SutPanicked(message);
            ran_out = false;
            break;
        }
        if accuracy {
            continue;
        }

        let duration = now - start_ns;
        if scenario == TestScenario::Server {
            if let Some(reason) = too_many_outstanding(ctx, completed_at_start, queries_issued) {
                stop = reason;
                break;
            }
        } else if queries_issued >= settings.min_query_count && duration >= target_duration_ns {
            ran_out = false;
            stop = StopReason::MinimumsMet;
            break;
        }
        if let Some(reason) =
            limit_reached(settings, queries_issued, settings.max_query_count, duration)
        {
            ran_out = false;
            stop = reason;
            break;
        }
    }

    // A huge Offline query is not needed past its issue.
    drop((current, next));
    report_stop(shared, &stop, mode, ran_out);
    let (never_completed, stop) = opening.close(ctx, stop, samples_issued, mode);

    // The official code generates every query up front, so its counts and sequence ids cover
    // queries that were never issued. Finish the count the same way.
    let issued_from_generator = generator.generated_queries();
    let limit = CountLimit::after_issuing(ctx.abort, settings.max_duration_ms);
    let remaining = generator.count_remaining(&limit);
    let duration_ns = remaining.final_timestamp;
    let generated_query_count = issued_from_generator + remaining.queries;
    issuer.sequence.next_sample_id = generator.next_sample_id();
    issuer.sequence.next_query_id = opening.query_base + generated_query_count;

    SeriesOutcome {
        sample_base,
        query_base: opening.query_base,
        samples_issued,
        queries_issued,
        samples_per_query: spq,
        query_scheduled_ns,
        query_issued_ns,
        start_ns,
        power_begin,
        final_query_issued_ns,
        stop,
        ran_out_of_generated_queries: ran_out,
        generated_query_count,
        generated_query_duration_ns: duration_ns,
        never_completed,
        count_estimated: remaining.estimated,
    }
}

/// Server's `max_async_queries`: more queries outstanding than allowed ends issuing.
pub(super) fn too_many_outstanding(
    ctx: &SeriesContext<'_>,
    completed_at_start: u64,
    issued: u64,
) -> Option<StopReason> {
    let max = ctx.settings.max_async_queries;
    if max == 0 {
        return None;
    }
    let completed = ctx.shared.completed.load(Ordering::Acquire) - completed_at_start;
    let outstanding = issued.saturating_sub(completed);
    (outstanding > max).then_some(StopReason::TooManyOutstanding {
        issued,
        outstanding,
    })
}

/// `max_query_count` (split per issue thread) and `max_duration`, checked after each issue.
pub(super) fn limit_reached(
    settings: &EffectiveSettings,
    issued: u64,
    max_queries: u64,
    duration_ns: i64,
) -> Option<StopReason> {
    let max_duration_ns = settings.max_duration_ms as i64 * 1_000_000;
    if settings.max_query_count != 0 && issued >= max_queries {
        Some(StopReason::MaxQueryCount(issued))
    } else if max_duration_ns != 0 && duration_ns > max_duration_ns {
        Some(StopReason::MaxDuration(duration_ns))
    } else {
        None
    }
}

/// The warning of a series whose schedule was too long to count in time.
pub(crate) fn estimated_count(queries: u64) -> Diagnostic {
    Diagnostic::warning(
        "warning_generic_message",
        format!(
            "The schedule was too long to count within max_duration_ms: its generated query \
             count ({queries}) is estimated from the mean interval."
        ),
    )
}

pub(super) fn report_stop(shared: &Shared, stop: &StopReason, mode: TestMode, ran_out: bool) {
    report_stop_of_thread(shared, stop, mode, ran_out, 0);
}

pub(super) fn report_stop_of_thread(
    shared: &Shared,
    stop: &StopReason,
    mode: TestMode,
    ran_out: bool,
    thread: u64,
) {
    let diagnostic = match stop {
        StopReason::MinimumsMet => Some(Diagnostic::info(
            "generic_message",
            "Ending naturally: Minimum query count and test duration met.",
        )),
        StopReason::TooManyOutstanding {
            issued,
            outstanding,
        } => Some(Diagnostic::error(
            "error_runtime",
            format!(
                "IssueQueryThread {thread} Ending early: Too many outstanding queries. issued {issued} outstanding {outstanding}"
            ),
        )),
        StopReason::MaxQueryCount(count) => Some(Diagnostic::error(
            "error_runtime",
            format!("IssueQueryThread {thread} Ending early: Max query count reached. query_count {count}"),
        )),
        StopReason::MaxDuration(duration) => Some(Diagnostic::error(
            "error_runtime",
            format!("IssueQueryThread {thread} Ending early: Max test duration reached. duration_ns {duration}"),
        )),
        StopReason::SutPanicked(message) => Some(Diagnostic::error(
            "error_runtime",
            format!("The SUT panicked in issue_query: {message}"),
        )),
        StopReason::SutFailed(message) => Some(Diagnostic::error(
            "error_runtime",
            format!("The SUT failed: {message}"),
        )),
        StopReason::Aborted => Some(Diagnostic::error(
            "error_runtime",
            match crate::abort::abort_reason() {
                Some(reason) => format!("Test aborted: {reason}."),
                None => "Test aborted.".to_string(),
            },
        )),
        StopReason::Stalled => Some(Diagnostic::error(
            "error_runtime",
            "Ending early: the previous query never completed.",
        )),
        StopReason::ArenaFull => Some(Diagnostic::error(
            "error_runtime",
            "Ending early: more than 2^32 samples in one test.",
        )),
        StopReason::GeneratedQueriesIssued => None,
    };
    if let Some(diagnostic) = diagnostic {
        shared.diagnostics.push(diagnostic);
    }
    if mode == TestMode::PerformanceOnly && ran_out {
        shared.diagnostics.push(Diagnostic::error(
            "error_runtime",
            "Ending early: Ran out of generated queries to issue before the minimum query count and test duration were reached. Please update the relevant expected latency or target qps in the TestSettings so they are more accurate.",
        ));
    }
}

/// Waits for `target` completed samples (true), telling the SUT first if there is anything
/// to wait for.
pub(super) fn wait_for_completed(ctx: &SeriesContext<'_>, target: u64) -> bool {
    if ctx.shared.completed.load(Ordering::Acquire) < target {
        ctx.sut.issuer_idle();
    }
    ctx.shared
        .wait_for_completed(target, ctx.drain_timeout, ctx.abort)
}

/// Sleeps until `LogSettings::issue_spin` before `scheduled_ns`, then busy-waits to it: a
/// sleep wakes tens of µs late. The SUT hears of the wait first, if there is one.
pub(super) fn wait_until(ctx: &SeriesContext<'_>, scheduled_ns: i64) {
    let (shared, spin_ns) = (ctx.shared, ctx.issue_spin_ns);
    let now = shared.clock.now_ns();
    if now < scheduled_ns {
        ctx.sut
            .issuer_idle_until(shared.clock.instant_at(scheduled_ns));
    }
    if scheduled_ns - now > spin_ns {
        let wake = shared.clock.instant_at(scheduled_ns - spin_ns);
        let remaining = wake.saturating_duration_since(std::time::Instant::now());
        std::thread::sleep(remaining);
    }
    while shared.clock.now_ns() < scheduled_ns {
        std::hint::spin_loop();
    }
}
