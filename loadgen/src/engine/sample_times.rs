//! Each sample's times, for a caller that wants to know where its latencies went: when it was
//! scheduled, issued and completed, read from the completion slots after a series (off the
//! timed path). The trace file is written from the same walk.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::completion::{Shared, DONE, TIME_MASK};
use crate::issue::SeriesOutcome;
use crate::settings::TestMode;
use crate::types::ResponseId;

/// One issued sample of a finished series, on the test's clock (ns since its origin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleTimes {
    pub id: ResponseId,
    /// The sample's place in the loaded set's data set.
    pub index: u64,
    /// The id of the query it was issued in.
    pub query_seq: u64,
    pub scheduled_ns: i64,
    /// When its query was handed to the system under test.
    pub issued_ns: i64,
    /// `None`: it never completed.
    pub completed_ns: Option<i64>,
}

/// Learns each series' samples (set in [`TestContext::series_observer`]). Called on the
/// engine's thread once a series has drained, before its results are derived.
///
/// [`TestContext::series_observer`]: crate::TestContext::series_observer
pub trait SeriesObserver: Send + Sync {
    /// A series of `issued` samples ended. `clock_origin_ns` is the test clock's origin on
    /// `CLOCK_MONOTONIC`, so a time `t` of that clock is `t - clock_origin_ns` on the test's.
    fn series_ended(
        &self,
        mode: TestMode,
        clock_origin_ns: i64,
        issued: u64,
        samples: &mut dyn Iterator<Item = SampleTimes>,
    );

    /// Members added to a sample's event in the trace file, each written as `,"name":value`.
    fn trace_args(&self, sample: &SampleTimes, out: &mut String) {
        let _ = (sample, out);
    }
}

/// See [`SeriesObserver`].
#[derive(Clone)]
pub struct SeriesObserverHook(pub Arc<dyn SeriesObserver>);

impl std::fmt::Debug for SeriesObserverHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SeriesObserverHook")
    }
}

impl PartialEq for SeriesObserverHook {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Every issued sample of the series, in issue order.
pub(crate) fn series_samples<'a>(
    shared: &'a Shared,
    outcome: &'a SeriesOutcome,
) -> impl Iterator<Item = SampleTimes> + 'a {
    let spq = outcome.samples_per_query.max(1) as u64;
    let series_end = outcome.sample_base + outcome.query_scheduled_ns.len() as u64 * spq;
    outcome
        .query_scheduled_ns
        .iter()
        .enumerate()
        .filter(|&(_, scheduled)| scheduled != i64::MIN)
        .flat_map(move |(query, scheduled)| {
            let issued = outcome
                .query_issued_ns
                .get(query)
                .copied()
                .unwrap_or(scheduled);
            let first = outcome.sample_base + query as u64 * spq;
            let query_seq = outcome.query_base + query as u64;
            (first..(first + spq).min(series_end)).map(move |seq| {
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
                SampleTimes {
                    id: ResponseId(seq + 1),
                    index,
                    query_seq,
                    scheduled_ns: scheduled,
                    issued_ns: issued,
                    completed_ns: (status & DONE != 0).then_some((status & TIME_MASK) as i64),
                }
            })
        })
}
