//! `run`'s flags turned into a [`RunPlan`]: the settings loaded as the official
//! `TestSettings::FromConfig` does (mlperf.conf, then user.conf, looked up by model and
//! scenario) with `--set` over them, the plugin, sample library and meters chosen. Whatever
//! cannot work is refused here, naming the flag, before anything runs.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context};
use mlperf_host::benchmark::postprocess::ResponseTransform;
use mlperf_host::benchmark::{Benchmark, DatasetFormat, PreprocessLimits};
use mlperf_host::loadgen::config::{ConfigFile, ConfigLoader};
use mlperf_host::loadgen::{TestMode, TestScenario, TestSettings};
use mlperf_host::official::engine::TestSettings as OfficialSettings;
use mlperf_host::official::settings::{field_text, official_mode, official_scenario};
use mlperf_host::plugin::isolated::{Isolation, TimedModule};
use mlperf_host::plugin::HostBatching;
use mlperf_host::session::{
    EnginePlan, LogOptions, PluginPlan, PreprocessPlan, RunPlan, SamplePlan,
};
use mlperf_host::submission::round::Round;
use mlperf_host::submission::rules::Rules;
use mlperf_host::submission::scenario::{Scenario, INTERACTIVE_SUFFIX};
use mlperf_submission::datasets::coco::CocoList;

use super::plugin_flags::IsolateArg;
use super::run_args::{EngineArg, RunArgs, ScenarioArg};
use super::set::{self, Override};

/// Samples in the library when there is no data set and no `--total-samples`.
const DEFAULT_TOTAL_SAMPLES: usize = 1024;

/// The plan of `mlperf-host run` with these flags.
pub(crate) fn run_plan(args: &RunArgs) -> anyhow::Result<RunPlan> {
    let benchmark = args
        .benchmark
        .as_deref()
        .map(|spec| {
            super::benchmark::open_with(
                spec,
                args.dataset_dir.as_deref(),
                args.model_file.as_deref(),
            )
        })
        .transpose()?;
    if benchmark.is_none() && (args.dataset_dir.is_some() || args.model_file.is_some()) {
        bail!("--dataset-dir and --model-file name a benchmark's own files: give --benchmark");
    }
    let round = Round::find(args.round.as_deref())?;
    let model = model_name(args, benchmark.as_ref(), &round)?;
    let settings = load_settings(args, &model, benchmark.as_ref())?;
    warn_off_round(&settings, &round);
    if let Some(benchmark) = &benchmark {
        super::benchmark::check_mode(benchmark, settings.mode)?;
    }
    if !args.power.is_empty() && settings.mode == TestMode::AccuracyOnly {
        bail!("--power measures performance runs; an AccuracyOnly run has no power result (use --mode PerformanceOnly or SubmissionRun)");
    }
    let audit_config = args
        .audit_conf
        .as_deref()
        .map(checked_audit_config)
        .transpose()?;
    let engine = match args.engine {
        EngineArg::Native => EnginePlan::Native,
        EngineArg::Official => {
            let benchmark_keys: Vec<String> = benchmark
                .as_ref()
                .map(|b| {
                    b.setting_overrides(settings.scenario)
                        .into_iter()
                        .map(|(k, _)| k)
                        .collect()
                })
                .unwrap_or_default();
            let user_conf_keys = match &args.user_conf {
                Some(_) => user_conf_keys(args, &model, benchmark.as_ref(), &settings)?,
                None => Vec::new(),
            };
            EnginePlan::Official(Box::new(official_settings(
                args,
                &model,
                &benchmark_keys,
                &user_conf_keys,
                &settings,
            )?))
        }
    };
    let mut plugin = plugin_plan(args, benchmark.as_ref(), settings.scenario)?;
    let samples = sample_plan(args, benchmark.as_ref())?;
    plugin.isolation = isolation(args, &samples)?;
    Ok(RunPlan {
        model,
        model_named: args.model.is_some() || benchmark.is_some(),
        benchmark,
        settings,
        engine,
        audit_config,
        plugin,
        samples,
        power: args.power.clone(),
        out: args.out.clone(),
        results_dir: args.out.clone(),
        log: LogOptions {
            trace: args.trace || args.report,
            sample_timing: args.sample_timing,
            drain_timeout: args.drain_timeout,
            issue_spin: args.issue_spin,
            stall_timeout: args.stall_timeout,
        },
        on_abandoned: Some(super::abandon_hook(args)),
    })
}

