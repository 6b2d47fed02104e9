//! Completion handling: the `Completer` a system under test calls from any thread, and the
//! lock-free per-sample slots it records into.
//!
//! Every sample of a test gets a sequence id; its `ResponseId` is that id plus one. A slot per
//! sample holds the completion time and two flags, written with one compare-and-swap, so the hot
//! path takes no lock and allocates nothing. Latencies are derived from the slots after the
//! series, off the completion path.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

use super::diagnostics::Diagnostic;
use super::logging::DiagnosticSink;
use super::logging::LogSender;
use super::recent_schedule::RecentSchedule;
pub use super::types::AccuracyRecord;
pub(crate) use super::types::Clock;
use super::types::{AsSampleResponse, QuerySampleResponse, ResponseId};

const CHUNK_BITS: u32 = 16;
const CHUNK_LEN: usize = 1 << CHUNK_BITS;
const MAX_CHUNKS: usize = 1 << 16;

/// Set once the sample completed.
pub(crate) const DONE: u64 = 1 << 63;
/// Set at issue when the response must be copied to the accuracy log.
pub(crate) const LOG: u64 = 1 << 62;
/// The completion time, ns since the test's clock origin.
pub(crate) const TIME_MASK: u64 = LOG - 1;

/// How long a drain waits without progress after the SUT failed or panicked.
pub(crate) const FAILED_SUT_DRAIN: Duration = Duration::from_secs(2);

/// What a chunk never allocated reads as (zero pages, never written).
static UNALLOCATED: [AtomicU64; CHUNK_LEN] = [const { AtomicU64::new(0) }; CHUNK_LEN];

const CHUNK_BYTES: usize = CHUNK_LEN * std::mem::size_of::<AtomicU64>();

/// Maps one chunk of zero pages straight from the system. Not through the allocator: once a
/// large block has been freed (a plugin library read at load, say) glibc raises its mmap
/// threshold, and 512 KiB chunks then come from its heaps, each carved and tracked there; at
/// 10^8 queries that was a fifth of the start-up.
fn map_chunk() -> *mut AtomicU64 {
    // SAFETY: an anonymous private mapping at an address of the kernel's choosing; its pages
    // read as zero, and an all-zero AtomicU64 is valid.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            CHUNK_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        std::alloc::handle_alloc_error(
            std::alloc::Layout::array::<AtomicU64>(CHUNK_LEN).expect("chunk layout"),
        );
    }
    ptr as *mut AtomicU64
}

/// A growable array of atomics indexed by sequence id. Chunks are added by the issuing thread
/// only; readers find them through an atomic pointer table, so lookups never lock. Public for
/// a caller that keeps its own per-sample record beside the engine's.
pub struct SlotArena {
    chunks: Box<[AtomicPtr<AtomicU64>]>,
    allocated: Mutex<usize>,
    /// Slots addressable without taking the lock: the issue loop's fast path.
    capacity: AtomicU64,
}

impl SlotArena {
    pub fn new() -> Self {
        let chunks = (0..MAX_CHUNKS)
            .map(|_| AtomicPtr::new(std::ptr::null_mut()))
            .collect();
        SlotArena {
            chunks,
            allocated: Mutex::new(0),
            capacity: AtomicU64::new(0),
        }
    }

    /// Makes slots `0..end` addressable. Called by the issuing thread before it hands out ids.
    pub fn ensure(&self, end: u64) -> bool {
        if end <= self.capacity.load(Ordering::Acquire) {
            return true;
        }
        let needed = end.div_ceil(CHUNK_LEN as u64) as usize;
        if needed > MAX_CHUNKS {
            return false;
        }
        let mut allocated = self.allocated.lock().unwrap_or_else(|p| p.into_inner());
        while *allocated < needed {
            // Fresh pages cost nothing until touched.
            self.chunks[*allocated].store(map_chunk(), Ordering::Release);
            *allocated += 1;
        }
        self.capacity
            .store((*allocated * CHUNK_LEN) as u64, Ordering::Release);
        true
    }

