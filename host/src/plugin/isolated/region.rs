//! The shared region both processes map: a header of atomics, the issue ring (host to
//! plugin process), the completion ring (back) and the response arena the completions' bytes
//! are copied into. Each ring has one producer and one consumer; an entry is published by a
//! stamp in its own slot, so the consumer reads one cache line per entry and no head index.
//! A side that finds nothing to do spins briefly, then sleeps on a futex word the other side
//! wakes only when it is set, so a busy run makes no system call per sample.

use std::cell::UnsafeCell;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use super::shm::Mapping;

/// Issue ring entries (a larger Offline query streams through it).
pub(super) const ISSUE_SLOTS: u64 = 1 << 16;
/// Completion ring entries.
pub(super) const DONE_SLOTS: u64 = 1 << 16;
/// Bytes of responses in flight from the plugin's process to the host.
pub(super) const ARENA_BYTES: u64 = 64 << 20;
/// The longest response an isolated plugin may return: half the arena, so that one response
/// never waits for the whole arena to drain.
pub(super) const MAX_ISOLATED_RESPONSE: u64 = ARENA_BYTES / 2;

const MAGIC: u64 = u64::from_le_bytes(*b"mlpiso03");

/// `IssueEntry::kind` of the first sample of a query: the query's length (at least 1).
/// Continuation samples carry 0; the largest values are markers.
pub(super) const KIND_FLUSH: u64 = u64::MAX;
/// Destroy the instance and exit.
pub(super) const KIND_DESTROY: u64 = u64::MAX - 1;
/// A sample image follows on the descriptor socket; `index` is its generation.
pub(super) const KIND_SAMPLES: u64 = u64::MAX - 2;
/// Size the hand-over buffer for a query of `index` samples.
pub(super) const KIND_RESERVE: u64 = u64::MAX - 3;
/// A large query's samples follow (`index` of them, continuation entries), ahead of its
/// turn and outside the timed window (`prepare_query`).
pub(super) const KIND_PREPARE: u64 = u64::MAX - 4;
/// Issue the prepared query: `id` its first sample's, `index` its length.
pub(super) const KIND_ISSUE_PREPARED: u64 = u64::MAX - 5;
/// The loaded set's indices follow (`index` of them, continuation entries): call the
/// plugin's `load_samples`, or with KIND_UNLOAD its `unload_samples`, and answer.
pub(super) const KIND_LOAD: u64 = u64::MAX - 6;
pub(super) const KIND_UNLOAD: u64 = u64::MAX - 7;
/// Markers start here; query lengths stay below.
pub(super) const FIRST_MARKER: u64 = u64::MAX - 15;

/// `DoneEntry::kind`.
pub(super) const DONE_COMPLETE: u64 = 0;
pub(super) const DONE_FIRST_TOKEN: u64 = 1;
/// The plugin failed: the message's bytes in the arena. In the ring, so that it reaches the
/// host before the completions of the samples it refused.
pub(super) const DONE_FAIL: u64 = 2;
/// Several completions in one record in the arena ([`BatchRecord`]): `id` is their number.
pub(super) const DONE_BATCH: u64 = 3;
/// A sample's timing (`report_timing`, ABI 1.4) in the arena: four u64s, its id, when it was
/// dequeued, when its compute began and ended. In the ring ahead of the sample's completion.
pub(super) const DONE_TIMING: u64 = 4;
/// The bytes of a [`DONE_TIMING`] record.
pub(super) const TIMING_RECORD_BYTES: u64 = 32;
/// Tokens of an answer after its first (`next_tokens`, ABI 1.5) in the arena: its id, how
/// many tokens, and when the plugin's process got the call (CLOCK_MONOTONIC is the machine's,
/// so the stamp is the host's clock too), three 64-bit numbers.
pub(super) const DONE_NEXT_TOKENS: u64 = 5;
/// The bytes of a [`DONE_NEXT_TOKENS`] record.
pub(super) const NEXT_TOKENS_RECORD_BYTES: u64 = 24;
/// A [`DONE_NEXT_TOKENS`] record of this many tokens is an answer's first token: when the
/// plugin's process took it, ahead of its [`DONE_FIRST_TOKEN`] entry (only while a sweep
/// times tokens).
pub(super) const FIRST_TOKEN_AT: i64 = -1;
/// One sample failed on its own (`fail_samples`, ABI 1.5) in the arena: its id (u64), when
/// (i64), the failure's kind and status (i32 each), then the message. Ends the sample.
pub(super) const DONE_SAMPLE_FAILED: u64 = 6;
/// The fixed part of a [`DONE_SAMPLE_FAILED`] record, before its message.
pub(super) const SAMPLE_FAILED_HEAD_BYTES: u64 = 24;

