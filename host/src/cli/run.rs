//! `mlperf-host run`: one LoadGen test, configured like the official `TestSettings::FromConfig`
//! (mlperf.conf, then user.conf, looked up by model and scenario), then `--set` overrides.
//!
//! The system under test is a backend plugin (`--plugin`), by default the null plugin; the
//! sample library is a data set (`--dataset`) or indices without data.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use mlperf_host::loadgen::config::{ConfigFile, ConfigLoader};
use mlperf_host::loadgen::logging::summary::render_summary;
use mlperf_host::loadgen::{
    start_test_with, LogOutputSettings, LogSettings, TestContext, TestMode, TestResult,
    TestScenario, TestSettings,
};

use super::engine;
use super::power::report_command::read_logged_run;
use super::power::{self, report::PowerResult, Meters};
use super::progress::ProgressWatcher;
use super::run_args::{EngineArg, RunArgs};
use super::sample_library::Library;
use super::set::{self, Override};
use super::summary;
use super::EXIT_INVALID;
use mlperf_host::benchmark::Benchmark;
use mlperf_host::loadgen::{EffectiveSettings, StopReason};
use mlperf_host::official::result::OfficialResult;
use mlperf_host::official::{self, engine::TestSettings as OfficialSettings};
use mlperf_host::plugin::PluginSut;
use mlperf_power::Phase;

/// Runs the command; prints any error as one line.
pub fn main(args: &RunArgs) -> ExitCode {
    super::init_logging(args.verbose, args.quiet);
    match run(args) {
        Ok(RunOutcome {
            result,
            power_valid,
            ..
        }) => {
            // A backend that failed or panicked: the logs are written, but this is an error.
            if let Some(message) = result.failure() {
                eprintln!("error: the system under test failed: {message} (the run is INVALID; logs in {})", args.out.display());
                return ExitCode::FAILURE;
            }
            let valid = result.is_valid();
            if !valid && args.require_valid {
                let reasons = result.invalid_reasons();
                eprintln!(
                    "error: the result is INVALID{} (--require-valid)",
                    reasons.map(|r| format!(": {r}")).unwrap_or_default()
                );
                return ExitCode::from(EXIT_INVALID);
            }
            if power_valid == Some(false) && args.require_valid {
                eprintln!("error: the power result is INVALID (--require-valid); see power_summary.json in {}", args.out.display());
                return ExitCode::from(EXIT_INVALID);
            }
            ExitCode::SUCCESS
        }
        Err(error) => super::report_error(&error),
    }
}

/// What a run produced: the test's result and, with `--power`, its power result.
pub struct RunOutcome {
    pub result: TestOutcome,
    pub scenario: TestScenario,
    pub power_valid: Option<bool>,
}

/// The test's result, as the engine that ran it gives it.
pub enum TestOutcome {
    Native(Box<TestResult>),
    /// Read back from the official LoadGen's detail log.
    Official(Box<OfficialResult>),
}

impl TestOutcome {
    /// The message of a backend that failed or panicked (under the official engine such a
    /// run never returns: the watchdog ends it).
    pub fn failure(&self) -> Option<String> {
        match self {
            TestOutcome::Native(result) => failure(result),
            TestOutcome::Official(_) => None,
        }
    }

    pub fn is_valid(&self) -> bool {
        match self {
            TestOutcome::Native(result) => summary::is_valid(result),
            TestOutcome::Official(result) => engine::official_is_valid(result),
        }
    }

    /// Why the result is INVALID, when the engine says.
    pub fn invalid_reasons(&self) -> Option<String> {
        match self {
            TestOutcome::Native(result) => result
                .performance
                .as_ref()
                .map(|p| p.validity.reasons.join("; "))
                .filter(|r| !r.is_empty()),
            TestOutcome::Official(result) => engine::official_invalid_reasons(result),
        }
    }

    /// Samples that never completed (native: the drain gave up on them).
    fn incomplete(&self) -> bool {
        match self {
            TestOutcome::Native(result) => {
                result.series.iter().any(|s| s.never_completed > 0) || failure(result).is_some()
            }
            TestOutcome::Official(result) => {
                result.samples.completed < result.samples.issued || result.aborted.is_some()
            }
        }
    }
}

