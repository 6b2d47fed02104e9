//! A run from start to end: the sample library and the plugin opened, the meters around the
//! test (a ranging run first when an analyzer needs one), the test on the engine the plan
//! names, the accuracy scored, the power result accounted, and result.json written once,
//! after all of them. What a person sees goes through an [`Observer`]; the command line only
//! builds the [`RunPlan`], prints and sets the exit status.

mod audit;
mod error;
pub mod interrupt;
mod official_run;
mod old_files;
mod outcome;
mod plan;
mod sample_sets;
mod samples;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mlperf_loadgen::{
    start_test_with, AbandonHook, EffectiveSettings, LogOutputSettings, LogSettings,
    ProgressHandle, SeriesObserverHook, TestContext, TestMode, TestResult, TestScenario,
};
use mlperf_plugin_api::ffi;
use mlperf_power::Phase;

use crate::benchmark::accuracy::{evaluate_into, Score};
use crate::compliance::{AccuracyFallback, Verification};
use crate::logs::{RESULT_JSON, SUMMARY_LOG};
use crate::plugin::{DataFormat, Instance, PluginError, RunDescription};
use crate::power::{self, Meters, MetersFinisher, PowerResult, Recording};
use crate::timing::{SampleTimingTable, TimingObserver, TimingSink};
use mlperf_loadgen::QuerySampleLibrary;

pub use audit::{AuditOutcome, AuditPlan, References};
pub use error::SessionError;
pub use old_files::RUN_FILES;
pub use outcome::{Beside, RunOutcome, TestOutcome};
pub use plan::{
    EnginePlan, LogOptions, PluginPlan, PreprocessPlan, RunPlan, SamplePlacement, SamplePlan,
    SampleTiming,
};
pub use sample_sets::SampleSetCalls;
pub use samples::SampleLibrary;

/// What a person running the session sees; every method does nothing by default.
pub trait Observer {
    /// The power analyzer's ranging run is about to start, its logs in `out`.
    fn ranging_started(&mut self, _out: &Path) {}
    /// A test is about to start: where its progress goes, if anywhere.
    fn test_starting(&mut self) -> Option<ProgressHandle> {
        None
    }
    /// The test started last has ended.
    fn test_finished(&mut self) {}
    /// The testing run's summary, as written to mlperf_log_summary.txt.
    fn summary(&mut self, _text: &str) {}
    fn accuracy(&mut self, _score: &Score) {}
    fn power(&mut self, _result: &PowerResult) {}
    /// The power result could not be made; the performance result stands.
    fn power_failed(&mut self, _error: &SessionError) {}
    /// A compliance test's run is about to start.
    fn compliance_starting(&mut self, _plan: &AuditPlan) {}
    /// A compliance test's verification file was written at `path`.
    fn verification(&mut self, _path: &Path, _verification: &Verification) {}
    /// TEST01's responses differ: the baseline and compliance accuracy, scored into
    /// `accuracy_dir`, or None when no benchmark can score them.
    fn accuracy_fallback(&mut self, _result: Option<&AccuracyFallback>, _accuracy_dir: &Path) {}
}

/// Runs plans, reporting to an observer.
pub struct Session<'a> {
    observer: &'a mut dyn Observer,
}

/// Where one test's files go.
struct TestDirs<'a> {
    logs: &'a Path,
    results: &'a Path,
}

impl<'a> Session<'a> {
    pub fn new(observer: &'a mut dyn Observer) -> Self {
        Session { observer }
    }

