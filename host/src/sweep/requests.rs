//! `sweep --export-requests`: every request of a point as it went, one JSON object a line
//! (point-N-requests.jsonl), so that its figures can be recomputed, or put beside another
//! client's per-request export, by any rule.

use std::io::Write;

use mlperf_serving::{RequestRecord, SteadyState};

/// A point's requests, kept after its figures were summed up.
#[derive(Debug, Clone)]
pub struct PointRequests {
    /// The point's position in the sweep (from 0).
    pub point: usize,
    /// Request `id` is `records[id]`.
    pub records: Vec<RequestRecord>,
    /// When the point's issuing started: the times written are from here.
    pub start_ns: i64,
    /// Request `id` was sent on sample `id % samples`.
    pub samples: usize,
}

/// One line a request, in the order they were started. Times are ns: `sent_ns` and
/// `scheduled_ns` from the point's start, the others from the request's send (null where
/// there is none: no first token, never ended, under 2 tokens for TPOT). `in_window`: sent in
/// the steady part of the measured window, where the point's figures count it (when it was
/// also answered, not failed).
pub fn write_requests_jsonl(
    out: &mut impl Write,
    requests: &PointRequests,
    steady: &SteadyState,
) -> std::io::Result<()> {
    for (id, r) in requests.records.iter().enumerate() {
        let line = serde_json::json!({
            "request": id,
            "sample": id % requests.samples.max(1),
            "in_window": r.sent_in(steady.from_ns, steady.to_ns),
            "scheduled_ns": r.scheduled_ns - requests.start_ns,
            "sent_ns": r.sent_ns - requests.start_ns,
            "ttft_ns": r.ttft_ns(),
            "tpot_ns": r.tpot_ns(),
            "e2e_ns": r.e2e_ns(),
            "failed": r.failed,
            "output_tokens": r.output_tokens,
            "input_tokens": r.input_tokens,
            "counted_tokens": r.counted_tokens,
        });
        serde_json::to_writer(&mut *out, &line)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Where point `index` (from 0)'s requests go: point-1-requests.jsonl, ...
pub fn requests_file(out: &std::path::Path, index: usize) -> std::path::PathBuf {
    out.join(format!("point-{}-requests.jsonl", index + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(sent_ns: i64, first: Option<i64>, end: Option<i64>, tokens: u64) -> RequestRecord {
        RequestRecord {
            scheduled_ns: sent_ns,
            sent_ns,
            first_token_ns: first,
            completed_ns: end,
            output_tokens: tokens,
            input_tokens: Some(7),
            counted_tokens: None,
            failed: false,
        }
    }

    #[test]
    fn each_request_is_a_line_with_its_times_from_its_send() {
        let requests = PointRequests {
            point: 0,
            records: vec![
                record(1_000, Some(1_500), Some(3_500), 5),
                record(2_000, None, None, 0),
                record(9_000, Some(9_100), Some(9_200), 1),
            ],
            start_ns: 1_000,
            samples: 2,
        };
        let steady = SteadyState {
            from_ns: 1_500,
            to_ns: 9_000,
            dropped_bins: 0,
            bins: 0,
            steady: true,
            reason: String::new(),
        };
        let mut written = Vec::new();
        write_requests_jsonl(&mut written, &requests, &steady).unwrap();
        let lines: Vec<serde_json::Value> = String::from_utf8(written)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        let first = &lines[0];
        assert_eq!(first["sent_ns"], 0);
        assert_eq!(first["ttft_ns"], 500.0);
        assert_eq!(first["tpot_ns"], 500.0); // 2,000 ns over 4 tokens after the first
        assert_eq!(first["e2e_ns"], 2_500.0);
        assert_eq!(first["input_tokens"], 7);
        assert_eq!(first["in_window"], false); // sent before the steady window
        let unfinished = &lines[1];
        assert_eq!(unfinished["sample"], 1);
        assert!(unfinished["ttft_ns"].is_null() && unfinished["e2e_ns"].is_null());
        assert_eq!(unfinished["in_window"], true);
        // The window's end is open; a one-token answer has no TPOT.
        assert_eq!(lines[2]["sample"], 0);
        assert_eq!(lines[2]["in_window"], false);
        assert!(lines[2]["tpot_ns"].is_null());
    }
}