/// `--isolate process`: the plugin in a child process running this executable.
fn isolation(args: &RunArgs, samples: &SamplePlan) -> anyhow::Result<Option<Isolation>> {
    if args.isolate == IsolateArg::None {
        return Ok(None);
    }
    // Timed preprocessing runs in the plugin's process, on the raw samples it is handed.
    let timed_preprocess = match samples {
        SamplePlan::Dataset {
            preprocess:
                Some(PreprocessPlan {
                    module,
                    timed: true,
                    limits,
                }),
            ..
        } => Some(TimedModule {
            module: module.clone(),
            limits: *limits,
        }),
        _ => None,
    };
    let executable = std::env::current_exe()
        .context("--isolate process: cannot find this executable to start the plugin process")?;
    Ok(Some(Isolation {
        executable,
        stall_timeout: args.stall_timeout,
        timed_preprocess,
    }))
}

/// An audit.config must exist and parse.
pub(crate) fn checked_audit_config(path: &Path) -> anyhow::Result<PathBuf> {
    read_config(path, "--audit-conf")?;
    Ok(path.to_path_buf())
}

/// A run whose seeds are not the round's cannot be submitted: said before it runs.
fn warn_off_round(settings: &TestSettings, round: &Round) {
    let seeds = [
        (
            "qsl_rng_seed",
            settings.qsl_rng_seed,
            round.seeds.qsl_rng_seed,
        ),
        (
            "sample_index_rng_seed",
            settings.sample_index_rng_seed,
            round.seeds.sample_index_rng_seed,
        ),
        (
            "schedule_rng_seed",
            settings.schedule_rng_seed,
            round.seeds.schedule_rng_seed,
        ),
    ];
    for (key, used, rules) in seeds.into_iter().filter(|(_, used, rules)| used != rules) {
        tracing::warn!(
            "{key} {used} is not round {}'s {rules}: `check` refuses a submission of this run",
            round.name
        );
    }
}

