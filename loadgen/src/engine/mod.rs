//! `start_test`: runs a whole test (spec §4.1) — the modes, their series, and the result.

mod assembly;
mod background_count;
mod context;
mod find_peak;
mod sample_times;
mod trace;

pub use self::context::{AbandonHook, TestContext};
pub use self::sample_times::{SampleTimes, SeriesObserver, SeriesObserverHook};

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

pub use self::find_peak::FindPeakReport;
use crate::completion::{AccuracyRecord, Clock, Completer, CompletionAnomalies, Shared};
use crate::config::{ConfType, ConfigFile};
use crate::diagnostics::Diagnostic;
use crate::effective::EffectiveSettings;
use crate::issue::{panic_message, run_series, SequenceState, SeriesContext, StopReason};
use crate::issue_threads::run_series_threaded;
use crate::loadable_sets::{generate_loadable_sets, LoadableSet};
use crate::logging::detail::DetailValue;
use crate::logging::writer::LogWriter;
use crate::logging::{keys, LogFiles, LogSender};
use crate::measurements::{collect_performance, last_completion_ns};
use crate::progress::ProgressRecorder;
use crate::query_gen::{CountLimit, GenerationError, GenerationParams, QueryGenerator};
use crate::results::{PerformanceResult, PerformanceSummary};
use crate::settings::{LogSettings, TestMode, TestScenario, TestSettings};
use crate::sut::{QuerySampleLibrary, SystemUnderTest};
use crate::sut_calls::{StallWatch, SutCalls};
use crate::types::{QuerySample, QuerySampleIndex};
use assembly::{close_logs, error_count, finish_abandoned, Header};
use background_count::BackgroundCount;

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
    #[error("cannot write the log files: {0}")]
    LogOutput(std::io::Error),
    #[error(
        "a query of {samples} samples ({gib:.1} GiB of sample handles) cannot be allocated: \
         lower {lower}"
    )]
    QueryTooLarge {
        samples: u64,
        gib: f64,
        /// The settings that size it.
        lower: &'static str,
    },
    #[error(
        "{holder} holds the whole schedule before issuing: its {queries} queries ({gib:.1} GiB) \
         do not fit in the {available_gib:.1} GiB of memory available: {fix}"
    )]
    ScheduleTooLarge {
        /// What generates every query up front.
        holder: &'static str,
        queries: u64,
        gib: f64,
        available_gib: f64,
        /// The settings to change.
        fix: &'static str,
    },
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
    /// `YYYY-MM-DDTHH:MM:SSZ` when the test started.
    pub test_datetime: String,
    /// The log files written, when an output directory was given.
    pub log_files: Option<LogFiles>,
    /// Where the SUT came from (`TestContext::provenance`).
    pub provenance: Vec<(String, String)>,
    /// Why the test was given up with a call into the SUT still running
    /// (`LogSettings::sut_call_timeout`): it has no series and no performance result.
    pub abandoned: Option<String>,
}

impl TestResult {
    pub fn error_count(&self) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == crate::diagnostics::Severity::Error)
            .count()
    }
}

/// Runs a test to completion. Blocks; the issue loop runs on a dedicated thread (or the
/// caller's: `TestContext::issue_on_calling_thread`). With
/// `log_settings.log_output.outdir` set, the official log files are written there: the detail
/// and accuracy logs as the run goes, the summary and `result.json` at the end.
pub fn start_test(
    sut: &dyn SystemUnderTest,
    qsl: &mut dyn QuerySampleLibrary,
    settings: &TestSettings,
    log_settings: &LogSettings,
) -> Result<TestResult, TestError> {
    start_test_with(sut, qsl, settings, log_settings, &TestContext::default())
}

