//! The plugin as a sweep's target: each request issued as a one-sample query, its first token
//! and its completion recorded in the point's records (no lock: the point is in the id).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use mlperf_loadgen::{
    monotonic_ns, Completer, CompletionSink, QuerySample, QuerySampleResponse, ResponseId,
    SystemUnderTest,
};
use mlperf_plugin_api::sdk::FailureKind;
use mlperf_serving::{RequestRecords, Target};
use mlperf_tokenizer::Tokenizer;

use crate::plugin::Instance;

/// Response ids carry the point above this bit, the request below it.
const POINT_SHIFT: u32 = 40;

/// A response id's point and request.
fn split(id: ResponseId) -> (usize, usize) {
    (
        (id.0 >> POINT_SHIFT) as usize,
        (id.0 & ((1 << POINT_SHIFT) - 1)) as usize,
    )
}

/// Where every point's completions are recorded: one completer serves the whole sweep (a
/// plugin keeps the first it is handed).
pub(super) struct RecordSink {
    points: Vec<OnceLock<Arc<RequestRecords>>>,
    failure: Mutex<Option<String>>,
    /// Set with `failure`, read by the issue loop before each request.
    failed: AtomicBool,
    /// Failures after the first, counted rather than each said.
    failures_after_first: AtomicU64,
    /// Single requests' failures, as (point, request, failure): rare, so a lock will do.
    request_failures: Mutex<Vec<(usize, usize, RequestFailure)>>,
    /// Counts each answer's tokens (answers in UTF-8 text) beside the plugin's count.
    tokenizer: Option<Tokenizer>,
    /// The accuracy pass's point and each of its requests' answer (kept only there: that
    /// pass is not timed, so a lock per answer costs nothing that is measured).
    answers: Option<(usize, Mutex<Answers>)>,
}

/// Each request's answer, once it came.
type Answers = Vec<Option<Vec<u8>>>;

impl RecordSink {
    /// A sink for `points` points; with `accuracy_requests`, one more point after them whose
    /// answers are kept.
    pub(super) fn new(
        points: usize,
        tokenizer: Option<Tokenizer>,
        accuracy_requests: Option<usize>,
    ) -> RecordSink {
        let slots = points + usize::from(accuracy_requests.is_some());
        RecordSink {
            points: (0..slots).map(|_| OnceLock::new()).collect(),
            failure: Mutex::new(None),
            failed: AtomicBool::new(false),
            failures_after_first: AtomicU64::new(0),
            request_failures: Mutex::new(Vec::new()),
            tokenizer,
            answers: accuracy_requests.map(|n| (points, Mutex::new(vec![None; n]))),
        }
    }

    /// The accuracy pass's answers, by request (taken).
    pub(super) fn take_answers(&self) -> Answers {
        self.answers.as_ref().map_or_else(Vec::new, |(_, answers)| {
            std::mem::take(&mut *answers.lock().unwrap_or_else(|p| p.into_inner()))
        })
    }

    fn keep_answer(&self, id: ResponseId, data: &[u8]) {
        let Some((point, answers)) = &self.answers else {
            return;
        };
        let (of_point, request) = split(id);
        if of_point == *point {
            let mut answers = answers.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(slot) = answers.get_mut(request) {
                *slot = Some(data.to_vec());
            }
        }
    }

    /// The plugin's first failure, and how many followed it.
    pub(super) fn failure(&self) -> Option<String> {
        let first = self
            .failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        Some(match self.failures_after_first.load(Ordering::Relaxed) {
            0 => first,
            more => format!("{first} (and {more} failure(s) after it)"),
        })
    }

    /// Point `point`'s failed requests, by request id (taken: each point's once).
    pub(super) fn take_request_failures(&self, point: usize) -> Vec<(usize, RequestFailure)> {
        let mut all = self
            .request_failures
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let (mine, rest) = std::mem::take(&mut *all)
            .into_iter()
            .partition(|(p, _, _)| *p == point);
        *all = rest;
        mine.into_iter()
            .map(|(_, request, f)| (request, f))
            .collect()
    }

