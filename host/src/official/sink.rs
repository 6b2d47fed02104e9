//! Completions forwarded to the official LoadGen, counted for the watchdog.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use mlperf_official_loadgen::QuerySampleResponse as OfficialResponse;

use super::outstanding::{OutstandingIds, Refused};
use super::SampleCounts;
use crate::loadgen::{CompletionSink, QuerySampleResponse, ResponseId};

/// Converted on the stack in batches of this many; a query of up to `SMALL` samples in an
/// array of that size.
const BATCH: usize = 64;
const SMALL: usize = 8;

/// What the SUT reported: completions (forwarded) and its first failure (kept).
#[derive(Default)]
pub(crate) struct OfficialSink {
    /// Queries and samples handed to the SUT.
    pub(crate) queries: AtomicU64,
    pub(crate) issued: AtomicU64,
    /// Samples the SUT completed.
    pub(crate) completed: AtomicU64,
    /// Ids issued and not yet completed.
    pub(crate) outstanding: OutstandingIds,
    /// Calls into the official library under way, which may still read response data.
    forwarding: AtomicU64,
    /// Calls into the SUT begun and ended, and which kind began last: the watchdog's view of
    /// a call that never returns.
    pub(crate) sut_calls: SutCallCounts,
    failure: Mutex<Option<String>>,
}

/// Calls into the SUT from the official library's threads.
#[derive(Default)]
pub(crate) struct SutCallCounts {
    pub(crate) begun: AtomicU64,
    pub(crate) ended: AtomicU64,
    /// The last call begun was `flush_queries` (else `issue_query`).
    pub(crate) flushing: std::sync::atomic::AtomicBool,
}

impl SutCallCounts {
    /// Runs `call`, counted as begun and (even when it unwinds) ended.
    pub(crate) fn within<R>(&self, flush: bool, call: impl FnOnce() -> R) -> R {
        struct End<'a>(&'a AtomicU64);
        impl Drop for End<'_> {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::Release);
            }
        }
        self.flushing.store(flush, Ordering::Relaxed);
        self.begun.fetch_add(1, Ordering::Release);
        let _end = End(&self.ended);
        call()
    }
}

impl OfficialSink {
    pub(crate) fn counts(&self) -> SampleCounts {
        SampleCounts {
            queries: self.queries.load(Ordering::Relaxed),
            issued: self.issued.load(Ordering::Acquire),
            completed: self.completed.load(Ordering::Acquire),
        }
    }

    pub(crate) fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Hands the responses whose ids are outstanding to the official library through `call`,
    /// converted on the stack; a refused one fails the run. Returns how many were handed on.
    fn forward(
        &self,
        responses: &[QuerySampleResponse<'_>],
        completes: bool,
        call: unsafe fn(&mut [OfficialResponse]),
    ) -> u64 {
        // Counted from before any id leaves `outstanding` until the library has returned.
        self.forwarding.fetch_add(1, Ordering::SeqCst);
        let mut forwarded = 0;
        let mut refused = Refused::default();
        let mut send = |chunk: &[QuerySampleResponse<'_>], batch: &mut [OfficialResponse]| {
            let mut filled = 0;
            let chunk_refused = self.outstanding.admit(chunk, completes, |response| {
                batch[filled] = OfficialResponse {
                    id: response.id.0,
                    data: response.data.as_ptr() as usize,
                    size: response.data.len(),
                    n_tokens: response.n_tokens,
                };
                filled += 1;
            });
            if filled > 0 {
                // SAFETY: each id was handed to the SUT by the official test and is still
                // outstanding (checked above); the data lives across the call.
                unsafe { call(&mut batch[..filled]) };
            }
            forwarded += filled as u64;
            refused.count += chunk_refused.count;
            refused.first = refused.first.or(chunk_refused.first);
        };
        if responses.len() <= SMALL {
            send(responses, &mut [BLANK; SMALL]);
        } else {
            let mut batch = [BLANK; BATCH];
            for chunk in responses.chunks(BATCH) {
                send(chunk, &mut batch);
            }
        }
        self.forwarding.fetch_sub(1, Ordering::SeqCst);
        if let Some(first) = refused.first {
            self.fail(format!(
                "the system under test answered {} sample id(s) it was not issued or had already \
                 completed (the first: {first:#x}); they were not passed to the official LoadGen",
                refused.count
            ));
        }
        forwarded
    }
}

const BLANK: OfficialResponse = OfficialResponse {
    id: 0,
    data: 0,
    size: 0,
    n_tokens: 0,
};

impl CompletionSink for OfficialSink {
    fn complete(&self, responses: &[QuerySampleResponse<'_>]) {
        let forwarded = self.forward(
            responses,
            true,
            mlperf_official_loadgen::query_samples_complete,
        );
        self.completed.fetch_add(forwarded, Ordering::Release);
    }

    fn first_token(&self, responses: &[QuerySampleResponse<'_>]) {
        self.forward(
            responses,
            false,
            mlperf_official_loadgen::first_token_complete,
        );
    }

    /// Completed, and no call that could still read its response is under way (the official
    /// library copies what it logs before `QuerySamplesComplete` returns).
    fn is_released(&self, id: ResponseId) -> bool {
        !self.outstanding.contains(id.0) && self.forwarding.load(Ordering::SeqCst) == 0
    }

    fn fail(&self, message: String) {
        let mut failure = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        failure.get_or_insert(message);
    }
}