/// What the plugin's process is doing, in `Header::call`.
pub(super) const CALL_ISSUE: u32 = 1;
pub(super) const CALL_FLUSH: u32 = 2;
pub(super) const CALL_DESTROY: u32 = 3;
pub(super) const CALL_LOAD: u32 = 4;
pub(super) const CALL_UNLOAD: u32 = 5;

pub(super) fn call_name(call: u32) -> &'static str {
    match call {
        CALL_ISSUE => "issue_query",
        CALL_FLUSH => "flush_queries",
        CALL_DESTROY => "destroy",
        CALL_LOAD => "load_samples",
        CALL_UNLOAD => "unload_samples",
        _ => "a call",
    }
}

#[repr(C, align(64))]
pub(super) struct Padded<T>(pub T);

#[repr(C)]
pub(super) struct RingControl {
    /// Entries taken by the consumer (a running count); the producer reads it only when the
    /// ring looks full.
    pub tail: Padded<AtomicU64>,
    /// 1 while the consumer sleeps for entries.
    pub consumer_asleep: Padded<AtomicU32>,
    /// 1 while the producer sleeps for room.
    pub producer_asleep: Padded<AtomicU32>,
}

#[repr(C)]
pub(super) struct Header {
    magic: u64,
    /// Advanced by the plugin process's heartbeat thread.
    pub heartbeat: Padded<AtomicU64>,
    /// Odd while the plugin process is in a call into the plugin; advanced on entry and on
    /// return, so the host's watcher sees a call that stays.
    pub calls: Padded<AtomicU64>,
    /// Which call (`CALL_*`).
    pub call: Padded<AtomicU32>,
    pub issue: RingControl,
    pub done: RingControl,
    /// Arena bytes claimed by the completion producer, and released by the host (running
    /// counts; position = count % ARENA_BYTES).
    pub arena_head: Padded<AtomicU64>,
    pub arena_tail: Padded<AtomicU64>,
    /// 1 while the host's issuing thread polls the completion ring itself (waiting for a
    /// query): the producer then need not wake the host's reader.
    pub done_polled: Padded<AtomicU32>,
    /// `flush_queries` calls that have returned in the plugin's process (a running count).
    pub flushes: Padded<AtomicU64>,
    /// 1 once the host takes the tokens after each answer's first (a sweep): until then the
    /// plugin's process drops them rather than send a record per streamed piece.
    pub tokens_wanted: Padded<AtomicU32>,
}

/// A ring entry: its payload and the stamp that publishes it (the entry's running number
/// plus one; a zeroed slot holds nothing).
#[repr(C, align(32))]
pub(super) struct Slot<T> {
    stamp: AtomicU64,
    payload: UnsafeCell<T>,
}

impl<T: Copy> Slot<T> {
    /// Writes entry `seq` and publishes it.
    ///
    /// # Safety
    /// Only the ring's producer calls it, for a slot the consumer has released (it has taken
    /// entry `seq` - slots).
    pub(super) unsafe fn publish(&self, seq: u64, payload: T) {
        // SAFETY: nobody reads the payload until the stamp says it is there (caller).
        unsafe { self.payload.get().write(payload) };
        self.stamp.store(seq + 1, Ordering::Release);
    }

    /// Whether entry `seq` is published here.
    #[inline]
    pub(super) fn holds(&self, seq: u64) -> bool {
        self.stamp.load(Ordering::Acquire) == seq + 1
    }