    /// Everything the plan says, in order; an error before the testing run starts leaves
    /// nothing run.
    pub fn run(&mut self, plan: &RunPlan) -> Result<RunOutcome, SessionError> {
        // Refused here, before anything runs: a meter that cannot be reached, a bad data
        // set, a bad plugin.
        let mut meters = Meters::open(&plan.power, plan.plugin.isolation.as_ref())?;
        let mut library = SampleLibrary::open(&plan.samples)?;
        let format = DataFormat {
            inputs: library.named_inputs(&plan.samples)?,
            logged_outputs: checked_output_names(&plan.plugin.logged_outputs)?,
            postprocess: plan.plugin.postprocess.clone(),
        };
        let run = {
            let qsl = library.as_qsl();
            let run = RunDescription::new(
                &plan.settings,
                qsl.performance_sample_count() as u64,
                qsl.total_sample_count() as u64,
            )
            .with_format(format)
            .with_batching(plan.plugin.batching);
            let run = match plan.plugin.sample_memory {
                SamplePlacement::Plugin => run,
                SamplePlacement::Host => run.with_samples_in_host_memory(),
            };
            match (plan.plugin.as_host_of_1_2, plan.plugin.as_host_of_1_3) {
                (true, _) => run.as_host_of_1_2(),
                (_, true) => run.as_host_of_1_3(),
                _ => run,
            }
        };
        let mut sut = open_plugin(&plan.plugin, &plan.samples, &run)?;
        if plan.plugin.batching.is_on()
            && sut.backend().capabilities() & ffi::CAP_NATIVE_BATCHING != 0
        {
            return Err(SessionError::BatchesItself(
                mlperf_loadgen::SystemUnderTest::name(&sut).to_string(),
            ));
        }
        if plan.settings.use_token_latencies && sut.backend().capabilities() & ffi::CAP_TOKENS == 0
        {
            return Err(SessionError::NoTokens(
                mlperf_loadgen::SystemUnderTest::name(&sut).to_string(),
            ));
        }
        let mut sample_sets = SampleSetCalls::default();
        library.attach(&mut sut);
        prepare_dir(&plan.out)?;
        prepare_dir(&plan.results_dir)?;
        tracing::info!(
            scenario = %plan.settings.scenario,
            mode = %plan.settings.mode,
            model = %plan.model,
            out = %plan.out.display(),
            "starting the test"
        );
        tracing::debug!(settings = ?plan.settings, "requested settings");

        let ranging_dir = plan.out.join("ranging");
        old_files::clear_old_files(&plan.out)?;
        old_files::clear_old_files(&plan.results_dir)?;
        old_files::clear_old_files(&ranging_dir)?;
        // MLCommons' procedure: a ranging run at automatic analyzer ranges, then the testing
        // run.
        let mut ranging = None;
        if let Some(meters) = meters.as_mut().filter(|m| m.needs_ranging()) {
            prepare_dir(&ranging_dir)?;
            self.observer.ranging_started(&ranging_dir);
            let mark = meters.start(Phase::Ranging)?;
            let dirs = TestDirs {
                logs: &ranging_dir,
                results: &ranging_dir,
            };
            let result = self.test(
                plan,
                &sut,
                &mut library,
                &dirs,
                Some(meters.finisher()),
                &mut sample_sets,
            );
            let recording = meters.stop(mark);
            let result = result?;
            write_result_json(&ranging_dir, &result.outcome, &Beside::default())?;
            let result = result.outcome;
            if result.incomplete() {
                return Err(SessionError::RangingFailed {
                    out: ranging_dir,
                    why: None,
                });
            }
            // The testing run's ranges come from the ranging run: without it there is none.
            if let Some(lost) = recording.traces.iter().find_map(|t| t.as_ref().err()) {
                return Err(SessionError::RangingFailed {
                    out: ranging_dir,
                    why: Some(lost.clone()),
                });
            }
            ranging = Some((recording, result));
            // A fresh instance for the testing run, as the power workflow's second run of the
            // workload gets (an instance serves one test).
            if !sut.destroy_within(plan.log.stall_timeout).returned {
                return Err(SessionError::DestroyStalled(plan.log.stall_timeout));
            }
            sut = open_plugin(&plan.plugin, &plan.samples, &run)?;
            library.attach(&mut sut);
        }
        let mark = match meters.as_mut() {
            Some(meters) => Some(meters.start(Phase::Testing)?),
            None => None,
        };
        let dirs = TestDirs {
            logs: &plan.out,
            results: &plan.results_dir,
        };
        let finisher = meters.as_ref().map(Meters::finisher);
        let result = self.test(plan, &sut, &mut library, &dirs, finisher, &mut sample_sets);
        let recording = meters.as_mut().zip(mark).map(|(m, mark)| m.stop(mark));
        let ranged = meters.as_ref().map(Meters::ranged).unwrap_or_default();
        // Finished now (PTDaemon's ranges restored), not after the reports.
        drop(meters);
        let device_shares = sut.backend().device_shares();
        // Destroying the instance stops the plugin's threads; after a signal it gets only a
        // short while (a plugin still working through an aborted Offline query would keep
        // the command a minute).
        let destroy_limit = match interrupt::received() {
            Some(_) => plan.log.stall_timeout.min(interrupt::DESTROY_AFTER_SIGNAL),
            None => plan.log.stall_timeout,
        };
        let destroyed = sut.destroy_within(destroy_limit);
        let Tested {
            outcome: result,
            latency_breakdown,
        } = result?;

        self.observer.summary(&summary_text(&result, &plan.out)?);
        let accuracy_run = matches!(
            plan.settings.mode,
            TestMode::AccuracyOnly | TestMode::SubmissionRun
        );
        if let (Some(benchmark), true) = (&plan.benchmark, accuracy_run) {
            let log = plan.out.join(crate::logs::ACCURACY_LOG);
            let (score, file) = evaluate_into(benchmark, &log)?;
            tracing::info!(file = %file.display(), "accuracy written");
            self.observer.accuracy(&score);
        }
        // The performance result stands whatever happens to the power report.
        let mut power_valid = None;
        let mut power_json = None;
        if let Some(recording) = recording {
            let ranging = ranging.map(|(recording, _)| (recording, ranging_dir.clone()));
            match account_power(&plan.out, recording, ranging, &ranged) {
                Ok(power) => {
                    self.observer.power(&power);
                    power_valid = Some(power.is_valid());
                    power_json = Some(power::result::to_json(&power));
                }
                Err(error) => {
                    self.observer.power_failed(&error);
                    power_valid = Some(false);
                }
            }
        }
        let beside = Beside {
            power: power_json.as_ref(),
            devices: &device_shares,
            latency_breakdown: latency_breakdown.as_ref(),
        };
        write_result_json(&plan.results_dir, &result, &beside)?;
        Ok(RunOutcome {
            device_shares,
            latency_breakdown,
            result,
            scenario: plan.settings.scenario,
            power_valid,
            destroy_stalled: !destroyed.returned,
            late_callbacks: destroyed.late_callbacks,
            sample_sets,
        })
    }

