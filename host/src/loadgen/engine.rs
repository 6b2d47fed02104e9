//! `start_test`: runs a whole test (spec §4.1) — the modes, their series, and the result.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::Serialize;

use super::completion::{AccuracyRecord, Completer, CompletionAnomalies, Shared, DONE, TIME_MASK};
use super::config::{ConfType, ConfigFile};
use super::diagnostics::Diagnostic;
use super::early_stopping;
use super::effective::EffectiveSettings;
use super::issue::{
    panic_message, run_series, run_series_threaded, SequenceState, SeriesContext, SeriesOutcome,
    StopReason,
};
use super::loadable_sets::{generate_loadable_sets, LoadableSet};
use super::query_gen::{GenerationError, GenerationParams, QueryGenerator};
use super::results::{PerformanceResult, PerformanceSummary};
use super::settings::{LogSettings, TestMode, TestScenario, TestSettings};
use super::sut::{QuerySampleLibrary, SystemUnderTest};
use super::types::QuerySampleIndex;

/// Why a test could not run at all. Problems during a run end it INVALID instead.
#[derive(Debug, thiserror::Error)]
pub enum TestError {
    #[error("cannot generate queries: {0}")]
    Generation(#[from] GenerationError),
    #[error("the sample library failed to {action} {count} samples: {message}")]
    SampleLibrary {
        action: &'static str,
        count: usize,
        message: String,
    },
    #[error("audit config: {0}")]
    AuditConfig(String),
    #[error("FindPeakPerformance needs the Server scenario, not {0}")]
    FindPeakScenario(TestScenario),
    #[error("the engine thread panicked: {0}")]
    EnginePanic(String),
    #[error("cannot start the engine thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// One series of queries: an accuracy set, or a performance run.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesReport {
    pub mode: TestMode,
    pub loaded_set_len: usize,
    pub generated_query_count: u64,
    pub generated_samples_per_query: u64,
    pub generated_query_duration_ns: i64,
    pub queries_issued: u64,
    pub samples_issued: u64,
    pub first_sample_id: u64,
    pub stop: StopReason,
    pub ran_out_of_generated_queries: bool,
    pub never_completed: u64,
    /// Wall clock when issuing began (`power_begin`).
    pub power_begin: SystemTime,
    /// `power_begin` plus the time to the last completion (`power_end`).
    pub power_end: SystemTime,
    /// Each issued query's scheduled offset from the series start, in ns (only when
    /// `LogSettings::record_query_schedule`).
    pub scheduled_offsets_ns: Vec<i64>,
}

/// FindPeakPerformance's search (Server).
#[derive(Debug, Clone, Serialize)]
pub struct FindPeakReport {
    /// `(target_qps, latency constraint met)` for every run, in order.
    pub trials: Vec<(f64, bool)>,
    /// The highest target qps that met the latency constraint, if any did.
    pub peak_qps: Option<f64>,
}

/// Everything a test produced.
#[derive(Debug, Clone, Serialize)]
pub struct TestResult {
    pub sut_name: String,
    pub qsl_name: String,
    pub qsl_total_sample_count: usize,
    pub qsl_performance_sample_count: usize,
    pub requested: TestSettings,
    pub effective: EffectiveSettings,
    pub series: Vec<SeriesReport>,
    /// The performance result (SubmissionRun, PerformanceOnly, FindPeakPerformance).
    pub performance: Option<PerformanceSummary>,
    pub find_peak: Option<FindPeakReport>,
    #[serde(skip)]
    pub accuracy_log: Vec<AccuracyRecord>,
    pub diagnostics: Vec<Diagnostic>,
    pub anomalies: CompletionAnomalies,
}

impl TestResult {
    pub fn error_count(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == super::diagnostics::Severity::Error)
            .count()
    }
}

static ABORT_GENERATION: AtomicU64 = AtomicU64::new(0);

