//! Answering samples: each with its index as 4 little-endian bytes (so accuracy logs can be
//! compared with the official LoadGen's) or with its own data, after the configured latency.

use std::cell::Cell;
use std::thread;
use std::time::{Duration, Instant};

use mlperf_plugin_api::sdk::{Completer, Response, Sample};

use crate::config::Config;

/// One issued sample and how often to complete it (1; 2 or 0 only when a fault is asked for).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Item {
    pub id: u64,
    pub index: u64,
    pub copies: u8,
    /// `fail_after` reached: the sample is lost and the plugin reports a failure when its
    /// turn comes.
    pub fails: bool,
    /// The sample's data, when it is answered with it.
    pub data: Option<SampleData>,
}

/// A sample's data in the host's memory: valid until the sample is completed (ABI contract),
/// so a worker thread may read it later.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SampleData {
    pointer: *const u8,
    length: usize,
}

// SAFETY: read-only bytes the host keeps unchanged until the sample completes.
unsafe impl Send for SampleData {}

impl SampleData {
    /// Bytes of a sample (all of it, or one named input) held by the host.
    pub(crate) fn of(data: &[u8]) -> SampleData {
        SampleData {
            pointer: data.as_ptr(),
            length: data.len(),
        }
    }

    fn bytes<'a>(self) -> &'a [u8] {
        if self.length == 0 {
            return &[];
        }
        // SAFETY: see the type; only called before the sample's (last) completion.
        unsafe { std::slice::from_raw_parts(self.pointer, self.length) }
    }
}

/// Answers `items`, issued at `issued`: first tokens at once in a token run, then completions
/// as their latency runs out, those due together in one call.
pub(crate) fn answer(config: &Config, items: &mut [Item], issued: Instant, completer: &Completer) {
    if config.tokens {
        send(items, None, |responses| completer.first_token(responses));
    }
    let tokens = config.tokens;
    if config.service_us > 0 {
        serve(config, items, issued, completer);
        return;
    }
    if !config.has_latency() {
        send(items, Some(tokens), |responses| {
            completer.complete(responses)
        });
        report_failure(config, items, completer);
        return;
    }
    items.sort_by_key(|item| item.index);
    let mut rest = &items[..];
    while let Some(first) = rest.first() {
        let due = issued + config.latency(first.index);
        wait_until(due);
        let now = Instant::now();
        let ready = rest
            .iter()
            .take_while(|item| issued + config.latency(item.index) <= now)
            .count()
            .max(1);
        send(&rest[..ready], Some(tokens), |responses| {
            completer.complete(responses)
        });
        report_failure(config, &rest[..ready], completer);
        rest = &rest[ready..];
    }
}

thread_local! {
    /// When the thread's last served sample is done (`service_us`).
    static BUSY_UNTIL: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// `service_us`: serves `items` one after another on this thread, each starting when the
/// previous one is done, or at its issue when the thread was idle. Times follow from the
/// previous due time, not from when the wait returned, so the capacity is exact.
fn serve(config: &Config, items: &[Item], issued: Instant, completer: &Completer) {
    let service = Duration::from_micros(config.service_us);
    for item in items {
        let start = BUSY_UNTIL.get().map_or(issued, |busy| busy.max(issued));
        let due = start + service;
        wait_until(due);
        BUSY_UNTIL.set(Some(due));
        let item = std::slice::from_ref(item);
        send(item, Some(config.tokens), |responses| {
            completer.complete(responses)
        });
        report_failure(config, item, completer);
    }
}

/// `fail_after`: a batch holding lost samples is reported through the host's fail (which
/// keeps the first failure only).
fn report_failure(config: &Config, items: &[Item], completer: &Completer) {
    if let (Some(after), true) = (config.fail_after, items.iter().any(|item| item.fails)) {
        completer.fail(&format!(
            "null plugin: fail_after = {after} reached, samples lost"
        ));
    }
}

/// The plain case (inline, no latency, no faults): answered in stack-sized chunks straight from
/// the samples, with no allocation, so the plugin costs what the ABI costs.
pub(crate) fn answer_inline(samples: &[Sample<'_>], tokens: bool, completer: &Completer) {
    if let [sample] = samples {
        // One sample (SingleStream, Server): no arrays at all.
        let bytes = (sample.index() as u32).to_le_bytes();
        let response = Response::new(sample.id(), &bytes);
        if tokens {
            completer.first_token(&[response]);
            completer.complete(&[response.with_tokens(2 + (sample.index() % 7) as i64)]);
        } else {
            completer.complete(&[response]);
        }
        return;
    }
    for chunk in samples.chunks(CHUNK) {
        answer_chunk(chunk, tokens, completer);
    }
}

/// Samples answered per call to the host: small enough that the chunk's responses stay in
/// L1 while the host reads them (1024 measured 14 % slower on Offline).
const CHUNK: usize = 64;

/// One chunk of a large query. Kept out of `answer_inline` so the one-sample path does not
/// carry this function's stack frame.
#[inline(never)]
fn answer_chunk(chunk: &[Sample<'_>], tokens: bool, completer: &Completer) {
    let mut bytes = [[0u8; 4]; CHUNK];
    for (slot, sample) in bytes.iter_mut().zip(chunk) {
        *slot = (sample.index() as u32).to_le_bytes();
    }
    if tokens {
        let firsts: Vec<Response<'_>> = (0..chunk.len())
            .map(|i| Response::new(chunk[i].id(), &bytes[i]))
            .collect();
        completer.first_token(&firsts);
    }
    let mut responses = [Response::new(0, &[]); CHUNK];
    for ((slot, sample), bytes) in responses.iter_mut().zip(chunk).zip(&bytes) {
        let response = Response::new(sample.id(), bytes);
        *slot = if tokens {
            response.with_tokens(2 + (sample.index() % 7) as i64)
        } else {
            response
        };
    }
    completer.complete(&responses[..chunk.len()]);
}

/// Builds the responses for `items` and hands them to `deliver`. `tokens`: None for first
/// tokens (every item once), Some(token run?) for completions (each item `copies` times).
fn send(items: &[Item], tokens: Option<bool>, deliver: impl FnOnce(&[Response<'_>])) {
    let bytes: Vec<[u8; 4]> = items
        .iter()
        .map(|item| (item.index as u32).to_le_bytes())
        .collect();
    let mut responses = Vec::with_capacity(items.len());
    for (item, bytes) in items.iter().zip(&bytes) {
        let payload = match item.data {
            Some(data) => data.bytes(),
            None => &bytes[..],
        };
        let response = Response::new(item.id, payload);
        match tokens {
            None => responses.push(response),
            Some(token_run) => {
                let response = if token_run {
                    response.with_tokens(2 + (item.index % 7) as i64)
                } else {
                    response
                };
                for _ in 0..item.copies {
                    responses.push(response);
                }
            }
        }
    }
    deliver(&responses);
}

/// Sleeps most of the way, then spins: thread::sleep alone overshoots by tens of
/// microseconds, too coarse for microsecond latencies.
fn wait_until(due: Instant) {
    const SPIN: Duration = Duration::from_micros(100);
    loop {
        let now = Instant::now();
        if now >= due {
            return;
        }
        let left = due - now;
        if left > SPIN {
            thread::sleep(left - SPIN);
        } else {
            std::hint::spin_loop();
        }
    }
}
