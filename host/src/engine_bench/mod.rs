//! Engine benchmarks with in-process null SUTs: the overhead floor of the LoadGen engine.
//!
//! Each case runs one `start_test` and reports throughput, start-up (call to first issue),
//! end of run (last completion to return) and peak memory. Run each case in its own process
//! (`mlperf-host bench --case …`) so peak RSS belongs to that case alone. [`official`] runs
//! the same cases, with the same SUT, through the official LoadGen.

pub mod official;
mod round_trip;

pub use round_trip::cross_core_round_trip;

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::loadgen::{
    start_test, Completer, LogSettings, QuerySample, QuerySampleResponse, ResponseId,
    SystemUnderTest, TestResult, TestScenario, TestSettings,
};

/// How the null SUT answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum Completion {
    /// Inside `issue_query`, on the issue thread.
    Inline,
    /// From one worker thread fed through a mutex and condition variable.
    Worker,
}

/// The measurements of one case.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchReport {
    pub case: String,
    /// The LoadGen that ran it: `native` or `official`.
    #[serde(default = "native_engine")]
    pub engine: String,
    pub completion: Completion,
    pub valid: bool,
    pub queries: u64,
    pub samples: u64,
    /// Queries (SingleStream, Server) or samples (Offline) per second of the issue phase.
    pub throughput_per_s: f64,
    pub startup_ms: f64,
    pub end_of_run_ms: f64,
    pub total_ms: f64,
    pub peak_rss_bytes: u64,
    /// The peak's growth over the process's peak before the test, per sample issued.
    pub bytes_per_sample: f64,
    /// The whole process's peak (binary, libraries and all) per sample issued: what a run of
    /// this many samples needs, the baseline included.
    #[serde(default)]
    pub process_bytes_per_sample: f64,
    pub p99_latency_ns: Option<i64>,
}

fn native_engine() -> String {
    "native".into()
}

pub use crate::loadgen::testing::NullQsl;

/// Responses are completed in batches of this many to bound the SUT's own memory.
const BATCH: usize = 4096;

/// The worker's queue: issued queries (their ids) waiting for the worker thread.
#[derive(Default)]
struct WorkQueue {
    queries: VecDeque<Vec<ResponseId>>,
    stop: bool,
}

/// The worker thread, fed through a mutex and condition variable as the official LoadGen's
/// C++ null SUT (`engines/official/glue/null_sut.cc`) is, so the engine comparison runs the
/// same design on both sides.
struct Worker {
    queue: Mutex<WorkQueue>,
    wake: Condvar,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// Answers every sample with an empty response, inline or from a worker thread.
pub struct NullSut {
    first_issue: OnceLock<Instant>,
    worker: Option<Worker>,
    completer: OnceLock<Completer>,
}

impl NullSut {
    pub fn new(completion: Completion) -> std::sync::Arc<Self> {
        let sut = std::sync::Arc::new(NullSut {
            first_issue: OnceLock::new(),
            worker: (completion == Completion::Worker).then(|| Worker {
                queue: Mutex::new(WorkQueue::default()),
                wake: Condvar::new(),
                thread: Mutex::new(None),
            }),
            completer: OnceLock::new(),
        });
        if let Some(worker) = &sut.worker {
            let worker_sut = std::sync::Arc::clone(&sut);
            let join = std::thread::Builder::new()
                .name("null-sut-worker".into())
                .spawn(move || worker_sut.work())
                .expect("spawn the null SUT worker");
            *worker.thread.lock().unwrap() = Some(join);
        }
        sut
    }