/// Ends every running test: issuing stops, outstanding samples drain, results are reported
/// (INVALID). Callable from any thread, like the official `AbortTest`.
pub fn abort_test() {
    ABORT_GENERATION.fetch_add(1, Ordering::SeqCst);
}

/// Runs a test to completion. Blocks; the issue loop runs on a dedicated thread.
pub fn start_test(
    sut: &dyn SystemUnderTest,
    qsl: &mut dyn QuerySampleLibrary,
    settings: &TestSettings,
    log_settings: &LogSettings,
) -> Result<TestResult, TestError> {
    let mut diagnostics = Vec::new();
    let mut requested = settings.clone();
    apply_audit_config(&mut requested, log_settings, &mut diagnostics)?;
    if requested.test05 {
        diagnostics.push(Diagnostic::warning(
            "warning_generic_message",
            "Test05 flag detected Overriding random seeds",
        ));
        requested.mode = TestMode::PerformanceOnly;
        requested.qsl_rng_seed = requested.test05_qsl_rng_seed;
        requested.sample_index_rng_seed = requested.test05_sample_index_rng_seed;
        requested.schedule_rng_seed = requested.test05_schedule_rng_seed;
    }

    let qsl_name = qsl.name().to_string();
    let qsl_total = qsl.total_sample_count();
    let qsl_psc = qsl.performance_sample_count();
    let (effective, settings_diagnostics) =
        EffectiveSettings::new(&requested, qsl_psc as u64, qsl_total as u64);
    diagnostics.extend(settings_diagnostics);

    let shared = Arc::new(Shared::new(
        effective.use_token_latencies,
        effective.scenario != TestScenario::Offline,
    ));
    let abort_generation = ABORT_GENERATION.load(Ordering::SeqCst);
    let aborted = AtomicBool::new(false);

    let engine = Engine {
        sut,
        shared: Arc::clone(&shared),
        completer: Completer::new(Arc::clone(&shared)),
        settings: effective.clone(),
        drain_timeout: log_settings.drain_timeout,
        record_schedule: log_settings.record_query_schedule,
        aborted: &aborted,
        sequence: SequenceState::new(),
        series: Vec::new(),
    };
    let watch_abort = AtomicBool::new(true);
    let outcome = std::thread::scope(|scope| {
        let issuer = std::thread::Builder::new()
            .name("mlperf-issue".to_string())
            .spawn_scoped(scope, move || {
                engine.shared.register_issuer();
                engine.run(qsl)
            })?;
        // Relay `abort_test` to the issue loop without it polling a global.
        scope.spawn(|| {
            while watch_abort.load(Ordering::Relaxed) {
                if ABORT_GENERATION.load(Ordering::SeqCst) != abort_generation {
                    aborted.store(true, Ordering::Relaxed);
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let joined = issuer.join();
        watch_abort.store(false, Ordering::Relaxed);
        joined.map_err(|panic| TestError::EnginePanic(panic_message(&panic)))
    });
    let (series, performance, find_peak) = outcome??;

    diagnostics.extend(shared.diagnostics.take());
    let anomalies = shared.anomalies();
    if anomalies.duplicate > 0 {
        diagnostics.push(Diagnostic::error(
            "error_runtime",
            format!(
                "{} completions of samples already completed were ignored.",
                anomalies.duplicate
            ),
        ));
    }
    if anomalies.unknown > 0 {
        diagnostics.push(Diagnostic::error(
            "error_runtime",
            format!(
                "{} completions with ids never issued were ignored.",
                anomalies.unknown
            ),
        ));
    }
    if anomalies.late > 0 {
        diagnostics.push(Diagnostic::error(
            "error_runtime",
            format!(
                "{} completions arrived after their series ended and were ignored.",
                anomalies.late
            ),
        ));
    }
    let accuracy_log = std::mem::take(
        &mut *shared
            .accuracy_log
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()),
    );
    Ok(TestResult {
        sut_name: sut.name().to_string(),
        qsl_name,
        qsl_total_sample_count: qsl_total,
        qsl_performance_sample_count: qsl_psc,
        requested,
        effective,
        series,
        performance,
        find_peak,
        accuracy_log,
        diagnostics,
        anomalies,
    })
}

type RunOutput = (
    Vec<SeriesReport>,
    Option<PerformanceSummary>,
    Option<FindPeakReport>,
);

struct Engine<'a> {
    sut: &'a dyn SystemUnderTest,
    shared: Arc<Shared>,
    completer: Completer,
    settings: EffectiveSettings,
    drain_timeout: Duration,
    record_schedule: bool,
    aborted: &'a AtomicBool,
    sequence: SequenceState,
    series: Vec<SeriesReport>,
}

impl Engine<'_> {
    fn run(mut self, qsl: &mut dyn QuerySampleLibrary) -> Result<RunOutput, TestError> {
        let mut performance = None;
        let mut find_peak = None;
        match self.settings.mode {
            TestMode::AccuracyOnly => self.run_accuracy(qsl)?,
            TestMode::PerformanceOnly => {
                self.info("Starting performance mode");
                let settings = self.settings.clone();
                performance = Some(self.run_performance(qsl, &settings)?);
            }
            TestMode::SubmissionRun => {
                self.run_accuracy(qsl)?;
                self.info("Starting performance mode");
                let settings = self.settings.clone();
                performance = Some(self.run_performance(qsl, &settings)?);
            }
            TestMode::FindPeakPerformance => {
                let (summary, report) = self.find_peak(qsl)?;
                performance = summary;
                find_peak = Some(report);
            }
        }
        Ok((self.series, performance, find_peak))
    }

    fn info(&self, message: &str) {
        self.shared
            .diagnostics
            .push(Diagnostic::info("generic_message", message));
    }

    fn padding(&self) -> usize {
        if self.settings.scenario == TestScenario::MultiStream {
            self.settings.samples_per_query.saturating_sub(1) as usize
        } else {
            0
        }
    }

    fn run_accuracy(&mut self, qsl: &mut dyn QuerySampleLibrary) -> Result<(), TestError> {
        self.info("Starting accuracy mode");
        let sets = generate_loadable_sets(
            self.settings.qsl_rng_seed,
            self.settings.accuracy_sample_count as usize,
            qsl.total_sample_count(),
            self.settings.performance_sample_count as usize,
            self.padding(),
        );
        let settings = self.settings.clone();
        for set in &sets {
            if self.aborted.load(Ordering::Relaxed) {
                break;
            }
            load(qsl, &set.samples)?;
            let outcome = self.run_one_series(&settings, set, TestMode::AccuracyOnly);
            unload(qsl, &set.samples)?;
            outcome?;
        }
        Ok(())
    }

    fn run_performance(
        &mut self,
        qsl: &mut dyn QuerySampleLibrary,
        settings: &EffectiveSettings,
    ) -> Result<PerformanceSummary, TestError> {
        let set = self.performance_set(qsl, settings);
        load(qsl, &set.samples)?;
        let outcome = self.run_one_series(settings, &set, TestMode::PerformanceOnly);
        unload(qsl, &set.samples)?;
        let outcome = outcome?;
        let result = self.collect_performance(&outcome);
        Ok(PerformanceSummary::new(settings, result))
    }

    fn performance_set(
        &self,
        qsl: &dyn QuerySampleLibrary,
        settings: &EffectiveSettings,
    ) -> LoadableSet {
        let mut sets = generate_loadable_sets(
            settings.qsl_rng_seed,
            settings.performance_sample_count as usize,
            qsl.total_sample_count(),
            settings.performance_sample_count as usize,
            self.padding(),
        );
        if sets.is_empty() {
            LoadableSet {
                samples: Vec::new(),
                distribution_end: 0,
            }
        } else {
            sets.swap_remove(0)
        }
    }

    fn run_one_series(
        &mut self,
        settings: &EffectiveSettings,
        set: &LoadableSet,
        mode: TestMode,
    ) -> Result<SeriesOutcome, TestError> {
        let params = GenerationParams {
            scenario: settings.scenario,
            mode,
            samples_per_query: settings.samples_per_query,
            min_query_count: settings.min_query_count,
            target_duration_ms: settings.target_duration_ms,
            target_qps: settings.target_qps,
            sample_index_rng_seed: settings.sample_index_rng_seed,
            schedule_rng_seed: settings.schedule_rng_seed,
            sample_concatenate_permutation: settings.sample_concatenate_permutation,
            performance_issue_unique: settings.performance_issue_unique,
            performance_issue_same: settings.performance_issue_same,
            performance_issue_same_index: settings.performance_issue_same_index,
        };
        let mut generator = QueryGenerator::new(&params, set, self.sequence.next_sample_id)?;
        let ctx = SeriesContext {
            sut: self.sut,
            shared: &self.shared,
            completer: &self.completer,
            settings,
            drain_timeout: self.drain_timeout,
            abort: self.aborted,
        };
        let power_begin = SystemTime::now();
        let outcome = if mode == TestMode::PerformanceOnly && needs_estimate(settings) {
            // Work out early stopping's tables while the run issues, so the end of the run
            // only looks them up.
            let series_done = AtomicBool::new(false);
            let shared = &self.shared;
            let spq = settings.samples_per_query.max(1);
            let base = self.sequence.next_sample_id;
            let percentiles = estimate_percentiles(settings);
            std::thread::scope(|scope| {
                for p in percentiles {
                    let series_done = &series_done;
                    let _ = std::thread::Builder::new()
                        .name("mlperf-early-stopping".into())
                        .spawn_scoped(scope, move || {
                            lower_thread_priority();
                            early_stopping::precompute_while(
                                p,
                                || {
                                    shared
                                        .issued_end
                                        .load(Ordering::Relaxed)
                                        .saturating_sub(base)
                                        / spq
                                },
                                || series_done.load(Ordering::Relaxed),
                            );
                        });
                }
                let outcome = run_series(&ctx, &mut self.sequence, &mut generator, mode);
                series_done.store(true, Ordering::Relaxed);
                outcome
            })
        } else if settings.scenario == TestScenario::Server
            && settings.requested.server_num_issue_query_threads > 0
        {
            let threads = settings.requested.server_num_issue_query_threads.min(256) as usize;
            run_series_threaded(&ctx, &mut self.sequence, &mut generator, mode, threads)
        } else {
            run_series(&ctx, &mut self.sequence, &mut generator, mode)
        };
        let last_completion = self.last_completion_ns(&outcome);
        let active = Duration::from_nanos((last_completion - outcome.start_ns).max(0) as u64);
        let scheduled_offsets_ns = if self.record_schedule {
            outcome
                .query_scheduled_ns
                .iter()
                .map(|&t| t - outcome.query_scheduled_ns[0])
                .collect()
        } else {
            Vec::new()
        };
        self.series.push(SeriesReport {
            mode,
            loaded_set_len: set.samples.len(),
            generated_query_count: outcome.generated_query_count,
            generated_samples_per_query: outcome.samples_per_query as u64,
            generated_query_duration_ns: outcome.generated_query_duration_ns,
            queries_issued: outcome.queries_issued,
            samples_issued: outcome.samples_issued,
            first_sample_id: outcome.sample_base,
            stop: outcome.stop.clone(),
            ran_out_of_generated_queries: outcome.ran_out_of_generated_queries,
            never_completed: outcome.never_completed,
            power_begin,
            power_end: power_begin + active,
            scheduled_offsets_ns,
        });
        Ok(outcome)
    }

    /// The latest completion of the series (its start if nothing completed).
    fn last_completion_ns(&self, outcome: &SeriesOutcome) -> i64 {
        let mut last = outcome.start_ns;
        for seq in outcome.sample_base..outcome.sample_base + outcome.samples_issued {
            if let Some(slot) = self.shared.status.get(seq) {
                let status = slot.load(Ordering::Acquire);
                if status & DONE != 0 {
                    last = last.max((status & TIME_MASK) as i64);
                }
            }
        }
        last
    }

    /// Turns the slots of a performance series into latencies, per the official definitions.
    fn collect_performance(&self, outcome: &SeriesOutcome) -> PerformanceResult {
        let shared = &self.shared;
        let spq = outcome.samples_per_query.max(1) as u64;
        let count = outcome.samples_issued as usize;
        let tokens = self.settings.use_token_latencies;
        let first_tokens = tokens && shared.needs_first_token;
        let mut result = PerformanceResult {
            sample_latencies: Vec::with_capacity(count),
            queries_issued: outcome.queries_issued,
            never_completed: outcome.never_completed,
            ..PerformanceResult::default()
        };
        if first_tokens {
            result.first_token_latencies.reserve(count);
            result.time_per_output_token.reserve(count);
        }
        let multi_stream = self.settings.scenario == TestScenario::MultiStream;
        let mut max_latency = 0i64;
        let mut final_query_done = outcome.start_ns;
        let mut token_errors = TokenErrors::default();
        let queries = &outcome.query_scheduled_ns;
        let series_end = outcome.sample_base + queries.len() as u64 * spq;
        let mut last_scheduled = None;
        for (query, &scheduled) in queries.iter().enumerate() {
            if scheduled == i64::MIN {
                // Generated for another issue thread that stopped before issuing it.
                continue;
            }
            last_scheduled = Some(scheduled);
            let first = outcome.sample_base + query as u64 * spq;
            let end = (first + spq).min(series_end);
            let mut query_done = Some(i64::MIN);
            for seq in first..end {
                let status = shared
                    .status
                    .get(seq)
                    .map_or(0, |s| s.load(Ordering::Acquire));
                if status & DONE == 0 {
                    query_done = None;
                    continue;
                }
                let done = (status & TIME_MASK) as i64;
                let latency = done - scheduled;
                result.sample_latencies.push(latency);
                max_latency = max_latency.max(latency);
                query_done = query_done.map(|q| q.max(done));
                if tokens {
                    let n = shared
                        .n_tokens
                        .get(seq)
                        .map_or(0, |n| n.load(Ordering::Relaxed) as i64);
                    let n = token_errors.check(n);
                    result.token_count += n;
                    if first_tokens {
                        let first_token = shared
                            .first_token
                            .get(seq)
                            .map_or(0, |t| t.load(Ordering::Acquire));
                        let ttft = if first_token == 0 {
                            latency
                        } else {
                            first_token as i64 - scheduled
                        };
                        result.first_token_latencies.push(ttft);
                        // Rejected counts became 0, so the divisor is -1 there, as upstream.
                        result
                            .time_per_output_token
                            .push((latency - ttft) / (n - 1));
                    }
                }
            }
            if let Some(done) = query_done {
                if multi_stream {
                    result.query_latencies.push(done - scheduled);
                }
                final_query_done = done;
            }
        }
        token_errors.report(shared);
        let seconds = |ns: i64| ns as f64 / 1e9;
        result.max_latency_s = seconds(max_latency);
        if let Some(last_scheduled) = last_scheduled {
            result.final_query_scheduled_time_s = seconds(last_scheduled - outcome.start_ns);
        }
        result.final_query_issued_time_s =
            seconds(outcome.final_query_issued_ns - outcome.start_ns);
        result.final_query_all_samples_done_time_s = seconds(final_query_done - outcome.start_ns);
        result
    }

    /// FindPeakPerformance (Server): widen the bounds, then binary-search the highest qps
    /// whose run meets the latency constraint.
    fn find_peak(
        &mut self,
        qsl: &mut dyn QuerySampleLibrary,
    ) -> Result<(Option<PerformanceSummary>, FindPeakReport), TestError> {
        if self.settings.scenario != TestScenario::Server {
            self.shared.diagnostics.push(Diagnostic::error(
                "error_invalid_config",
                "Finding peak performance is only supported in Server scenarios.",
            ));
            return Err(TestError::FindPeakScenario(self.settings.scenario));
        }
        self.info("Starting FindPeakPerformance mode");
        let mut trials = Vec::new();
        let base = self.settings.clone();
        let lower_summary = self.run_performance(qsl, &base)?;
        let met = lower_summary.validity.perf_constraints_met;
        trials.push((base.target_qps, met));
        if !met {
            self.shared.diagnostics.push(Diagnostic::error(
                "error_runtime",
                format!(
                    "FindPeakPerformance: Initial lower bound does not satisfy performance constraints, msg: {}",
                    lower_summary.validity.reasons.first().cloned().unwrap_or_default()
                ),
            ));
            return Ok((
                Some(lower_summary),
                FindPeakReport {
                    trials,
                    peak_qps: None,
                },
            ));
        }
        let step = base.requested.server_find_peak_qps_boundary_step_size;
        let decimals = base.requested.server_find_peak_qps_decimals_of_precision;
        let mut lower = (base.target_qps, lower_summary);
        // Widen until a run fails the constraint.
        let upper_qps = loop {
            if self.aborted.load(Ordering::Relaxed) {
                return Ok((
                    Some(lower.1),
                    FindPeakReport {
                        trials,
                        peak_qps: Some(lower.0),
                    },
                ));
            }
            let candidate = lower.0 * (1.0 + step);
            self.info(&format!(
                "FindBoundaries: Checking fields [{}, {})",
                std_to_string(lower.0),
                std_to_string(candidate)
            ));
            let summary = self.run_at(qsl, &base, candidate)?;
            let met = summary.validity.perf_constraints_met;
            trials.push((candidate, met));
            if !met {
                break candidate;
            }
            lower = (candidate, summary);
        };
        self.info(&format!(
            "FindPeakPerformance: Found boundaries: [{}, {})",
            std_to_string(lower.0),
            std_to_string(upper_qps)
        ));
        let mut upper = upper_qps;
        let scale = 10f64.powi(decimals);
        while (lower.0 * scale).floor() + 1.0 < (upper * scale).floor() {
            if self.aborted.load(Ordering::Relaxed) {
                break;
            }
            let mid = lower.0 + (upper - lower.0) / 2.0;
            self.info(&format!(
                "FindPeakPerformanceBinarySearch: Testing the mid value of bounds [{}, {}): {}",
                std_to_string(lower.0),
                std_to_string(upper),
                std_to_string(mid)
            ));
            let summary = self.run_at(qsl, &base, mid)?;
            let met = summary.validity.perf_constraints_met;
            trials.push((mid, met));
            if met {
                lower = (mid, summary);
            } else {
                upper = mid;
            }
        }
        self.info(&format!(
            "FindPeakPerformance: Found peak performance field: {}",
            std_to_string(lower.0)
        ));
        Ok((
            Some(lower.1),
            FindPeakReport {
                trials,
                peak_qps: Some(lower.0),
            },
        ))
    }

    fn run_at(
        &mut self,
        qsl: &mut dyn QuerySampleLibrary,
        base: &EffectiveSettings,
        qps: f64,
    ) -> Result<PerformanceSummary, TestError> {
        let mut settings = base.clone();
        settings.target_qps = qps;
        self.run_performance(qsl, &settings)
    }
}

/// `std::to_string(double)`: fixed notation with six decimals.
fn std_to_string(value: f64) -> String {
    format!("{value:.6}")
}

fn load(qsl: &mut dyn QuerySampleLibrary, samples: &[QuerySampleIndex]) -> Result<(), TestError> {
    guarded(|| qsl.load_samples_to_ram(samples), "load", samples.len())
}

fn unload(qsl: &mut dyn QuerySampleLibrary, samples: &[QuerySampleIndex]) -> Result<(), TestError> {
    guarded(
        || qsl.unload_samples_from_ram(samples),
        "unload",
        samples.len(),
    )
}

fn guarded(
    call: impl FnOnce() -> Result<(), super::sut::QslError>,
    action: &'static str,
    count: usize,
) -> Result<(), TestError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(TestError::SampleLibrary {
            action,
            count,
            message: error.to_string(),
        }),
        Err(panic) => Err(TestError::SampleLibrary {
            action,
            count,
            message: format!("panicked: {}", panic_message(&panic)),
        }),
    }
}

