//! `mlperf-host sweep`: LLM-serving style load through a plugin, point by point.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::ValueEnum;
use mlperf_host::benchmark::accuracy::Score;
use mlperf_host::benchmark::Benchmark;
use mlperf_host::loadgen::TestScenario;
use mlperf_host::plugin::isolated::Isolation;
use mlperf_host::session::{PluginPlan, SamplePlan};
use mlperf_host::sweep::endpoints::{self, EndpointsRun};
use mlperf_host::sweep::synthetic::{PromptPlan, SharedPrefix};
use mlperf_host::sweep::trace::{Trace, TracePrompt};
use mlperf_host::sweep::{self, AccuracyPass, ProvisionedPower, SweepPlan, SweepPoint};
use mlperf_serving::{
    region_points, Arrivals, Lengths, LoadMode, Region, SaturationRule, Slo, SteadyRule,
};

use super::plugin_flags::IsolateArg;

/// `mlperf-host sweep`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("load").required(true).multiple(true).args(["concurrency", "rate", "regions", "trace"])))]
pub(crate) struct Args {
    /// A benchmark definition (a name in configs/benchmarks/, or a .toml path): its data set,
    /// its plugin configured as for the Server scenario (answers streamed), and its tokenizer
    /// counting each prompt's and each answer's tokens. --plugin-set still applies.
    #[arg(long, value_name = "NAME|FILE")]
    pub benchmark: Option<String>,
    /// The backend plugin (a path or a name), as for `run` (default: the benchmark's, else
    /// null).
    #[arg(long)]
    pub plugin: Option<String>,
    /// Set a plugin config key (TOML value), after --plugin-config. Repeatable.
    #[arg(long = "plugin-set", value_name = "KEY=VALUE", value_parser = super::plugin_flags::parse_plugin_set)]
    pub plugin_set: Vec<(String, String)>,
    /// The plugin's config file (TOML).
    #[arg(long, value_name = "FILE")]
    pub plugin_config: Option<PathBuf>,
    /// A .npy data set whose samples the requests carry; without one, index-only samples.
    #[arg(long, value_name = "FILE")]
    pub dataset: Option<PathBuf>,
    /// A tokenizer.json counting each prompt's and each answer's tokens (answers in text),
    /// beside the plugin's count (an LLM server's usage); default: the benchmark's.
    #[arg(long, value_name = "FILE")]
    pub tokenizer: Option<PathBuf>,
    /// Synthetic prompts instead of a data set, each exactly fixed:N, uniform:LOW:HIGH or
    /// normal:MEAN:SD tokens long (written to OUT/synthetic-prompts.npy): text exact in tokens
    /// by the tokenizer (--tokenizer, or the benchmark's), else random token ids (int32, -1
    /// padded) that the network plugin is set to send as token ids (`prompt = "token_ids"`,
    /// `api = "completions"`) unless --plugin-set says otherwise. Answers are as long as the
    /// plugin's `max_tokens`, or --synthetic-output draws them.
    #[arg(long, value_name = "LENGTHS", value_parser = Lengths::parse, conflicts_with = "dataset")]
    pub synthetic_input: Option<Lengths>,
    /// Answers of drawn lengths (with --synthetic-input): fixed:N, uniform:LOW:HIGH,
    /// normal:MEAN:SD or hist:FILE (lines of LENGTH,WEIGHT) tokens, one per prompt (written
    /// to OUT/synthetic-output-tokens.npy, the `max_tokens` input beside the `prompt` one);
    /// the network plugin asks for every token (`exact_output`: min_tokens and ignore_eos).
    #[arg(long, value_name = "LENGTHS", value_parser = Lengths::parse, requires = "synthetic_input")]
    pub synthetic_output: Option<Lengths>,
    /// Groups of N synthetic prompts that begin with the same L tokens (each group its own):
    /// each prompt is then L tokens of its group's prefix and its own --synthetic-input length.
    #[arg(long, value_name = "N:L", value_parser = SharedPrefix::parse, requires = "synthetic_input")]
    pub shared_prefix: Option<SharedPrefix>,
    /// Replay a trace instead of a load: a JSONL file of requests (`timestamp` in ms from the
    /// start, `input_length` or `text`, and `output_length` on every line or none; see
    /// docs/guide.md), each sent at its time on a prompt of its own, as one point that lasts
    /// until the last request (--warmup of it not counted; --max-concurrency caps it).
    #[arg(
        long,
        value_name = "FILE.jsonl",
        conflicts_with_all = ["dataset", "synthetic_input", "concurrency", "rate", "regions"]
    )]
    pub trace: Option<PathBuf>,
    /// Multi-turn conversations: N sessions of T turns each, every turn a synthetic user
    /// message (--synthetic-input long) sent through the chat API with the session's history
    /// (its earlier messages and the server's own answers to them), after the turn before it
    /// ended. Turns go out turn by turn across the sessions: keep fewer requests in flight than
    /// N, or turns wait for their previous one. Needs a tokenizer (text prompts).
    #[arg(long, value_name = "N:T", value_parser = parse_sessions, requires = "synthetic_input")]
    pub sessions: Option<(usize, usize)>,
    /// How many synthetic prompts the requests go round.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub synthetic_count: usize,
    /// Index-only samples the requests go round (without --dataset).
    #[arg(long, default_value_t = 1024)]
    pub samples: usize,
    /// Closed-loop points: requests in flight, a comma-separated list (e.g. 1,2,4,8).
    #[arg(long, value_delimiter = ',', value_name = "N,...")]
    pub concurrency: Vec<usize>,
    /// Closed-loop points over MLPerf Endpoints' concurrency regions from C_MIN (1-32, the
    /// Ultra-Low point) to C_MAX (above 32): PER_REGION points (default 2) in each of Low,
    /// Medium and High, the last at the region's end. Run before --concurrency's points.
    #[arg(long, value_name = "C_MIN:C_MAX[:PER_REGION]", value_parser = parse_regions)]
    pub regions: Option<(usize, usize, usize)>,
    /// Open-loop points: requests per second, a comma-separated list.
    #[arg(long, value_delimiter = ',', value_name = "RATE,...")]
    pub rate: Vec<f64>,
    /// How requests arrive at a rate.
    #[arg(long, value_enum, default_value = "poisson")]
    pub arrivals: ArrivalsArg,
    /// Gamma arrivals' shape: below 1 burstier than Poisson, above steadier.
    #[arg(long, default_value_t = 1.0)]
    pub burstiness: f64,
    /// With --rate or --trace: arrivals wait while this many requests are in flight.
    #[arg(long, value_name = "N")]
    pub max_concurrency: Option<usize>,
    /// How long each point is measured.
    #[arg(long, value_parser = super::parse_positive_seconds, default_value = "10s")]
    pub duration: Duration,
    /// Load before each point's measured window, not counted.
    #[arg(long, value_parser = super::parse_seconds, default_value = "2s")]
    pub warmup: Duration,
    /// A point ends after this many requests even before its duration; it is then measured
    /// until its last answer.
    #[arg(long, value_name = "N")]
    pub max_requests: Option<usize>,
    /// Service levels for goodput, in ms: ttft=500,tpot=50,e2e=10000 (any of them).
    #[arg(long, value_name = "KEY=MS,...")]
    pub slo: Option<String>,
    /// The arrivals' seed (each point adds its position).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// How long a point's last requests may take to end.
    #[arg(long, value_parser = super::parse_seconds, default_value = "60s")]
    pub drain_timeout: Duration,
    /// Measure power over each point (as for `run`: sim:WATTS, ptd://HOST:PORT, nvml, rapl,
    /// hwmon, plugin:...; repeatable, the meters' readings summed): tokens per joule and
    /// output tokens/s per kW.
    #[arg(long, value_name = "SOURCE")]
    pub power: Vec<String>,
    /// The system's provisioned power, in watts (1200, 1200W, 1.2kW) or from its
    /// system_power.json: each point's output tokens/s per provisioned kW (MLPerf Endpoints'
    /// system_tps_per_kw, kW rounded to 2 decimals), with or without --power.
    #[arg(long, value_name = "WATTS|FILE", value_parser = ProvisionedPower::parse)]
    pub provisioned_power: Option<ProvisionedPower>,
    /// After the points, ask every sample of the data set once (not timed) and score the
    /// answers by the benchmark's metric: OUT/accuracy/ (LoadGen's accuracy log,
    /// accuracy.txt, MLPerf Endpoints' accuracy_results.json, also in each
    /// endpoints/point-N/accuracy/).
    #[arg(long)]
    pub accuracy: bool,
    /// Requests in flight during the accuracy pass.
    #[arg(long, value_name = "N", default_value_t = 4, requires = "accuracy",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub accuracy_concurrency: usize,
    /// Only the first N samples in the accuracy pass (a quick look; an Endpoints submission
    /// needs them all).
    #[arg(long, value_name = "N", requires = "accuracy",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub accuracy_samples: Option<usize>,
    /// Keep running a point whose requests pile up (by default it ends, and the sweep with
    /// it, when requests in flight and TTFT keep rising, or a capped load falls behind).
    #[arg(long)]
    pub no_saturation_stop: bool,
    /// Where the plugin runs: `process` isolates it, as for `run`.
    #[arg(long, value_enum, default_value = "none")]
    pub isolate: IsolateArg,
    /// One instance per device the plugin lists (ABI 1.4), each request to the one with the
    /// fewest in flight, as for `run`: `all`, a count, ordinals (`0,2`) or one ordinal
    /// (`device=2`). [default: one instance]
    #[arg(long, value_name = "all|N|I,J")]
    pub devices: Option<mlperf_host::plugin::DeviceSelection>,
    /// With --isolate process: how long a call into the plugin may take.
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = super::parse_seconds)]
    pub stall_timeout: Duration,
    /// Also write the HTML report of the sweep (Pareto plot, latency against load) to
    /// OUT/report.html.
    #[arg(long)]
    pub report: bool,
    /// Also write each point's requests as they went, one JSON object a line (send time,
    /// TTFT, TPOT, E2E, tokens, failed, whether its window counts it), to
    /// OUT/point-N-requests.jsonl.
    #[arg(long)]
    pub export_requests: bool,
    /// Where sweep.json, sweep.csv and each point's point-N.json go (created if missing).
    #[arg(long, default_value = "sweep")]
    pub out: PathBuf,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum ArrivalsArg {
    Poisson,
    Gamma,
    Constant,
}

