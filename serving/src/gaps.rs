//! The gaps between the streamed tokens of every request of a point (inter-token latency),
//! appended without a lock from whichever thread sees a token: a slot is claimed with one
//! atomic add, and its chunk is allocated by the first writer that needs it.

use std::sync::atomic::{AtomicI64, AtomicPtr, AtomicUsize, Ordering};

/// Gaps per chunk, and chunks at most: 2^26 gaps in one point.
const CHUNK: usize = 1 << 14;
const CHUNKS: usize = 1 << 12;

/// The time from one streamed piece of request `request`'s answer to the next (ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenGap {
    pub request: usize,
    pub gap_ns: i64,
}

#[derive(Default)]
struct Slot {
    /// The request's id + 1, written last (0: the slot is not written yet).
    request: AtomicI64,
    gap_ns: AtomicI64,
}

pub(crate) struct GapLog {
    chunks: Box<[AtomicPtr<Slot>]>,
    next: AtomicUsize,
}

impl Default for GapLog {
    fn default() -> GapLog {
        GapLog {
            chunks: (0..CHUNKS)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            next: AtomicUsize::new(0),
        }
    }
}

impl GapLog {
    /// Notes a gap; past the log's capacity gaps are dropped (counted by `snapshot` as none).
    pub(crate) fn push(&self, request: usize, gap_ns: i64) {
        let at = self.next.fetch_add(1, Ordering::Relaxed);
        let Some(chunk) = self.chunks.get(at / CHUNK) else {
            return;
        };
        let mut slots = chunk.load(Ordering::Acquire);
        if slots.is_null() {
            let fresh: Box<[Slot]> = (0..CHUNK).map(|_| Slot::default()).collect();
            let fresh = Box::into_raw(fresh).cast::<Slot>();
            slots = match chunk.compare_exchange(
                std::ptr::null_mut(),
                fresh,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => fresh,
                Err(theirs) => {
                    // SAFETY: `fresh` was never published; freed as the boxed slice it was.
                    drop(unsafe {
                        Box::from_raw(std::ptr::slice_from_raw_parts_mut(fresh, CHUNK))
                    });
                    theirs
                }
            };
        }
        // SAFETY: a published chunk holds CHUNK slots until the log is dropped, and slot
        // `at` was claimed by this call alone.
        let slot = unsafe { &*slots.add(at % CHUNK) };
        slot.gap_ns.store(gap_ns, Ordering::Relaxed);
        slot.request.store(request as i64 + 1, Ordering::Release);
    }

    /// Every gap written so far, in the order the slots were claimed.
    pub(crate) fn snapshot(&self) -> Vec<TokenGap> {
        let claimed = self.next.load(Ordering::Acquire).min(CHUNK * CHUNKS);
        let mut gaps = Vec::with_capacity(claimed);
        for at in 0..claimed {
            let slots = self.chunks[at / CHUNK].load(Ordering::Acquire);
            if slots.is_null() {
                continue;
            }
            // SAFETY: as in push.
            let slot = unsafe { &*slots.add(at % CHUNK) };
            let request = slot.request.load(Ordering::Acquire);
            if request > 0 {
                gaps.push(TokenGap {
                    request: (request - 1) as usize,
                    gap_ns: slot.gap_ns.load(Ordering::Relaxed),
                });
            }
        }
        gaps
    }
}

impl Drop for GapLog {
    fn drop(&mut self) {
        for chunk in self.chunks.iter() {
            let slots = chunk.load(Ordering::Relaxed);
            if !slots.is_null() {
                // SAFETY: allocated in `push` as a boxed slice of CHUNK slots, freed once.
                drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(slots, CHUNK)) });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_from_many_threads_are_all_kept_across_chunks() {
        let log = GapLog::default();
        let per_thread = CHUNK + 1000;
        std::thread::scope(|scope| {
            for thread in 0..4 {
                let log = &log;
                scope.spawn(move || {
                    for k in 0..per_thread {
                        log.push(thread, k as i64);
                    }
                });
            }
        });
        let gaps = log.snapshot();
        assert_eq!(gaps.len(), 4 * per_thread);
        for thread in 0..4 {
            let mine: Vec<i64> = gaps
                .iter()
                .filter(|g| g.request == thread)
                .map(|g| g.gap_ns)
                .collect();
            // One thread's gaps keep their order.
            assert_eq!(mine, (0..per_thread as i64).collect::<Vec<_>>());
        }
    }
}
