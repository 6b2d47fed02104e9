//! Turning a performance series' completion slots into latencies, per the official
//! definitions (sample latency from the scheduled time, MultiStream query latency, TTFT,
//! TPOT, token counts).

use std::sync::atomic::Ordering;

use super::completion::{Shared, SlotArena, DONE, TIME_MASK};
use super::effective::EffectiveSettings;
use super::issue::{SeriesOutcome, StopReason};
use super::ranked::{LatencyCollector, NarrowExtremes, RankedLatencies};
use super::results::PerformanceResult;
use super::schedule::{Decoder, Schedule};
use super::settings::TestScenario;
use super::slot_release::{releasing_slots, ReadUpTo};

/// The latest completion of the series (its start if nothing completed).
pub(super) fn last_completion_ns(shared: &Shared, outcome: &SeriesOutcome) -> i64 {
    let first = outcome.sample_base;
    let slots = shared
        .slots
        .status
        .chunks(first, first + outcome.samples_issued);
    slots
        .flatten()
        .map(|slot| slot.load(Ordering::Acquire))
        .filter(|status| status & DONE != 0)
        .fold(outcome.start_ns, |last, status| {
            last.max((status & TIME_MASK) as i64)
        })
}

/// Turns the slots of a performance series into latencies, per the official definitions.
pub(super) fn collect_performance(
    shared: &Shared,
    settings: &EffectiveSettings,
    outcome: &mut SeriesOutcome,
) -> PerformanceResult {
    let mut result = PerformanceResult {
        queries_issued: outcome.queries_issued,
        never_completed: outcome.never_completed,
        refused_completions: {
            let anomalies = shared.anomalies();
            anomalies.duplicate + anomalies.unknown + anomalies.late
        },
        sut_failure: match &outcome.stop {
            StopReason::SutPanicked(message) | StopReason::SutFailed(message) => {
                Some(message.clone())
            }
            _ => None,
        },
        aborted: outcome.stop == StopReason::Aborted,
        ..PerformanceResult::default()
    };
    let schedule = std::mem::take(&mut outcome.query_scheduled_ns);
    let mut extent = Extent {
        max_latency: 0,
        final_query_done: outcome.start_ns,
        last_completion: outcome.start_ns,
        last_scheduled: None,
    };
    let one_sample_per_query = outcome.samples_per_query <= 1
        && !settings.use_token_latencies
        && settings.scenario != TestScenario::MultiStream;
    if one_sample_per_query {
        result.sample_latencies = one_per_query(shared, outcome, schedule, &mut extent);
    } else {
        collect_per_sample(
            shared,
            settings,
            outcome,
            &schedule,
            &mut extent,
            &mut result,
        );
    }
    let seconds = |ns: i64| ns as f64 / 1e9;
    result.max_latency_s = seconds(extent.max_latency);
    if let Some(last_scheduled) = extent.last_scheduled {
        result.final_query_scheduled_time_s = seconds(last_scheduled - outcome.start_ns);
    }
    result.final_query_issued_time_s = seconds(outcome.final_query_issued_ns - outcome.start_ns);
    result.final_query_all_samples_done_time_s =
        seconds(extent.final_query_done - outcome.start_ns);
    result.last_completion_ns = extent.last_completion;
    result
}

/// What the series' timing figures are made of.
struct Extent {
    max_latency: i64,
    /// The completion of the last query (in issue order) whose samples all completed.
    final_query_done: i64,
    /// The latest completion of any sample (the series' start if none).
    last_completion: i64,
    last_scheduled: Option<i64>,
}

/// SingleStream and Server without tokens: one sample per query, its slot read in a chunked
/// scan, and each latency that fits in 4 bytes written over a schedule entry already read
/// (`narrow.count <= query`), so the end of a long run allocates nothing (the rare longer
/// ones are kept apart). Their min, max and sum are summed on the way.
fn one_per_query(
    shared: &Shared,
    outcome: &SeriesOutcome,
    schedule: Schedule,
    extent: &mut Extent,
) -> RankedLatencies {
    let first = outcome.sample_base;
    let queries = schedule.len() as u64;
    let (mut deltas, escaped) = schedule.into_parts();
    let arena = &shared.slots.status;
    // A long series' slots are given back as the scan passes them, on the other core: the
    // test is over, and freeing 800 MB at 10^8 queries would otherwise follow the scan.
    let scan = releasing_slots(arena, first, first + queries, |read| {
        let start = ScanState {
            decoder: Decoder::new(&escaped),
            narrow: NarrowExtremes::NONE,
            wide: LatencyCollector::new(),
            last_scheduled: i64::MIN,
            final_query_done: extent.final_query_done,
            last_completion: extent.last_completion,
        };
        scan_slots(arena, first, &mut deltas, start, read)
    });
    let latencies = scan.wide.written_over(deltas, scan.narrow);
    if let Some((_, max, _)) = latencies.min_max_sum() {
        extent.max_latency = extent.max_latency.max(max);
    }
    if scan.last_scheduled != i64::MIN {
        extent.last_scheduled = Some(scan.last_scheduled);
    }
    extent.final_query_done = scan.final_query_done;
    extent.last_completion = scan.last_completion;
    latencies
}