pub(crate) fn main(args: &Args) -> ExitCode {
    super::init_logging(0, false);
    super::watch_signals();
    let status = super::exit_with(run(args));
    // Every file of the points that ran is written, then the signal's status.
    super::interrupted(&args.out).unwrap_or(status)
}

fn run(args: &Args) -> anyhow::Result<()> {
    let benchmark = args
        .benchmark
        .as_deref()
        .map(super::benchmark::open)
        .transpose()?;
    let trace = args
        .trace
        .as_deref()
        .map(Trace::read)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    if let Some(note) = trace.as_ref().and_then(|t| t.note.as_ref()) {
        eprintln!("note: {note}");
    }
    let mut plugin = plugin_plan(args, benchmark.as_ref(), trace.as_ref())?;
    if args.isolate == IsolateArg::Process {
        plugin.isolation = Some(Isolation {
            executable: std::env::current_exe()
                .context("--isolate process: cannot find this executable")?,
            stall_timeout: args.stall_timeout,
            timed_preprocess: None,
        });
    }
    let (points, regions) = match &trace {
        Some(_) => (
            vec![LoadMode::Replay {
                max_concurrency: args.max_concurrency,
            }],
            Vec::new(),
        ),
        None => points(args)?,
    };
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let tokenizer = args
        .tokenizer
        .clone()
        .or_else(|| benchmark.as_ref().and_then(|b| b.tokenizer.clone()));
    let synthetic = match (&args.synthetic_input, &trace) {
        (Some(lengths), _) => Some(synthetic_prompts(args, lengths, tokenizer.as_deref())?),
        (None, Some(trace)) => Some(trace_samples(args, trace, tokenizer.as_deref())?),
        (None, None) => None,
    };
    // A replay lasts until its last request.
    let duration = match &trace {
        Some(trace) => {
            let last = trace.times.last().copied().unwrap_or(0).max(0) as u64;
            let length = Duration::from_nanos(last) + Duration::from_millis(1);
            if length <= args.warmup {
                anyhow::bail!(
                    "the trace's requests span {:.3} s, no longer than --warmup {:.3} s:                      nothing would be measured",
                    length.as_secs_f64(),
                    args.warmup.as_secs_f64()
                );
            }
            length - args.warmup
        }
        None => args.duration,
    };
    let plan = SweepPlan {
        plugin,
        regions,
        samples: match (args.dataset.as_ref(), synthetic, &benchmark) {
            (Some(path), _, _) => SamplePlan::dataset(path.clone()),
            (None, Some(samples), _) => samples,
            (None, None, Some(benchmark)) => benchmark_samples(benchmark),
            (None, None, None) => SamplePlan::Indices {
                total: args.samples.max(1),
                performance: args.samples.max(1),
            },
        },
        tokenizer,
        steady: SteadyRule::default(),
        power: args.power.clone(),
        provisioned: args.provisioned_power.clone(),
        accuracy: args.accuracy.then_some(AccuracyPass {
            concurrency: args.accuracy_concurrency,
            samples: args.accuracy_samples,
        }),
        saturation: (!args.no_saturation_stop).then(|| SaturationRule {
            // A few checks per point at least, never more than 4 a second.
            check_every: (args.duration / 20).max(Duration::from_millis(250)),
            ..SaturationRule::default()
        }),
        points,
        schedule: trace.map(|trace| trace.times.into()),
        duration,
        warmup: args.warmup,
        max_requests: args.max_requests,
        slo: match &args.slo {
            Some(text) => parse_slo(text).map_err(anyhow::Error::msg)?,
            None => Slo::default(),
        },
        seed: args.seed,
        drain_timeout: args.drain_timeout,
        sessions: args.sessions.map(|(sessions, _)| sessions),
        keep_requests: args.export_requests,
    };
    println!(
        "{:<28} {:>8} {:>10} {:>10} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "load",
        "result",
        "req/s",
        "tok/s",
        "in flight",
        "TTFT p50",
        "TTFT p99",
        "TPOT p50",
        "E2E p99",
        "goodput/s"
    );
    // Each point's requests are written as it ends (a sweep does not keep them all).
    let mut export_failed = None;
    let result = sweep::run_sweep(&plan, |point| {
        print_point(point);
        if let (Some(requests), None) = (&point.requests, &export_failed) {
            export_failed = write_requests(&args.out, point, requests).err();
        }
    })?;
    if let Some(error) = export_failed {
        return Err(error);
    }
    if let Some(why) = &result.stopped {
        println!("sweep stopped: {why}");
    }
    let endpoints = EndpointsRun {
        model: model_name(args, benchmark.as_ref()),
        seed: args.seed,
        warmup: args.warmup,
        duration: args.duration,
    };
    for (index, point) in result.points.iter().enumerate() {
        endpoints::write_point(&args.out, index, point, &endpoints)
            .with_context(|| format!("cannot write the Endpoints files of point {}", index + 1))?;
        let file = sweep::point_file(&args.out, index);
        std::fs::write(
            &file,
            serde_json::to_string_pretty(&sweep::point_json(point))?,
        )
        .with_context(|| format!("cannot write {}", file.display()))?;
    }
    // Scored by the benchmark's metric only when its data set was what was asked.
    let own_samples =
        args.dataset.is_none() && args.synthetic_input.is_none() && args.trace.is_none();
    let scoring = benchmark.as_ref().filter(|_| own_samples);
    let (accuracy, accuracy_failed) = match &result.accuracy {
        Some(Ok(answers)) => match write_accuracy(args, answers, scoring, result.points.len()) {
            Ok(json) => (json, None),
            Err(error) => (
                serde_json::json!({ "error": format!("{error:#}") }),
                Some(format!("{error:#}")),
            ),
        },
        Some(Err(why)) => (serde_json::json!({ "error": why }), Some(why.clone())),
        None => (serde_json::Value::Null, None),
    };
    if let Some(why) = &accuracy_failed {
        eprintln!("error: the accuracy pass: {why}");
    }
    let (json, csv) = sweep::files(&args.out);
    let mut sweep_json = sweep::sweep_json(&result);
    sweep_json["accuracy"] = accuracy;
    std::fs::write(&json, serde_json::to_string_pretty(&sweep_json)?)
        .with_context(|| format!("cannot write {}", json.display()))?;
    std::fs::write(&csv, sweep::points_csv(&result.points))
        .with_context(|| format!("cannot write {}", csv.display()))?;
    println!("wrote {} and {}", json.display(), csv.display());
    if args.report {
        let html = args.out.join("report.html");
        super::report::write_report(std::slice::from_ref(&args.out), &html)?;
        println!("wrote {}", html.display());
    }
    match accuracy_failed {
        Some(why) => anyhow::bail!("the accuracy pass: {why} (the points' files are written)"),
        None => Ok(()),
    }
}

