//! Completions forwarded to the official LoadGen, counted for the watchdog.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use mlperf_official_loadgen::QuerySampleResponse as OfficialResponse;

use crate::loadgen::{CompletionSink, QuerySampleResponse};

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
    failure: Mutex<Option<String>>,
}

impl OfficialSink {
    pub(crate) fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Hands `responses` to the official library through `call`, converted on the stack.
    fn forward(responses: &[QuerySampleResponse<'_>], call: unsafe fn(&mut [OfficialResponse])) {
        if responses.len() <= SMALL {
            let mut batch = [BLANK; SMALL];
            return forward_chunk(responses, &mut batch, call);
        }
        let mut batch = [BLANK; BATCH];
        for chunk in responses.chunks(BATCH) {
            forward_chunk(chunk, &mut batch, call);
        }
    }
}

const BLANK: OfficialResponse = OfficialResponse {
    id: 0,
    data: 0,
    size: 0,
    n_tokens: 0,
};

fn forward_chunk(
    responses: &[QuerySampleResponse<'_>],
    batch: &mut [OfficialResponse],
    call: unsafe fn(&mut [OfficialResponse]),
) {
    for (slot, response) in batch.iter_mut().zip(responses) {
        *slot = OfficialResponse {
            id: response.id.0,
            data: response.data.as_ptr() as usize,
            size: response.data.len(),
            n_tokens: response.n_tokens,
        };
    }
    // SAFETY: the ids are the official test's own, handed to the SUT by it (the SUT answers
    // the samples it was issued); the data lives across the call.
    unsafe { call(&mut batch[..responses.len()]) };
}

impl CompletionSink for OfficialSink {
    fn complete(&self, responses: &[QuerySampleResponse<'_>]) {
        Self::forward(responses, mlperf_official_loadgen::query_samples_complete);
        self.completed
            .fetch_add(responses.len() as u64, Ordering::Release);
    }

    fn first_token(&self, responses: &[QuerySampleResponse<'_>]) {
        Self::forward(responses, mlperf_official_loadgen::first_token_complete);
    }

    fn fail(&self, message: String) {
        let mut failure = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        failure.get_or_insert(message);
    }
}
