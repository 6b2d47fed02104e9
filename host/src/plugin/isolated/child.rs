//! The plugin's process (`mlperf-host isolated-plugin`, started by the host): loads the
//! plugin, creates its instance, and serves the issue ring until the host says destroy. The
//! plugin runs exactly as in the host (the same [`PluginSut`]); only its completions go to the
//! completion ring instead of the engine.

use std::io::BufReader;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::protocol::{self, ToHost, ToPlugin};
use super::region::*;
use super::shm::{receive_fd, Mapping};
use crate::loadgen::{Completer, CompletionSink, QuerySample, QuerySampleResponse, ResponseId};
use crate::official::outstanding::OutstandingIds;
use crate::plugin::host_api::{FailureReports, TimingReports, TokenReports};
use crate::plugin::PluginBackend;
use crate::plugin::PluginSut;
use crate::samples::{LoadedSamples, Preprocessing, SampleArena};
use mlperf_plugin_api::ffi;

/// The descriptors the host hands the process: the shared region, the control socket and the
/// socket sample images arrive on.
pub(super) const REGION_FD: RawFd = 3;
pub(super) const CONTROL_FD: RawFd = 4;
pub(super) const IMAGES_FD: RawFd = 5;

/// How long after destroy the plugin's callbacks are still watched for.
const LATE_CALLBACK_GRACE: Duration = Duration::from_millis(100);

/// How often the heartbeat advances.
pub(super) const HEARTBEAT: Duration = Duration::from_millis(100);

/// Runs the plugin process; returns its exit status.
pub fn main(host_pid: u32) -> i32 {
    if !die_with_host(host_pid) {
        return 1;
    }
    for fd in [REGION_FD, CONTROL_FD, IMAGES_FD] {
        // Nothing the plugin starts inherits them.
        // SAFETY: fcntl on descriptors the host passed.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    match serve() {
        Ok(()) => 0,
        Err(message) => {
            eprintln!("mlperf-host plugin process: {message}");
            1
        }
    }
}

/// Has this process killed when the host ends: a plugin's (or a meter's) process must never
/// outlive the run that started it. False when the host is already gone.
pub(super) fn die_with_host(host_pid: u32) -> bool {
    // SAFETY: prctl with an integer argument.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    std::os::unix::process::parent_id() == host_pid
}