/// OUT/synthetic-prompts.npy: text exact in tokens by `tokenizer`, else token ids; with
/// --synthetic-output, beside OUT/synthetic-output-tokens.npy, as the inputs `prompt` and
/// `max_tokens`.
fn synthetic_prompts(
    args: &Args,
    lengths: &Lengths,
    tokenizer: Option<&std::path::Path>,
) -> anyhow::Result<SamplePlan> {
    let path = args.out.join("synthetic-prompts.npy");
    let count = match args.sessions {
        Some((sessions, turns)) => sessions * turns,
        None => args.synthetic_count.max(1),
    };
    if args.sessions.is_some() && tokenizer.is_none() {
        anyhow::bail!("--sessions needs a tokenizer (--tokenizer, or the benchmark's): the chat API takes text");
    }
    let prompts = PromptPlan {
        lengths,
        count,
        seed: args.seed,
        shared_prefix: args.shared_prefix,
    };
    match tokenizer {
        Some(file) => {
            let tokenizer = mlperf_tokenizer::Tokenizer::from_file(file)
                .map_err(|e| anyhow::anyhow!("tokenizer: {e}"))?;
            sweep::synthetic::write_text_prompts(&path, &prompts, &tokenizer)
                .map_err(anyhow::Error::msg)?;
        }
        None => {
            sweep::synthetic::write_prompts(&path, &prompts)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    let mut inputs = Vec::new();
    let written = |file: &std::path::Path| format!("cannot write {}", file.display());
    if let Some(outputs) = &args.synthetic_output {
        let file = args.out.join("synthetic-output-tokens.npy");
        sweep::synthetic::write_output_lengths(&file, outputs, count, args.seed)
            .with_context(|| written(&file))?;
        inputs.push(("max_tokens".to_string(), file));
    }
    if let Some((sessions, _)) = args.sessions {
        // Sample k is turn k / N of session k % N: each turn goes round every session.
        let session: Vec<usize> = (0..count).map(|k| k % sessions).collect();
        let turn: Vec<usize> = (0..count).map(|k| k / sessions).collect();
        for (name, values) in [("session", session), ("turn", turn)] {
            let file = args.out.join(format!("synthetic-{name}.npy"));
            sweep::synthetic::write_int32_rows(&file, &values).with_context(|| written(&file))?;
            inputs.push((name.to_string(), file));
        }
    }
    let mut plan = SamplePlan::dataset(path.clone());
    if !inputs.is_empty() {
        if let SamplePlan::Dataset { input_files, .. } = &mut plan {
            inputs.insert(0, ("prompt".to_string(), path));
            *input_files = inputs;
        }
    }
    Ok(plan)
}

/// OUT/trace-prompts.npy from the trace's lines (with OUT/trace-output-tokens.npy as the
/// `max_tokens` input when the trace gives output lengths).
fn trace_samples(
    args: &Args,
    trace: &Trace,
    tokenizer: Option<&std::path::Path>,
) -> anyhow::Result<SamplePlan> {
    let tokenizer = tokenizer
        .map(mlperf_tokenizer::Tokenizer::from_file)
        .transpose()
        .map_err(|e| anyhow::anyhow!("tokenizer: {e}"))?;
    let path = args.out.join("trace-prompts.npy");
    trace
        .write_prompts(&path, args.seed, tokenizer.as_ref())
        .map_err(anyhow::Error::msg)?;
    let mut plan = SamplePlan::dataset(path.clone());
    if let Some(outputs) = &trace.outputs {
        let lengths = args.out.join("trace-output-tokens.npy");
        sweep::synthetic::write_int32_rows(&lengths, outputs)
            .with_context(|| format!("cannot write {}", lengths.display()))?;
        if let SamplePlan::Dataset { input_files, .. } = &mut plan {
            *input_files = vec![
                ("prompt".to_string(), path),
                ("max_tokens".to_string(), lengths),
            ];
        }
    }
    Ok(plan)
}

/// `N:T`: N sessions of T turns.
fn parse_sessions(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{text:?}: expected N:T (N sessions of T turns, both at least 1)");
    let (sessions, turns) = text.split_once(':').ok_or_else(bad)?;
    let number = |s: &str| s.trim().parse::<usize>().ok().filter(|&n| n > 0);
    match (number(sessions), number(turns)) {
        (Some(sessions), Some(turns)) => Ok((sessions, turns)),
        _ => Err(bad()),
    }
}

/// The model the Endpoints files name: the benchmark's, else the plugin's `model` key, else
/// the plugin.
fn model_name(args: &Args, benchmark: Option<&Benchmark>) -> String {
    if let Some(benchmark) = benchmark {
        return benchmark.name.clone();
    }
    args.plugin_set
        .iter()
        .rev()
        .find(|(key, _)| key == "model")
        .map(|(_, value)| value.trim_matches('"').to_string())
        .or_else(|| args.plugin.clone())
        .unwrap_or_else(|| "null".to_string())
}

/// The benchmark's data set, its performance sample count and pinned sha256.
fn benchmark_samples(benchmark: &Benchmark) -> SamplePlan {
    let mut plan = SamplePlan::dataset(benchmark.inputs.clone());
    if let SamplePlan::Dataset {
        performance,
        expected_sha256,
        ..
    } = &mut plan
    {
        *performance = benchmark.performance_sample_count;
        expected_sha256.clone_from(&benchmark.inputs_sha256);
    }
    plan
}

/// Whether two plugin specs (names or paths) resolve to the same library.
fn same_library(spec: &str, name: &str) -> bool {
    let canonical = |spec: &str| {
        mlperf_host::plugin::resolve(spec)
            .ok()
            .and_then(|path| path.canonicalize().ok())
    };
    canonical(spec).is_some_and(|path| Some(path) == canonical(name))
}

/// `--plugin`, else the benchmark's plugin as it serves the Server scenario (streaming),
/// else null; then --plugin-config and --plugin-set. The benchmark's tokenizer is left out
/// of the plugin's configuration: the plugin then answers in text with the server's own
/// token count, and the sweep counts the text's tokens beside it.
fn plugin_plan(
    args: &Args,
    benchmark: Option<&Benchmark>,
    trace: Option<&Trace>,
) -> anyhow::Result<PluginPlan> {
    let benchmark = benchmark.filter(|b| {
        args.plugin
            .as_deref()
            .is_none_or(|spec| spec == b.plugin.name)
    });
    let (spec, base) = match benchmark {
        Some(benchmark) => {
            let mut config = benchmark.plugin_config(TestScenario::Server);
            config.remove("tokenizer");
            (benchmark.plugin.name.clone(), config)
        }
        None => (
            args.plugin.clone().unwrap_or_else(|| "null".to_string()),
            toml::Table::new(),
        ),
    };
    // Synthetic prompts without a tokenizer go to the network plugin as token ids (what
    // --plugin-set says wins); the plugin given by its name or by its library's path.
    let network = spec == "network" || same_library(&spec, "network");
    let mut sets = Vec::new();
    let tokenizer = args.tokenizer.is_some() || benchmark.is_some_and(|b| b.tokenizer.is_some());
    let lengths_only = trace.is_some_and(|t| {
        t.prompts
            .iter()
            .all(|p| matches!(p, TracePrompt::Tokens(_)))
    });
    if (args.synthetic_input.is_some() || lengths_only) && !tokenizer && network {
        sets.push(("prompt".to_string(), "\"token_ids\"".to_string()));
        sets.push(("api".to_string(), "\"completions\"".to_string()));
    }
    if args.sessions.is_some() && network {
        sets.push(("api".to_string(), "\"chat\"".to_string()));
    }
    let output_lengths = trace.is_some_and(|t| t.outputs.is_some());
    if (args.synthetic_output.is_some() || output_lengths) && network {
        sets.push(("exact_output".to_string(), "true".to_string()));
    }
    sets.extend(args.plugin_set.iter().cloned());
    let config = super::plugins::plugin_config(base, args.plugin_config.as_deref(), &sets)?;
    let mut plan = PluginPlan::new(spec, config);
    plan.devices = args.devices.clone();
    if let Some(benchmark) = benchmark {
        plan.context = Some(format!(
            "benchmark {}: cannot start its plugin",
            benchmark.name
        ));
    }
    Ok(plan)
}

/// `1:512` or `1:512:3`.
fn parse_regions(text: &str) -> Result<(usize, usize, usize), String> {
    let numbers: Vec<usize> = text
        .split(':')
        .map(|part| part.trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("{text:?}: expected C_MIN:C_MAX or C_MIN:C_MAX:PER_REGION"))?;
    match numbers[..] {
        [c_min, c_max] => Ok((c_min, c_max, 2)),
        [c_min, c_max, per_region] => Ok((c_min, c_max, per_region)),
        _ => Err(format!(
            "{text:?}: expected C_MIN:C_MAX or C_MIN:C_MAX:PER_REGION"
        )),
    }
}

/// The region points, then --concurrency's, then --rate's; and the region of each.
fn points(args: &Args) -> anyhow::Result<(Vec<LoadMode>, Vec<Region>)> {
    let regional = match args.regions {
        Some((c_min, c_max, per_region)) => region_points(c_min, c_max, per_region)
            .map_err(|e| anyhow::anyhow!("--regions: {e}"))?,
        None => Vec::new(),
    };
    let regions = regional.iter().map(|&(_, region)| region).collect();
    let regional = regional.iter().map(|&(n, _)| LoadMode::Concurrency(n));
    let concurrency = args.concurrency.iter().map(|&n| LoadMode::Concurrency(n));
    let rates = args.rate.iter().map(|&rate| LoadMode::Rate {
        arrivals: match args.arrivals {
            ArrivalsArg::Poisson => Arrivals::Poisson { rate },
            ArrivalsArg::Gamma => Arrivals::Gamma {
                rate,
                burstiness: args.burstiness,
            },
            ArrivalsArg::Constant => Arrivals::Constant { rate },
        },
        max_concurrency: args.max_concurrency,
    });
    Ok((regional.chain(concurrency).chain(rates).collect(), regions))
}

/// `--export-requests`: the point's requests, one JSON object a line.
fn write_requests(
    out: &Path,
    point: &SweepPoint,
    requests: &sweep::PointRequests,
) -> anyhow::Result<()> {
    let file = sweep::requests_file(out, requests.point);
    let write = || -> std::io::Result<()> {
        let mut writer = std::io::BufWriter::new(std::fs::File::create(&file)?);
        sweep::write_requests_jsonl(&mut writer, requests, &point.steady)?;
        writer.into_inner().map_err(|e| e.into_error())?.sync_all()
    };
    write().with_context(|| format!("cannot write {}", file.display()))
}

fn print_point(point: &SweepPoint) {
    let s = &point.summary;
    let ms = |ns: f64| format!("{:.2} ms", ns / 1e6);
    println!(
        "{:<28} {:>8} {:>10.1} {:>10.1} {:>9.2} {:>10} {:>10} {:>10} {:>10} {:>10.1}",
        match point.region {
            Some(region) => format!("{} ({})", sweep::mode_label(&point.mode), region.name()),
            None => sweep::mode_label(&point.mode),
        },
        if point.valid() { "VALID" } else { "INVALID" },
        s.requests_per_s,
        s.output_tokens_per_s,
        s.mean_concurrency,
        ms(s.ttft.p50),
        ms(s.ttft.p99),
        ms(s.tpot.p50),
        ms(s.e2e.p99),
        s.goodput_per_s,
    );
    for why in &point.invalid {
        println!("    INVALID: {why}");
    }
    if point.steady.dropped_bins > 0 {
        println!("    {}", point.steady.reason);
    }
    match &point.power {
        Some(Ok(power)) => println!(
            "    power: {:.1} W, {:.4} tokens/J, {:.1} output tokens/s per kW",
            power.mean_watts, power.tokens_per_joule, power.tokens_per_s_per_kw
        ),
        Some(Err(why)) => println!("    power: none ({why})"),
        None => {}
    }
    if let (Some(power), Some(per_kw)) =
        (&point.provisioned, point.tokens_per_s_per_provisioned_kw())
    {
        println!(
            "    provisioned power {:.2} kW: {per_kw:.1} output tokens/s per kW",
            power.kw
        );
    }
    if s.token_count_mismatches > 0 {
        println!(
            "    {} of {} answers: the tokenizer's count differs from the plugin's",
            s.token_count_mismatches, s.tokens_counted
        );
    }
}

/// Scores the accuracy pass and writes its files: OUT/accuracy/ and each point's
/// endpoints/point-N/accuracy/accuracy_results.json; returns sweep.json's `accuracy`.
fn write_accuracy(
    args: &Args,
    answers: &sweep::AccuracyAnswers,
    benchmark: Option<&Benchmark>,
    points: usize,
) -> anyhow::Result<serde_json::Value> {
    let dataset = match (benchmark, &args.dataset) {
        (Some(benchmark), _) => benchmark.name.clone(),
        (None, Some(path)) => path.display().to_string(),
        (None, None) => "samples".to_string(),
    };
    let scored = sweep::accuracy::score_answers(&args.out, answers, benchmark, &dataset)?;
    let results = serde_json::to_string_pretty(&scored.results)?;
    let mut files = vec![args.out.join("accuracy/accuracy_results.json")];
    files.extend((1..=points).map(|n| {
        args.out.join(format!(
            "endpoints/point-{n}/accuracy/accuracy_results.json"
        ))
    }));
    for file in &files {
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::write(file, &results)
            .with_context(|| format!("cannot write {}", file.display()))?;
    }
    let answered = answers.answers.iter().flatten().count();
    print!(
        "accuracy: {answered} of {} samples answered",
        answers.answers.len()
    );
    // A verdict only for the whole data set answered: a score of some samples is a look.
    let complete = answered == answers.data_set;
    let passes = scored
        .score
        .as_ref()
        .map(|score| score.passes())
        .filter(|_| complete);
    let headline = |score: &Score| {
        score
            .report()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    match (&scored.score, passes) {
        (Some(score), Some(passes)) => println!(
            ", {} ({})",
            headline(score),
            if passes { "PASS" } else { "FAIL" }
        ),
        (Some(score), None) => println!(
            ", {} (no verdict: {} of the data set's {} samples)",
            headline(score),
            answered,
            answers.data_set
        ),
        (None, _) => println!(", not scored (no benchmark data set with an accuracy metric)"),
    }
    if answers.failed + answers.abandoned > 0 {
        println!(
            "    {} failed, {} never ended: the accuracy pass is incomplete",
            answers.failed, answers.abandoned
        );
    }
    println!("wrote {} and {}", scored.log.display(), files[0].display());
    Ok(serde_json::json!({
        "samples": answers.answers.len(),
        "answered": answered,
        "failed": answers.failed,
        "never_ended": answers.abandoned,
        "data_set": answers.data_set,
        "score": scored.score.as_ref().map(headline),
        "passes": passes,
    }))
}

/// `ttft=500,tpot=50,e2e=10000` (milliseconds) into an [`Slo`].
fn parse_slo(text: &str) -> Result<Slo, String> {
    let mut slo = Slo::default();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| format!("--slo {text:?}: expected key=ms, got {part:?}"))?;
        let ms: f64 = value
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v > 0.0)
            .ok_or_else(|| format!("--slo {key}: {value:?} is not a positive number of ms"))?;
        let bound = Some(ms * 1e6);
        match key.trim() {
            "ttft" => slo.ttft_ns = bound,
            "tpot" => slo.tpot_ns = bound,
            "e2e" => slo.e2e_ns = bound,
            other => return Err(format!("--slo: unknown key {other:?} (ttft, tpot or e2e)")),
        }
    }
    Ok(slo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slos_parse_in_milliseconds_and_bad_ones_are_named() {
        let slo = parse_slo("ttft=500, e2e=2000").unwrap();
        assert_eq!(slo.ttft_ns, Some(500e6));
        assert_eq!(slo.e2e_ns, Some(2000e6));
        assert_eq!(slo.tpot_ns, None);
        assert!(parse_slo("itl=5")
            .unwrap_err()
            .contains("unknown key \"itl\""));
        assert!(parse_slo("ttft=-1").unwrap_err().contains("--slo ttft"));
        assert!(parse_slo("ttft").unwrap_err().contains("expected key=ms"));
    }
}
