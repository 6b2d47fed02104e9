//! Each sample's times beside the engine's, indexed by its sequence id (its response id less
//! one), in lock-free slots: written on the issue thread (handed over) and on any completion
//! thread (the plugin's report), read after the series.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use mlperf_plugin_api::ffi;

use crate::loadgen::SlotArena;

/// Slots per sample: handed over, dequeued, compute start, compute end, the instance's place.
const FIELDS: u64 = 5;
const HANDED: u64 = 0;
const DEQUEUED: u64 = 1;
const COMPUTE_START: u64 = 2;
const COMPUTE_END: u64 = 3;
const LANE: u64 = 4;

/// One sample's times on `CLOCK_MONOTONIC` (0: not known) and the instance that served it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordedTimes {
    pub handed_ns: u64,
    pub dequeued_ns: u64,
    pub compute_start_ns: u64,
    pub compute_end_ns: u64,
    pub lane: u32,
}

/// The run's per-sample times. One per test; shared by every instance serving it.
#[derive(Default)]
pub struct SampleTimingTable {
    slots: SlotArena,
}

impl SampleTimingTable {
    pub fn new() -> Arc<Self> {
        Arc::new(SampleTimingTable::default())
    }

    /// `samples` are handed to the plugin now, by the instance at `lane`: one clock reading
    /// for the call.
    pub fn handed(&self, ids: impl Iterator<Item = u64> + Clone, lane: u32) {
        let Some(last) = ids.clone().max() else {
            return;
        };
        if !self.slots.ensure(last * FIELDS) {
            return;
        }
        // The engine's clock, so the times need no conversion.
        let now = crate::loadgen::monotonic_ns() as u64;
        for id in ids {
            let Some(base) = id.checked_sub(1).map(|seq| seq * FIELDS) else {
                continue;
            };
            self.store(base + HANDED, now);
            if lane != 0 {
                self.store(base + LANE, u64::from(lane) + 1);
            }
        }
    }

    /// The plugin's report for the sample `id`; ignored for an id never handed over.
    pub fn report(&self, id: u64, dequeued_ns: u64, compute_start_ns: u64, compute_end_ns: u64) {
        let Some(base) = id.checked_sub(1).map(|seq| seq * FIELDS) else {
            return;
        };
        if self.load(base + HANDED) == 0 {
            return;
        }
        self.store(base + DEQUEUED, dequeued_ns);
        self.store(base + COMPUTE_START, compute_start_ns);
        self.store(base + COMPUTE_END, compute_end_ns);
    }

    /// What is known of the sample `id` (all 0 for one never handed over).
    pub fn get(&self, id: u64) -> RecordedTimes {
        let Some(base) = id.checked_sub(1).map(|seq| seq * FIELDS) else {
            return RecordedTimes::default();
        };
        RecordedTimes {
            handed_ns: self.load(base + HANDED),
            dequeued_ns: self.load(base + DEQUEUED),
            compute_start_ns: self.load(base + COMPUTE_START),
            compute_end_ns: self.load(base + COMPUTE_END),
            lane: self.load(base + LANE).saturating_sub(1) as u32,
        }
    }

    #[inline]
    fn store(&self, index: u64, value: u64) {
        if let Some(slot) = self.slots.get(index) {
            slot.store(value, Ordering::Release);
        }
    }

    #[inline]
    fn load(&self, index: u64) -> u64 {
        self.slots
            .get(index)
            .map_or(0, |slot| slot.load(Ordering::Acquire))
    }
}

/// An instance's [`TimingSink`], set before its test when the run divides its latencies;
/// shared with the threads that hand its samples over.
pub type TimingSinkSlot = Arc<OnceLock<TimingSink>>;

/// Where an instance's handed-over times and its plugin's reports go: the run's table and the
/// instance's place among the run's.
#[derive(Clone)]
pub struct TimingSink {
    pub table: Arc<SampleTimingTable>,
    pub lane: u32,
}

impl TimingSink {
    /// The plugin is handed `samples` now.
    #[inline]
    pub fn handed(&self, samples: &[ffi::mlperf_sample]) {
        self.table.handed(samples.iter().map(|s| s.id), self.lane);
    }

    /// As [`TimingSink::handed`], for LoadGen's samples.
    #[inline]
    pub fn handed_query(&self, samples: &[crate::loadgen::QuerySample]) {
        self.table.handed(samples.iter().map(|s| s.id.0), self.lane);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(id: u64) -> ffi::mlperf_sample {
        ffi::mlperf_sample {
            struct_size: size_of::<ffi::mlperf_sample>(),
            id,
            index: 0,
            data: std::ptr::null(),
            length: 0,
            dtype: 0,
            rank: 0,
            shape: std::ptr::null(),
        }
    }

    #[test]
    fn a_report_lands_beside_the_handed_time_and_the_lane() {
        let table = SampleTimingTable::new();
        TimingSink {
            table: Arc::clone(&table),
            lane: 0,
        }
        .handed(&[sample(1), sample(2)]);
        TimingSink {
            table: Arc::clone(&table),
            lane: 2,
        }
        .handed(&[sample(3)]);
        table.report(3, 0, 10, 20);
        let third = table.get(3);
        assert!(third.handed_ns > 0);
        assert_eq!((third.compute_start_ns, third.compute_end_ns), (10, 20));
        assert_eq!(third.lane, 2);
        assert_eq!(table.get(1).lane, 0);
        assert_eq!(table.get(2).compute_end_ns, 0);
    }

    #[test]
    fn reports_for_samples_never_handed_over_are_dropped() {
        let table = SampleTimingTable::new();
        table.handed([sample(1).id].into_iter(), 0);
        table.report(7, 1, 2, 3);
        table.report(0, 1, 2, 3);
        assert_eq!(table.get(7), RecordedTimes::default());
        // Past the slots made so far: nothing to read, nothing written.
        table.report(1 << 40, 1, 2, 3);
        assert_eq!(table.get(1 << 40), RecordedTimes::default());
    }
}