    fn records(&self, id: ResponseId) -> Option<(&RequestRecords, usize)> {
        let (point, request) = split(id);
        Some((self.points.get(point)?.get()?, request))
    }
}

impl CompletionSink for RecordSink {
    fn complete(&self, responses: &[QuerySampleResponse<'_>]) {
        let now = monotonic_ns();
        for response in responses {
            if let Some((records, request)) = self.records(response.id) {
                // After the time is taken: counting is the client's work, not the server's.
                let counted = self.tokenizer.as_ref().and_then(|tokenizer| {
                    let text = std::str::from_utf8(response.data).ok()?;
                    tokenizer.encode(text).ok().map(|ids| ids.len() as u64)
                });
                if let Some(tokens) = counted {
                    records.counted_tokens(request, tokens);
                }
                self.keep_answer(response.id, response.data);
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

    /// Said once: a plugin failing request after request would flood the terminal.
    fn fail(&self, message: String) {
        let mut failure = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        if failure.is_some() {
            self.failures_after_first.fetch_add(1, Ordering::Relaxed);
            return;
        }
        tracing::error!("{message}");
        *failure = Some(message);
        self.failed.store(true, Ordering::Release);
    }
}

impl crate::plugin::TokenReports for RecordSink {
    fn next_tokens(&self, id: u64, _tokens: i64, now_ns: i64) {
        if let Some((records, request)) = self.records(ResponseId(id)) {
            records.next_tokens(request, now_ns);
        }
    }

    /// Kept over the stamp its first-token completion gets when the host reads it, later.
    fn first_token(&self, id: u64, now_ns: i64) {
        if let Some((records, request)) = self.records(ResponseId(id)) {
            records.first_token(request, now_ns);
        }
    }
}

impl crate::plugin::FailureReports for RecordSink {
    fn sample_failed(&self, id: u64, kind: i32, status: i32, message: &str, now_ns: i64) {
        let (point, _) = split(ResponseId(id));
        if let Some((records, request)) = self.records(ResponseId(id)) {
            // Noted before the end: a point's failures are all in once its requests ended.
            self.request_failures
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((
                    point,
                    request,
                    RequestFailure {
                        kind: FailureKind::from_raw(kind),
                        status,
                        message: message.to_string(),
                    },
                ));
            records.complete(request, now_ns, 0, true);
        }
    }
}

/// Why one request failed, as its plugin said.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RequestFailure {
    pub(super) kind: FailureKind,
    pub(super) status: i32,
    pub(super) message: String,
}

impl RequestFailure {
    /// How failures are counted: the kind, and the status where there is one (`status 503`).
    pub(super) fn label(&self) -> String {
        match (self.kind, self.status) {
            (kind, 0) => kind.name().to_string(),
            (kind, status) => format!("{} {status}", kind.name()),
        }
    }
}

/// One point's view of the plugin.
pub(super) struct PluginTarget<'a> {
    sut: &'a Instance,
    sink: Arc<RecordSink>,
    completer: Completer,
    point: usize,
    /// Each sample's prompt tokens, where counted.
    input_tokens: &'a [u64],
}

impl<'a> PluginTarget<'a> {
    pub(super) fn new(
        sut: &'a Instance,
        sink: Arc<RecordSink>,
        point: usize,
        input_tokens: &'a [u64],
    ) -> PluginTarget<'a> {
        PluginTarget {
            sut,
            completer: Completer::forwarding_to(Arc::clone(&sink) as Arc<dyn CompletionSink>),
            sink,
            point,
            input_tokens,
        }
    }
}

impl Target for PluginTarget<'_> {
    fn send(&self, id: usize, sample: usize, records: &Arc<RequestRecords>) {
        let slot = &self.sink.points[self.point];
        if slot.get().is_none() {
            let _ = slot.set(Arc::clone(records));
        }
        if let Some(&tokens) = self.input_tokens.get(sample) {
            records.input_tokens(id, tokens);
        }
        let query = [QuerySample {
            id: ResponseId(((self.point as u64) << POINT_SHIFT) | id as u64),
            index: sample,
        }];
        self.sut.issue_query(&query, &self.completer);
    }

    fn failed(&self) -> bool {
        self.sink.failed.load(Ordering::Relaxed)
    }
}