/// `--model`, else the benchmark's name, else the official default of our examples; with
/// `--scenario Interactive`, that name's `-interactive` model (`llama3_1-8b-interactive`), as
/// the references look Interactive's settings up, for a benchmark of the round that has the
/// scenario.
fn model_name(
    args: &RunArgs,
    benchmark: Option<&Benchmark>,
    round: &Round,
) -> anyhow::Result<String> {
    let model = args
        .model
        .as_deref()
        .or(benchmark.map(|b| b.config_model.as_deref().unwrap_or(&b.name)))
        .unwrap_or("resnet50");
    if args.scenario != ScenarioArg::Interactive || model.ends_with(INTERACTIVE_SUFFIX) {
        return Ok(model.to_string());
    }
    let name = benchmark.map_or(model, |b| b.name.as_str());
    let has_interactive = |rules: &&Rules| {
        rules.scenarios.iter().any(|(_, set)| {
            set.required.contains(&Scenario::Interactive)
                || set.optional.contains(&Scenario::Interactive)
        })
    };
    let interactive = round
        .model(name)
        .or_else(|| round.model(model))
        .is_some_and(|rules| has_interactive(&rules));
    if !interactive {
        let with = round
            .models()
            .filter(has_interactive)
            .map(|rules| rules.benchmark.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        bail!(
            "--scenario Interactive: {name} has no Interactive scenario in round {} (a Server run under the Interactive token bounds of {with})",
            round.name
        );
    }
    Ok(format!("{model}{INTERACTIVE_SUFFIX}"))
}

/// The official `FromConfig` sequence with the benchmark's `[settings]` between mlperf.conf
/// and user.conf (a benchmark's defaults, which the submitter's user.conf, a tuned one
/// included, overrides), then the command-line flags and `--set`.
fn load_settings(
    args: &RunArgs,
    model: &str,
    benchmark: Option<&Benchmark>,
) -> anyhow::Result<TestSettings> {
    let scenario = TestScenario::from(args.scenario);
    let mut settings = TestSettings {
        scenario,
        ..TestSettings::default()
    };
    let mut loader = match &args.mlperf_conf {
        Some(path) => ConfigLoader::with_mlperf_conf(read_config(path, "--mlperf-conf")?),
        None => ConfigLoader::new(),
    };
    // Read before anything is applied, so a bad file applies nothing.
    let user_conf = args
        .user_conf
        .as_deref()
        .map(|path| read_config(path, "--user-conf"))
        .transpose()?;
    let mut warnings = loader.apply_mlperf_conf(&mut settings, model, scenario);
    if let Some(benchmark) = benchmark {
        let overrides: Vec<Override> = benchmark
            .setting_overrides(scenario)
            .into_iter()
            .map(|(key, value)| Override { key, value })
            .collect();
        set::apply_overrides(&mut settings, &overrides)
            .with_context(|| format!("{} [settings]", benchmark.file.display()))?;
    }
    if let Some(user_conf) = &user_conf {
        warnings.extend(loader.apply_user_conf(&mut settings, user_conf, model, scenario));
    }
    for warning in warnings {
        tracing::warn!("{warning}");
    }
    if let Some(mode) = args.mode {
        settings.mode = mode.into();
    }
    if args.tokens {
        settings.use_token_latencies = true;
    }
    set::apply_overrides(&mut settings, &args.set)?;
    Ok(settings)
}

/// Reads a config file; its error names `file:line` for each malformed line.
fn read_config(path: &Path, flag: &str) -> anyhow::Result<ConfigFile> {
    // Not chained: the config error's text already says what its source says.
    ConfigFile::read(path).map_err(|e| anyhow!("{flag} {} rejected: {e}", path.display()))
}

/// The official TestSettings for this run: the official `FromConfig` on the embedded
/// mlperf.conf and `--user-conf`, then what the command line and the benchmark set, with the
/// values `native` holds for them (already read and checked by the native loader).
pub(crate) fn official_settings(
    args: &RunArgs,
    model: &str,
    benchmark_keys: &[String],
    user_conf_keys: &[String],
    native: &TestSettings,
) -> anyhow::Result<OfficialSettings> {
    if args.mlperf_conf.is_some() {
        bail!("--mlperf-conf: the official LoadGen applies the mlperf.conf compiled into it; another rules file needs --engine native");
    }
    let mut settings = OfficialSettings::new()?;
    let scenario = official_scenario(native.scenario);
    settings.set_scenario(scenario);
    // The official FromConfig takes one user.conf per process; a later run in the same
    // process (a campaign) gets the user.conf's values key by key, as read by the native
    // loader, over the mlperf.conf.
    let keyed_user_conf = args.user_conf.is_some() && OfficialSettings::user_conf_applied();
    match &args.user_conf {
        Some(path) if !keyed_user_conf => settings.apply_user_conf(path, model, scenario)?,
        _ => settings.apply_mlperf_conf(model, scenario)?,
    }
    let mode_set = args.mode.is_some()
        || benchmark_keys.iter().any(|k| k == "mode")
        || args.set.iter().any(|o| o.key == "mode");
    if mode_set {
        settings.set_mode(official_mode(native.mode));
    }
    let object = match serde_json::to_value(native)? {
        serde_json::Value::Object(object) => object,
        _ => bail!("TestSettings did not serialize as an object"),
    };
    let mut keys: Vec<&str> = benchmark_keys.iter().map(String::as_str).collect();
    if keyed_user_conf {
        keys.extend(user_conf_keys.iter().map(String::as_str));
    }
    keys.extend(args.set.iter().map(|o| o.key.as_str()));
    if args.tokens {
        keys.push("use_token_latencies");
    }
    for key in keys.into_iter().filter(|k| *k != "mode") {
        let value = object.get(key).unwrap_or(&serde_json::Value::Null);
        let text = field_text(key, value)?;
        settings
            .set(key, &text)
            .with_context(|| format!("setting {key}={text} for the official LoadGen"))?;
    }
    Ok(settings)
}

/// The TestSettings fields the user.conf changes: those whose value differs from the same
/// settings loaded without it.
fn user_conf_keys(
    args: &RunArgs,
    model: &str,
    benchmark: Option<&Benchmark>,
    native: &TestSettings,
) -> anyhow::Result<Vec<String>> {
    let without = RunArgs {
        user_conf: None,
        ..args.clone()
    };
    let before = serde_json::to_value(load_settings(&without, model, benchmark)?)?;
    let after = serde_json::to_value(native)?;
    let (Some(before), Some(after)) = (before.as_object(), after.as_object()) else {
        bail!("TestSettings did not serialize as an object");
    };
    Ok(after
        .iter()
        .filter(|(key, value)| before.get(key.as_str()) != Some(*value))
        .map(|(key, _)| key.clone())
        .collect())
}

/// The `--plugin` instance, else the benchmark's plugin configured for the scenario, else
/// the null plugin configured by `--latency` and `--tokens`.
fn plugin_plan(
    args: &RunArgs,
    benchmark: Option<&Benchmark>,
    scenario: TestScenario,
) -> anyhow::Result<PluginPlan> {
    let benchmark_plugin = benchmark.filter(|b| {
        args.plugin
            .as_deref()
            .is_none_or(|spec| spec == b.plugin.name)
    });
    if let Some(benchmark) = benchmark_plugin {
        return Ok(PluginPlan {
            spec: benchmark.plugin.name.clone(),
            config: super::plugins::plugin_config(
                benchmark.plugin_config(scenario),
                args.plugin_config.as_deref(),
                &args.plugin_set,
            )?,
            context: Some(format!(
                "benchmark {}: cannot start its plugin",
                benchmark.name
            )),
            isolation: None,
            logged_outputs: logged_outputs(args, Some(benchmark)),
            postprocess: postprocess(args, Some(benchmark))?,
            batching: host_batching(args)?,
            as_host_of_1_2: false,
            as_host_of_1_3: false,
            devices: args.devices.clone(),
            sample_memory: args.sample_memory,
        });
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
        return Ok(PluginPlan {
            spec: "null".to_string(),
            config: super::plugins::plugin_config(
                toml::Table::new(),
                args.plugin_config.as_deref(),
                &sets,
            )?,
            context: Some("cannot start the default null plugin (build it with `cargo build --release -p mlperf-plugin-null`, or name a backend with --plugin)".to_string()),
            isolation: None,
            logged_outputs: logged_outputs(args, benchmark),
            postprocess: None,
            batching: host_batching(args)?,
            as_host_of_1_2: false,
            as_host_of_1_3: false,
            devices: args.devices.clone(),
            sample_memory: args.sample_memory,
        });
    };
    if !args.latency.is_zero() {
        bail!("--latency configures the default null plugin; configure --plugin {spec} with --plugin-config or --plugin-set");
    }
    Ok(PluginPlan {
        spec: spec.clone(),
        config: super::plugins::plugin_config(
            toml::Table::new(),
            args.plugin_config.as_deref(),
            &args.plugin_set,
        )?,
        context: None,
        isolation: None,
        logged_outputs: logged_outputs(args, benchmark),
        postprocess: postprocess(args, benchmark)?,
        batching: host_batching(args)?,
        as_host_of_1_2: false,
        as_host_of_1_3: false,
        devices: args.devices.clone(),
        sample_memory: args.sample_memory,
    })
}

/// `--plugin-batch` and `--plugin-batch-wait`.
fn host_batching(args: &RunArgs) -> anyhow::Result<HostBatching> {
    match args.plugin_batch {
        Some(0) => bail!("--plugin-batch 0: a call holds at least one sample (leave it out for whole queries)"),
        Some(_) if args.preprocess_timed => bail!("--plugin-batch does not apply with --preprocess-timed (each query is preprocessed and handed over whole)"),
        Some(max_samples) => Ok(HostBatching {
            max_samples,
            wait: args.plugin_batch_wait,
        }),
        None if !args.plugin_batch_wait.is_zero() => {
            bail!("--plugin-batch-wait needs --plugin-batch")
        }
        None => Ok(HostBatching::default()),
    }
}

/// The benchmark's `[postprocess]`, done by the host unless the plugin does it itself.
/// Detections get each sample's original size from the data set's list.
fn postprocess(
    args: &RunArgs,
    benchmark: Option<&Benchmark>,
) -> anyhow::Result<Option<ResponseTransform>> {
    let Some(benchmark) = benchmark.filter(|_| !args.plugin_postprocesses) else {
        return Ok(None);
    };
    let mut transform = benchmark.postprocess.clone();
    if let Some(ResponseTransform::Detections { originals, .. }) = &mut transform {
        if benchmark.format != DatasetFormat::Coco {
            bail!(
                "benchmark {}: [postprocess] kind = \"detections\" scales boxes to each image's size, which [dataset] format = \"coco\" gives",
                benchmark.name
            );
        }
        let list = CocoList::read(&benchmark.inputs)?;
        let count = args.total_samples.unwrap_or(list.len()).min(list.len());
        *originals = list.images[..count]
            .iter()
            .map(|image| [image.height, image.width])
            .collect();
    }
    Ok(transform)
}

/// `--logged-outputs`, else the benchmark's `[accuracy] logged_outputs`.
fn logged_outputs(args: &RunArgs, benchmark: Option<&Benchmark>) -> Vec<String> {
    if !args.logged_outputs.is_empty() {
        return args.logged_outputs.clone();
    }
    benchmark.map_or_else(Vec::new, |b| b.logged_outputs.clone())
}

/// `--dataset` (else the benchmark's inputs) with its preprocessing, or samples without data.
fn sample_plan(args: &RunArgs, benchmark: Option<&Benchmark>) -> anyhow::Result<SamplePlan> {
    let path = args
        .dataset
        .as_ref()
        .or(args.dataset_inputs.first().map(|(_, file)| file))
        .or(benchmark.map(|b| &b.inputs));
    let preprocess = preprocess_plan(args, benchmark);
    if args.preprocess_timed && preprocess.is_none() {
        bail!("--preprocess-timed needs a module (--preprocess, or a benchmark's [preprocess])");
    }
    let Some(path) = path else {
        if let Some(preprocess) = preprocess {
            bail!(
                "--preprocess {}: there is no data set to preprocess (give --dataset)",
                preprocess.module.display()
            );
        }
        let total = args.total_samples.unwrap_or(DEFAULT_TOTAL_SAMPLES);
        if total == 0 {
            bail!("--total-samples must be at least 1");
        }
        let performance = args.performance_samples.unwrap_or(total);
        if performance == 0 || performance > total {
            bail!("--performance-samples {performance} must be between 1 and --total-samples ({total})");
        }
        return Ok(SamplePlan::Indices { total, performance });
    };
    let format = benchmark
        .filter(|b| b.inputs == *path)
        .map_or(DatasetFormat::Npy, |b| b.format);
    if args.total_samples.is_some() && !format.is_folder() {
        bail!("--total-samples does not apply with --dataset (the data set's length is the total)");
    }
    let input_names = if args.input_names.is_empty() {
        benchmark.map_or_else(Vec::new, |b| b.input_names.clone())
    } else {
        args.input_names.clone()
    };
    if preprocess.is_some() && !(input_names.is_empty() && args.dataset_inputs.is_empty()) {
        bail!(
            "--input-names {}: named inputs are handed over as the data set holds them, and cannot be preprocessed (drop --preprocess, or give `--preprocess none`)",
            input_names.join(",")
        );
    }
    Ok(SamplePlan::Dataset {
        path: path.clone(),
        performance: args
            .performance_samples
            .or(benchmark.and_then(|b| b.performance_sample_count)),
        preprocess,
        input_names: if args.dataset_inputs.is_empty() {
            input_names
        } else {
            Vec::new()
        },
        input_files: args.dataset_inputs.clone(),
        // The pin holds the benchmark's own inputs, not a --dataset given instead.
        expected_sha256: benchmark
            .filter(|b| b.inputs == *path)
            .and_then(|b| b.inputs_sha256.clone()),
        format,
        count: args.total_samples,
    })
}

/// The module to preprocess with, whether it is timed, and its sandbox limits: --preprocess,
/// else the benchmark's.
fn preprocess_plan(args: &RunArgs, benchmark: Option<&Benchmark>) -> Option<PreprocessPlan> {
    let plan = match &args.preprocess {
        Some(path) if path.as_os_str() == "none" => return None,
        Some(path) => PreprocessPlan {
            module: path.clone(),
            timed: false,
            limits: PreprocessLimits::default(),
        },
        None => {
            let preprocess = benchmark.and_then(|b| b.preprocess.as_ref())?;
            PreprocessPlan {
                module: preprocess.module.clone(),
                timed: preprocess.timed,
                limits: preprocess.limits,
            }
        }
    };
    Some(PreprocessPlan {
        timed: plan.timed || args.preprocess_timed,
        ..plan
    })
}
