//! Server with several issue threads (`server_num_issue_query_threads`), as the official
//! registered issue threads: thread k issues queries k, k + T, k + 2T, … of the schedule.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use super::diagnostics::Diagnostic;
use super::issue::{
    issue, limit_reached, report_stop_of_thread, too_many_outstanding, wait_until, Issuer,
    SequenceState, SeriesContext, SeriesOutcome, StopReason,
};
use super::query_gen::QueryGenerator;
use super::schedule::Schedule;
use super::series::SeriesOpening;
use super::settings::TestMode;
use super::types::QuerySample;

/// Server with `server_num_issue_query_threads` > 0: that many issue threads, thread k issuing
/// queries k, k + T, k + 2T, … of the schedule, as the official registered issue threads do.
/// The schedule is generated up front here, since threads need queries out of order.
pub(crate) fn run_series_threaded(
    ctx: &SeriesContext<'_>,
    sequence: &mut SequenceState,
    generator: &mut QueryGenerator,
    mode: TestMode,
    threads: usize,
) -> SeriesOutcome {
    let settings = ctx.settings;
    let shared = ctx.shared;
    let opening = SeriesOpening::new(ctx, sequence, generator);
    let (completed_at_start, spq) = (opening.completed_at_start, opening.samples_per_query);
    let mut issuer = Issuer::new(ctx, sequence, mode);

    // Reserved whole (the engine checked it fits): grown by doubling, it could take twice.
    let expected = usize::try_from(generator.expected_queries()).unwrap_or(usize::MAX);
    let mut deltas = Vec::new();
    let mut samples: Vec<QuerySample> = Vec::new();
    let _ = deltas.try_reserve_exact(expected);
    let _ = samples.try_reserve_exact(expected.saturating_mul(spq));
    while let Some(delta) = generator.next_query(&mut samples) {
        let from = deltas.len() * spq;
        deltas.push(delta);
        if !issuer.ready_slots(&samples[from..]) {
            break;
        }
    }
    let query_count = deltas.len().min(samples.len() / spq.max(1));
    let scheduled: Vec<AtomicI64> = (0..query_count).map(|_| AtomicI64::new(i64::MIN)).collect();
    let issued_total = AtomicU64::new(0);
    let last_issued = AtomicI64::new(-1);
    let last_issued_ns = AtomicI64::new(0);
    let stops = std::sync::Mutex::new(Vec::new());
    let accuracy = mode == TestMode::AccuracyOnly;
    let coalesce = settings.requested.server_coalesce_queries;
    let power_begin = std::time::SystemTime::now();
    let start_ns = shared.clock.now_ns();
    opening.started(ctx, mode, start_ns);

    std::thread::scope(|scope| {
        for thread in 0..threads {
            let (deltas, samples, scheduled) = (&deltas, &samples, &scheduled);
            let (issued_total, last_issued, last_issued_ns, stops) =
                (&issued_total, &last_issued, &last_issued_ns, &stops);
            let spawned = std::thread::Builder::new()
                .name(format!("mlperf-issue-{thread}"))
                .spawn_scoped(scope, move || {
                    let max_for_thread = split_count(settings.max_query_count, threads, thread);
                    let mut batch: Vec<QuerySample> = Vec::new();
                    let mut issued = 0u64;
                    let mut stop = StopReason::GeneratedQueriesIssued;
                    let mut index = thread;
                    while index < query_count {
                        if ctx.abort.load(Ordering::Relaxed) {
                            stop = StopReason::Aborted;
                            break;
                        }
                        if let Some(message) = shared.failure() {
                            stop = StopReason::SutFailed(message);
                            break;
                        }
                        wait_until(ctx, start_ns + deltas[index]);
                        let now = shared.clock.now_ns();
                        batch.clear();
                        let first = index;
                        loop {
                            scheduled[index].store(start_ns + deltas[index], Ordering::Relaxed);
                            batch.extend_from_slice(&samples[index * spq..(index + 1) * spq]);
                            issued += 1;
                            let next = index + threads;
                            if !coalesce || next >= query_count || start_ns + deltas[next] > now {
                                break;
                            }
                            index = next;
                        }
                        if ctx.progress.is_some() {
                            let first_sample = batch.first().map_or(0, |s| s.id.0 - 1);
                            shared.recent_schedule.record(
                                first_sample,
                                batch.len() as u64,
                                start_ns + deltas[first],
                            );
                        }
                        let result = issue(ctx, &batch, thread);
                        let queries_now = ((index - first) / threads + 1) as u64;
                        let total =
                            issued_total.fetch_add(queries_now, Ordering::AcqRel) + queries_now;
                        if let Some(progress) = ctx.progress {
                            progress.issued_at_least(total, total * spq as u64);
                        }
                        if last_issued.fetch_max(index as i64, Ordering::AcqRel) < index as i64 {
                            last_issued_ns.store(now, Ordering::Relaxed);
                        }
                        if let Err(message) = result {
                            stop = StopReason::SutPanicked(message);
                            break;
                        }
                        index += threads;
                        if accuracy {
                            continue;
                        }
                        let duration = now - start_ns;
                        if let Some(reason) = too_many_outstanding(ctx, completed_at_start, total)
                            .or_else(|| limit_reached(settings, issued, max_for_thread, duration))
                        {
                            stop = reason;
                            break;
                        }
                    }
                    ctx.sut.issuer_idle();
                    report_stop_of_thread(shared, &stop, mode, false, thread as u64);
                    stops.lock().unwrap_or_else(|p| p.into_inner()).push(stop);
                });
            if let Err(error) = spawned {
                shared.diagnostics.push(Diagnostic::error(
                    "error_runtime",
                    format!("cannot start issue thread {thread}: {error}"),
                ));
            }
        }
    });

    let query_scheduled_ns: Schedule = scheduled.into_iter().map(AtomicI64::into_inner).collect();
    let queries_issued = issued_total.into_inner();
    let samples_issued = queries_issued * spq as u64;
    let stops = stops.into_inner().unwrap_or_else(|p| p.into_inner());
    // A thread that saw the SUT fail names the series' stop over one that merely ended.
    let stop = stops
        .iter()
        .find(|s| matches!(s, StopReason::SutFailed(_) | StopReason::SutPanicked(_)))
        .or_else(|| {
            stops
                .iter()
                .find(|s| **s != StopReason::GeneratedQueriesIssued)
        })
        .cloned()
        .unwrap_or(StopReason::GeneratedQueriesIssued);
    let (never_completed, stop) = opening.close(ctx, stop, samples_issued, mode);
    issuer.sequence.next_sample_id = generator.next_sample_id();
    issuer.sequence.next_query_id = opening.query_base + query_count as u64;

    SeriesOutcome {
        sample_base: opening.sample_base,
        query_base: opening.query_base,
        samples_issued,
        queries_issued,
        samples_per_query: spq,
        query_scheduled_ns,
        // Several issuers: the trace shows scheduled times only.
        query_issued_ns: Vec::new(),
        start_ns,
        power_begin,
        final_query_issued_ns: last_issued_ns.into_inner(),
        stop,
        ran_out_of_generated_queries: false,
        generated_query_count: query_count as u64,
        generated_query_duration_ns: generator.final_timestamp(),
        never_completed,
        count_estimated: false,
    }
}

/// Thread `thread` of `threads` gets ⌈count / threads⌉ or ⌊count / threads⌋, as upstream.
fn split_count(count: u64, threads: usize, thread: usize) -> u64 {
    let threads = threads as u64;
    count / threads + u64::from((thread as u64) < count % threads)
}