/// The official n_tokens checks: 0, negative and 1 are errors; negative and 1 count as 0.
#[derive(Default)]
struct TokenErrors {
    zero: u64,
    negative: u64,
    one: u64,
}

impl TokenErrors {
    fn check(&mut self, n_tokens: i64) -> i64 {
        match n_tokens {
            0 => {
                self.zero += 1;
                0
            }
            n if n < 0 => {
                self.negative += 1;
                0
            }
            1 => {
                self.one += 1;
                0
            }
            n => n,
        }
    }

    /// One error line per kind with its count, instead of one per sample.
    fn report(&self, shared: &Shared) {
        let kinds = [
            (
                self.zero,
                "n_tokens argument missing or attempted to record 0 as number of tokens",
            ),
            (
                self.negative,
                "Attempted to record a negative number of tokens",
            ),
            (self.one, "Number of tokens need to be greater than 1"),
        ];
        for (count, message) in kinds {
            if count > 0 {
                shared.diagnostics.push(Diagnostic::error(
                    "error_runtime",
                    format!("{message} ({count} samples)"),
                ));
            }
        }
    }
}

/// audit.config (compliance tests) overrides the settings, read with model `*`.
fn apply_audit_config(
    requested: &mut TestSettings,
    log_settings: &LogSettings,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<(), TestError> {
    let Some(path) = &log_settings.audit_config else {
        return Ok(());
    };
    if !path.exists() {
        return Ok(());
    }
    let audit = ConfigFile::read(path).map_err(|e| TestError::AuditConfig(e.to_string()))?;
    diagnostics.push(Diagnostic::warning(
        "warning_generic_message",
        format!(
            "Found Audit Config file ({}). Overriding TestSettings from audit.config file.",
            path.display()
        ),
    ));
    let scenario = requested.scenario;
    for warning in audit.apply(requested, "*", scenario, ConfType::Audit) {
        diagnostics.push(Diagnostic::warning(
            "warning_generic_message",
            warning.to_string(),
        ));
    }
    Ok(())
}

/// SingleStream and MultiStream estimate a percentile by early stopping at the end of a run.
fn needs_estimate(settings: &EffectiveSettings) -> bool {
    matches!(
        settings.scenario,
        TestScenario::SingleStream | TestScenario::MultiStream
    ) && !settings.use_token_latencies
}

fn estimate_percentiles(settings: &EffectiveSettings) -> Vec<f64> {
    let mut percentiles = vec![settings.target_latency_percentile];
    if settings.scenario == TestScenario::SingleStream
        && settings.target_latency_percentile != early_stopping::MULTI_STREAM_PERCENTILE
    {
        percentiles.push(early_stopping::MULTI_STREAM_PERCENTILE);
    }
    percentiles
}

/// Background work yields to the issue loop and the SUT.
fn lower_thread_priority() {
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn nice(increment: std::os::raw::c_int) -> std::os::raw::c_int;
        }
        // SAFETY: on Linux `nice` changes only the calling thread's priority; failure is harmless.
        unsafe {
            nice(10);
        }
    }
}