fn serve() -> Result<(), String> {
    let region = Arc::new(Region::open(REGION_FD).map_err(|e| e.to_string())?);
    // SAFETY: descriptors the host passed for these sockets, owned by this process alone.
    let (control, images) = unsafe {
        (
            UnixStream::from_raw_fd(CONTROL_FD),
            UnixStream::from_raw_fd(IMAGES_FD),
        )
    };
    let mut commands = BufReader::new(control.try_clone().map_err(|e| e.to_string())?);
    let control = Arc::new(Mutex::new(control));
    let send = |message: &ToHost| {
        let mut control = control.lock().unwrap_or_else(|p| p.into_inner());
        protocol::send(&mut *control, message).map_err(|e| format!("control socket: {e}"))
    };
    let Some(ToPlugin::Start {
        spec,
        config,
        samples,
        timed_preprocess,
        run,
    }) = protocol::receive(&mut commands).map_err(|e| e.to_string())?
    else {
        return Err("the host closed the control socket before start".into());
    };
    start_heartbeat(Arc::clone(&region));

    let mut sut = match crate::plugin::open_sut(&spec, &config, run.as_ref()) {
        Ok(sut) => sut,
        Err(error) => {
            send(&ToHost::StartFailed {
                message: crate::error_chain(&error),
            })?;
            return Ok(());
        }
    };
    let arena = Arc::new(SampleArena::new());
    if samples {
        sut.read_samples_from(Arc::clone(&arena));
    }
    if let Some(timed) = &timed_preprocess {
        match Preprocessing::load_in(
            &timed.module,
            true,
            crate::samples::sandbox_with(timed.limits),
        ) {
            Ok(preprocessing) => sut.preprocess_timed(Arc::new(preprocessing)),
            Err(error) => {
                send(&ToHost::StartFailed {
                    message: format!(
                        "timed preprocessing module {}: {error}",
                        timed.module.display()
                    ),
                })?;
                return Ok(());
            }
        }
    }
    send(&ToHost::Ready {
        name: crate::loadgen::SystemUnderTest::name(&sut).to_string(),
        capabilities: sut.capabilities(),
        takes_sample_sets: sut.takes_sample_sets(),
        attributes: sut.attributes().to_vec(),
        provenance: sut.provenance(),
    })?;
    let sink = Arc::new(RingSink {
        region: Arc::clone(&region),
        producer: Mutex::new(Producer::default()),
        // Timed preprocessing reuses a query's buffers once its samples are released.
        outstanding: timed_preprocess.is_some().then(OutstandingIds::default),
    });
    let completer = Completer::forwarding_to(Arc::clone(&sink) as Arc<dyn CompletionSink>);
    // The plugin's timing reports go to the host's process the way its completions do.
    sut.report_timing_to(Arc::clone(&sink) as Arc<dyn TimingReports>);
    // So do its tokens after the first and its single samples' failures (ABI 1.5): the host
    // hands them on where a sweep takes them, and fails a LoadGen run on a failure.
    sut.report_tokens_to(Arc::clone(&sink) as Arc<dyn TokenReports>);
    sut.report_failures_to(Arc::clone(&sink) as Arc<dyn FailureReports>);
    let mut server = Server {
        region: &region,
        sink: &sink,
        sut: &sut,
        completer: &completer,
        arena: &arena,
        images: &images,
        send: &send,
        query: Vec::new(),
        expected: 0,
        prepared: Vec::new(),
        preparing: 0,
        set: Vec::new(),
        set_call: None,
    };
    server.serve_issue_ring()?;
    drop(server);
    stamp_call(&region, CALL_DESTROY);
    let late_callbacks = sut.destroy_counting_late_callbacks(LATE_CALLBACK_GRACE);
    unstamp_call(&region);
    send(&ToHost::Destroyed { late_callbacks })
}

fn start_heartbeat(region: Arc<Region>) {
    let _ = std::thread::Builder::new()
        .name("mlperf-heartbeat".into())
        .spawn(move || loop {
            region.header().heartbeat.0.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(HEARTBEAT);
        });
}

/// Marks a call into the plugin (the host's watcher times how long the mark stays).
fn stamp_call(region: &Region, call: u32) {
    let header = region.header();
    header.call.0.store(call, Ordering::Relaxed);
    // Only this thread writes it: a plain increment, no locked instruction.
    let calls = header.calls.0.load(Ordering::Relaxed);
    header.calls.0.store(calls | 1, Ordering::Release);
}

fn unstamp_call(region: &Region) {
    let calls = &region.header().calls.0;
    calls.store(calls.load(Ordering::Relaxed) + 1, Ordering::Release);
}

struct Server<'a, F: Fn(&ToHost) -> Result<(), String>> {
    region: &'a Region,
    sink: &'a RingSink,
    sut: &'a PluginSut,
    completer: &'a Completer,
    arena: &'a SampleArena,
    images: &'a UnixStream,
    send: &'a F,
    /// The query being received.
    query: Vec<QuerySample>,
    expected: usize,
    /// A large query received ahead of its issue, and how many of its samples are still to
    /// come (continuation entries go here while they are).
    prepared: Vec<QuerySample>,
    preparing: usize,
    /// A sample set being received for `load_samples` or `unload_samples` (`set_call`: which,
    /// and how many indices are still to come).
    set: Vec<usize>,
    set_call: Option<(u32, usize)>,
}