/// Everything up to and including printing the summary (and the power block).
pub fn run(args: &RunArgs) -> anyhow::Result<RunOutcome> {
    let benchmark = args
        .benchmark
        .as_deref()
        .map(super::benchmark::open)
        .transpose()?;
    let benchmark = benchmark.as_ref();
    let settings = load_settings(args, benchmark)?;
    if let Some(benchmark) = benchmark {
        super::benchmark::check_mode(benchmark, settings.mode)?;
    }
    if !args.power.is_empty() {
        power::check_mode(settings.mode)?;
    }
    let audit_config = check_audit_config(args.audit_conf.as_deref())?;
    let official_settings = match args.engine {
        EngineArg::Native => None,
        EngineArg::Official => {
            let benchmark_keys: Vec<String> = benchmark
                .map(|b| {
                    b.setting_overrides(settings.scenario)
                        .into_iter()
                        .map(|(k, _)| k)
                        .collect()
                })
                .unwrap_or_default();
            Some(engine::official_settings(
                args,
                model_name(args, benchmark),
                &benchmark_keys,
                &settings,
            )?)
        }
    };
    // A meter that cannot be reached is refused here, before anything runs.
    let mut meters = Meters::open(&args.power)?;
    let mut library = Library::open(args, benchmark)?;
    // A bad plugin is refused here, before anything runs.
    let mut sut = open_plugin(args, benchmark, settings.scenario)?;
    library.attach(&mut sut);
    prepare_out_dir(&args.out)?;
    tracing::info!(
        scenario = %settings.scenario,
        mode = %settings.mode,
        model = %model_name(args, benchmark),
        out = %args.out.display(),
        "starting the test"
    );
    tracing::debug!(?settings, "requested settings");

    if meters.is_some() {
        power::clear_old_outputs(&args.out)?;
        power::clear_old_outputs(&args.out.join("ranging"))?;
    }
    if official_settings.is_some() {
        engine::clear_old_logs(&args.out)?;
        if meters.as_ref().is_some_and(|m| m.needs_ranging()) {
            engine::clear_old_logs(&args.out.join("ranging"))?;
        }
    }
    // MLCommons' procedure: a ranging run at automatic analyzer ranges, then the testing run.
    let mut ranging = None;
    if let Some(meters) = meters.as_mut().filter(|m| m.needs_ranging()) {
        let out = args.out.join("ranging");
        prepare_out_dir(&out)?;
        if !args.quiet {
            println!(
                "Ranging run (power analyzer ranges on automatic), logs in {}",
                out.display()
            );
        }
        let mark = meters.start(Phase::Ranging)?;
        let result = run_once(
            args,
            model_name(args, benchmark),
            &sut,
            &mut library,
            EngineSettings {
                native: &settings,
                official: official_settings.as_ref(),
            },
            audit_config.clone(),
            &out,
        );
        let recording = meters.stop(mark);
        let result = result?;
        if result.incomplete() {
            bail!(
                "the ranging run did not complete (logs in {}); the testing run was not started",
                out.display()
            );
        }
        // The testing run's ranges come from the ranging run: without it there is none.
        if let Some(lost) = recording.traces.iter().find_map(|t| t.as_ref().err()) {
            bail!(
                "{lost} (in the ranging run, logs in {}); the testing run was not started",
                out.display()
            );
        }
        ranging = Some((recording, out));
        // A fresh instance for the testing run, as the power workflow's second run of the
        // workload gets (an instance serves one test).
        drop(sut);
        sut = open_plugin(args, benchmark, settings.scenario)?;
        library.attach(&mut sut);
    }
    let mark = match meters.as_mut() {
        Some(meters) => Some(meters.start(Phase::Testing)?),
        None => None,
    };
    let model = model_name(args, benchmark);
    let result = run_once(
        args,
        model,
        &sut,
        &mut library,
        EngineSettings {
            native: &settings,
            official: official_settings.as_ref(),
        },
        audit_config,
        &args.out,
    );
    let recording = meters.as_mut().zip(mark).map(|(m, mark)| m.stop(mark));
    let ranged = meters.as_ref().map(Meters::ranged).unwrap_or_default();
    // Finished now (PTDaemon's ranges restored), not after the reports.
    drop(meters);
    // Destroying the instance stops the plugin's threads.
    drop(sut);
    let result = result?;

    match &result {
        TestOutcome::Native(result) => {
            if let Some(files) = &result.log_files {
                tracing::info!(summary = %files.summary.display(), "logs written");
            }
            if !args.quiet {
                print!("{}", render_summary(result));
            }
        }
        TestOutcome::Official(_) => {
            let path = args.out.join(mlperf_host::logs::SUMMARY_LOG);
            if !args.quiet {
                let summary = std::fs::read_to_string(&path)
                    .with_context(|| format!("the official LoadGen wrote no {}", path.display()))?;
                print!("{summary}");
            }
        }
    }
    let accuracy_run = matches!(
        settings.mode,
        TestMode::AccuracyOnly | TestMode::SubmissionRun
    );
    if let (Some(benchmark), true) = (benchmark, accuracy_run) {
        super::benchmark::score(benchmark, &args.out, args.quiet)?;
    }
    // The performance result stands whatever happens to the power report.
    let power_valid = recording.map(|recording| {
        report_power(args, recording, ranging, &ranged).unwrap_or_else(|error| {
            eprintln!("error: no power result: {error:#}");
            false
        })
    });
    Ok(RunOutcome {
        result,
        scenario: settings.scenario,
        power_valid,
    })
}