/// [`start_test`] with the caller's [`TestContext`]: a progress handle, the SUT's provenance,
/// problems found before the test, an audit.config.
pub fn start_test_with(
    sut: &dyn SystemUnderTest,
    qsl: &mut dyn QuerySampleLibrary,
    settings: &TestSettings,
    log_settings: &LogSettings,
    context: &TestContext,
) -> Result<TestResult, TestError> {
    let clock = Clock::new();
    let test_datetime = keys::test_datetime(SystemTime::now());
    let (files, writer) = open_logs(log_settings, &test_datetime)?;
    let log = LogSender::new(writer.as_ref().map(LogWriter::sender), clock);
    let mut diagnostics = Vec::new();
    let mut note = |diagnostic: Diagnostic| {
        log.diagnostic(&diagnostic);
        diagnostics.push(diagnostic);
    };

    log.details(keys::version());
    let name_started = Instant::now();
    let sut_name = sut.name().to_string();
    let name_duration = name_started.elapsed().as_nanos() as u64;
    let qsl_name = qsl.name().to_string();
    let qsl_total = qsl.total_sample_count();
    let qsl_psc = qsl.performance_sample_count();
    log.details(vec![
        ("test_datetime".into(), test_datetime.clone().into()),
        ("sut_name".into(), sut_name.clone().into()),
        ("get_sut_name_duration_ns".into(), name_duration.into()),
        ("qsl_name".into(), qsl_name.clone().into()),
        ("qsl_reported_total_count".into(), qsl_total.into()),
        ("qsl_reported_performance_count".into(), qsl_psc.into()),
    ]);
    log.details(
        context
            .provenance
            .iter()
            .map(|(key, value)| (format!("sut_{key}"), value.clone().into()))
            .collect(),
    );

    for diagnostic in &context.earlier_diagnostics {
        note(diagnostic.clone());
    }
    let requested = requested_settings(settings, context, &mut note)?;
    let (effective, settings_diagnostics) =
        EffectiveSettings::new(&requested, qsl_psc as u64, qsl_total as u64);
    for diagnostic in settings_diagnostics {
        note(diagnostic);
    }
    log.details(keys::requested(&requested));
    log.details(keys::effective(&effective));
    let header = Header {
        sut_name: sut_name.clone(),
        qsl_name,
        qsl_total_sample_count: qsl_total,
        qsl_performance_sample_count: qsl_psc,
        test_datetime,
        requested,
        effective: effective.clone(),
        log_files: files.clone(),
        provenance: context.provenance.clone(),
    };

    let shared = Arc::new(Shared::new(
        clock,
        log.clone(),
        effective.use_token_latencies,
        effective.scenario != TestScenario::Offline,
    ));
    let abort_generation = crate::abort::generation();
    let aborted = AtomicBool::new(false);

    let sut_calls = SutCalls::new(issue_threads(&effective));
    let engine = Engine {
        sut,
        sut_calls: &sut_calls,
        shared: Arc::clone(&shared),
        completer: Completer::new(Arc::clone(&shared)),
        settings: effective.clone(),
        drain_timeout: log_settings.drain_timeout,
        issue_spin: log_settings.issue_spin,
        record_schedule: log_settings.record_query_schedule,
        trace: log_settings.enable_trace && writer.is_some(),
        observer: context
            .series_observer
            .as_ref()
            .map(|hook| Arc::clone(&hook.0)),
        progress: context
            .progress
            .as_ref()
            .map(|handle| ProgressRecorder::new(handle, &shared)),
        aborted: &aborted,
        sut_halted: false,
        sequence: SequenceState::new(),
        series: Vec::new(),
    };
    let mut stall_watch = log_settings
        .sut_call_timeout
        .map(|timeout| StallWatch::new(&sut_calls, timeout));
    let mut writer = writer;
    let issue_loop_done = AtomicBool::new(false);
    let poll = coordinator_poll(log_settings.sut_call_timeout);
    // Relays `abort_test` to the issue loop without it polling a global, and watches the calls
    // into the SUT, until the issue loop ends. `Some` when it gave the test up.
    let coordinate = |stall_watch: &mut Option<StallWatch>,
                      writer: &mut Option<LogWriter>|
     -> Option<Result<TestResult, TestError>> {
        // Registered before the first look at the generation: an abort in between still
        // wakes it.
        let _woken_by_abort = crate::abort::WokenByAbort::register();
        let mut abandoned = None;
        while !issue_loop_done.load(Ordering::Acquire) {
            if crate::abort::generation() != abort_generation {
                aborted.store(true, Ordering::Relaxed);
            }
            let completed = shared.completed.load(Ordering::Relaxed);
            if let Some(call) = stall_watch
                .as_mut()
                .and_then(|w| w.check(&sut_calls, completed))
            {
                *stall_watch = None;
                let timeout = log_settings.sut_call_timeout.unwrap_or_default();
                let reason = format!(
                    "{sut_name} {} has not returned after {timeout:?}",
                    call.name()
                );
                // The issue loop cannot finish the test: it is inside the SUT. Finish it here
                // from what is known without it, every log written.
                shared.wait_for_logging(Duration::from_secs(1));
                let mut diagnostics = diagnostics.clone();
                diagnostics.extend(shared.diagnostics.take());
                let result = header.clone().result(
                    &shared,
                    (Vec::new(), None, None),
                    diagnostics,
                    shared.anomalies(),
                    Some(reason.clone()),
                );
                // Nothing here may fail or unwind: leaving the scope would wait for the stuck
                // thread. A log that could not be written is reported once the call returns.
                let (result, written) = finish_abandoned(result, &log, writer.take(), log_settings);
                // Only now: an issue thread stopping on this failure would log to a detail
                // log that is being closed.
                shared.fail_lost(reason);
                if let Some(hook) = &context.on_abandoned {
                    let _ = catch_unwind(AssertUnwindSafe(|| (hook.0)(&result)));
                }
                // The hook did not end the process: wait for the call, however long it takes.
                abandoned = Some(written.map(|()| result));
            }
            std::thread::park_timeout(poll);
        }
        abandoned
    };
    let issue = |coordinator: std::thread::Thread| {
        engine.shared.register_issuer();
        let run = engine.run(qsl);
        issue_loop_done.store(true, Ordering::Release);
        coordinator.unpark();
        run
    };
    let (outcome, abandoned) = std::thread::scope(|scope| {
        if context.issue_on_calling_thread {
            // As the official LoadGen: the SUT's and the QSL's callbacks on the caller's thread.
            let coordinator = std::thread::Builder::new()
                .name("mlperf-coordinator".to_string())
                .spawn_scoped(scope, || coordinate(&mut stall_watch, &mut writer))?;
            let run = issue(coordinator.thread().clone());
            let abandoned = coordinator
                .join()
                .map_err(|panic| TestError::EnginePanic(panic_message(&panic)))?;
            Ok((Ok(run), abandoned))
        } else {
            let coordinator = std::thread::current();
            let issuer = std::thread::Builder::new()
                .name("mlperf-issue".to_string())
                .spawn_scoped(scope, move || issue(coordinator))?;
            let abandoned = coordinate(&mut stall_watch, &mut writer);
            let run = issuer
                .join()
                .map_err(|panic| TestError::EnginePanic(panic_message(&panic)));
            Ok::<_, TestError>((run, abandoned))
        }
    })?;
    let outcome = outcome.and_then(|run| run);
    if let Some(result) = abandoned {
        return result;
    }
    let run = match outcome {
        Ok(run) => run,
        Err(error) => {
            // The detail log keeps the reason the run could not go on.
            let diagnostic = Diagnostic::error("error_runtime", error.to_string());
            log.diagnostic(&diagnostic);
            diagnostics.push(diagnostic);
            log.detail("num_errors", error_count(&diagnostics));
            if let Some(writer) = writer {
                writer.finish().map_err(TestError::LogOutput)?;
            }
            return Err(error);
        }
    };

    shared.wait_for_logging(log_settings.drain_timeout);
    diagnostics.extend(shared.diagnostics.take());
    let mut note = |diagnostic: Diagnostic| {
        log.diagnostic(&diagnostic);
        diagnostics.push(diagnostic);
    };
    for diagnostic in shared.token_diagnostics() {
        note(diagnostic);
    }
    let anomalies = shared.anomalies();
    let refused = [
        (
            anomalies.duplicate,
            "completions of samples already completed were ignored.",
        ),
        (
            anomalies.unknown,
            "completions with ids never issued were ignored.",
        ),
        (
            anomalies.late,
            "completions arrived after their series ended and were ignored.",
        ),
    ];
    for (count, what) in refused {
        if count > 0 {
            note(Diagnostic::error(
                "error_runtime",
                format!("{count} {what}"),
            ));
        }
    }
    log.detail("num_errors", error_count(&diagnostics));
    let result = header.result(&shared, run, diagnostics, anomalies, None);
    close_logs(writer, &result, log_settings)?;
    Ok(result)
}

