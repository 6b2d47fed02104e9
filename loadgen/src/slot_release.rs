//! Giving a long series' completion slots back to the system while the end-of-run scan reads
//! them, from a second thread: at 10^8 queries the kernel's work of freeing 800 MB otherwise
//! follows the scan. The test is over by then, so the thread takes nothing from the SUT.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use super::completion::SlotArena;

/// Series at least this long give their slots back during the scan (32 MiB of slots).
const RELEASE_FROM: u64 = 1 << 22;

/// How far the scan has read: the slots below it may be given back.
pub(crate) struct ReadUpTo(AtomicU64);

impl ReadUpTo {
    pub(crate) fn set(&self, seq: u64) {
        self.0.store(seq, Ordering::Release);
    }
}

/// Runs `scan` over the slots `first..end`, which it reads for the last time, reporting its
/// progress through [`ReadUpTo`]; for a long series another thread gives back what it has
/// read as it goes. Returns once both are done.
pub(crate) fn releasing_slots<T>(
    arena: &SlotArena,
    first: u64,
    end: u64,
    scan: impl FnOnce(&ReadUpTo) -> T,
) -> T {
    let read = ReadUpTo(AtomicU64::new(first));
    if end.saturating_sub(first) < RELEASE_FROM {
        return scan(&read);
    }
    let scanning = AtomicBool::new(true);
    std::thread::scope(|scope| {
        // Without the thread, nothing is given back early: the slots go when the test ends.
        let _ = std::thread::Builder::new()
            .name("mlperf-slot-release".into())
            .spawn_scoped(scope, || {
                let mut released = first;
                loop {
                    // Read before the progress: once the scan is over, its last report is seen.
                    let over = !scanning.load(Ordering::Acquire);
                    let to = read.0.load(Ordering::Acquire);
                    if to > released {
                        arena.release(released, to);
                        released = to;
                    }
                    if over {
                        return;
                    }
                    std::thread::sleep(Duration::from_micros(500));
                }
            });
        let result = scan(&read);
        scanning.store(false, Ordering::Release);
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_series_slots_read_as_zero_once_scanned_and_stay_writable() {
        let arena = SlotArena::new();
        let (first, end) = (5, 5 + RELEASE_FROM + 70_001);
        assert!(arena.ensure(end));
        arena
            .chunks(0, end)
            .flatten()
            .for_each(|slot| slot.store(7, Ordering::Relaxed));
        let sum = releasing_slots(&arena, first, end, |read| {
            let mut sum = 0;
            let mut at = first;
            for slots in arena.chunks(first, end) {
                sum += slots.iter().map(|s| s.load(Ordering::Relaxed)).sum::<u64>();
                at += slots.len() as u64;
                read.set(at);
            }
            sum
        });
        assert_eq!(sum, 7 * (end - first));
        // Given back but for the partial pages at the chunks' edges.
        let kept = arena
            .chunks(first, end)
            .flatten()
            .filter(|slot| slot.load(Ordering::Relaxed) != 0)
            .count() as u64;
        assert!(kept < (end - first) / 20, "{kept} slots kept");
        // A late completer's write still lands.
        let late = arena.get(end / 2).unwrap();
        late.store(9, Ordering::Relaxed);
        assert_eq!(late.load(Ordering::Relaxed), 9);
        // Before the range nothing changed.
        assert!(arena
            .chunks(0, first)
            .flatten()
            .all(|s| s.load(Ordering::Relaxed) == 7));
    }

    #[test]
    fn a_short_series_is_scanned_without_giving_slots_back() {
        let arena = SlotArena::new();
        assert!(arena.ensure(1000));
        arena.get(10).unwrap().store(3, Ordering::Relaxed);
        let seen = releasing_slots(&arena, 0, 1000, |read| {
            read.set(1000);
            arena.get(10).unwrap().load(Ordering::Relaxed)
        });
        assert_eq!(seen, 3);
        assert_eq!(arena.get(10).unwrap().load(Ordering::Relaxed), 3);
    }
}
