//! Completions read from the completion ring and handed to the engine in batches, by the
//! reader thread or by the issuing thread while it waits; flushes waited for.

use std::mem::MaybeUninit;
use std::sync::atomic::{fence, Ordering};
use std::time::{Duration, Instant};

use super::super::region::*;
use super::{Inner, Link};
use crate::loadgen::{QuerySampleResponse, ResponseId};

/// Responses are handed to the engine in batches of at most this many.
const BATCH: usize = 256;

/// Rounds the host's reader spins before it sleeps: LoadGen's issuing thread takes
/// completions itself while it waits for a query, so the reader mostly serves plugins that
/// complete from threads of their own (and a sweep, whose issue thread leaves it every one).
const READER_SPINS: u32 = 500;
/// Rounds the issuing thread polls for a completion when it is about to wait (a plugin
/// answering inline answers within them; a slower one is left to the reader).
const ISSUER_POLLS: u32 = 2_000;

/// How long a call waits for the report of a process that is gone.
const EXIT_PATIENCE: Duration = Duration::from_secs(5);

/// Reads the completion ring until the process has exited and the ring is empty. While the
/// issuing thread polls, the completions are its to take: the reader sleeps, so that it takes
/// no core from the issuing thread or the plugin's process.
pub(super) fn receive_completions(inner: &Inner) {
    let header = inner.region.header();
    let link = &inner.link;
    let polled = || header.done_polled.0.load(Ordering::Relaxed) != 0;
    loop {
        if !polled() {
            match inner.take_completions() {
                Some(0) | None => {}
                Some(_) => continue,
            }
        }
        if link.exited.load(Ordering::SeqCst) && !inner.completion_ready() {
            if inner.take_completions() == Some(0) {
                link.drained.store(true, Ordering::SeqCst);
                return;
            }
            continue;
        }
        let spins = if polled() { 0 } else { READER_SPINS };
        let woken = wait_until(
            &header.done.consumer_asleep.0,
            spins,
            Duration::from_millis(50),
            || !polled() && inner.completion_ready(),
        );
        if woken && inner.consuming.load(Ordering::Relaxed) {
            // The issuing thread is taking them.
            std::thread::yield_now();
        } else if !woken && inner.completion_ready() {
            // Left waiting a whole timeout while the issuing thread polls: taken anyway.
            inner.take_completions();
        }
    }
}

impl Inner {
    /// Whether samples written to the issue ring have not come back yet.
    #[inline]
    pub(super) fn outstanding(&self) -> bool {
        self.issued.load(Ordering::Relaxed) != self.link.completed.load(Ordering::Relaxed)
    }

    /// Tells the process that the issuing thread takes the completions itself. Left set while
    /// it comes back soon (LoadGen's issuing thread polls before it waits): a store per query
    /// would move the flag's cache line between the processes.
    #[inline]
    pub(super) fn mark_polled(&self) {
        let polled = &self.region.header().done_polled.0;
        if polled.load(Ordering::Relaxed) == 0 {
            polled.store(1, Ordering::SeqCst);
        }
    }

    /// The issuing thread never takes completions from now on (a sweep's): the process wakes
    /// the reader for every one.
    pub(super) fn leave_completions_to_reader(&self) {
        self.reader_only.store(true, Ordering::SeqCst);
        self.release_completions();
    }