/// The test's settings as each engine takes them (the official ones with `--engine official`).
#[derive(Clone, Copy)]
struct EngineSettings<'a> {
    native: &'a TestSettings,
    official: Option<&'a OfficialSettings>,
}

/// One LoadGen test into `out`.
fn run_once(
    args: &RunArgs,
    model: &str,
    sut: &PluginSut,
    library: &mut Library,
    settings: EngineSettings<'_>,
    audit_config: Option<PathBuf>,
    out: &Path,
) -> anyhow::Result<TestOutcome> {
    let EngineSettings {
        native: settings,
        official: official_settings,
    } = settings;
    // The bar: on a terminal, not --quiet; the watcher also runs for the debug log.
    let progress = ProgressWatcher::start(!args.quiet && std::io::stderr().is_terminal());
    let log = LogSettings {
        log_output: LogOutputSettings {
            outdir: Some(out.to_path_buf()),
            ..LogOutputSettings::default()
        },
        enable_trace: args.trace,
        drain_timeout: args.drain_timeout,
        issue_spin: args.issue_spin,
        ..LogSettings::default()
    };
    let context = TestContext {
        audit_config,
        progress: progress.as_ref().map(ProgressWatcher::handle),
        // The model the config files were read for: a submission files the run under it.
        provenance: [
            vec![("model".to_string(), model.to_string())],
            sut.provenance(),
            library.provenance(),
        ]
        .concat(),
        ..TestContext::default()
    };
    let qsl = library.as_qsl();
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
        && !sut.reserve_samples(effective.samples_per_query as usize)
    {
        tracing::warn!(
            samples = effective.samples_per_query,
            "cannot reserve the Offline query's hand-over buffer ahead; it is made at issue"
        );
    }
    if official_settings.is_some() {
        engine::write_provenance(out, &context.provenance)?;
    }
    let result = match official_settings {
        None => start_test_with(sut, qsl, settings, &log, &context)
            .map(|result| TestOutcome::Native(Box::new(result)))
            .context("the test could not run"),
        Some(official_settings) => run_official(args, sut, qsl, official_settings, &context, out),
    };
    if let Some(progress) = progress {
        progress.finish();
    }
    result
}

/// One test on the official LoadGen into `out`; the verdict is read back from its logs.
fn run_official(
    args: &RunArgs,
    sut: &PluginSut,
    qsl: &mut dyn mlperf_host::loadgen::QuerySampleLibrary,
    settings: &OfficialSettings,
    context: &TestContext,
    out: &Path,
) -> anyhow::Result<TestOutcome> {
    let mut log = official::engine::LogOutput::in_dir(out);
    log.enable_trace = args.trace;
    let provenance = &context.provenance;
    engine::set_abort_target(out, provenance);
    let watch = official::Watch {
        drain_timeout: args.drain_timeout,
        on_abort: engine::on_abort,
        progress: context.progress.clone(),
    };
    let audit_config = context.audit_config.as_deref();
    let counts = official::run_test(sut, qsl, settings, &log, audit_config, &watch)
        .context("the official LoadGen could not run the test")?;
    let result = OfficialResult::read(out, counts, None, provenance)?;
    result
        .write()
        .with_context(|| format!("cannot write {}", result.log_files.result.display()))?;
    Ok(TestOutcome::Official(Box::new(result)))
}