impl<F: Fn(&ToHost) -> Result<(), String>> Server<'_, F> {
    /// Takes entries until the destroy marker.
    fn serve_issue_ring(&mut self) -> Result<(), String> {
        let ring = &self.region.header().issue;
        let mut tail = ring.tail.0.load(Ordering::Relaxed);
        loop {
            // SAFETY: this thread is the issue ring's one consumer.
            let Some(entry) = (unsafe { self.region.issue_slot(tail).take(tail) }) else {
                // What was taken is given back before waiting.
                ring.tail.0.store(tail, Ordering::Release);
                wake(&ring.producer_asleep.0);
                wait_until(
                    &ring.consumer_asleep.0,
                    SPINS,
                    Duration::from_millis(100),
                    || self.region.issue_slot(tail).holds(tail),
                );
                continue;
            };
            tail += 1;
            // A large query streams through the ring: room is given back as it is read.
            if tail.is_multiple_of(1024) {
                ring.tail.0.store(tail, Ordering::Release);
                wake(&ring.producer_asleep.0);
            }
            if entry.kind == KIND_DESTROY {
                ring.tail.0.store(tail, Ordering::Release);
                return Ok(());
            }
            self.take(entry)?;
        }
    }

    fn take(&mut self, entry: IssueEntry) -> Result<(), String> {
        match entry.kind {
            KIND_FLUSH => {
                stamp_call(self.region, CALL_FLUSH);
                crate::loadgen::SystemUnderTest::flush_queries(self.sut);
                unstamp_call(self.region);
                let flushes = &self.region.header().flushes.0;
                flushes.store(flushes.load(Ordering::Relaxed) + 1, Ordering::Release);
            }
            KIND_SAMPLES => {
                let error = self.map_image().err();
                (self.send)(&ToHost::SamplesMapped { error })?;
            }
            KIND_RESERVE => {
                let samples = entry.index as usize;
                self.sink.populate_for(samples as u64);
                let ok = self.sut.reserve_samples(samples)
                    && reserve_touched(&mut self.query, samples)
                    && reserve_touched(&mut self.prepared, samples);
                (self.send)(&ToHost::Reserved { ok })?;
            }
            KIND_PREPARE => {
                self.prepared.clear();
                self.preparing = entry.index as usize;
            }
            KIND_ISSUE_PREPARED => {
                let key = (self.prepared.first().map(|s| s.id.0), self.prepared.len());
                if self.preparing > 0 || key != (Some(entry.id), entry.index as usize) {
                    use crate::loadgen::CompletionSink;
                    self.sink.fail(format!(
                        "the plugin process was asked to issue a prepared query it does not hold (sample id {}, {} samples)",
                        entry.id, entry.index
                    ));
                    return Ok(());
                }
                std::mem::swap(&mut self.query, &mut self.prepared);
                self.issue();
            }
            KIND_LOAD | KIND_UNLOAD => {
                let call = if entry.kind == KIND_LOAD {
                    CALL_LOAD
                } else {
                    CALL_UNLOAD
                };
                self.set.clear();
                self.set_call = Some((call, entry.index as usize));
                self.call_sample_set_when_complete()?;
            }
            kind if kind >= FIRST_MARKER => {}
            0 if self.set_call.is_some() => {
                self.set.push(entry.index as usize);
                if let Some((_, left)) = &mut self.set_call {
                    *left -= 1;
                }
                self.call_sample_set_when_complete()?;
            }
            0 if self.preparing > 0 => {
                self.prepared.push(QuerySample {
                    id: ResponseId(entry.id),
                    index: entry.index as usize,
                });
                self.preparing -= 1;
                if self.preparing == 0 {
                    // As the engine prepares it in-process: the plugin's samples made now.
                    crate::loadgen::SystemUnderTest::prepare_query(self.sut, &self.prepared);
                }
            }
            kind => {
                if kind > 0 {
                    self.query.clear();
                    self.expected = kind as usize;
                }
                self.query.push(QuerySample {
                    id: ResponseId(entry.id),
                    index: entry.index as usize,
                });
                if self.query.len() == self.expected {
                    self.issue();
                }
            }
        }
        Ok(())
    }

    /// Calls the plugin's `load_samples` or `unload_samples` once the whole set is here, and
    /// answers the host.
    fn call_sample_set_when_complete(&mut self) -> Result<(), String> {
        let Some((call, 0)) = self.set_call else {
            return Ok(());
        };
        self.set_call = None;
        stamp_call(self.region, call);
        let result = match call {
            CALL_LOAD => self.sut.load_samples(&self.set),
            _ => self.sut.unload_samples(&self.set),
        };
        unstamp_call(self.region);
        (self.send)(&ToHost::SampleSet {
            error: result.err().map(|e| e.to_string()),
        })
    }

    /// Hands the plugin the query received.
    fn issue(&mut self) {
        if let Some(outstanding) = &self.sink.outstanding {
            outstanding.issue(&self.query);
        }
        stamp_call(self.region, CALL_ISSUE);
        crate::loadgen::SystemUnderTest::issue_query(self.sut, &self.query, self.completer);
        unstamp_call(self.region);
        self.query.clear();
    }

    /// Maps the sample image the host sends and makes it the loaded set.
    fn map_image(&self) -> Result<(), String> {
        let fd = receive_fd(self.images).map_err(|e| format!("sample image: {e}"))?;
        let len = Mapping::file_len(fd.as_raw_fd()).map_err(|e| e.to_string())?;
        let mapping = Mapping::map(fd.as_raw_fd(), len, false).map_err(|e| e.to_string())?;
        let set = LoadedSamples::from_image(Arc::new(mapping)).map_err(|e| e.to_string())?;
        self.arena.replace(set);
        Ok(())
    }
}