/// The log files of a test writing into `log_output.outdir`, opened before anything runs: an
/// unwritable directory is an error, not a lost run.
fn open_logs(
    log_settings: &LogSettings,
    test_datetime: &str,
) -> Result<(Option<LogFiles>, Option<LogWriter>), TestError> {
    let Some(dir) = log_settings.log_output.outdir.as_deref() else {
        return Ok((None, None));
    };
    let files = LogFiles::new(dir, &log_settings.log_output, test_datetime);
    let trace_origin = log_settings.enable_trace.then(|| {
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64)
    });
    let writer =
        LogWriter::open(&files, std::process::id(), trace_origin).map_err(TestError::LogOutput)?;
    Ok((Some(files), Some(writer)))
}

/// The settings as the test runs them: the caller's, with an audit.config over them, and
/// TEST05's seeds when it asks for them.
fn requested_settings(
    settings: &TestSettings,
    context: &TestContext,
    note: &mut impl FnMut(Diagnostic),
) -> Result<TestSettings, TestError> {
    let mut requested = settings.clone();
    for diagnostic in apply_audit_config(&mut requested, context.audit_config.as_deref())? {
        note(diagnostic);
    }
    if requested.test05 {
        note(Diagnostic::warning(
            "warning_generic_message",
            "Test05 flag detected Overriding random seeds",
        ));
        requested.mode = TestMode::PerformanceOnly;
        requested.qsl_rng_seed = requested.test05_qsl_rng_seed;
        requested.sample_index_rng_seed = requested.test05_sample_index_rng_seed;
        requested.schedule_rng_seed = requested.test05_schedule_rng_seed;
    }
    Ok(requested)
}

