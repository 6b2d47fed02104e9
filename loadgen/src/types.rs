//! The values that cross between the engine and a system under test (spec §2.1).

use std::time::{Duration, Instant};

use serde::Serialize;

/// Opaque handle of one issued sample. Never 0; unique within a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[repr(transparent)]
pub struct ResponseId(pub u64);

/// Index of a sample in the query sample library.
pub type QuerySampleIndex = usize;

/// One sample of an issued query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct QuerySample {
    pub id: ResponseId,
    pub index: QuerySampleIndex,
}

/// The answer to one sample: its id, the output bytes and, for token runs, the token count.
#[derive(Debug, Clone, Copy)]
pub struct QuerySampleResponse<'a> {
    pub id: ResponseId,
    pub data: &'a [u8],
    pub n_tokens: i64,
}

/// Anything a SUT already holds its answers in, read by the engine in place (no conversion
/// pass): a response's id, bytes and token count.
pub trait AsSampleResponse {
    fn as_response(&self) -> QuerySampleResponse<'_>;
}

impl AsSampleResponse for QuerySampleResponse<'_> {
    #[inline]
    fn as_response(&self) -> QuerySampleResponse<'_> {
        *self
    }
}

impl<'a> QuerySampleResponse<'a> {
    pub fn new(id: ResponseId, data: &'a [u8]) -> Self {
        QuerySampleResponse {
            id,
            data,
            n_tokens: 0,
        }
    }

    pub fn with_tokens(id: ResponseId, data: &'a [u8], n_tokens: i64) -> Self {
        QuerySampleResponse { id, data, n_tokens }
    }
}

/// A response copied for the accuracy log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccuracyRecord {
    pub seq_id: u64,
    pub qsl_idx: usize,
    pub data: Vec<u8>,
    /// The first-token response bytes (token runs outside Offline).
    pub token_data: Option<Vec<u8>>,
    /// The response's `n_tokens` (token runs).
    pub token_count: Option<i64>,
}

/// Monotonic nanoseconds since the test started.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    origin: Instant,
    /// `origin` on the raw monotonic clock, read just after it.
    origin_ns: i64,
}

impl Clock {
    pub(crate) fn new() -> Self {
        let origin = Instant::now();
        Clock {
            origin,
            origin_ns: monotonic_ns(),
        }
    }

    /// The origin on `CLOCK_MONOTONIC`, in ns.
    pub(crate) fn origin_monotonic_ns(&self) -> i64 {
        self.origin_ns
    }

    /// Read twice per query: straight from the clock, without `Instant`'s checked
    /// subtraction and 128-bit conversion.
    #[inline]
    pub(crate) fn now_ns(&self) -> i64 {
        monotonic_ns() - self.origin_ns
    }

    pub(crate) fn instant_at(&self, ns: i64) -> Instant {
        self.origin + Duration::from_nanos(ns.max(0) as u64)
    }
}

/// CLOCK_MONOTONIC in ns: the clock `Instant` reads, and the test clock's base (a caller
/// that times samples beside the engine reads the same clock).
#[inline]
pub fn monotonic_ns() -> i64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec to write, and CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec * 1_000_000_000 + now.tv_nsec
}