/// Empties `query` and gives it room for `samples`, its pages touched now rather than inside
/// the timed window; false when the memory cannot be had.
fn reserve_touched(query: &mut Vec<QuerySample>, samples: usize) -> bool {
    query.clear();
    if query
        .try_reserve_exact(samples.saturating_sub(query.capacity()))
        .is_err()
    {
        return false;
    }
    let blank = QuerySample {
        id: ResponseId(0),
        index: 0,
    };
    query.resize(samples, blank);
    query.clear();
    true
}

/// The completion ring's producer state, under the sink's lock.
#[derive(Default)]
struct Producer {
    head: u64,
    arena_head: u64,
    /// The host's tail and arena tail when last read.
    tail_seen: u64,
    arena_tail_seen: u64,
    /// Arena bytes populated ahead of the first lap.
    populated: u64,
}

/// Copies `bytes` to `to`; a short response (a class index, a score) without a call to
/// memcpy, which costs more than the copy.
///
/// # Safety
/// `to` is valid for `bytes.len()` bytes of writes, not overlapping `bytes`.
#[inline(always)]
unsafe fn copy_bytes(bytes: &[u8], to: *mut u8) {
    let (from, n) = (bytes.as_ptr(), bytes.len());
    // SAFETY: every read within `bytes` (overlapping first and last words), every write
    // within the `n` bytes at `to` (caller).
    unsafe {
        match n {
            0 => {}
            1..=3 => (0..n).for_each(|i| *to.add(i) = *from.add(i)),
            4..=7 => {
                let (head, tail) = (from.cast::<u32>(), from.add(n - 4).cast::<u32>());
                let (head, tail) = (head.read_unaligned(), tail.read_unaligned());
                to.cast::<u32>().write_unaligned(head);
                to.add(n - 4).cast::<u32>().write_unaligned(tail);
            }
            8..=16 => {
                let (head, tail) = (from.cast::<u64>(), from.add(n - 8).cast::<u64>());
                let (head, tail) = (head.read_unaligned(), tail.read_unaligned());
                to.cast::<u64>().write_unaligned(head);
                to.add(n - 8).cast::<u64>().write_unaligned(tail);
            }
            _ => std::ptr::copy_nonoverlapping(from, to, n),
        }
    }
}

