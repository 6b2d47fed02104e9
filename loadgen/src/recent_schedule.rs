//! The scheduled times of the newest samples, which a progress watcher reads to time their
//! completions (a running p99): written by whichever thread issues, read by the watcher.

use std::sync::atomic::{AtomicU64, Ordering};

/// The scheduled times of the newest samples, kept only while a progress handle is attached:
/// a ring longer than the window the progress reads, so 1 MiB however long the run.
pub(crate) struct RecentSchedule {
    times: Box<[AtomicU64]>,
}

/// Entries in the ring: the window, with room for the issuer to run ahead of a reader.
pub(crate) const RECENT: u64 = 1 << 17;

impl RecentSchedule {
    pub(crate) fn new() -> Self {
        // calloc'ed: pages never written (no progress watched) cost nothing.
        let zeroed = vec![0u64; RECENT as usize].into_boxed_slice();
        // SAFETY: AtomicU64 has the size and alignment of u64 (checked below), and all-zero
        // bits are a valid AtomicU64.
        let times = unsafe { Box::from_raw(Box::into_raw(zeroed) as *mut [AtomicU64]) };
        RecentSchedule { times }
    }

    fn slot(&self, seq: u64) -> &AtomicU64 {
        &self.times[(seq % RECENT) as usize]
    }

    /// Records `scheduled_ns` for the samples `first_seq..first_seq + count`: only the newest
    /// ones can be read back, so a huge Offline query writes one ring's worth.
    pub(crate) fn record(&self, first_seq: u64, count: u64, scheduled_ns: i64) {
        let end = first_seq + count;
        for seq in first_seq.max(end.saturating_sub(RECENT))..end {
            self.slot(seq).store(scheduled_ns as u64, Ordering::Relaxed);
        }
    }

    /// The scheduled time of `seq`, one of the newest [`RECENT`] samples issued.
    pub(crate) fn get(&self, seq: u64) -> i64 {
        self.slot(seq).load(Ordering::Relaxed) as i64
    }
}

const _: () = assert!(
    std::mem::size_of::<AtomicU64>() == std::mem::size_of::<u64>()
        && std::mem::align_of::<AtomicU64>() == std::mem::align_of::<u64>()
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_scheduled_times_read_back_after_the_ring_wraps() {
        let recent = RecentSchedule::new();
        // Queries of one sample, then an Offline-sized query of many, then one more.
        for seq in 0..RECENT + 10 {
            recent.record(seq, 1, seq as i64 * 3);
        }
        let newest = 10;
        assert!((newest..RECENT + 10).all(|seq| recent.get(seq) == seq as i64 * 3));
        let big_start = RECENT + 10;
        recent.record(big_start, 5 * RECENT + 7, -4);
        let end = big_start + 5 * RECENT + 7;
        assert!((end - RECENT..end).all(|seq| recent.get(seq) == -4));
        recent.record(end, 1, 99);
        assert_eq!(recent.get(end), 99);
        assert_eq!(recent.get(end - 1), -4);
    }
}