    /// Writes zero into one slot per page of `start..end`, so that their pages are faulted in
    /// now rather than by the first completions, inside the timed window. Only for slots no
    /// completer can reach yet (not yet published).
    pub(crate) fn prefault(&self, start: u64, end: u64) {
        const SLOTS_PER_PAGE: u64 = 4096 / std::mem::size_of::<AtomicU64>() as u64;
        for index in (start..end)
            .step_by(SLOTS_PER_PAGE as usize)
            .chain(end.checked_sub(1))
        {
            if let Some(slot) = self.get(index) {
                slot.store(0, Ordering::Relaxed);
            }
        }
    }

    #[inline]
    pub fn get(&self, index: u64) -> Option<&AtomicU64> {
        let chunk = (index >> CHUNK_BITS) as usize;
        let ptr = self.chunks.get(chunk)?.load(Ordering::Acquire);
        if ptr.is_null() {
            return None;
        }
        // SAFETY: a non-null chunk pointer is an allocation of CHUNK_LEN atomics that lives until
        // the arena drops, and the offset is below CHUNK_LEN.
        Some(unsafe { &*ptr.add(index as usize & (CHUNK_LEN - 1)) })
    }

    /// Gives the memory of the slots `start..end` back to the system, whole pages of it: they
    /// read as zero afterwards. For slots already read for the last time; a late completer
    /// that still writes one only brings its page back, zeroed.
    pub(crate) fn release(&self, start: u64, end: u64) {
        const PAGE: usize = 4096;
        let unallocated = UNALLOCATED.as_ptr_range();
        for slots in self.chunks(start, end) {
            if unallocated.contains(&slots.as_ptr()) {
                continue;
            }
            // The whole pages within the slots' bytes.
            let bytes = slots.as_ptr_range();
            let from = (bytes.start as usize).next_multiple_of(PAGE);
            let to = bytes.end as usize / PAGE * PAGE;
            if to > from {
                // SAFETY: whole pages inside this chunk's allocation, which stays mapped; the
                // advice only zeroes them, and every access to a slot is atomic.
                unsafe { libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_DONTNEED) };
            }
        }
    }

    /// The slots of `start..end` in order, a chunk at a time; slots never allocated read as
    /// 0. The end-of-run scans of 10^8 slots go through this rather than
    /// [`get`](Self::get) per slot.
    pub(crate) fn chunks(&self, start: u64, end: u64) -> impl Iterator<Item = &[AtomicU64]> {
        let mut seq = start;
        std::iter::from_fn(move || {
            if seq >= end {
                return None;
            }
            let chunk = (seq >> CHUNK_BITS) as usize;
            let offset = seq as usize & (CHUNK_LEN - 1);
            let len = ((CHUNK_LEN - offset) as u64).min(end - seq) as usize;
            seq += len as u64;
            let ptr = self
                .chunks
                .get(chunk)
                .map_or(std::ptr::null_mut(), |c| c.load(Ordering::Acquire));
            if ptr.is_null() {
                return Some(&UNALLOCATED[offset..offset + len]);
            }
            // SAFETY: a non-null chunk pointer is an allocation of CHUNK_LEN atomics that lives
            // until the arena drops, and offset + len <= CHUNK_LEN.
            Some(unsafe { std::slice::from_raw_parts(ptr.add(offset), len) })
        })
    }
}

impl Default for SlotArena {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for SlotArena {
    fn drop(&mut self) {
        for slot in self.chunks.iter() {
            let ptr = slot.load(Ordering::Acquire);
            if !ptr.is_null() {
                // SAFETY: mapped by `map_chunk` with this length, and no reference outlives
                // the arena.
                unsafe { libc::munmap(ptr as *mut libc::c_void, CHUNK_BYTES) };
            }
        }
    }
}

/// Counts of completions the engine refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CompletionAnomalies {
    /// Completions of a sample already completed.
    pub duplicate: u64,
    /// Completions whose id was never issued.
    pub unknown: u64,
    /// Completions of a sample of an earlier series (after its drain gave up on it).
    pub late: u64,
}

/// Per-sample state, one slot per sequence id of the test.
pub(crate) struct Slots {
    /// Completion flags and time (`DONE`, `LOG`, `TIME_MASK`).
    pub(crate) status: SlotArena,
    pub(crate) qsl_index: SlotArena,
    pub(crate) first_token: SlotArena,
    pub(crate) n_tokens: SlotArena,
}