/// The arena's first lap is populated this far ahead of the responses written.
const POPULATE_AHEAD: u64 = 4 << 20;

/// Where the plugin's completions go: into the completion ring, their bytes into the arena.
struct RingSink {
    region: Arc<Region>,
    producer: Mutex<Producer>,
    /// The samples not yet completed, kept only for timed preprocessing.
    outstanding: Option<OutstandingIds>,
}

/// A `complete` call with at least this many responses goes over as batch records.
const BATCH_AT: usize = 4;
/// Responses per batch record at most.
const BATCH_MAX: usize = 4096;

impl RingSink {
    fn push(&self, responses: &[QuerySampleResponse<'_>], kind: u64) {
        let header = self.region.header();
        let mut producer = self.producer.lock().unwrap_or_else(|p| p.into_inner());
        let published = producer.head;
        if kind == DONE_COMPLETE && responses.len() >= BATCH_AT {
            for chunk in responses.chunks(BATCH_MAX) {
                if !self.publish_batch(&mut producer, chunk) {
                    self.publish_each(&mut producer, chunk, kind);
                }
            }
        } else {
            self.publish_each(&mut producer, responses, kind);
        }
        if producer.head != published {
            wake_unless_polled(&header.done_polled.0, &header.done.consumer_asleep.0);
        }
    }

    /// An entry per response.
    fn publish_each(
        &self,
        producer: &mut Producer,
        responses: &[QuerySampleResponse<'_>],
        kind: u64,
    ) {
        for response in responses {
            let mut data = response.data;
            if data.len() as u64 > MAX_ISOLATED_RESPONSE {
                let message = format!(
                    "completed sample id {} with a response of {} bytes (an isolated plugin's response holds at most {MAX_ISOLATED_RESPONSE} bytes)",
                    response.id.0,
                    data.len()
                );
                self.publish(producer, DONE_FAIL, 0, message.as_bytes(), 0);
                data = &[];
            }
            self.publish(producer, kind, response.id.0, data, response.n_tokens);
        }
    }

    /// One [`BatchRecord`] for `responses`; false (nothing written) when it would be larger
    /// than a response may be.
    fn publish_batch(
        &self,
        producer: &mut Producer,
        responses: &[QuerySampleResponse<'_>],
    ) -> bool {
        let mut data_bytes = 0u64;
        let mut plain = true;
        for response in responses {
            data_bytes = data_bytes.saturating_add(response.data.len() as u64);
            plain &= response.data.is_empty() && response.n_tokens == 0;
        }
        let Some(size) = BatchRecord::size(responses.len(), plain, data_bytes) else {
            return false;
        };
        let offset = self.reserve(producer, size);
        let record = self.region.arena(offset, size);
        let n = responses.len();
        // SAFETY: `size` bytes of the arena the host has released (reserve), written as
        // the record's layout says: n ids, then n lengths, n token counts and the bytes.
        unsafe {
            for (i, response) in responses.iter().enumerate() {
                (record.add(8 * i) as *mut u64).write_unaligned(response.id.0);
            }
            if !plain {
                let lengths = record.add(8 * n);
                let tokens = lengths.add(4 * n);
                let mut data = tokens.add(4 * n);
                for (i, response) in responses.iter().enumerate() {
                    let length = response.data.len();
                    (lengths.add(4 * i) as *mut u32).write_unaligned(length as u32);
                    let n_tokens = response.n_tokens.clamp(i32::MIN as i64, i32::MAX as i64);
                    (tokens.add(4 * i) as *mut i32).write_unaligned(n_tokens as i32);
                    copy_bytes(response.data, data);
                    data = data.add(length);
                }
            }
        }
        self.publish_reserved(
            producer,
            DONE_BATCH,
            n as u64,
            offset,
            size,
            i64::from(plain),
        );
        true
    }

    /// Writes one entry (its bytes into the arena), waiting for room.
    #[inline(always)]
    fn publish(&self, producer: &mut Producer, kind: u64, id: u64, data: &[u8], n_tokens: i64) {
        let length = data.len() as u64;
        let offset = self.reserve(producer, length);
        if length > 0 {
            // SAFETY: `length` bytes of the arena the host has released (reserve).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    data.as_ptr(),
                    self.region.arena(offset, length),
                    length as usize,
                )
            };
        }
        self.publish_reserved(producer, kind, id, offset, length, n_tokens);
    }

    /// Room for the next entry and `length` bytes of the arena (not wrapping), waiting for
    /// the host to release it; returns the bytes' running offset.
    #[inline(always)]
    fn reserve(&self, producer: &mut Producer, length: u64) -> u64 {
        let header = self.region.header();
        let ring = &header.done;
        let mut offset = producer.arena_head;
        let at = offset % ARENA_BYTES;
        if at + length > ARENA_BYTES {
            offset += ARENA_BYTES - at;
        }
        let head = producer.head;
        // The host's positions are read only when the cached ones say full: they live on
        // cache lines the host writes.
        let fits = |tail: u64, arena_tail: u64| {
            head - tail < DONE_SLOTS && offset + length - arena_tail <= ARENA_BYTES
        };
        if offset + length > producer.populated {
            self.populate(producer, offset + length);
        }
        if !fits(producer.tail_seen, producer.arena_tail_seen) {
            let room = || {
                fits(
                    ring.tail.0.load(Ordering::Acquire),
                    header.arena_tail.0.load(Ordering::Acquire),
                )
            };
            if !room() {
                // What is written so far is published: the host's reader makes room.
                wake(&ring.consumer_asleep.0);
                while !wait_until(
                    &ring.producer_asleep.0,
                    SPINS,
                    Duration::from_millis(100),
                    room,
                ) {}
            }
            producer.tail_seen = ring.tail.0.load(Ordering::Acquire);
            producer.arena_tail_seen = header.arena_tail.0.load(Ordering::Acquire);
        }
        offset
    }

    /// Populates the arena's first lap to a little beyond `end` (a running offset).
    fn populate(&self, producer: &mut Producer, end: u64) {
        if producer.populated >= ARENA_BYTES {
            return;
        }
        let end = end.next_multiple_of(POPULATE_AHEAD) + POPULATE_AHEAD;
        self.region.populate_arena(producer.populated, end);
        producer.populated = end.min(ARENA_BYTES);
    }

    /// Before a large query (outside the timed window): the arena its batch records will
    /// take on the first lap, populated now rather than while they are written.
    fn populate_for(&self, samples: u64) {
        let mut producer = self.producer.lock().unwrap_or_else(|p| p.into_inner());
        let end = producer
            .arena_head
            .saturating_add(samples.saturating_mul(BatchRecord::DESCRIBED_BYTES + 8));
        self.populate(&mut producer, end);
    }

    /// Publishes the entry `reserve` made room for.
    #[inline(always)]
    fn publish_reserved(
        &self,
        producer: &mut Producer,
        kind: u64,
        id: u64,
        offset: u64,
        length: u64,
        n_tokens: i64,
    ) {
        let head = producer.head;
        let entry = DoneEntry::new(kind, id, offset, length, n_tokens);
        // SAFETY: the completion ring's producer (under the lock), in a slot the host has
        // released (reserve).
        unsafe { self.region.done_slot(head).publish(head, entry) };
        producer.arena_head = offset + length;
        producer.head = head + 1;
    }
}

impl TimingReports for RingSink {
    fn report(&self, timing: &ffi::mlperf_sample_timing) {
        let mut record = [0u8; TIMING_RECORD_BYTES as usize];
        for (slot, value) in record.chunks_exact_mut(8).zip([
            timing.id,
            timing.dequeued_ns,
            timing.compute_start_ns,
            timing.compute_end_ns,
        ]) {
            slot.copy_from_slice(&value.to_le_bytes());
        }
        let mut producer = self.producer.lock().unwrap_or_else(|p| p.into_inner());
        self.publish(&mut producer, DONE_TIMING, 1, &record, 0);
        // Its completion follows: that one wakes the host.
    }
}

impl TokenReports for RingSink {
    fn next_tokens(&self, id: u64, tokens: i64, now_ns: i64) {
        if self.region.header().tokens_wanted.0.load(Ordering::Relaxed) == 0 {
            return;
        }
        let mut record = [0u8; NEXT_TOKENS_RECORD_BYTES as usize];
        record[..8].copy_from_slice(&id.to_le_bytes());
        record[8..16].copy_from_slice(&tokens.to_le_bytes());
        record[16..].copy_from_slice(&now_ns.to_le_bytes());
        let mut producer = self.producer.lock().unwrap_or_else(|p| p.into_inner());
        // Not woken for: it carries its own time, and the answer's end follows.
        self.publish(&mut producer, DONE_NEXT_TOKENS, 1, &record, 0);
    }
}

impl FailureReports for RingSink {
    fn sample_failed(&self, id: u64, kind: i32, status: i32, message: &str, now_ns: i64) {
        let message = &message.as_bytes()[..message.len().min(64 << 10)];
        let mut record = Vec::with_capacity(SAMPLE_FAILED_HEAD_BYTES as usize + message.len());
        record.extend_from_slice(&id.to_le_bytes());
        record.extend_from_slice(&now_ns.to_le_bytes());
        record.extend_from_slice(&kind.to_le_bytes());
        record.extend_from_slice(&status.to_le_bytes());
        record.extend_from_slice(message);
        {
            let mut producer = self.producer.lock().unwrap_or_else(|p| p.into_inner());
            self.publish(&mut producer, DONE_SAMPLE_FAILED, 1, &record, 0);
        }
        let header = self.region.header();
        wake_unless_polled(&header.done_polled.0, &header.done.consumer_asleep.0);
        // The sample is finished: nothing reads its memory any more.
        if let Some(outstanding) = &self.outstanding {
            outstanding.admit(
                &[QuerySampleResponse::new(ResponseId(id), &[])],
                true,
                |_| {},
            );
        }
    }
}

impl CompletionSink for RingSink {
    fn complete(&self, responses: &[QuerySampleResponse<'_>]) {
        self.push(responses, DONE_COMPLETE);
        // Copied into the response arena: nothing reads the sample's memory any more.
        if let Some(outstanding) = &self.outstanding {
            outstanding.admit(responses, true, |_| {});
        }
    }

    fn is_released(&self, id: ResponseId) -> bool {
        self.outstanding
            .as_ref()
            .is_some_and(|outstanding| !outstanding.contains(id.0))
    }

    fn first_token(&self, responses: &[QuerySampleResponse<'_>]) {
        // A sweep times the gaps from here: the first tokens' own time, as this process took
        // them (the host's stamp would come later, when it reads them).
        if self.region.header().tokens_wanted.0.load(Ordering::Relaxed) != 0 {
            let now = crate::loadgen::monotonic_ns();
            for response in responses {
                self.next_tokens(response.id.0, FIRST_TOKEN_AT, now);
            }
        }
        self.push(responses, DONE_FIRST_TOKEN);
    }

    fn fail(&self, message: String) {
        // Through the ring, ahead of the completions of the samples the failure refused (on
        // the control socket it could arrive after the test had ended on them).
        let mut bytes = message.into_bytes();
        bytes.truncate(64 << 10);
        self.push(
            &[QuerySampleResponse::new(ResponseId(0), &bytes)],
            DONE_FAIL,
        );
    }
}