    /// The issuing thread takes no completions for now: the process wakes the reader for them
    /// (else they would wait for the reader's timeout).
    fn release_completions(&self) {
        let header = self.region.header();
        let polled = &header.done_polled.0;
        if polled.load(Ordering::Relaxed) == 0 {
            return;
        }
        polled.store(0, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        // A completion published while the process still saw the flag: the reader takes it.
        if self.completion_ready() {
            wake_anyway(&header.done.consumer_asleep.0);
        }
    }

    /// Returns once the plugin's `flush_queries` has returned `asked` times, as the call
    /// returns in-process (one that never returns is the watcher's to end: it kills the
    /// process after the stall timeout), taking the completions that come meanwhile.
    pub(super) fn wait_for_flush(&self, asked: u64) {
        let flushes = &self.region.header().flushes.0;
        let mut spins = 0u32;
        // A process killed (or dead) in the call: not before its failure is reported, or the
        // series could end VALID first.
        let mut gone_since = None;
        let mut ended = || {
            if self.link.exit_handled.load(Ordering::SeqCst) {
                return true;
            }
            // Should the watcher never report (it cannot wait on the process), not forever.
            let gone = self.link.gone.load(Ordering::SeqCst);
            gone && gone_since.get_or_insert_with(Instant::now).elapsed() > EXIT_PATIENCE
        };
        while flushes.load(Ordering::Acquire) < asked && !ended() {
            self.take_completions();
            if spins < SPINS {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }

    /// Whether the completion ring holds an entry not taken yet.
    #[inline]
    pub(super) fn completion_ready(&self) -> bool {
        let tail = self.region.header().done.tail.0.load(Ordering::Acquire);
        self.region.done_slot(tail).holds(tail)
    }

    /// Hands the engine what the completion ring holds, unless another thread is at it
    /// (`None`); returns how many entries were taken.
    pub(super) fn take_completions(&self) -> Option<u64> {
        // Nothing to take: no need for the (contended) flag.
        if !self.completion_ready() {
            return Some(0);
        }
        if self
            .consuming
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return None;
        }
        let header = self.region.header();
        let ring = &header.done;
        let link = &self.link;
        let start = ring.tail.0.load(Ordering::Relaxed);
        let mut tail = start;
        // Not initialised up front: that alone would cost more than a SingleStream query.
        let mut batch = [const { MaybeUninit::<QuerySampleResponse<'_>>::uninit() }; BATCH];
        let mut released = header.arena_tail.0.load(Ordering::Relaxed);
        loop {
            let mut kind = None;
            let mut filled = 0;
            let mut taken = 0;
            let mut emptied = false;
            while filled < BATCH {
                // SAFETY: the completion ring's one consumer (holding `consuming`).
                let Some(entry) = (unsafe { self.region.done_slot(tail).take(tail) }) else {
                    emptied = true;
                    break;
                };
                tail += 1;
                taken += 1;
                released = released.max(entry.offset.saturating_add(entry.length()));
                if entry.kind() == DONE_BATCH {
                    deliver(link, kind, written(&batch, filled));
                    (kind, filled) = (None, 0);
                    self.deliver_record(&entry, &mut batch);
                    // Its room is released before the next is read.
                    break;
                }
                match entry.kind() {
                    DONE_TIMING => {
                        self.note_timing(response_bytes(self, &entry));
                        continue;
                    }
                    DONE_NEXT_TOKENS => {
                        // After the first tokens taken so far: a gap is timed from them.
                        if self.tokens.get().is_some() {
                            deliver(link, kind, written(&batch, filled));
                            (kind, filled) = (None, 0);
                        }
                        self.note_tokens(response_bytes(self, &entry));
                        continue;
                    }
                    DONE_SAMPLE_FAILED => {
                        // The completions taken so far go first: the failure may end the run.
                        deliver(link, kind, written(&batch, filled));
                        (kind, filled) = (None, 0);
                        self.note_sample_failure(response_bytes(self, &entry));
                        continue;
                    }
                    _ => {}
                }
                if kind.is_some_and(|k| k != entry.kind()) {
                    deliver(link, kind, written(&batch, filled));
                    filled = 0;
                }
                kind = Some(entry.kind());
                batch[filled].write(QuerySampleResponse::with_tokens(
                    ResponseId(entry.id),
                    response_bytes(self, &entry),
                    entry.n_tokens(),
                ));
                filled += 1;
            }
            if taken == 0 {
                break;
            }
            deliver(link, kind, written(&batch, filled));
            header.arena_tail.0.store(released, Ordering::Release);
            ring.tail.0.store(tail, Ordering::Release);
            wake(&ring.producer_asleep.0);
            if emptied {
                break;
            }
        }
        self.consuming.store(false, Ordering::Release);
        Some(tail - start)
    }

    /// The issuing thread is about to wait (until `deadline`, when the next query is due):
    /// while samples are outstanding, it takes their completions itself for a short while,
    /// sparing the hand-over to the reader thread.
    pub(super) fn poll_completions(&self, deadline: Option<Instant>) {
        if !self.outstanding() || self.reader_only.load(Ordering::Relaxed) {
            return;
        }
        self.mark_polled();
        let mut taken = 0;
        let mut due = false;
        for _ in 0..ISSUER_POLLS {
            taken += self.take_completions().unwrap_or(0);
            let settled = taken > 0 && !self.completion_ready();
            match deadline {
                // Waiting for completions: one is enough.
                None if settled => break,
                // Waiting for the next query: until nothing is outstanding or it is due.
                Some(deadline) => {
                    if settled && !self.outstanding() {
                        break;
                    }
                    if Instant::now() >= deadline {
                        due = true;
                        break;
                    }
                }
                None => {}
            }
            std::hint::spin_loop();
        }
        if !due && self.outstanding() {
            // A longer wait: the reader takes the rest, woken by the process from now on.
            self.release_completions();
        }
    }

    /// Hands the engine the completions of a [`BatchRecord`], `batch` at a time; a corrupt
    /// record (the plugin wrote over the shared region) fails the run where it goes wrong.
    /// A sample's timing the plugin reported (see [`DONE_TIMING`]), into the run's table.
    fn note_timing(&self, record: &[u8]) {
        let Some(timing) = self.timing.get() else {
            return;
        };
        if record.len() as u64 != TIMING_RECORD_BYTES {
            return;
        }
        let [id, dequeued, started, ended] = [0, 1, 2, 3].map(|k| le_u64(record, 8 * k));
        timing.table.report(id, dequeued, started, ended);
    }

    /// Tokens after an answer's first (see [`DONE_NEXT_TOKENS`]), to whoever takes them.
    fn note_tokens(&self, record: &[u8]) {
        let Some(tokens) = self.tokens.get() else {
            return;
        };
        if record.len() as u64 != NEXT_TOKENS_RECORD_BYTES {
            return;
        }
        let [id, count, at] = [0, 1, 2].map(|k| le_u64(record, 8 * k));
        match count as i64 {
            FIRST_TOKEN_AT => tokens.first_token(id, at as i64),
            count => tokens.next_tokens(id, count, at as i64),
        }
    }

    /// One sample's failure (see [`DONE_SAMPLE_FAILED`]): it is finished; whoever counts
    /// failures gets it, else the run fails with it, as in the host's process.
    fn note_sample_failure(&self, record: &[u8]) {
        let head = SAMPLE_FAILED_HEAD_BYTES as usize;
        if record.len() < head {
            self.link.fail(
                "plugin process wrote a corrupt sample failure".to_string(),
                false,
            );
            return;
        }
        let (id, at) = (le_u64(record, 0), le_u64(record, 8) as i64);
        let kind = le_u64(record, 16) as u32 as i32;
        let status = (le_u64(record, 16) >> 32) as u32 as i32;
        let message = String::from_utf8_lossy(&record[head..]);
        match self.failures.get() {
            Some(failures) => failures.sample_failed(id, kind, status, &message, at),
            None => {
                let plugin = self.name.get().map_or("?", String::as_str);
                self.link
                    .fail(format!("plugin {plugin} failed: {message}"), false);
            }
        }
        // Only the thread holding `consuming` delivers: no locked increment needed.
        let completed = self.link.completed.load(Ordering::Relaxed);
        self.link.completed.store(completed + 1, Ordering::Relaxed);
    }

    fn deliver_record<'a>(
        &'a self,
        entry: &DoneEntry,
        batch: &mut [MaybeUninit<QuerySampleResponse<'a>>; BATCH],
    ) {
        let corrupt = || {
            self.link.fail(
                format!(
                    "plugin process wrote a corrupt batch of completions ({} of them, {} bytes at {})",
                    entry.id,
                    entry.length(),
                    entry.offset
                ),
                false,
            )
        };
        let length = entry.length();
        let plain = entry.n_tokens() != 0;
        let described = match plain {
            true => BatchRecord::ID_BYTES,
            false => BatchRecord::DESCRIBED_BYTES,
        };
        let at = entry.offset % ARENA_BYTES;
        let n = entry.id;
        if length > MAX_ISOLATED_RESPONSE
            || at + length > ARENA_BYTES
            || n.checked_mul(described).is_none_or(|bytes| bytes > length)
        {
            return corrupt();
        }
        let n = n as usize;
        let record = self.region.arena(entry.offset, length) as *const u8;
        // Reads within the record's `length` bytes of the arena (checked above for the fixed
        // parts, per response for the bytes), which the process does not reuse until the host
        // releases them after delivery.
        let read_u32 = |at: usize| {
            // SAFETY: `at` within the record's fixed parts (callers).
            unsafe { (record.add(at) as *const u32).read_unaligned() }
        };
        let mut data_at = 16 * n;
        for first in (0..n).step_by(BATCH) {
            let count = BATCH.min(n - first);
            for (slot, i) in batch.iter_mut().zip(first..first + count) {
                // SAFETY: the i-th id, i < n, within the record (checked above).
                let id = unsafe { (record.add(8 * i) as *const u64).read_unaligned() };
                let (bytes, n_tokens): (&'a [u8], i64) = if plain {
                    (&[], 0)
                } else {
                    let bytes = read_u32(8 * n + 4 * i) as usize;
                    let n_tokens = read_u32(12 * n + 4 * i) as i32;
                    if (data_at + bytes) as u64 > length {
                        return corrupt();
                    }
                    // SAFETY: `bytes` bytes from `data_at`, within the record (checked).
                    let data = unsafe { std::slice::from_raw_parts(record.add(data_at), bytes) };
                    data_at += bytes;
                    (data, i64::from(n_tokens))
                };
                slot.write(QuerySampleResponse::with_tokens(
                    ResponseId(id),
                    bytes,
                    n_tokens,
                ));
            }
            deliver(&self.link, Some(DONE_COMPLETE), written(batch, count));
        }
    }
}

/// The first `filled` responses of `batch`.
fn written<'a, 'b>(
    batch: &'b [MaybeUninit<QuerySampleResponse<'a>>],
    filled: usize,
) -> &'b [QuerySampleResponse<'a>] {
    debug_assert!(filled <= batch.len());
    // SAFETY: the first `filled` elements are written (callers).
    unsafe { std::slice::from_raw_parts(batch.as_ptr() as *const QuerySampleResponse<'a>, filled) }
}

/// The little-endian u64 at `at` of `record` (in bounds: callers check the length).
fn le_u64(record: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(record[at..at + 8].try_into().expect("eight bytes"))
}

/// A completion's bytes in the arena; a corrupt entry (the plugin wrote over the shared
/// region) reads as empty and fails the run.
fn response_bytes<'a>(inner: &'a Inner, entry: &DoneEntry) -> &'a [u8] {
    let length = entry.length();
    if length == 0 {
        return &[];
    }
    let at = entry.offset % ARENA_BYTES;
    if length > MAX_ISOLATED_RESPONSE || at + length > ARENA_BYTES {
        inner.link.fail(
            format!(
                "plugin process wrote a corrupt completion (sample id {}, {} bytes at {})",
                entry.id, length, entry.offset
            ),
            false,
        );
        return &[];
    }
    // SAFETY: within the arena (checked); the process does not reuse these bytes until the
    // host releases them after delivery.
    unsafe { std::slice::from_raw_parts(inner.region.arena(entry.offset, length), length as usize) }
}

fn deliver(link: &Link, kind: Option<u64>, responses: &[QuerySampleResponse<'_>]) {
    if responses.is_empty() {
        return;
    }
    if kind == Some(DONE_FAIL) {
        // Also before the first issue: kept for it.
        for response in responses {
            link.fail(String::from_utf8_lossy(response.data).into_owned(), false);
        }
        return;
    }
    let Some(completer) = link.completer.get() else {
        return;
    };
    match kind {
        Some(DONE_COMPLETE) => {
            completer.query_samples_complete(responses);
            // Only the thread holding `consuming` delivers: no locked increment needed.
            let completed = link.completed.load(Ordering::Relaxed);
            link.completed
                .store(completed + responses.len() as u64, Ordering::Relaxed);
        }
        Some(DONE_FIRST_TOKEN) => completer.first_token_complete(responses),
        _ => {}
    }
}
