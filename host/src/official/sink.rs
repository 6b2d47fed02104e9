//! Completions forwarded to the official LoadGen, counted for the watchdog.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use mlperf_official_loadgen::QuerySampleResponse as OfficialResponse;

use crate::loadgen::{CompletionSink, QuerySampleResponse};

/// Converted on the stack in batches of this many.
const BATCH: usize = 64;

/// What the SUT reported: completions (forwarded) and its first failure (kept).
#[derive(Default)]
pub(crate) struct OfficialSink {
    /// Samples handed to the SUT.
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

    fn forward(responses: &[QuerySampleResponse<'_>], call: unsafe fn(&mut [OfficialResponse])) {
        let blank = OfficialResponse {
            id: 0,
            data: 0,
            size: 0,
            n_tokens: 0,
        };
        let mut batch = [blank; BATCH];
        for chunk in responses.chunks(BATCH) {
            for (slot, response) in batch.iter_mut().zip(chunk) {
                *slot = OfficialResponse {
                    id: response.id.0,
                    data: response.data.as_ptr() as usize,
                    size: response.data.len(),
                    n_tokens: response.n_tokens,
                };
            }
            // SAFETY: the ids are the official test's own, handed to the SUT by it (the SUT
            // answers the samples it was issued); the data lives across the call.
            unsafe { call(&mut batch[..chunk.len()]) };
        }
    }
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