/// What [`scan_slots`] carries from slot to slot.
struct ScanState<'a> {
    decoder: Decoder<'a>,
    narrow: NarrowExtremes,
    wide: LatencyCollector,
    /// `i64::MIN` until a query is read.
    last_scheduled: i64,
    final_query_done: i64,
    last_completion: i64,
}

/// The scan of [`one_per_query`]: a function of its own, so that its state stays in
/// registers through 10^8 slots.
fn scan_slots<'a>(
    arena: &SlotArena,
    first: u64,
    deltas: &mut [u32],
    state: ScanState<'a>,
    read: &ReadUpTo,
) -> ScanState<'a> {
    let ScanState {
        mut decoder,
        mut narrow,
        mut wide,
        mut last_scheduled,
        mut final_query_done,
        mut last_completion,
    } = state;
    let mut query = 0;
    for slots in arena.chunks(first, first + deltas.len() as u64) {
        for slot in slots {
            let scheduled = decoder.decode(deltas[query]);
            query += 1;
            if scheduled == i64::MIN {
                // Generated for another issue thread that stopped before issuing it.
                continue;
            }
            last_scheduled = scheduled;
            let status = slot.load(Ordering::Acquire);
            if status & DONE != 0 {
                let done = (status & TIME_MASK) as i64;
                let latency = done - scheduled;
                match u32::try_from(latency) {
                    Ok(latency) => {
                        deltas[narrow.count] = latency;
                        narrow.add(latency);
                    }
                    Err(_) => wide.push(latency),
                }
                final_query_done = done;
                last_completion = last_completion.max(done);
            }
        }
        read.set(first + query as u64);
    }
    ScanState {
        decoder,
        narrow,
        wide,
        last_scheduled,
        final_query_done,
        last_completion,
    }
}

/// Every other series: sample by sample, with MultiStream's query latencies and the token
/// figures.
fn collect_per_sample(
    shared: &Shared,
    settings: &EffectiveSettings,
    outcome: &SeriesOutcome,
    schedule: &Schedule,
    extent: &mut Extent,
    result: &mut PerformanceResult,
) {
    let spq = outcome.samples_per_query.max(1) as u64;
    let count = outcome.samples_issued as usize;
    let tokens = settings.use_token_latencies;
    let first_tokens = tokens && shared.needs_first_token;
    let multi_stream = settings.scenario == TestScenario::MultiStream;
    let mut sample_latencies = LatencyCollector::reserving(count);
    let mut query_latencies = LatencyCollector::new();
    let per_sample_tokens = if first_tokens { count } else { 0 };
    let mut first_token_latencies = LatencyCollector::reserving(per_sample_tokens);
    let mut time_per_output_token = LatencyCollector::reserving(per_sample_tokens);
    let series_end = outcome.sample_base + schedule.len() as u64 * spq;
    for (query, scheduled) in schedule.iter().enumerate() {
        if scheduled == i64::MIN {
            // Generated for another issue thread that stopped before issuing it.
            continue;
        }
        extent.last_scheduled = Some(scheduled);
        let first = outcome.sample_base + query as u64 * spq;
        let end = (first + spq).min(series_end);
        let mut query_done = Some(i64::MIN);
        for seq in first..end {
            let status = shared
                .slots
                .status
                .get(seq)
                .map_or(0, |s| s.load(Ordering::Acquire));
            if status & DONE == 0 {
                query_done = None;
                continue;
            }
            let done = (status & TIME_MASK) as i64;
            let latency = done - scheduled;
            extent.last_completion = extent.last_completion.max(done);
            sample_latencies.push(latency);
            extent.max_latency = extent.max_latency.max(latency);
            query_done = query_done.map(|q| q.max(done));
            if tokens {
                let n = shared
                    .slots
                    .n_tokens
                    .get(seq)
                    .map_or(0, |n| n.load(Ordering::Relaxed) as i64);
                let n = valid_tokens(n);
                result.token_count += n;
                if first_tokens {
                    let first_token = shared
                        .slots
                        .first_token
                        .get(seq)
                        .map_or(0, |t| t.load(Ordering::Acquire));
                    let ttft = if first_token == 0 {
                        latency
                    } else {
                        first_token as i64 - scheduled
                    };
                    first_token_latencies.push(ttft);
                    // Rejected counts became 0, so the divisor is -1 there, as upstream.
                    time_per_output_token.push((latency - ttft) / (n - 1));
                }
            }
        }
        if let Some(done) = query_done {
            if multi_stream {
                query_latencies.push(done - scheduled);
            }
            extent.final_query_done = done;
        }
    }
    result.sample_latencies = sample_latencies.finish();
    result.query_latencies = query_latencies.finish();
    result.first_token_latencies = first_token_latencies.finish();
    result.time_per_output_token = time_per_output_token.finish();
}

/// The official n_tokens rule: 0, negative and 1 count as 0 tokens (the completion path has
/// already counted them as errors).
fn valid_tokens(n_tokens: i64) -> i64 {
    if n_tokens > 1 {
        n_tokens
    } else {
        0
    }
}