    /// One LoadGen test, its progress shown to the observer.
    fn test(
        &mut self,
        plan: &RunPlan,
        sut: &Instance,
        library: &mut SampleLibrary,
        dirs: &TestDirs<'_>,
        meters: Option<MetersFinisher>,
        sample_sets: &mut SampleSetCalls,
    ) -> Result<Tested, SessionError> {
        // A test started after the signal would not see its abort.
        interrupt::test_begins();
        if let Some((_, signal)) = interrupt::received() {
            return Err(SessionError::Interrupted(signal));
        }
        let timing = plan
            .log
            .sample_timing
            .is_on(sut.backend().capabilities(), plan.log.trace)
            .then(|| {
                let table = SampleTimingTable::new();
                sut.backend().note_timing(TimingSink {
                    table: Arc::clone(&table),
                    lane: 0,
                });
                let lanes = sut.backend().device_shares().len().max(1) as u32;
                TimingObserver::new(table, lanes)
            });
        let progress = self.observer.test_starting();
        let observer = timing
            .clone()
            .map(|o| SeriesObserverHook(o as Arc<dyn mlperf_loadgen::SeriesObserver>));
        let result = run_test(
            plan,
            sut,
            library,
            dirs,
            progress,
            meters,
            sample_sets,
            observer,
        );
        self.observer.test_finished();
        Ok(Tested {
            outcome: result?,
            latency_breakdown: timing.and_then(|t| t.breakdown()),
        })
    }
}

/// A test's outcome and, when it divided its latencies, where they went.
struct Tested {
    outcome: TestOutcome,
    latency_breakdown: Option<crate::timing::LatencyBreakdown>,
}