/// Completions the engine refused, by kind.
#[derive(Default)]
struct RefusedCounts {
    duplicate: AtomicU64,
    unknown: AtomicU64,
    late: AtomicU64,
}

/// The official per-sample token checks, counted instead of logged one by one.
#[derive(Default)]
struct TokenChecks {
    after_completion_reported: AtomicBool,
    latency_before_token: AtomicU64,
    zero: AtomicU64,
    negative: AtomicU64,
    one: AtomicU64,
}

/// The first failure the SUT reported; the flag spares the lock on every check.
#[derive(Default)]
struct SutFailure {
    failed: AtomicBool,
    /// The SUT is gone (its process died): nothing outstanding will ever complete, so a
    /// drain does not wait for it.
    lost: AtomicBool,
    message: Mutex<Option<String>>,
}

/// State shared by the issuing thread and every completer clone.
pub(crate) struct Shared {
    pub(crate) clock: Clock,
    pub(crate) slots: Slots,
    /// The newest samples' scheduled times, for a progress display.
    pub(crate) recent_schedule: RecentSchedule,
    pub(crate) use_tokens: bool,
    pub(crate) needs_first_token: bool,
    /// One past the last sequence id handed out.
    pub(crate) issued_end: AtomicU64,
    /// First sequence id of the series being issued.
    pub(crate) series_start: AtomicU64,
    /// Samples completed since the test began (each counted once).
    pub(crate) completed: AtomicU64,
    /// The completed count the parked issuer waits for (u64::MAX: not waiting). Completions
    /// wake it only on reaching it: a wake per batch would cost a context switch each,
    /// taken from the SUT's threads on a small machine.
    wake_at: AtomicU64,
    issuer: OnceLock<Thread>,
    refused: RefusedCounts,
    token_checks: TokenChecks,
    failure: SutFailure,
    /// Responses counted by `mark_complete` still being copied into the accuracy log.
    logging_in_flight: AtomicU64,
    /// Accuracy records kept in memory when no log files are written.
    pub(crate) accuracy_log: Mutex<Vec<AccuracyRecord>>,
    log: LogSender,
    token_cache: Mutex<HashMap<u64, Vec<u8>>>,
    pub(crate) diagnostics: DiagnosticSink,
}

impl Shared {
    pub(crate) fn new(
        clock: Clock,
        log: LogSender,
        use_tokens: bool,
        needs_first_token: bool,
    ) -> Self {
        Shared {
            clock,
            slots: Slots {
                status: SlotArena::new(),
                qsl_index: SlotArena::new(),
                first_token: SlotArena::new(),
                n_tokens: SlotArena::new(),
            },
            recent_schedule: RecentSchedule::new(),
            use_tokens,
            needs_first_token,
            issued_end: AtomicU64::new(0),
            series_start: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            wake_at: AtomicU64::new(u64::MAX),
            issuer: OnceLock::new(),
            refused: RefusedCounts::default(),
            token_checks: TokenChecks::default(),
            failure: SutFailure::default(),
            logging_in_flight: AtomicU64::new(0),
            accuracy_log: Mutex::new(Vec::new()),
            token_cache: Mutex::new(HashMap::new()),
            diagnostics: DiagnosticSink::new(log.clone()),
            log,
        }
    }

    pub(crate) fn log(&self) -> &LogSender {
        &self.log
    }

    pub(crate) fn fail_lost(&self, message: String) {
        self.fail(message);
        self.failure.lost.store(true, Ordering::Release);
    }

    fn fail(&self, message: String) {
        let mut failure = self
            .failure
            .message
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if failure.is_none() {
            *failure = Some(message);
            self.failure.failed.store(true, Ordering::Release);
        }
    }

    /// Whether the SUT is gone (see [`Completer::fail_lost`]).
    pub(crate) fn sut_lost(&self) -> bool {
        self.failure.lost.load(Ordering::Acquire)
    }