    /// Takes every waiting query at once, then answers them one completion call per query.
    fn work(&self) {
        let Some(worker) = &self.worker else { return };
        let mut taken = VecDeque::new();
        let mut responses = Vec::with_capacity(BATCH);
        loop {
            {
                let mut queue = worker.queue.lock().unwrap();
                while !queue.stop && queue.queries.is_empty() {
                    queue = worker.wake.wait(queue).unwrap();
                }
                if queue.queries.is_empty() {
                    return;
                }
                std::mem::swap(&mut taken, &mut queue.queries);
            }
            let Some(completer) = self.completer.get() else {
                taken.clear();
                continue;
            };
            for ids in taken.drain(..) {
                for chunk in ids.chunks(BATCH) {
                    responses.clear();
                    responses.extend(chunk.iter().map(|&id| QuerySampleResponse::new(id, &[])));
                    completer.query_samples_complete(&responses);
                }
            }
        }
    }

    /// Ends the worker thread once the queries it holds are answered.
    pub fn shut_down(&self) {
        if let Some(worker) = &self.worker {
            worker.queue.lock().unwrap().stop = true;
            worker.wake.notify_one();
            if let Some(join) = worker.thread.lock().unwrap().take() {
                let _ = join.join();
            }
        }
    }
}

impl SystemUnderTest for NullSut {
    fn name(&self) -> &str {
        "NullSUT"
    }

    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        self.first_issue.get_or_init(Instant::now);
        match &self.worker {
            None => {
                // Small queries answer from the stack; large ones in heap batches.
                const SMALL: usize = 16;
                if samples.len() <= SMALL {
                    let mut responses = [QuerySampleResponse::new(ResponseId(0), &[]); SMALL];
                    for (response, sample) in responses.iter_mut().zip(samples) {
                        response.id = sample.id;
                    }
                    completer.query_samples_complete(&responses[..samples.len()]);
                    return;
                }
                let mut responses = Vec::with_capacity(BATCH);
                for chunk in samples.chunks(BATCH) {
                    responses.clear();
                    responses.extend(chunk.iter().map(|s| QuerySampleResponse::new(s.id, &[])));
                    completer.query_samples_complete(&responses);
                }
            }
            Some(worker) => {
                self.completer.get_or_init(|| completer.clone());
                let ids = samples.iter().map(|s| s.id).collect();
                worker.queue.lock().unwrap().queries.push_back(ids);
                worker.wake.notify_one();
            }
        }
    }
}

/// Times the first issue of any SUT (the start-up figure), then steps aside.
pub(crate) struct FirstIssue<'a> {
    pub(crate) inner: &'a dyn SystemUnderTest,
    pub(crate) first: OnceLock<Instant>,
}

impl<'a> FirstIssue<'a> {
    pub(crate) fn new(inner: &'a dyn SystemUnderTest) -> Self {
        FirstIssue {
            inner,
            first: OnceLock::new(),
        }
    }
}

impl SystemUnderTest for FirstIssue<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        self.first.get_or_init(Instant::now);
        self.inner.issue_query(samples, completer);
    }
    fn prepare_query(&self, samples: &[QuerySample]) {
        self.inner.prepare_query(samples);
    }
    fn flush_queries(&self) {
        self.inner.flush_queries();
    }
    fn issuer_idle(&self) {
        self.inner.issuer_idle();
    }
    fn issuer_idle_until(&self, deadline: Instant) {
        self.inner.issuer_idle_until(deadline);
    }
}

/// Runs `settings` against `sut` (a plugin, say) and measures it like [`run_case`].
pub fn run_case_with(
    case: &str,
    settings: &TestSettings,
    completion: Completion,
    qsl_samples: usize,
    sut: &dyn SystemUnderTest,
) -> anyhow::Result<BenchReport> {
    let sut = FirstIssue::new(sut);
    let mut qsl = NullQsl::holding(qsl_samples);
    let log = LogSettings {
        drain_timeout: Duration::from_secs(30),
        ..LogSettings::default()
    };
    let rss_before = peak_rss_bytes();
    let started = Instant::now();
    let result = start_test(&sut, &mut qsl, settings, &log).map_err(|error| match error {
        // The engine names the settings of a run; the bench's own are its flags.
        mlperf_loadgen::TestError::QueryTooLarge { samples, gib, .. } => anyhow::anyhow!(
            "a query of {samples} samples ({gib:.1} GiB of sample handles) cannot be \
             allocated: lower --samples"
        ),
        other => other.into(),
    })?;
    let total = started.elapsed();
    let first_issue = sut.first.get().copied().unwrap_or(started);
    Ok(report(
        case,
        completion,
        &result,
        started,
        first_issue,
        total,
        rss_before,
    ))
}