    /// Entry `seq`, once published.
    ///
    /// # Safety
    /// Only the ring's consumer calls it; the producer does not rewrite the slot before the
    /// consumer's tail passes `seq`.
    #[inline]
    pub(super) unsafe fn take(&self, seq: u64) -> Option<T> {
        // SAFETY: published (stamp) and not rewritten before it is released (caller).
        self.holds(seq)
            .then(|| unsafe { self.payload.get().read_volatile() })
    }
}

/// One sample of a query, or a marker.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(super) struct IssueEntry {
    pub id: u64,
    pub index: u64,
    pub kind: u64,
}

/// One completion or first token; its bytes at `offset` (a running count) in the arena.
/// Packed so that a slot is half a cache line: an Offline run moves millions of them.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(super) struct DoneEntry {
    pub id: u64,
    pub offset: u64,
    /// The length, and the kind's bits ([`FIRST_TOKEN_BIT`], [`FAIL_BIT`], [`TIMING_BIT`]).
    length_kind: u32,
    n_tokens: i32,
}

/// Set in `DoneEntry::length_kind` for a first token, for a failure, and both for a batch
/// (responses are far shorter).
const FIRST_TOKEN_BIT: u32 = 1 << 31;
const FAIL_BIT: u32 = 1 << 30;
const KIND_BITS: u32 = FIRST_TOKEN_BIT | FAIL_BIT;
/// Set in `DoneEntry::length_kind` for a timing record alone, with the first-token bit for
/// next tokens, with the failure bit for one sample's failure (lengths stay far below it).
const TIMING_BIT: u32 = 1 << 29;

impl DoneEntry {
    /// `length` at most [`MAX_ISOLATED_RESPONSE`]; a token count beyond i32 is clamped.
    pub(super) fn new(kind: u64, id: u64, offset: u64, length: u64, n_tokens: i64) -> DoneEntry {
        debug_assert!(length <= MAX_ISOLATED_RESPONSE);
        let kind_bit = match kind {
            DONE_FIRST_TOKEN => FIRST_TOKEN_BIT,
            DONE_FAIL => FAIL_BIT,
            DONE_BATCH => KIND_BITS,
            DONE_TIMING => TIMING_BIT,
            DONE_NEXT_TOKENS => TIMING_BIT | FIRST_TOKEN_BIT,
            DONE_SAMPLE_FAILED => TIMING_BIT | FAIL_BIT,
            _ => 0,
        };
        DoneEntry {
            id,
            offset,
            length_kind: length as u32 | kind_bit,
            n_tokens: n_tokens.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
        }
    }

    pub(super) fn kind(&self) -> u64 {
        let timing = self.length_kind & TIMING_BIT != 0;
        match (self.length_kind & KIND_BITS, timing) {
            (0, true) => DONE_TIMING,
            (0, false) => DONE_COMPLETE,
            (FIRST_TOKEN_BIT, true) => DONE_NEXT_TOKENS,
            (FIRST_TOKEN_BIT, false) => DONE_FIRST_TOKEN,
            (FAIL_BIT, true) => DONE_SAMPLE_FAILED,
            (FAIL_BIT, false) => DONE_FAIL,
            _ => DONE_BATCH,
        }
    }

    pub(super) fn length(&self) -> u64 {
        (self.length_kind & !(KIND_BITS | TIMING_BIT)) as u64
    }

    pub(super) fn n_tokens(&self) -> i64 {
        self.n_tokens as i64
    }
}

/// The layout of a [`DONE_BATCH`] record of `n` completions in the arena: their ids (u64),
/// then, unless every response is empty and without a token count (`plain`, said by the
/// entry's token field), their lengths (u32), token counts (i32) and bytes one after
/// another. One entry and one sequential record for a whole `complete` call, instead of an
/// entry (half a cache line) per sample.
pub(super) struct BatchRecord;