/// How often the coordinating thread looks at the calls into the SUT: often enough to see a
/// stall soon after `timeout`, and no more (an abort and the issue loop's end wake it).
fn coordinator_poll(timeout: Option<Duration>) -> Duration {
    match timeout {
        Some(timeout) => (timeout / 8).clamp(Duration::from_millis(1), Duration::from_millis(250)),
        None => Duration::from_millis(250),
    }
}

/// The issuing threads whose calls into the SUT are watched: Server's issue threads, or one.
fn issue_threads(settings: &EffectiveSettings) -> usize {
    if settings.scenario == TestScenario::Server {
        settings.requested.server_num_issue_query_threads.min(256) as usize
    } else {
        1
    }
}

pub(super) type RunOutput = (
    Vec<SeriesReport>,
    Option<PerformanceSummary>,
    Option<FindPeakReport>,
);

pub(super) struct Engine<'a> {
    sut: &'a dyn SystemUnderTest,
    sut_calls: &'a SutCalls,
    pub(super) shared: Arc<Shared>,
    completer: Completer,
    pub(super) settings: EffectiveSettings,
    drain_timeout: Duration,
    issue_spin: Duration,
    record_schedule: bool,
    /// Write the trace file (asked for, and log files are on).
    trace: bool,
    observer: Option<Arc<dyn SeriesObserver>>,
    progress: Option<ProgressRecorder>,
    pub(super) aborted: &'a AtomicBool,
    /// A series ended with samples the SUT still holds (or with the SUT failed): no further
    /// series may start, since the next load could replace memory those samples point into.
    sut_halted: bool,
    sequence: SequenceState,
    series: Vec<SeriesReport>,
}

