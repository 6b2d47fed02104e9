//! Each request's times, written without a lock from whichever thread sees them: the issue
//! thread notes when a request was due and sent, the target when its first token came and when
//! it ended. Records live in chunks allocated by the issue thread ahead of use, so a point of
//! any length never moves one while a target writes it.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::thread::Thread;

use crate::gaps::{GapLog, TokenGap};

/// Records per chunk, and chunks at most: 2^28 requests in one point.
const CHUNK: usize = 1 << 14;
const CHUNKS: usize = 1 << 14;

#[derive(Default)]
struct Slot {
    scheduled_ns: AtomicI64,
    sent_ns: AtomicI64,
    first_token_ns: AtomicI64,
    /// The last streamed piece so far (the first token, then each of `next_tokens`).
    last_token_ns: AtomicI64,
    completed_ns: AtomicI64,
    output_tokens: AtomicU64,
    /// Set by the target when it knows them (0: unknown).
    input_tokens: AtomicU64,
    /// The output tokens as the client's tokenizer counts the answer (u64::MAX: not counted).
    counted_tokens: AtomicU64,
    failed: AtomicBool,
}

/// One request as it went (times on `mlperf_loadgen::monotonic_ns`'s clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestRecord {
    /// When the load mode wanted it sent (equal to `sent_ns` in a closed loop).
    pub scheduled_ns: i64,
    pub sent_ns: i64,
    pub first_token_ns: Option<i64>,
    /// When it ended, answered or failed; None if it never did.
    pub completed_ns: Option<i64>,
    /// As the target reported them (an LLM server's usage count).
    pub output_tokens: u64,
    /// The prompt's tokens, when the target counted them.
    pub input_tokens: Option<u64>,
    /// The answer's tokens by the client's own tokenizer, when it counted them.
    pub counted_tokens: Option<u64>,
    pub failed: bool,
}

impl RequestRecord {
    /// Whether it was sent in `[from_ns, to_ns)`: a window counts the requests sent in it.
    #[inline]
    pub fn sent_in(&self, from_ns: i64, to_ns: i64) -> bool {
        self.sent_ns >= from_ns && self.sent_ns < to_ns
    }

    /// From sent to its end, ns (None: it never ended).
    pub fn e2e_ns(&self) -> Option<f64> {
        self.completed_ns.map(|end| (end - self.sent_ns) as f64)
    }

    /// From sent to its first token, ns.
    pub fn ttft_ns(&self) -> Option<f64> {
        self.first_token_ns.map(|t| (t - self.sent_ns) as f64)
    }

    /// (end − first token) / (tokens after the first), ns, for answers of 2 tokens or more.
    pub fn tpot_ns(&self) -> Option<f64> {
        match (self.first_token_ns, self.completed_ns) {
            (Some(first), Some(end)) if self.output_tokens > 1 => {
                Some((end - first) as f64 / (self.output_tokens - 1) as f64)
            }
            _ => None,
        }
    }
}

/// The records of one point, shared by the issue thread and the target.
pub struct RequestRecords {
    chunks: Box<[AtomicPtr<Slot>]>,
    /// Requests started: ids below this have records.
    started: AtomicUsize,
    in_flight: AtomicUsize,
    /// The issue thread, woken when a request ends while it waits for room.
    issuer: OnceLock<Thread>,
    issuer_waiting: AtomicBool,
    gaps: GapLog,
    /// Requests that failed since the last one answered (in the order they ended).
    failed_in_a_row: AtomicUsize,
}

impl Default for RequestRecords {
    fn default() -> RequestRecords {
        RequestRecords {
            chunks: (0..CHUNKS)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            started: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            issuer: OnceLock::new(),
            issuer_waiting: AtomicBool::new(false),
            gaps: GapLog::default(),
            failed_in_a_row: AtomicUsize::new(0),
        }
    }
}

impl RequestRecords {
    fn slot(&self, id: usize) -> Option<&Slot> {
        let chunk = self.chunks.get(id / CHUNK)?.load(Ordering::Acquire);
        if chunk.is_null() || id >= self.started.load(Ordering::Acquire) {
            return None;
        }
        // SAFETY: a chunk, once published, holds CHUNK slots until `self` is dropped.
        Some(unsafe { &*chunk.add(id % CHUNK) })
    }