    /// The SUT's failure message, once it reported one.
    #[inline]
    pub(crate) fn failure(&self) -> Option<String> {
        if !self.failure.failed.load(Ordering::Acquire) {
            return None;
        }
        self.failure
            .message
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Registers the calling thread as the one completions wake.
    pub(crate) fn register_issuer(&self) {
        let _ = self.issuer.set(std::thread::current());
    }

    pub(crate) fn anomalies(&self) -> CompletionAnomalies {
        CompletionAnomalies {
            duplicate: self.refused.duplicate.load(Ordering::Relaxed),
            unknown: self.refused.unknown.load(Ordering::Relaxed),
            late: self.refused.late.load(Ordering::Relaxed),
        }
    }

    /// Blocks the issuing thread until `target` samples completed in total: a short spin for
    /// SUTs that answer within microseconds, then parking until a completion wakes it.
    /// Returns false if `idle_timeout` passes without any completion, or, once the SUT has
    /// reported a failure (even while waiting), [`FAILED_SUT_DRAIN`] if that is shorter.
    pub(crate) fn wait_for_completed(
        &self,
        target: u64,
        idle_timeout: Duration,
        aborted: &AtomicBool,
    ) -> bool {
        const SPIN_ROUNDS: u32 = 2_000;
        for _ in 0..SPIN_ROUNDS {
            if self.completed.load(Ordering::Acquire) >= target {
                return true;
            }
            std::hint::spin_loop();
        }
        let mut last_seen = self.completed.load(Ordering::Acquire);
        let mut idle_since = Instant::now();
        let mut aborted_at: Option<Instant> = None;
        loop {
            self.wake_at.store(target, Ordering::SeqCst);
            let done = self.completed.load(Ordering::SeqCst);
            if done >= target {
                self.wake_at.store(u64::MAX, Ordering::Relaxed);
                return true;
            }
            if done != last_seen {
                last_seen = done;
                idle_since = Instant::now();
            }
            if aborted.load(Ordering::Relaxed) {
                aborted_at.get_or_insert_with(Instant::now);
            }
            // An aborted test waits that long from the abort however steadily the SUT
            // answers: an Offline query of minutes would otherwise run to its end.
            let waited = idle_since
                .elapsed()
                .max(aborted_at.map_or(Duration::ZERO, |at| at.elapsed()));
            let timeout = self.drain_patience(idle_timeout, aborted_at.is_some());
            if waited >= timeout {
                self.wake_at.store(u64::MAX, Ordering::Relaxed);
                return false;
            }
            // Woken at the target (or by an abort); otherwise back every 50 ms to see
            // progress for the timeout (and a failure).
            std::thread::park_timeout((timeout - waited).min(Duration::from_millis(50)));
            self.wake_at.store(u64::MAX, Ordering::Relaxed);
        }
    }

    /// How long a wait for completions goes on without one: `idle_timeout` for a healthy SUT.
    /// A failed SUT may never answer what it holds: at most [`FAILED_SUT_DRAIN`] for it, and
    /// nothing for one that is gone; so too for an aborted test (Ctrl-C on a SUT that stopped
    /// answering ends the test, even with no drain timeout).
    pub(crate) fn drain_patience(&self, idle_timeout: Duration, aborted: bool) -> Duration {
        match self.failure.failed.load(Ordering::Acquire) {
            true if self.failure.lost.load(Ordering::Acquire) => Duration::ZERO,
            true => idle_timeout.min(FAILED_SUT_DRAIN),
            false if aborted => idle_timeout.min(FAILED_SUT_DRAIN),
            false => idle_timeout,
        }
    }

    /// `completed` is the count after a completion: wakes the issuer if it reached its target.
    fn wake_issuer(&self, completed: u64) {
        if completed >= self.wake_at.load(Ordering::SeqCst) {
            if let Some(thread) = self.issuer.get() {
                thread.unpark();
            }
        }
    }

    /// Finds the status slot of a response id, counting ids that are not of this series.
    #[inline]
    fn slot_of(&self, id: ResponseId) -> Option<(u64, &AtomicU64)> {
        let seq = id.0.wrapping_sub(1);
        if id.0 == 0 || seq >= self.issued_end.load(Ordering::Acquire) {
            self.refused.unknown.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        if seq < self.series_start.load(Ordering::Acquire) {
            self.refused.late.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        match self.slots.status.get(seq) {
            Some(slot) => Some((seq, slot)),
            None => {
                self.refused.unknown.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    fn complete<R: AsSampleResponse>(
        &self,
        responses: &[R],
        mut on_logged: impl FnMut(&QuerySampleResponse<'_>),
    ) {
        // One timestamp for the whole batch, as the official LoadGen takes.
        let now = self.clock.now_ns() as u64 & TIME_MASK;
        // As upstream, samples count as complete (and may unblock the issuer) before any
        // accuracy-log callback or copy runs; chunks of 64 keep the bookkeeping on the stack.
        for chunk in responses.chunks(64) {
            let mut newly_completed = 0;
            let mut logged = 0u64;
            for (position, response) in chunk.iter().enumerate() {
                if let Some(to_log) = self.mark_complete(&response.as_response(), now) {
                    newly_completed += 1;
                    logged |= u64::from(to_log) << position;
                }
            }
            if newly_completed > 0 {
                let completed =
                    self.completed.fetch_add(newly_completed, Ordering::SeqCst) + newly_completed;
                self.wake_issuer(completed);
            }
            if logged != 0 {
                for (position, response) in chunk.iter().enumerate() {
                    if logged & (1 << position) != 0 {
                        let response = response.as_response();
                        // Untimed: may fetch the bytes from a device before they are copied.
                        on_logged(&response);
                        self.log_response(&response);
                        // Counted in by `mark_complete`.
                        self.logging_in_flight.fetch_sub(1, Ordering::SeqCst);
                    }
                }
            }
        }
    }

    /// Marks one response's sample complete: `Some(to_log)` when this call completed it,
    /// `to_log` telling whether it goes to the accuracy log.
    #[inline]
    fn mark_complete(&self, response: &QuerySampleResponse<'_>, now: u64) -> Option<bool> {
        let (seq, slot) = self.slot_of(response.id)?;
        let mut current = slot.load(Ordering::Acquire);
        // A response bound for the accuracy log is counted in flight before its sample shows
        // DONE, so whoever sees DONE also sees the copy pending (see `Completer::is_released`).
        // LOG is set at issue and never changes.
        let to_log = current & LOG != 0;
        if to_log {
            self.logging_in_flight.fetch_add(1, Ordering::SeqCst);
        }
        loop {
            if current & DONE != 0 {
                if to_log {
                    self.logging_in_flight.fetch_sub(1, Ordering::SeqCst);
                }
                self.refused.duplicate.fetch_add(1, Ordering::Relaxed);
                return None;
            }
            match slot.compare_exchange_weak(
                current,
                (current & LOG) | DONE | now,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(actual) => current = actual,
            }
        }
        if self.use_tokens {
            self.record_tokens(seq, response.n_tokens);
        }
        Some(to_log)
    }

    fn record_tokens(&self, seq: u64, n_tokens: i64) {
        if let Some(n) = self.slots.n_tokens.get(seq) {
            n.store(n_tokens as u64, Ordering::Relaxed);
        }
        let error = match n_tokens {
            0 => Some(&self.token_checks.zero),
            n if n < 0 => Some(&self.token_checks.negative),
            1 => Some(&self.token_checks.one),
            _ => None,
        };
        if let Some(counter) = error {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        if self.needs_first_token
            && self
                .slots
                .first_token
                .get(seq)
                .is_some_and(|t| t.load(Ordering::Acquire) == 0)
        {
            self.token_checks
                .latency_before_token
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Copies a response into the accuracy log.
    fn log_response(&self, response: &QuerySampleResponse<'_>) {
        let seq = response.id.0 - 1;
        let qsl_idx = self
            .slots
            .qsl_index
            .get(seq)
            .map_or(0, |i| i.load(Ordering::Relaxed) as usize);
        let token_data = if self.use_tokens && self.needs_first_token {
            Some(
                self.token_cache
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&seq)
                    .unwrap_or_default(),
            )
        } else {
            None
        };
        let record = AccuracyRecord {
            seq_id: seq,
            qsl_idx,
            data: response.data.to_vec(),
            token_data,
            token_count: self.use_tokens.then_some(response.n_tokens),
        };
        if self.log.enabled() {
            self.log.accuracy(record);
        } else {
            self.accuracy_log
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(record);
        }
    }

    /// Waits (briefly) for completers still copying responses into the accuracy log.
    pub(crate) fn wait_for_logging(&self, timeout: Duration) {
        // `Duration::MAX` (no drain timeout) has no deadline.
        let deadline = Instant::now().checked_add(timeout);
        while self.logging_in_flight.load(Ordering::SeqCst) > 0
            && deadline.is_none_or(|deadline| Instant::now() < deadline)
        {
            std::thread::yield_now();
        }
    }

    /// The official per-sample token errors, counted once per kind instead of one line each.
    pub(crate) fn token_diagnostics(&self) -> Vec<Diagnostic> {
        let kinds = [
            (
                &self.token_checks.zero,
                "n_tokens argument missing or attempted to record 0 as number of tokens",
            ),
            (
                &self.token_checks.negative,
                "Attempted to record a negative number of tokens",
            ),
            (
                &self.token_checks.one,
                "Number of tokens need to be greater than 1",
            ),
            (
                &self.token_checks.latency_before_token,
                "Attempted to record a sample latency before it's first token latency",
            ),
        ];
        kinds
            .into_iter()
            .filter_map(|(counter, message)| {
                let count = counter.load(Ordering::Relaxed);
                (count > 0).then(|| {
                    Diagnostic::error("error_runtime", format!("{message} ({count} samples)"))
                })
            })
            .collect()
    }

    fn first_token(&self, responses: &[QuerySampleResponse<'_>]) {
        let now = self.clock.now_ns().max(1) as u64;
        for response in responses {
            let Some((seq, slot)) = self.slot_of(response.id) else {
                continue;
            };
            let status = slot.load(Ordering::Acquire);
            if status & DONE != 0 {
                if !self
                    .token_checks
                    .after_completion_reported
                    .swap(true, Ordering::Relaxed)
                {
                    self.diagnostics.push(Diagnostic::error(
                        "error_runtime",
                        "Attempted to record token latency after sample was completed",
                    ));
                }
                continue;
            }
            if let Some(first) = self.slots.first_token.get(seq) {
                if first
                    .compare_exchange(0, now, Ordering::AcqRel, Ordering::Relaxed)
                    .is_err()
                {
                    self.refused.duplicate.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            }
            if status & LOG != 0 {
                self.token_cache
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(seq, response.data.to_vec());
            }
        }
    }
}

/// Where a [`Completer`] sends completions when another engine runs the test (the official
/// LoadGen): the same SUT code then serves either engine.
pub trait CompletionSink: Send + Sync {
    fn complete(&self, responses: &[QuerySampleResponse<'_>]);
    fn first_token(&self, responses: &[QuerySampleResponse<'_>]);
    /// The SUT failed: see [`Completer::fail`].
    fn fail(&self, message: String);
    /// See [`Completer::is_released`]; a sink that keeps no record releases nothing.
    fn is_released(&self, _id: ResponseId) -> bool {
        false
    }
}

/// The handle a system under test completes samples with. Cheap to clone, `Send + Sync`, and
/// callable from any thread: inline inside `issue_query` or later.
#[derive(Clone)]
pub struct Completer {
    target: Target,
}

#[derive(Clone)]
enum Target {
    Engine(Arc<Shared>),
    Sink(Arc<dyn CompletionSink>),
}

/// Responses handed to a sink are converted on the stack in batches of this many; up to
/// `SINK_SMALL` in an array of that size (no large array to initialise per completion).
const SINK_BATCH: usize = 256;
const SINK_SMALL: usize = 8;

/// Converts `responses` (at most `batch.len()`) into `batch` and hands them to `sink`.
fn forward_chunk<'a, R: AsSampleResponse>(
    sink: &dyn CompletionSink,
    responses: &'a [R],
    batch: &mut [QuerySampleResponse<'a>],
    on_logged: &mut impl FnMut(&QuerySampleResponse<'_>),
) {
    for (slot, response) in batch.iter_mut().zip(responses) {
        *slot = response.as_response();
        on_logged(slot);
    }
    sink.complete(&batch[..responses.len()]);
}

/// The many-response path, out of line so the small one does not carry its stack frame.
#[inline(never)]
fn forward_in_batches<R: AsSampleResponse>(
    sink: &dyn CompletionSink,
    responses: &[R],
    on_logged: &mut impl FnMut(&QuerySampleResponse<'_>),
) {
    let mut batch = [QuerySampleResponse::new(ResponseId(0), &[]); SINK_BATCH];
    for chunk in responses.chunks(SINK_BATCH) {
        forward_chunk(sink, chunk, &mut batch, on_logged);
    }
}

impl Completer {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Completer {
            target: Target::Engine(shared),
        }
    }

    /// A completer that hands everything to `sink` (a test run by another engine).
    pub fn forwarding_to(sink: Arc<dyn CompletionSink>) -> Self {
        Completer {
            target: Target::Sink(sink),
        }
    }

    /// Reports finished samples. One timestamp is taken for the whole batch.
    pub fn query_samples_complete(&self, responses: &[QuerySampleResponse<'_>]) {
        self.complete_with(responses, |_| {});
    }

    /// As `query_samples_complete`, reading each response in place from the SUT's own type
    /// (for example a plugin's response array).
    pub fn complete_in_place<R: AsSampleResponse>(&self, responses: &[R]) {
        self.complete_with(responses, |_| {});
    }

    /// As `query_samples_complete`, calling `on_logged` (untimed work such as a copy from the
    /// device) for each response that will be written to the accuracy log, before it is copied.
    /// Forwarded to a sink, every response counts as logged (the other engine decides).
    pub fn query_samples_complete_with<R: AsSampleResponse>(
        &self,
        responses: &[R],
        on_logged: impl FnMut(&QuerySampleResponse<'_>),
    ) {
        self.complete_with(responses, on_logged);
    }

    fn complete_with<R: AsSampleResponse>(
        &self,
        responses: &[R],
        mut on_logged: impl FnMut(&QuerySampleResponse<'_>),
    ) {
        match &self.target {
            Target::Engine(shared) => shared.complete(responses, on_logged),
            Target::Sink(sink) if responses.len() <= SINK_SMALL => {
                // One query of SingleStream, Server or MultiStream: a small array to fill.
                let mut batch = [QuerySampleResponse::new(ResponseId(0), &[]); SINK_SMALL];
                forward_chunk(&**sink, responses, &mut batch, &mut on_logged);
            }
            Target::Sink(sink) => forward_in_batches(&**sink, responses, &mut on_logged),
        }
    }

    /// Reports the first token of samples of a token run (time to first token).
    pub fn first_token_complete(&self, responses: &[QuerySampleResponse<'_>]) {
        match &self.target {
            Target::Engine(shared) => shared.first_token(responses),
            Target::Sink(sink) => sink.first_token(responses),
        }
    }

    /// Whether sample `id` has completed and the engine no longer reads its response (an id
    /// the test never issued counts as released: nothing will complete it). For a SUT that
    /// recycles the memory its responses point into. Conservative: a sample bound for the
    /// accuracy log counts as released only once no response is being copied there. Under
    /// another engine, the sink forwarding to it says.
    pub fn is_released(&self, id: ResponseId) -> bool {
        let shared = match &self.target {
            Target::Engine(shared) => shared,
            Target::Sink(sink) => return sink.is_released(id),
        };
        let seq = id.0.wrapping_sub(1);
        if id.0 == 0 || seq >= shared.issued_end.load(Ordering::Acquire) {
            return true;
        }
        let Some(slot) = shared.slots.status.get(seq) else {
            return true;
        };
        let status = slot.load(Ordering::Acquire);
        status & DONE != 0
            && (status & LOG == 0 || shared.logging_in_flight.load(Ordering::SeqCst) == 0)
    }

    /// The SUT failed: the engine stops issuing, drains what is outstanding and ends the run
    /// INVALID with this message. Callable from any thread; the first failure is kept.
    pub fn fail(&self, message: impl Into<String>) {
        match &self.target {
            Target::Engine(shared) => shared.fail(message.into()),
            Target::Sink(sink) => sink.fail(message.into()),
        }
    }

    /// As [`Completer::fail`], for a SUT that is gone (its process died): no outstanding
    /// sample will complete, so the drain ends at once instead of waiting for them.
    pub fn fail_lost(&self, message: impl Into<String>) {
        match &self.target {
            Target::Engine(shared) => shared.fail_lost(message.into()),
            Target::Sink(sink) => sink.fail(message.into()),
        }
    }
}

impl std::fmt::Debug for Completer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completer").finish_non_exhaustive()
    }
}