impl Engine<'_> {
    fn run(mut self, qsl: &mut dyn QuerySampleLibrary) -> Result<RunOutput, TestError> {
        // Before any set is made: a MultiStream set is padded by a query's samples.
        if self.settings.scenario == TestScenario::MultiStream {
            check_query_size(&self.settings)?;
        }
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
                if self.stopped() {
                    return Ok((self.series, performance, find_peak));
                }
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

    /// Aborted, or the SUT left a series unfinished: start no further series.
    pub(super) fn stopped(&self) -> bool {
        self.aborted.load(Ordering::Relaxed) || self.sut_halted
    }

    pub(super) fn info(&self, message: &str) {
        self.shared
            .diagnostics
            .push(Diagnostic::info("generic_message", message));
    }

    fn log_loaded_set(&self, samples: &[QuerySampleIndex]) {
        let log = self.shared.log();
        if log.enabled() {
            let set = samples.iter().map(|&i| i as u64).collect();
            log.detail("loaded_qsl_set", DetailValue::List(set));
        }
    }

    /// The result block of the detail log for the reported performance run.
    pub(super) fn log_result(&self, summary: &PerformanceSummary, settings: &EffectiveSettings) {
        self.shared.log().details(keys::result(summary, settings));
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
            if self.stopped() {
                break;
            }
            self.log_loaded_set(&set.samples);
            load(qsl, &set.samples)?;
            let outcome = self.run_one_series(&settings, set, TestMode::AccuracyOnly);
            // Completions count before their responses are copied into the accuracy log, and
            // a response may point into this set's memory: the next load must wait for them.
            self.shared.wait_for_logging(self.drain_timeout);
            self.unload_after_series(qsl, &set.samples);
            outcome?;
        }
        Ok(())
    }

    pub(super) fn run_performance(
        &mut self,
        qsl: &mut dyn QuerySampleLibrary,
        settings: &EffectiveSettings,
    ) -> Result<PerformanceSummary, TestError> {
        let summary = self.run_performance_checked(qsl, settings, true)?;
        self.log_result(&summary, settings);
        Ok(summary)
    }

    /// A performance series; `check_clocks` as the official performance mode does (its
    /// FindPeakPerformance trials do not).
    pub(super) fn run_performance_checked(
        &mut self,
        qsl: &mut dyn QuerySampleLibrary,
        settings: &EffectiveSettings,
        check_clocks: bool,
    ) -> Result<PerformanceSummary, TestError> {
        let set = self.performance_set(qsl, settings);
        self.log_loaded_set(&set.samples);
        load(qsl, &set.samples)?;
        let clocks = check_clocks.then(|| ClockCheck::start(settings.print_timestamps));
        let outcome = self.run_one_series(settings, &set, TestMode::PerformanceOnly);
        if let Some(clocks) = clocks {
            clocks.finish(&self.shared);
        }
        // As in accuracy mode: sampled responses may still be copied from this set's memory.
        self.shared.wait_for_logging(self.drain_timeout);
        self.unload_after_series(qsl, &set.samples);
        let result = outcome?.expect("a performance series collects its latencies");
        Ok(PerformanceSummary::new(settings, result))
    }

    /// Unloads a series' samples. A failure there (a Python QSL's exception, Ctrl-C landing
    /// in its callback) leaves the series' result whole: it is logged as an error, and no
    /// further series starts.
    fn unload_after_series(
        &mut self,
        qsl: &mut dyn QuerySampleLibrary,
        samples: &[QuerySampleIndex],
    ) {
        if let Err(error) = unload(qsl, samples) {
            self.shared
                .diagnostics
                .push(Diagnostic::error("error_runtime", error.to_string()));
            self.sut_halted = true;
        }
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
    ) -> Result<Option<PerformanceResult>, TestError> {
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
        check_query_memory(generator.samples_per_query(), settings.scenario)?;
        let threaded = settings.scenario == TestScenario::Server
            && settings.requested.server_num_issue_query_threads > 0;
        if threaded {
            check_schedule_memory(&generator)?;
        }
        let ctx = SeriesContext {
            sut: self.sut,
            sut_calls: self.sut_calls,
            shared: &self.shared,
            completer: &self.completer,
            settings,
            drain_timeout: self.drain_timeout,
            issue_spin_ns: self.issue_spin.as_nanos().min(i64::MAX as u128) as i64,
            abort: self.aborted,
            trace: self.trace || self.observer.is_some(),
            progress: self.progress.as_ref(),
        };
        let log = self.shared.log();
        let shared = &self.shared;
        let generated_spq = generator.samples_per_query() as u64;
        let mut timeline = generator.timeline();
        // The official log names the query count before issuing: a constant period is
        // counted now (closed form), a Poisson schedule beside the series (lines logged
        // meanwhile are held back until its count is known).
        let poisson = timeline.is_poisson();
        let background = BackgroundCount::new(generated_spq);
        let counted_first = if poisson {
            log.hold();
            None
        } else {
            let limit = CountLimit::while_issuing(self.aborted, settings.max_duration_ms);
            let total = timeline.count_remaining(&limit);
            log.details(keys::generated(
                total.queries,
                generated_spq,
                total.final_timestamp,
            ));
            Some(total)
        };
        let outcome = std::thread::scope(|scope| {
            if poisson {
                let background = &background;
                let max_duration_ms = settings.max_duration_ms;
                scope.spawn(move || background.count(shared, timeline, max_duration_ms));
            }
            let outcome = if threaded {
                let threads = settings.requested.server_num_issue_query_threads.min(256) as usize;
                run_series_threaded(&ctx, &mut self.sequence, &mut generator, mode, threads)
            } else {
                run_series(&ctx, &mut self.sequence, &mut generator, mode)
            };
            let own = (
                outcome.generated_query_count,
                outcome.generated_query_duration_ns,
            );
            let counted_beside = poisson
                .then(|| background.series_ended(shared, own, outcome.count_estimated))
                .flatten();
            (outcome, counted_beside)
        });
        let (mut outcome, counted_beside) = outcome;
        if let Some(total) = counted_first
            .or(counted_beside)
            .filter(|t| t.estimated || outcome.count_estimated)
        {
            // Counted twice and estimated at least once: the count made first, which the
            // detail log already names, stands for result.json and the next series' ids.
            outcome.generated_query_count = total.queries;
            outcome.generated_query_duration_ns = total.final_timestamp;
            self.sequence.next_query_id = outcome.query_base + total.queries;
            self.sequence.next_sample_id = outcome.sample_base + total.samples;
        }
        let scheduled_offsets_ns = if self.record_schedule {
            let schedule = &outcome.query_scheduled_ns;
            let first = schedule.iter().next().unwrap_or(0);
            schedule.iter().map(|t| t - first).collect()
        } else {
            Vec::new()
        };
        if let Some(observer) = self.observer.as_deref() {
            observer.series_ended(
                mode,
                self.shared.clock.origin_monotonic_ns(),
                outcome.samples_issued,
                &mut sample_times::series_samples(&self.shared, &outcome),
            );
        }
        if self.trace {
            let name = if mode == TestMode::AccuracyOnly {
                "AccuracySeries"
            } else {
                "PerformanceSeries"
            };
            trace::series_events(
                &self.shared,
                &outcome,
                name,
                std::process::id(),
                self.observer.as_deref(),
                |events| log.trace(events),
            );
        }
        if outcome.never_completed > 0
            || matches!(
                outcome.stop,
                StopReason::SutFailed(_) | StopReason::SutPanicked(_) | StopReason::Stalled
            )
        {
            self.sut_halted = true;
        }
        // As the official code: a performance series' latencies are gathered before the
        // counters and the power window are logged; the window ends at the last completion.
        let performance = (mode == TestMode::PerformanceOnly)
            .then(|| collect_performance(&self.shared, settings, &mut outcome));
        let last_completion = performance.as_ref().map_or_else(
            || last_completion_ns(&self.shared, &outcome),
            |p| p.last_completion_ns,
        );
        let active = Duration::from_nanos((last_completion - outcome.start_ns).max(0) as u64);
        log.details(keys::logger_counters());
        log.details(keys::power(
            outcome.power_begin,
            outcome.power_begin + active,
        ));
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
            power_begin: outcome.power_begin,
            power_end: outcome.power_begin + active,
            scheduled_offsets_ns,
        });
        Ok(performance)
    }
}