    /// The first token of request `id` arrived at `now_ns` (later calls are ignored).
    pub fn first_token(&self, id: usize, now_ns: i64) {
        if let Some(slot) = self.slot(id) {
            if slot
                .first_token_ns
                .compare_exchange(0, now_ns, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                let _ = slot.last_token_ns.compare_exchange(
                    0,
                    now_ns,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                );
            }
        }
    }

    /// More of request `id`'s answer arrived at `now_ns`, after its first token: the gap since
    /// the piece before is an inter-token latency. Ignored before the first token and after
    /// the end.
    pub fn next_tokens(&self, id: usize, now_ns: i64) {
        let Some(slot) = self.slot(id) else {
            return;
        };
        if slot.completed_ns.load(Ordering::Acquire) != 0 {
            return;
        }
        let before = slot.last_token_ns.swap(now_ns, Ordering::AcqRel);
        if before != 0 {
            // Never below 0: a target whose first token is stamped later than the pieces
            // after it (on another clock read) must not give a negative gap.
            self.gaps.push(id, (now_ns - before).max(0));
        }
    }

    /// The gaps between streamed pieces noted so far.
    pub fn token_gaps(&self) -> Vec<TokenGap> {
        self.gaps.snapshot()
    }

    /// Request `id`'s prompt holds `tokens` tokens.
    pub fn input_tokens(&self, id: usize, tokens: u64) {
        if let Some(slot) = self.slot(id) {
            slot.input_tokens.store(tokens, Ordering::Relaxed);
        }
    }

    /// Request `id`'s answer holds `tokens` tokens by the client's tokenizer (called before
    /// [`RequestRecords::complete`]).
    pub fn counted_tokens(&self, id: usize, tokens: u64) {
        if let Some(slot) = self.slot(id) {
            slot.counted_tokens.store(tokens, Ordering::Relaxed);
        }
    }

