//! The engine's series observer: divides each performance series' latencies with the table's
//! times, and adds those times to each sample's trace event.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use crate::loadgen::{SampleTimes, SeriesObserver, TestMode};

use super::breakdown::{LatencyBreakdown, SampleParts};
use super::table::SampleTimingTable;

/// The most samples of a series divided (the rest are represented by a stride through it):
/// a million keeps the division's memory near 100 MB.
const MOST_DIVIDED: u64 = 1_000_000;

pub struct TimingObserver {
    table: Arc<SampleTimingTable>,
    lanes: u32,
    /// The test clock's origin on `CLOCK_MONOTONIC`, once a series has ended.
    origin_ns: AtomicI64,
    breakdown: Mutex<Option<LatencyBreakdown>>,
}

impl TimingObserver {
    /// Reads `table`, filled by a run's `lanes` instances.
    pub fn new(table: Arc<SampleTimingTable>, lanes: u32) -> Arc<Self> {
        Arc::new(TimingObserver {
            table,
            lanes,
            origin_ns: AtomicI64::new(0),
            breakdown: Mutex::new(None),
        })
    }

    /// The last performance series' division.
    pub fn breakdown(&self) -> Option<LatencyBreakdown> {
        self.breakdown
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl SeriesObserver for TimingObserver {
    fn series_ended(
        &self,
        mode: TestMode,
        clock_origin_ns: i64,
        issued: u64,
        samples: &mut dyn Iterator<Item = SampleTimes>,
    ) {
        self.origin_ns.store(clock_origin_ns, Ordering::Release);
        if mode != TestMode::PerformanceOnly {
            return;
        }
        // A long Offline run: every k-th sample, evenly through the series.
        let stride = issued.div_ceil(MOST_DIVIDED).max(1) as usize;
        let parts = samples
            .step_by(stride)
            .filter_map(|sample| {
                SampleParts::divide(&sample, &self.table.get(sample.id.0), clock_origin_ns)
            })
            .collect();
        let breakdown = LatencyBreakdown::of(parts, self.lanes);
        *self.breakdown.lock().unwrap_or_else(|p| p.into_inner()) = breakdown;
    }

    /// Each known time from the sample's scheduled time, as the trace's `issue_start_ns` and
    /// `complete_ns` are.
    fn trace_args(&self, sample: &SampleTimes, out: &mut String) {
        let recorded = self.table.get(sample.id.0);
        let origin = self.origin_ns.load(Ordering::Acquire);
        let from_scheduled = |t: u64| t as i64 - origin - sample.scheduled_ns;
        for (name, time) in [
            ("handed_ns", recorded.handed_ns),
            ("dequeued_ns", recorded.dequeued_ns),
            ("compute_start_ns", recorded.compute_start_ns),
            ("compute_end_ns", recorded.compute_end_ns),
        ] {
            if time != 0 {
                let _ = write!(out, ",\"{name}\":{}", from_scheduled(time));
            }
        }
        if self.lanes > 1 && recorded.handed_ns != 0 {
            let _ = write!(out, ",\"device_lane\":{}", recorded.lane);
        }
    }
}