/// One LoadGen test into `dirs.logs`; `meters` are finished if the test is abandoned.
#[allow(clippy::too_many_arguments)]
fn run_test(
    plan: &RunPlan,
    sut: &Instance,
    library: &mut SampleLibrary,
    dirs: &TestDirs<'_>,
    progress: Option<ProgressHandle>,
    meters: Option<MetersFinisher>,
    sample_sets: &mut SampleSetCalls,
    series_observer: Option<SeriesObserverHook>,
) -> Result<TestOutcome, SessionError> {
    let context = TestContext {
        series_observer,
        audit_config: plan.audit_config.clone(),
        progress,
        // The model the config files were read for: a submission files the run under it.
        provenance: [
            plan.model_named
                .then(|| ("model".to_string(), plan.model.clone()))
                .into_iter()
                .collect(),
            sut.backend().provenance(),
            library.provenance(),
        ]
        .concat(),
        on_abandoned: plan.on_abandoned.clone().map(|hook| {
            // result.json goes where the session writes it (a compliance test's folder, not
            // its run_1/), and the meters are let go of (PTDaemon's ranges restored), before
            // the caller's hook ends the process.
            let results = dirs.results.to_path_buf();
            AbandonHook(Arc::new(move |result: &TestResult| {
                let outcome = TestOutcome::Native(Box::new(result.clone()));
                if let Err(error) = write_result_json(&results, &outcome, &Beside::default()) {
                    tracing::error!("{error}");
                }
                if let Some(meters) = &meters {
                    meters.finish();
                }
                (hook.0)(result)
            }))
        }),
        ..TestContext::default()
    };
    let settings = &plan.settings;
    let mut qsl = sample_sets::PluginSampleSets {
        library: library.as_qsl(),
        sut,
        calls: SampleSetCalls::default(),
    };
    // The hand-over buffer of a large Offline query is made before the clock starts.
    let (effective, _) = EffectiveSettings::new(
        settings,
        qsl.performance_sample_count() as u64,
        qsl.total_sample_count() as u64,
    );
    let performance_run = matches!(
        settings.mode,
        TestMode::PerformanceOnly | TestMode::SubmissionRun
    );
    if effective.scenario == TestScenario::Offline
        && performance_run
        && !sut
            .backend()
            .reserve_samples(effective.samples_per_query as usize)
    {
        tracing::warn!(
            samples = effective.samples_per_query,
            "cannot reserve the Offline query's hand-over buffer ahead; it is made at issue"
        );
    }
    if matches!(plan.engine, EnginePlan::Official(_)) {
        // The official library would abort the process on the allocation (std::bad_alloc).
        mlperf_loadgen::check_query_size(&effective).map_err(SessionError::Native)?;
        // It generates every query before the first is issued.
        mlperf_loadgen::check_official_schedule(&effective).map_err(SessionError::Native)?;
    }
    match &plan.engine {
        EnginePlan::Native => {
            let log = LogSettings {
                log_output: LogOutputSettings {
                    outdir: Some(dirs.logs.to_path_buf()),
                    ..LogOutputSettings::default()
                },
                enable_trace: plan.log.trace,
                drain_timeout: plan.log.drain_timeout,
                issue_spin: plan.log.issue_spin,
                // The session writes it, after the power result.
                write_result_json: false,
                // An isolated plugin's calls return at once; its process is watched instead.
                sut_call_timeout: sut.in_process().then_some(plan.log.stall_timeout),
                ..LogSettings::default()
            };
            let result = start_test_with(sut, &mut qsl, settings, &log, &context)
                .map(|result| TestOutcome::Native(Box::new(result)))
                .map_err(SessionError::Native);
            *sample_sets = qsl.calls.clone();
            result
        }
        EnginePlan::Official(official_settings) => {
            official_run::write_provenance(dirs.results, &context.provenance)?;
            let result = official_run::run(
                sut,
                &mut qsl,
                official_settings,
                &plan.log,
                plan.audit_config.as_deref(),
                &context,
                dirs.logs,
            );
            *sample_sets = qsl.calls.clone();
            Ok(TestOutcome::Official(Box::new(result?)))
        }
    }
}

/// The run's logged output names, each a name a plugin can give (not empty, no NUL).
fn checked_output_names(names: &[String]) -> Result<Vec<String>, SessionError> {
    match names.iter().find(|n| n.is_empty() || n.contains('\0')) {
        Some(bad) => Err(SessionError::LoggedOutputName(bad.clone())),
        None => Ok(names.to_vec()),
    }
}

