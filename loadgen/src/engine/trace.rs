//! The events of `mlperf_log_trace.json` (see `logging::trace`): a span per sample from its
//! scheduled time to its completion, read from the completion slots after a series.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use crate::completion::{Shared, DONE, TIME_MASK};
use crate::issue::SeriesOutcome;

/// Events are sent to the writer in pieces of about this many bytes.
const CHUNK: usize = 1 << 20;

fn micros(ns: i64) -> String {
    format!("{}.{:03}", ns / 1000, (ns % 1000).abs())
}

/// The events of one finished series, in chunks, handed to `send`.
pub(crate) fn series_events(
    shared: &Shared,
    outcome: &SeriesOutcome,
    name: &str,
    pid: u32,
    mut send: impl FnMut(String),
) {
    let mut out = String::with_capacity(CHUNK + 1024);
    let end = outcome.final_query_issued_ns.max(outcome.start_ns);
    let _ = writeln!(
        out,
        "{{\"name\":\"{name}\",\"ph\":\"X\",\"pid\":{pid},\"tid\":0,\"ts\":{},\"dur\":{},\"args\":{{\"queries\":{}}}}},",
        micros(outcome.start_ns),
        micros(end - outcome.start_ns),
        outcome.queries_issued
    );
    let spq = outcome.samples_per_query.max(1) as u64;
    let series_end = outcome.sample_base + outcome.query_scheduled_ns.len() as u64 * spq;
    for (query, scheduled) in outcome.query_scheduled_ns.iter().enumerate() {
        if scheduled == i64::MIN {
            continue;
        }
        let issued = outcome
            .query_issued_ns
            .get(query)
            .copied()
            .unwrap_or(scheduled);
        let first = outcome.sample_base + query as u64 * spq;
        let query_seq = outcome.query_base + query as u64;
        for seq in first..(first + spq).min(series_end) {
            let status = shared
                .slots
                .status
                .get(seq)
                .map_or(0, |s| s.load(Ordering::Acquire));
            let index = shared
                .slots
                .qsl_index
                .get(seq)
                .map_or(0, |s| s.load(Ordering::Relaxed));
            let done = (status & DONE != 0).then_some((status & TIME_MASK) as i64);
            let _ = writeln!(
                out,
                "{{\"name\":\"Sample\",\"cat\":\"default\",\"ph\":\"b\",\"pid\":{pid},\"id\":{seq},\"ts\":{},\"args\":{{\"sample_seq\":{seq},\"query_seq\":{query_seq},\"sample_idx\":{index},\"issue_start_ns\":{},\"complete_ns\":{}}}}},",
                micros(scheduled),
                issued - scheduled,
                done.map_or(-1, |d| d - scheduled)
            );
            if let Some(done) = done {
                let _ = writeln!(
                    out,
                    "{{\"name\":\"Sample\",\"cat\":\"default\",\"ph\":\"e\",\"pid\":{pid},\"id\":{seq},\"ts\":{}}},",
                    micros(done)
                );
            }
            if out.len() >= CHUNK {
                send(std::mem::take(&mut out));
            }
        }
    }
    if !out.is_empty() {
        send(out);
    }
}