/// Whether the queries `settings` makes can be held in memory: refused with the setting to
/// lower, as a run refuses them. For another engine run on the same settings (the official
/// one aborts on the allocation).
pub fn check_query_size(settings: &EffectiveSettings) -> Result<(), TestError> {
    // An Offline accuracy run's one query is the whole data set, whatever the settings say.
    if settings.mode == TestMode::AccuracyOnly && settings.scenario == TestScenario::Offline {
        return Ok(());
    }
    check_query_memory(settings.samples_per_query as usize, settings.scenario)
}

/// The issue loop holds two queries (the current one and the next, prepared ahead): refuse a
/// query size whose memory cannot be had, rather than abort inside the run.
fn check_query_memory(samples_per_query: usize, scenario: TestScenario) -> Result<(), TestError> {
    let handles = samples_per_query.saturating_mul(2);
    let mut probe: Vec<QuerySample> = Vec::new();
    if probe.try_reserve_exact(handles).is_err() {
        let bytes = handles as f64 * std::mem::size_of::<QuerySample>() as f64;
        return Err(TestError::QueryTooLarge {
            samples: samples_per_query as u64,
            gib: crate::memory::gib(bytes),
            lower: match scenario {
                TestScenario::MultiStream => "multi_stream_samples_per_query",
                _ => "offline_expected_qps or min_duration_ms",
            },
        });
    }
    Ok(())
}