impl BatchRecord {
    pub(super) const ID_BYTES: u64 = 8;
    /// Id, length and token count.
    pub(super) const DESCRIBED_BYTES: u64 = 16;

    /// The record's size, `None` when it would not fit in the largest response.
    pub(super) fn size(n: usize, plain: bool, data_bytes: u64) -> Option<u64> {
        let n = n as u64;
        let size = match plain {
            true => n.checked_mul(Self::ID_BYTES)?,
            false => n
                .checked_mul(Self::DESCRIBED_BYTES)?
                .checked_add(data_bytes)?,
        };
        (size <= MAX_ISOLATED_RESPONSE).then_some(size)
    }
}

const _: () = assert!(std::mem::size_of::<Slot<IssueEntry>>() == 32);
const _: () = assert!(std::mem::size_of::<Slot<DoneEntry>>() == 32);
const _: () = assert!(MAX_ISOLATED_RESPONSE < TIMING_BIT as u64);

const fn header_len() -> usize {
    std::mem::size_of::<Header>().next_multiple_of(4096)
}
const ISSUE_AT: usize = header_len();
const DONE_AT: usize = ISSUE_AT + ISSUE_SLOTS as usize * std::mem::size_of::<Slot<IssueEntry>>();
const ARENA_AT: usize =
    (DONE_AT + DONE_SLOTS as usize * std::mem::size_of::<Slot<DoneEntry>>()).next_multiple_of(4096);
/// The region's size.
pub(super) const REGION_BYTES: usize = ARENA_AT + ARENA_BYTES as usize;

/// The mapped region, typed.
pub(super) struct Region {
    mapping: Mapping,
}

impl Region {
    /// The host's side: a fresh region, stamped.
    pub(super) fn create() -> std::io::Result<(std::os::fd::OwnedFd, Region)> {
        let (fd, mapping) = Mapping::create("mlperf-host-isolated", REGION_BYTES)?;
        mapping.populate(ARENA_AT);
        let region = Region { mapping };
        // SAFETY: the first word of a fresh zeroed mapping nobody else has yet.
        unsafe { (region.mapping.as_ptr() as *mut u64).write(MAGIC) };
        Ok((fd, region))
    }

    /// The plugin process's side: the region the host made.
    pub(super) fn open(fd: std::os::fd::RawFd) -> std::io::Result<Region> {
        let len = Mapping::file_len(fd)?;
        if len != REGION_BYTES {
            return Err(std::io::Error::other(format!(
                "shared region of {len} bytes, expected {REGION_BYTES} (host and plugin process of different builds?)"
            )));
        }
        let region = Region {
            mapping: Mapping::map(fd, len, true)?,
        };
        // The header and rings are touched from the first query on (the arena only by
        // responses with data).
        region.mapping.populate(ARENA_AT);
        if region.header().magic != MAGIC {
            return Err(std::io::Error::other("shared region without its stamp"));
        }
        Ok(region)
    }

    pub(super) fn header(&self) -> &Header {
        // SAFETY: the region starts with a Header (zero is a valid value of every field),
        // page-aligned.
        unsafe { &*(self.mapping.as_ptr() as *const Header) }
    }

    /// The issue ring's slot of entry `seq`.
    #[inline]
    pub(super) fn issue_slot(&self, seq: u64) -> &Slot<IssueEntry> {
        let at = (seq % ISSUE_SLOTS) as usize;
        // SAFETY: within the issue ring, aligned (page-aligned base, slot-sized steps); zero is
        // a valid slot.
        unsafe { &*(self.mapping.as_ptr().add(ISSUE_AT) as *const Slot<IssueEntry>).add(at) }
    }

    /// The completion ring's slot of entry `seq`.
    #[inline]
    pub(super) fn done_slot(&self, seq: u64) -> &Slot<DoneEntry> {
        let at = (seq % DONE_SLOTS) as usize;
        // SAFETY: as in issue_slot, within the completion ring.
        unsafe { &*(self.mapping.as_ptr().add(DONE_AT) as *const Slot<DoneEntry>).add(at) }
    }