/// Accounts the meters over the run's window; writes the traces, power_summary.json and
/// result.json's `power`; prints the Power Summary. True when the power result is VALID.
fn report_power(
    args: &RunArgs,
    recording: power::Recording,
    ranging: Option<(power::Recording, PathBuf)>,
    ranged: &[bool],
) -> anyhow::Result<bool> {
    // What the checker reads: the detail log's window and figures, as logged.
    let logged = read_logged_run(&args.out)?;
    let (window, scenario, figures) = (logged.window, logged.scenario, logged.figures);
    let mut sources = power::account_recording(&recording, &window, scenario, &figures);
    power::write_traces(&args.out, &recording, &mut sources)?;
    let ranging = match ranging {
        Some((ranging_recording, out)) => {
            let logged = read_logged_run(&out)?;
            let mut sources = power::account_recording(
                &ranging_recording,
                &logged.window,
                logged.scenario,
                &logged.figures,
            );
            power::write_traces(&out, &ranging_recording, &mut sources)?;
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
    power.compare_with_ranging(ranged);
    power::write_summary(&args.out, &power)?;
    if !args.quiet {
        print!("{}", power::report::render(&power));
    }
    Ok(power.is_valid())
}

/// The message of a backend that failed or panicked.
fn failure(result: &TestResult) -> Option<String> {
    result.series.iter().find_map(|series| match &series.stop {
        StopReason::SutFailed(message) | StopReason::SutPanicked(message) => Some(message.clone()),
        _ => None,
    })
}

/// `--model`, else the benchmark's name, else the official default of our examples.
fn model_name<'a>(args: &'a RunArgs, benchmark: Option<&'a Benchmark>) -> &'a str {
    args.model
        .as_deref()
        .or(benchmark.map(|b| b.name.as_str()))
        .unwrap_or("resnet50")
}

/// The official `FromConfig` sequence, then the command-line flags and `--set`.
fn load_settings(args: &RunArgs, benchmark: Option<&Benchmark>) -> anyhow::Result<TestSettings> {
    let model = model_name(args, benchmark);
    let scenario = TestScenario::from(args.scenario);
    let mut settings = TestSettings {
        scenario,
        ..TestSettings::default()
    };
    let mut loader = match &args.mlperf_conf {
        Some(path) => ConfigLoader::with_mlperf_conf(read_config(path, "--mlperf-conf")?),
        None => ConfigLoader::new(),
    };
    let warnings = match &args.user_conf {
        Some(path) => {
            let user_conf = read_config(path, "--user-conf")?;
            loader.apply_user_conf(&mut settings, &user_conf, model, scenario)
        }
        None => loader.apply_mlperf_conf(&mut settings, model, scenario),
    };
    for warning in warnings {
        tracing::warn!("{warning}");
    }
    if let Some(mode) = args.mode {
        settings.mode = mode.into();
    }
    if args.tokens {
        settings.use_token_latencies = true;
    }
    if let Some(benchmark) = benchmark {
        let overrides: Vec<Override> = benchmark
            .setting_overrides(scenario)
            .into_iter()
            .map(|(key, value)| Override { key, value })
            .collect();
        set::apply_overrides(&mut settings, &overrides)
            .with_context(|| format!("{} [settings]", benchmark.file.display()))?;
    }
    set::apply_overrides(&mut settings, &args.set)?;
    Ok(settings)
}

/// Reads a config file; its error names `file:line` for each malformed line.
fn read_config(path: &Path, flag: &str) -> anyhow::Result<ConfigFile> {
    // Not chained: the config error's text already says what its source says.
    ConfigFile::read(path).map_err(|e| anyhow!("{flag} {} rejected: {e}", path.display()))
}

/// An explicit audit.config must exist and parse (checked here, before anything runs).
fn check_audit_config(path: Option<&Path>) -> anyhow::Result<Option<PathBuf>> {
    let Some(path) = path else {
        return Ok(None);
    };
    read_config(path, "--audit-conf")?;
    Ok(Some(path.to_path_buf()))
}

/// The `--plugin` instance, else the benchmark's plugin configured for the scenario, else
/// the null plugin configured by `--latency` and `--tokens`.
fn open_plugin(
    args: &RunArgs,
    benchmark: Option<&Benchmark>,
    scenario: TestScenario,
) -> anyhow::Result<PluginSut> {
    let benchmark_plugin = benchmark.filter(|b| {
        args.plugin
            .as_deref()
            .is_none_or(|spec| spec == b.plugin.name)
    });
    if let Some(benchmark) = benchmark_plugin {
        let config = super::plugins::plugin_config(
            benchmark.plugin_config(scenario),
            args.plugin_config.as_deref(),
            &args.plugin_set,
        )?;
        return super::plugins::open_sut_with(&benchmark.plugin.name, &config)
            .with_context(|| format!("benchmark {}: cannot start its plugin", benchmark.name));
    }
    let Some(spec) = &args.plugin else {
        let mut sets = Vec::new();
        if !args.latency.is_zero() {
            let micros = args.latency.as_micros().max(1);
            sets.push(("workers".to_string(), "1".to_string()));
            sets.push(("latency_us".to_string(), micros.to_string()));
        }
        if args.tokens {
            sets.push(("tokens".to_string(), "true".to_string()));
        }
        sets.extend(args.plugin_set.iter().cloned());
        return super::plugins::open_sut("null", args.plugin_config.as_deref(), &sets)
            .context("cannot start the default null plugin (build it with `cargo build --release -p mlperf-plugin-null`, or name a backend with --plugin)");
    };
    if !args.latency.is_zero() {
        bail!("--latency configures the default null plugin; configure --plugin {spec} with --plugin-config or --plugin-set");
    }
    super::plugins::open_sut(spec, args.plugin_config.as_deref(), &args.plugin_set)
}

/// Creates the output directory and checks that a file can be written in it.
fn prepare_out_dir(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() && !dir.is_dir() {
        bail!(
            "the output directory {} exists and is not a directory",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the output directory {}", dir.display()))?;
    let probe = dir.join(format!(".mlperf-host-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .with_context(|| format!("the output directory {} is not writable", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}