/// A Server series with issue threads generates its whole schedule before issuing (threads
/// take queries out of order): refuse one larger than the memory available, rather than be
/// ended by the out-of-memory killer while generating it.
fn check_schedule_memory(generator: &QueryGenerator) -> Result<(), TestError> {
    // Each query's offset and issue stamp, and its samples' handles.
    let per_query = 2 * std::mem::size_of::<i64>()
        + generator.samples_per_query() * std::mem::size_of::<QuerySample>();
    check_schedule_fits(
        generator.expected_queries(),
        per_query as f64,
        "server_num_issue_query_threads > 0",
        "lower server_target_qps or min_duration_ms",
    )
}

/// What the official LoadGen holds of each query it generates, and of each sample in it, in
/// bytes: measured (5,003,155 Server queries of one sample took 2.26 GB), rounded down, so
/// that only schedules that surely do not fit are refused.
const OFFICIAL_QUERY_BYTES: f64 = 400.0;
const OFFICIAL_SAMPLE_BYTES: f64 = 32.0;

/// Whether the schedule `settings` make fits in memory on an engine that generates every
/// query before issuing the first, as the official LoadGen does in every scenario (a
/// SingleStream run expecting 1 ns a query would be 600 billion of them): refused with the
/// settings to change rather than ended by the out-of-memory killer.
pub fn check_official_schedule(settings: &EffectiveSettings) -> Result<(), TestError> {
    let fix = match settings.scenario {
        TestScenario::Offline => return Ok(()),
        TestScenario::SingleStream => {
            "raise single_stream_expected_latency_ns or lower min_duration_ms"
        }
        TestScenario::MultiStream => {
            "raise multi_stream_expected_latency_ns or lower min_duration_ms"
        }
        TestScenario::Server => "lower server_target_qps or min_duration_ms",
    };
    if settings.mode == TestMode::AccuracyOnly {
        return Ok(());
    }
    let by_time = settings.target_qps * settings.min_duration_ms as f64 / 1e3;
    let mut queries = by_time.max(settings.min_query_count as f64);
    if settings.max_query_count > 0 {
        queries = queries.min(settings.max_query_count as f64);
    }
    let per_query =
        OFFICIAL_QUERY_BYTES + OFFICIAL_SAMPLE_BYTES * settings.samples_per_query as f64;
    check_schedule_fits(queries as u64, per_query, "the official LoadGen", fix)
}