    /// Populates the arena's bytes `start..end` (its first lap; `start` page-aligned), so
    /// that the process writing responses there does not fault a page at a time.
    pub(super) fn populate_arena(&self, start: u64, end: u64) {
        let end = end.min(ARENA_BYTES);
        if start < end {
            self.mapping
                .populate_range(ARENA_AT + start as usize, (end - start) as usize);
        }
    }

    /// The arena's bytes at running offset `offset`, `length` long (not wrapping: the
    /// producer places a response so it does not).
    pub(super) fn arena(&self, offset: u64, length: u64) -> *mut u8 {
        let at = (offset % ARENA_BYTES) as usize;
        debug_assert!(at as u64 + length <= ARENA_BYTES);
        // SAFETY: within the arena.
        unsafe { self.mapping.as_ptr().add(ARENA_AT + at) }
    }
}

fn futex_wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let timeout = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: a futex on a word of the shared mapping (not private: both processes wait on
    // and wake it); returns on a wake, a timeout, a signal or a changed value.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &timeout as *const libc::timespec,
            std::ptr::null::<u32>(),
            0,
        )
    };
}

fn futex_wake(word: &AtomicU32) {
    // SAFETY: as in futex_wait.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            i32::MAX,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0,
        )
    };
}

/// Spins before sleeping: a busy peer answers within microseconds.
pub(super) const SPINS: u32 = 4_000;

/// Waits until `ready()`, at most about `timeout`: spins `spins` rounds, then sleeps on
/// `asleep` until the other side calls [`wake`] on it. Returns `ready()`.
pub(super) fn wait_until(
    asleep: &AtomicU32,
    spins: u32,
    timeout: Duration,
    ready: impl Fn() -> bool,
) -> bool {
    for _ in 0..spins {
        if ready() {
            return true;
        }
        std::hint::spin_loop();
    }
    asleep.store(1, Ordering::SeqCst);
    fence(Ordering::SeqCst);
    // Either the waker sees the flag, or this sees its progress.
    if ready() {
        asleep.store(0, Ordering::Relaxed);
        return true;
    }
    futex_wait(asleep, 1, timeout);
    asleep.store(0, Ordering::Relaxed);
    ready()
}

/// After publishing progress: wakes the other side if it sleeps on `asleep`.
#[inline]
pub(super) fn wake(asleep: &AtomicU32) {
    fence(Ordering::SeqCst);
    if asleep.load(Ordering::Relaxed) != 0 {
        asleep.store(0, Ordering::Relaxed);
        futex_wake(asleep);
    }
}

/// As [`wake`], unless `polled` says a consumer is polling (and so sees the progress).
#[inline]
pub(super) fn wake_unless_polled(polled: &AtomicU32, asleep: &AtomicU32) {
    fence(Ordering::SeqCst);
    if polled.load(Ordering::Relaxed) == 0 && asleep.load(Ordering::Relaxed) != 0 {
        asleep.store(0, Ordering::Relaxed);
        futex_wake(asleep);
    }
}

/// Wakes a sleeper on `asleep` whatever it said (after a poller stopped with work left).
pub(super) fn wake_anyway(asleep: &AtomicU32) {
    asleep.store(0, Ordering::Relaxed);
    futex_wake(asleep);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of completion entry reads back as itself, with its length and token count.
    #[test]
    fn each_done_kind_survives_its_packing() {
        for kind in [
            DONE_COMPLETE,
            DONE_FIRST_TOKEN,
            DONE_FAIL,
            DONE_BATCH,
            DONE_TIMING,
            DONE_NEXT_TOKENS,
            DONE_SAMPLE_FAILED,
        ] {
            let entry = DoneEntry::new(kind, 7, 4096, MAX_ISOLATED_RESPONSE, -3);
            assert_eq!(entry.kind(), kind);
            assert_eq!(entry.length(), MAX_ISOLATED_RESPONSE, "kind {kind}");
            assert_eq!(entry.n_tokens(), -3);
            assert_eq!(DoneEntry::new(kind, 0, 0, 0, 0).length(), 0);
        }
    }
}