    /// Request `id` ended at `now_ns` with `output_tokens` tokens generated, or `failed`.
    /// Only its first end counts.
    pub fn complete(&self, id: usize, now_ns: i64, output_tokens: u64, failed: bool) {
        let Some(slot) = self.slot(id) else {
            return;
        };
        if slot
            .completed_ns
            .compare_exchange(0, now_ns, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        slot.output_tokens.store(output_tokens, Ordering::Relaxed);
        slot.failed.store(failed, Ordering::Relaxed);
        match failed {
            true => self.failed_in_a_row.fetch_add(1, Ordering::Relaxed),
            false => self.failed_in_a_row.swap(0, Ordering::Relaxed),
        };
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
        if self.issuer_waiting.load(Ordering::Acquire) {
            if let Some(issuer) = self.issuer.get() {
                issuer.unpark();
            }
        }
    }

    /// How many requests failed since the last that was answered.
    pub fn failed_in_a_row(&self) -> usize {
        self.failed_in_a_row.load(Ordering::Relaxed)
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    pub fn started(&self) -> usize {
        self.started.load(Ordering::Acquire)
    }

    /// The issue thread: notes request `started()` as due at `scheduled_ns` and sent at
    /// `sent_ns`, and returns its id.
    pub(crate) fn start(&self, scheduled_ns: i64, sent_ns: i64) -> usize {
        let id = self.started.load(Ordering::Relaxed);
        let index = id / CHUNK;
        if self.chunks[index].load(Ordering::Relaxed).is_null() {
            let chunk: Box<[Slot]> = (0..CHUNK).map(|_| Slot::default()).collect();
            self.chunks[index].store(Box::into_raw(chunk).cast(), Ordering::Release);
        }
        // SAFETY: the chunk was published above or before, and only this thread writes the
        // record of an id not yet counted in `started`.
        let slot = unsafe { &*self.chunks[index].load(Ordering::Relaxed).add(id % CHUNK) };
        slot.scheduled_ns.store(scheduled_ns, Ordering::Relaxed);
        slot.sent_ns.store(sent_ns, Ordering::Relaxed);
        slot.counted_tokens.store(u64::MAX, Ordering::Relaxed);
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.started.store(id + 1, Ordering::Release);
        id
    }

    /// The most requests a point can start.
    pub(crate) fn capacity(&self) -> usize {
        CHUNK * CHUNKS
    }

    /// Waits (parked, woken by a completion) until fewer than `limit` requests are in flight,
    /// or until `deadline_ns` (false then); called by the issue thread only.
    pub(crate) fn wait_for_room(&self, limit: usize, deadline_ns: i64, stop: &AtomicBool) -> bool {
        let _ = self.issuer.set(std::thread::current());
        while self.in_flight() >= limit {
            if mlperf_loadgen::monotonic_ns() >= deadline_ns || stop.load(Ordering::Relaxed) {
                return false;
            }
            self.issuer_waiting.store(true, Ordering::Release);
            if self.in_flight() >= limit {
                // Bounded: a wake-up lost to a race costs a millisecond, not the run.
                std::thread::park_timeout(std::time::Duration::from_millis(1));
            }
            self.issuer_waiting.store(false, Ordering::Release);
        }
        true
    }

    /// How late the last started request was sent (0 before the first).
    pub(crate) fn last_lateness_ns(&self) -> i64 {
        match self.started().checked_sub(1).and_then(|id| self.slot(id)) {
            Some(slot) => {
                slot.sent_ns.load(Ordering::Relaxed) - slot.scheduled_ns.load(Ordering::Relaxed)
            }
            None => 0,
        }
    }

    /// The times to first token that came in `[since_ns, now_ns)` (an answer that did not
    /// stream came whole: its end is its first token), scanning from `*oldest`, the oldest
    /// request that may still wait, which moves past those that do not. When none came, the
    /// oldest waiting request's wait so far (a lower bound), if one waits.
    pub(crate) fn ttft_since(&self, oldest: &mut usize, since_ns: i64, now_ns: i64) -> Vec<f64> {
        let came = |slot: &Slot| {
            let first = slot.first_token_ns.load(Ordering::Acquire);
            let end = slot.completed_ns.load(Ordering::Acquire);
            [first, end].into_iter().find(|&t| t != 0)
        };
        let mut ttft = Vec::new();
        let mut waiting = None;
        for id in *oldest..self.started() {
            let Some(slot) = self.slot(id) else { break };
            let sent = slot.sent_ns.load(Ordering::Relaxed);
            match came(slot) {
                Some(at) if at >= since_ns => ttft.push((at - sent) as f64),
                Some(_) => {}
                None => {
                    waiting.get_or_insert(sent);
                }
            }
            if waiting.is_none() {
                *oldest = id + 1;
            }
        }
        if ttft.is_empty() {
            ttft.extend(waiting.map(|sent| (now_ns - sent) as f64));
        }
        ttft
    }

    /// Every started request's record, in id order.
    pub fn snapshot(&self) -> Vec<RequestRecord> {
        (0..self.started())
            .filter_map(|id| self.slot(id))
            .map(|slot| {
                let at = |t: &AtomicI64| Some(t.load(Ordering::Acquire)).filter(|&t| t != 0);
                RequestRecord {
                    scheduled_ns: slot.scheduled_ns.load(Ordering::Relaxed),
                    sent_ns: slot.sent_ns.load(Ordering::Relaxed),
                    first_token_ns: at(&slot.first_token_ns),
                    completed_ns: at(&slot.completed_ns),
                    output_tokens: slot.output_tokens.load(Ordering::Relaxed),
                    input_tokens: Some(slot.input_tokens.load(Ordering::Relaxed))
                        .filter(|&n| n != 0),
                    counted_tokens: Some(slot.counted_tokens.load(Ordering::Relaxed))
                        .filter(|&n| n != u64::MAX),
                    failed: slot.failed.load(Ordering::Relaxed),
                }
            })
            .collect()
    }
}

impl Drop for RequestRecords {
    fn drop(&mut self) {
        for chunk in self.chunks.iter() {
            let chunk = chunk.load(Ordering::Relaxed);
            if !chunk.is_null() {
                let slice = std::ptr::slice_from_raw_parts_mut(chunk, CHUNK);
                // SAFETY: allocated in `start` as a boxed slice of CHUNK slots, freed once.
                drop(unsafe { Box::from_raw(slice) });
            }
        }
    }
}