fn check_schedule_fits(
    queries: u64,
    bytes_per_query: f64,
    holder: &'static str,
    fix: &'static str,
) -> Result<(), TestError> {
    let bytes = queries as f64 * bytes_per_query;
    match crate::available_memory() {
        Some(available) if bytes > available as f64 => Err(TestError::ScheduleTooLarge {
            holder,
            queries,
            gib: crate::memory::gib(bytes),
            available_gib: crate::memory::gib(available as f64),
            fix,
        }),
        _ => Ok(()),
    }
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
    call: impl FnOnce() -> Result<(), crate::sut::QslError>,
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

/// audit.config (compliance tests) overrides the settings, read with model `*`.
fn apply_audit_config(
    requested: &mut TestSettings,
    path: Option<&Path>,
) -> Result<Vec<Diagnostic>, TestError> {
    let Some(path) = path else {
        return Ok(Vec::new());
    };
    if !path.exists() {
        return Ok(Vec::new());
    }
    let audit = ConfigFile::read(path).map_err(|e| TestError::AuditConfig(e.to_string()))?;
    let mut diagnostics = vec![Diagnostic::warning(
        "warning_generic_message",
        format!(
            "Found Audit Config file ({}). Overriding TestSettings from audit.config file.",
            path.display()
        ),
    )];
    let scenario = requested.scenario;
    for warning in audit.apply(requested, "*", scenario, ConfType::Audit) {
        diagnostics.push(Diagnostic::warning(
            "warning_generic_message",
            warning.to_string(),
        ));
    }
    Ok(diagnostics)
}

/// The official run compares its performance clock with the system clock over a performance
/// run (and prints both with `print_timestamps`). Ours is monotonic, so a gap flags the wall
/// clock being stepped or slewed during the run.
struct ClockCheck {
    print: bool,
    monotonic: std::time::Instant,
    system: SystemTime,
}

impl ClockCheck {
    fn start(print: bool) -> Self {
        let check = ClockCheck {
            print,
            monotonic: std::time::Instant::now(),
            system: SystemTime::now(),
        };
        if print {
            println!(
                "Loadgen :: Perf mode start. system_clock Timestamp = {}",
                unix_seconds(check.system)
            );
        }
        check
    }

    fn finish(self, shared: &Shared) {
        let monotonic = self.monotonic.elapsed();
        let system_now = SystemTime::now();
        let system = system_now.duration_since(self.system).unwrap_or_default();
        let (monotonic_ms, system_ms) = (monotonic.as_millis(), system.as_millis());
        // Compared in ns, not the official whole ms, so short runs do not trip it by rounding.
        let ratio = (monotonic.as_secs_f64() / system.as_secs_f64()) as f32;
        let long_enough = system >= std::time::Duration::from_millis(100);
        if self.print {
            println!(
                "Loadgen :: Perf mode stop. systme_clock Timestamp = {}",
                unix_seconds(system_now)
            );
            println!("Loadgen :: PerfClock Perf duration = {monotonic_ms}ms");
            println!("Loadgen :: system_clock Perf duration = {system_ms}ms");
            println!("Loadgen :: PerfClock/system_clock ratio = {ratio:.4}");
        }
        if long_enough && !(0.99..=1.01).contains(&ratio) {
            shared.diagnostics.push(Diagnostic::error(
                "error_runtime",
                format!("PerfClock and system_clock differ by more than 1%!  pc_sc_ratio: {ratio}"),
            ));
        } else if long_enough && !(0.999..=1.001).contains(&ratio) {
            shared.diagnostics.push(Diagnostic::warning(
                "warning_generic_message",
                format!(
                    "PerfClock and system_clock differ by more than 0.1%!  pc_sc_ratio: {ratio}"
                ),
            ));
        }
    }
}

fn unix_seconds(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