/// Peak resident memory of this process (VmHWM).
pub fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// Runs `settings` against a null SUT and measures it.
pub fn run_case(
    case: &str,
    settings: &TestSettings,
    completion: Completion,
    qsl_samples: usize,
) -> anyhow::Result<BenchReport> {
    let sut = NullSut::new(completion);
    let report = run_case_with(case, settings, completion, qsl_samples, &*sut);
    sut.shut_down();
    report
}

fn report(
    case: &str,
    completion: Completion,
    result: &TestResult,
    started: Instant,
    first_issue: Instant,
    total: Duration,
    rss_before: u64,
) -> BenchReport {
    let performance = result.performance.as_ref();
    let samples: u64 = result.series.iter().map(|s| s.samples_issued).sum();
    let queries: u64 = result.series.iter().map(|s| s.queries_issued).sum();
    let startup = first_issue.duration_since(started).as_secs_f64();
    let active = performance.map_or(0.0, |p| p.final_query_all_samples_done_time_s);
    let issue_time = performance.map_or(0.0, |p| match p.scenario {
        TestScenario::Offline => p.max_latency_s,
        TestScenario::Server => p.final_query_all_samples_done_time_s,
        _ => p.final_query_issued_time_s,
    });
    let throughput = match performance.map(|p| p.scenario) {
        Some(TestScenario::Offline) => samples as f64 / issue_time,
        _ => queries as f64 / issue_time,
    };
    let end_of_run = (total.as_secs_f64() - startup - active).max(0.0);
    let peak = peak_rss_bytes();
    BenchReport {
        case: case.to_string(),
        engine: native_engine(),
        completion,
        valid: performance.is_some_and(|p| p.validity.valid),
        queries,
        samples,
        throughput_per_s: throughput,
        startup_ms: startup * 1e3,
        end_of_run_ms: end_of_run * 1e3,
        total_ms: total.as_secs_f64() * 1e3,
        peak_rss_bytes: peak,
        bytes_per_sample: peak.saturating_sub(rss_before) as f64 / samples.max(1) as f64,
        process_bytes_per_sample: peak as f64 / samples.max(1) as f64,
        p99_latency_ns: performance
            .and_then(|p| p.sample_latency.as_ref())
            .map(|s| s.percentiles[4].1),
    }
}

/// SingleStream: `queries` back-to-back queries of one sample.
pub fn single_stream_settings(queries: u64) -> TestSettings {
    TestSettings {
        scenario: TestScenario::SingleStream,
        min_query_count: queries,
        min_duration_ms: 0,
        // Tiny expected latency: generation is driven by the query count alone.
        single_stream_expected_latency_ns: 1_000.0,
        ..TestSettings::default()
    }
}

/// Offline: one query of `samples` samples.
pub fn offline_settings(samples: u64) -> TestSettings {
    TestSettings {
        scenario: TestScenario::Offline,
        min_query_count: samples,
        min_duration_ms: 0,
        offline_expected_qps: 1.0,
        ..TestSettings::default()
    }
}

/// Server: Poisson arrivals at `qps` for `duration_ms`, 10 ms p99 bound.
pub fn server_settings(qps: f64, duration_ms: u64) -> TestSettings {
    TestSettings {
        scenario: TestScenario::Server,
        server_target_qps: qps,
        server_target_latency_ns: 10_000_000,
        min_duration_ms: duration_ms,
        min_query_count: 100,
        ..TestSettings::default()
    }
}
