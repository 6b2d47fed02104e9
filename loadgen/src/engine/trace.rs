//! The events of `mlperf_log_trace.json` (see `logging::trace`): a span per sample from its
//! scheduled time to its completion, read from the completion slots after a series, with what
//! the series observer adds to each.

use super::sample_times::{series_samples, SeriesObserver};
use crate::completion::Shared;
use crate::issue::SeriesOutcome;
use std::fmt::Write as _;

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
    observer: Option<&dyn SeriesObserver>,
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
    for sample in series_samples(shared, outcome) {
        let seq = sample.id.0 - 1;
        let scheduled = sample.scheduled_ns;
        let _ = write!(
            out,
            "{{\"name\":\"Sample\",\"cat\":\"default\",\"ph\":\"b\",\"pid\":{pid},\"id\":{seq},\"ts\":{},\"args\":{{\"sample_seq\":{seq},\"query_seq\":{},\"sample_idx\":{},\"issue_start_ns\":{},\"complete_ns\":{}",
            micros(scheduled),
            sample.query_seq,
            sample.index,
            sample.issued_ns - scheduled,
            sample.completed_ns.map_or(-1, |d| d - scheduled)
        );
        if let Some(observer) = observer {
            observer.trace_args(&sample, &mut out);
        }
        out.push_str("}},\n");
        if let Some(done) = sample.completed_ns {
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
    if !out.is_empty() {
        send(out);
    }
}
