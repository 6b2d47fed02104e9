//! The plugin as a sweep's target: each request issued as a one-sample query, its first token
//! and its completion recorded in the point's records (no lock: the point is in the id).

use std::sync::{Arc, Mutex, OnceLock};

use mlperf_loadgen::{
    monotonic_ns, Completer, CompletionSink, QuerySample, QuerySampleResponse, ResponseId,
    SystemUnderTest,
};
use mlperf_serving::{RequestRecords, Target};

use crate::plugin::Instance;

/// Response ids carry the point above this bit, the request below it.
const POINT_SHIFT: u32 = 40;

/// Where every point's completions are recorded: one completer serves the whole sweep (a
/// plugin keeps the first it is handed).
pub(super) struct RecordSink {
    points: Vec<OnceLock<Arc<RequestRecords>>>,
    failure: Mutex<Option<String>>,
}

impl RecordSink {
    pub(super) fn new(points: usize) -> RecordSink {
        RecordSink {
            points: (0..points).map(|_| OnceLock::new()).collect(),
            failure: Mutex::new(None),
        }
    }

    pub(super) fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn records(&self, id: ResponseId) -> Option<(&RequestRecords, usize)> {
        let point = (id.0 >> POINT_SHIFT) as usize;
        let request = (id.0 & ((1 << POINT_SHIFT) - 1)) as usize;
        Some((self.points.get(point)?.get()?, request))
    }
}

impl CompletionSink for RecordSink {
    fn complete(&self, responses: &[QuerySampleResponse<'_>]) {
        let now = monotonic_ns();
        for response in responses {
            if let Some((records, request)) = self.records(response.id) {
                records.complete(request, now, response.n_tokens.max(0) as u64, false);
            }
        }
    }

    fn first_token(&self, responses: &[QuerySampleResponse<'_>]) {
        let now = monotonic_ns();
        for response in responses {
            if let Some((records, request)) = self.records(response.id) {
                records.first_token(request, now);
            }
        }
    }

    fn fail(&self, message: String) {
        tracing::error!("{message}");
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(message);
    }
}

/// One point's view of the plugin.
pub(super) struct PluginTarget<'a> {
    sut: &'a Instance,
    sink: Arc<RecordSink>,
    completer: Completer,
    point: usize,
}

impl<'a> PluginTarget<'a> {
    pub(super) fn new(sut: &'a Instance, sink: Arc<RecordSink>, point: usize) -> PluginTarget<'a> {
        PluginTarget {
            sut,
            completer: Completer::forwarding_to(Arc::clone(&sink) as Arc<dyn CompletionSink>),
            sink,
            point,
        }
    }
}

impl Target for PluginTarget<'_> {
    fn send(&self, id: usize, sample: usize, records: &Arc<RequestRecords>) {
        let slot = &self.sink.points[self.point];
        if slot.get().is_none() {
            let _ = slot.set(Arc::clone(records));
        }
        let query = [QuerySample {
            id: ResponseId(((self.point as u64) << POINT_SHIFT) | id as u64),
            index: sample,
        }];
        self.sut.issue_query(&query, &self.completer);
    }
}