/// Opens, checks and creates the plan's plugin for the test `run` describes: one instance,
/// or one per device the plan selects.
pub(crate) fn open_plugin(
    plan: &PluginPlan,
    samples: &SamplePlan,
    run: &RunDescription,
) -> Result<Instance, SessionError> {
    let with_data = matches!(samples, SamplePlan::Dataset { .. });
    let isolation = plan.isolation.as_ref();
    let opened = match &plan.devices {
        None => Instance::open(&plan.spec, &plan.config, with_data, isolation, Some(run)),
        Some(selection) => {
            // Listed in this process: the list is read before any instance exists.
            let listed = crate::plugin::resolve(&plan.spec)
                .and_then(|path| crate::plugin::Plugin::open(&path))
                .and_then(|plugin| plugin.devices(&plan.config))
                .map_err(SessionError::Plugin)?;
            let devices = selection.select(&listed)?;
            Instance::open_devices(&plan.spec, &plan.config, with_data, isolation, run, devices)
        }
    };
    opened.map_err(|source| {
        match (&plan.context, &source) {
            // The plugin loaded and refused its configuration: its own message says why; the
            // context (how to get the plugin) would mislead.
            (_, PluginError::Call { .. } | PluginError::Device { .. }) | (None, _) => {
                SessionError::Plugin(source)
            }
            (Some(context), _) => SessionError::PluginStart {
                context: context.clone(),
                source,
            },
        }
    })
}

/// The summary as the engine wrote it.
fn summary_text(result: &TestOutcome, out: &Path) -> Result<String, SessionError> {
    match result {
        TestOutcome::Native(result) => {
            if let Some(files) = &result.log_files {
                tracing::info!(summary = %files.summary.display(), "logs written");
            }
            Ok(mlperf_loadgen::logging::summary::render_summary(result))
        }
        TestOutcome::Official(_) => {
            let path = out.join(SUMMARY_LOG);
            std::fs::read_to_string(&path)
                .map_err(|source| SessionError::NoOfficialSummary { path, source })
        }
    }
}

/// Accounts the meters over the run's window (as the detail log gives it, which is what the
/// checker reads); writes the traces and power_summary.json.
fn account_power(
    out: &Path,
    recording: Recording,
    ranging: Option<(Recording, PathBuf)>,
    ranged: &[bool],
) -> Result<PowerResult, SessionError> {
    let logged = power::read_logged_run(out)?;
    let (window, scenario, figures) = (logged.window, logged.scenario, logged.figures);
    let (recording, ranged) = power::with_wall_total(recording, ranged);
    let mut sources = power::account_recording(&recording, &window, scenario, &figures);
    power::write_traces(out, &recording, &mut sources)?;
    let ranging = match ranging {
        Some((ranging_recording, ranging_dir)) => {
            let (ranging_recording, _) = power::with_wall_total(ranging_recording, &[]);
            let logged = power::read_logged_run(&ranging_dir)?;
            let mut sources = power::account_recording(
                &ranging_recording,
                &logged.window,
                logged.scenario,
                &logged.figures,
            );
            power::write_traces(&ranging_dir, &ranging_recording, &mut sources)?;
            for source in &mut sources {
                source.trace_file = source.trace_file.take().map(|f| format!("ranging/{f}"));
            }
            Some(sources)
        }
        None => None,
    };
    let mut power = PowerResult {
        window,
        scenario,
        figures,
        sources,
        ranging,
    };
    power.compare_with_ranging(&ranged);
    power::write_summary(out, &power)?;
    Ok(power)
}

/// result.json: the test's result, with the power result as its `power` member when there
/// is one. Written whole, then renamed, so that a reader never sees half of it.
fn write_result_json(
    dir: &Path,
    result: &TestOutcome,
    beside: &Beside<'_>,
) -> Result<(), SessionError> {
    let text = result.to_json(beside).map_err(SessionError::ResultJson)?;
    let path = dir.join(RESULT_JSON);
    let partial = dir.join(".result.json.partial");
    std::fs::write(&partial, text)
        .and_then(|()| std::fs::rename(&partial, &path))
        .map_err(|source| SessionError::Write { path, source })
}

/// Creates a directory for the run's files and checks that a file can be written in it.
fn prepare_dir(dir: &Path) -> Result<(), SessionError> {
    if dir.exists() && !dir.is_dir() {
        return Err(SessionError::OutNotADirectory(dir.to_path_buf()));
    }
    std::fs::create_dir_all(dir).map_err(|source| SessionError::CreateOut {
        path: dir.to_path_buf(),
        source,
    })?;
    let probe = dir.join(format!(".mlperf-host-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|source| SessionError::OutNotWritable {
        path: dir.to_path_buf(),
        source,
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}
