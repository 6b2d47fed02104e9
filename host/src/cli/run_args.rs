//! The arguments of `mlperf-host run` (and of `audit`, which runs a test the same way): what
//! the command line says, before anything is opened or checked.

use std::path::PathBuf;
use std::time::Duration;

use clap::ValueEnum;
use mlperf_host::loadgen::{TestMode, TestScenario};
use mlperf_host::session::{SamplePlacement, SampleTiming};

use super::plugin_flags::IsolateArg;
use super::set::{self, Override};

/// Where a run's logs go without `--out`.
pub(crate) const DEFAULT_OUT: &str = "mlperf-logs";

/// The LoadGen that runs the test.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum EngineArg {
    /// mlperf-host's own LoadGen, bit-exact with the official 6.0.17.
    #[default]
    Native,
    /// The official LoadGen 6.0.17 C++ library, compiled unaltered (for submission runs).
    Official,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScenarioArg {
    #[value(name = "SingleStream")]
    SingleStream,
    #[value(name = "MultiStream")]
    MultiStream,
    #[value(name = "Server")]
    Server,
    #[value(name = "Offline")]
    Offline,
    /// A Server run of an LLM benchmark under the round's Interactive token bounds: the
    /// config files are read for `<model>-interactive`, as the references run it.
    #[value(name = "Interactive")]
    Interactive,
}

impl From<ScenarioArg> for TestScenario {
    fn from(arg: ScenarioArg) -> TestScenario {
        match arg {
            ScenarioArg::SingleStream => TestScenario::SingleStream,
            ScenarioArg::MultiStream => TestScenario::MultiStream,
            ScenarioArg::Server | ScenarioArg::Interactive => TestScenario::Server,
            ScenarioArg::Offline => TestScenario::Offline,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    #[value(name = "SubmissionRun", alias = "submission")]
    SubmissionRun,
    #[value(name = "AccuracyOnly", alias = "accuracy")]
    AccuracyOnly,
    #[value(name = "PerformanceOnly", alias = "performance")]
    PerformanceOnly,
    #[value(name = "FindPeakPerformance", alias = "findpeak", alias = "find-peak")]
    FindPeakPerformance,
}

impl From<ModeArg> for TestMode {
    fn from(arg: ModeArg) -> TestMode {
        match arg {
            ModeArg::SubmissionRun => TestMode::SubmissionRun,
            ModeArg::AccuracyOnly => TestMode::AccuracyOnly,
            ModeArg::PerformanceOnly => TestMode::PerformanceOnly,
            ModeArg::FindPeakPerformance => TestMode::FindPeakPerformance,
        }
    }
}

/// `mlperf-host run`.
#[derive(clap::Args, Clone, Debug)]
#[command(after_help = "\
Settings are applied in this order: TestSettings defaults, mlperf.conf (embedded v6.1 rules \
unless --mlperf-conf), the benchmark's [settings], user.conf, --scenario/--mode/--tokens, --set, \
audit.config.

Exit status: 0 when the test completes (VALID or INVALID, as the official LoadGen), 1 on an \
error, 2 on a usage error, 3 when --require-valid and the result is INVALID.

Environment: MLPERF_HOST_LOG=<filter> (e.g. debug, mlperf_host=trace) replaces the level \
-v/--quiet choose.")]
pub(crate) struct RunArgs {
    /// The scenario (case-insensitive).
    #[arg(long, value_enum, ignore_case = true, default_value = "SingleStream")]
    pub scenario: ScenarioArg,
    /// The LoadGen that runs the test: native (mlperf-host's own) or official (the official
    /// LoadGen 6.0.17 C++ library, compiled unaltered: the logs a submission needs).
    #[arg(long, value_enum, ignore_case = true, default_value = "native")]
    pub engine: EngineArg,
    /// The test mode (case-insensitive; also submission, accuracy, performance, findpeak).
    /// [default: the config's `mode`, else PerformanceOnly]
    #[arg(long, value_enum, ignore_case = true)]
    pub mode: Option<ModeArg>,
    /// A benchmark (a name in configs/benchmarks/, or a .toml path): its data set, backend
    /// plugin and configuration, settings, and accuracy metric (an accuracy run writes
    /// accuracy.txt). The other flags override it.
    #[arg(long, value_name = "NAME|FILE")]
    pub benchmark: Option<String>,
    /// The model name the config files are looked up with (`model.scenario.key`), logged as
    /// the run's model. [default: the benchmark's name, else the lookup is resnet50's and the
    /// run names no model]
    #[arg(long)]
    pub model: Option<String>,
    /// The rules file to apply instead of the embedded v6.1 mlperf.conf.
    #[arg(long, value_name = "PATH")]
    pub mlperf_conf: Option<PathBuf>,
    /// The submitter's user.conf.
    #[arg(long, value_name = "PATH")]
    pub user_conf: Option<PathBuf>,
    /// A compliance audit.config (applied with model `*`). Default: none (the official LoadGen
    /// reads ./audit.config when it exists: pass `--audit-conf audit.config` for that).
    #[arg(long, value_name = "PATH")]
    pub audit_conf: Option<PathBuf>,
    /// The round a submission of this run is held to (a name in configs/rounds/ or a path):
    /// a warning names each seed of the run that is not the round's. [default: v6.1]
    #[arg(long, value_name = "ROUND")]
    pub round: Option<String>,
    /// Override a TestSettings field after the config files, in the field's own units (e.g.
    /// min_duration_ms=0, server_target_qps=100, print_timestamps=1). Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = set::parse_override)]
    pub set: Vec<Override>,
    /// The directory for the logs (created if missing): mlperf_log_summary.txt,
    /// mlperf_log_detail.txt, mlperf_log_accuracy.json, result.json.
    #[arg(long, value_name = "DIR", default_value = DEFAULT_OUT)]
    pub out: PathBuf,
    /// Also write mlperf_log_trace.json (two events per sample).
    #[arg(long)]
    pub trace: bool,
    /// Also write report.html beside the logs (`mlperf-host report`; writes the trace too).
    #[arg(long)]
    pub report: bool,
    /// Divide each latency into LoadGen's issue, the host's part, and the plugin's queue,
    /// compute and completion (result.json's latency_breakdown, the trace and the report).
    /// auto: for a plugin that reports its timing, or with --trace/--report.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub sample_timing: SampleTiming,
    /// Where the loaded samples live: in memory the plugin offers (pinned host or its device's,
    /// ABI 1.4), or always in the host's (to compare the two).
    #[arg(long, value_enum, value_name = "WHERE", default_value = "plugin")]
    pub sample_memory: SamplePlacement,
    /// Print no summary; log errors only.
    #[arg(long, short)]
    pub quiet: bool,
    /// More log output on stderr (-v info, -vv debug, -vvv trace).
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Exit with status 3 when the result (or, with --power, the power result) is INVALID.
    #[arg(long)]
    pub require_valid: bool,
    /// Measure power over the run with this meter: sim:WATTS or sim:FILE (simulated),
    /// ptd://HOST:PORT (SPEC PTDaemon: a ranging run, then the testing run), nvml[:INDEX],
    /// rapl, hwmon[:CHIP], plugin:PATH|NAME. Repeatable: a wall meter beside component meters.
    #[arg(long, value_name = "SOURCE")]
    pub power: Vec<String>,
    /// Give up on samples that never complete after this long without progress (seconds, or a
    /// duration with a unit).
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = super::parse_seconds)]
    pub drain_timeout: Duration,
    /// How long a call into the plugin (issue_query, flush_queries, destroy) may take: past it
    /// the run ends INVALID with every file written and the command exits 1 without waiting
    /// for the call (seconds, or a duration with a unit).
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = super::parse_positive_seconds)]
    pub stall_timeout: Duration,
    /// How long before each scheduled issue the issuing thread busy-waits instead of sleeping
    /// (µs precision). 0 sleeps to the time, as the official LoadGen does, leaving the core to
    /// a SUT that shares this machine (a local inference server).
    #[arg(long, value_name = "DURATION", default_value = "200us", value_parser = super::parse_seconds)]
    pub issue_spin: Duration,

    /// Run the plugin in a child process (`process`), so that its crash, `exit()` or hang
    /// ends the run INVALID with every log written, instead of ending the host (its timed
    /// preprocessing runs there too); `--power plugin:` meters get a process each, whose
    /// failure fails only the power result. Recommended for new or untrusted plugins.
    #[arg(long, value_enum, default_value = "none", help_heading = "Plugin")]
    pub isolate: IsolateArg,

    /// The backend: a plugin library path or a plugin folder (holding its plugin.toml), or a
    /// plugin name found through MLPERF_HOST_PLUGIN_PATH, the standard plugin directories and
    /// beside this executable. An existing file or plugin folder comes before a name.
    /// [default: null, configured by --latency and --tokens]
    #[arg(long, value_name = "PATH|NAME", help_heading = "Plugin")]
    pub plugin: Option<String>,
    /// The plugin's configuration (TOML).
    #[arg(long, value_name = "FILE.toml", help_heading = "Plugin")]
    pub plugin_config: Option<PathBuf>,
    /// Set one plugin configuration key (dotted keys reach into tables). Repeatable.
    #[arg(long = "plugin-set", value_name = "KEY=VALUE", value_parser = super::plugin_flags::parse_plugin_set, help_heading = "Plugin")]
    pub plugin_set: Vec<(String, String)>,

    /// The data set: a .npy file whose first axis counts samples. Loaded samples reach the
    /// backend in place. Without it, samples carry only their index.
    #[arg(long, value_name = "FILE.npy", help_heading = "Samples")]
    pub dataset: Option<PathBuf>,
    /// A benchmark's data set folder, as the submitter has it (ImageNet: val_map.txt and its
    /// JPEGs, or the reference's preprocessed cache of them) [default: the definition's].
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with = "dataset",
        help_heading = "Samples"
    )]
    pub dataset_dir: Option<PathBuf>,
    /// The benchmark's model file (e.g. the real resnet50_v1.onnx) [default: the
    /// definition's].
    #[arg(long, value_name = "FILE", help_heading = "Plugin")]
    pub model_file: Option<PathBuf>,
    /// A WebAssembly module (guest ABI: wasm-preprocess/README.md) that preprocesses each
    /// sample of --dataset, sandboxed: untimed at load unless --preprocess-timed. `none` turns
    /// off a benchmark's module.
    #[arg(long, value_name = "FILE.wasm|none", help_heading = "Samples")]
    pub preprocess: Option<PathBuf>,
    /// Run the preprocessing on each issued sample, inside the timed path.
    #[arg(long, help_heading = "Samples")]
    pub preprocess_timed: bool,
    /// A named input kept in a .npy file of its own, whose first axis counts samples
    /// (repeatable, instead of --dataset): sample i is row i of every file, handed to the
    /// plugin as inputs of these names, each with its own element type and shape (ABI 1.3).
    #[arg(long = "dataset-input", value_name = "NAME=FILE.npy", value_parser = parse_dataset_input, conflicts_with_all = ["dataset", "input_names"], help_heading = "Samples")]
    pub dataset_inputs: Vec<(String, PathBuf)>,
    /// Named inputs: each sample of --dataset stacks one row per name along its first axis,
    /// handed to the plugin as inputs of these names (ABI 1.3). Comma-separated.
    #[arg(
        long,
        value_name = "NAME,...",
        value_delimiter = ',',
        help_heading = "Samples"
    )]
    pub input_names: Vec<String>,
    /// The named outputs the accuracy log records for each response, in this order (ABI 1.3;
    /// a plugin names them in its responses). Comma-separated. [default: the response's data]
    #[arg(
        long,
        value_name = "NAME,...",
        value_delimiter = ',',
        help_heading = "Plugin"
    )]
    pub logged_outputs: Vec<String>,
    /// The plugin answers each sample as the benchmark's reference logs it (ResNet-50: the
    /// class minus one, float32): the host passes its bytes through instead of applying the
    /// benchmark's [postprocess].
    #[arg(long, help_heading = "Plugin")]
    pub plugin_postprocesses: bool,
    /// Batch for a plugin that does not batch itself (no NATIVE_BATCHING): at most N samples
    /// per issue_query call; larger queries go over in several calls, and Server's queries
    /// are gathered into calls of up to N. [default: every query whole, as issued]
    #[arg(long, value_name = "N", help_heading = "Plugin")]
    pub plugin_batch: Option<usize>,
    /// Server with --plugin-batch: how long the first query of a call waits for more (the
    /// wait counts in its latency).
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = super::parse_seconds, help_heading = "Plugin")]
    pub plugin_batch_wait: Duration,
    /// One instance per device the plugin lists (ABI 1.4), the queries spread over them:
    /// `all`, a count (`2`: the first two), ordinals (`0,2`) or one ordinal (`device=2`).
    /// [default: one instance]
    #[arg(long, value_name = "all|N|I,J", help_heading = "Plugin")]
    pub devices: Option<mlperf_host::plugin::DeviceSelection>,
    /// Samples in a library without --dataset [default: 1024]; with a data set folder, its
    /// list's first N (the reference's --count).
    #[arg(long, value_name = "N", help_heading = "Samples")]
    pub total_samples: Option<usize>,
    /// Samples that fit in memory [default: all].
    #[arg(long, value_name = "N", help_heading = "Samples")]
    pub performance_samples: Option<usize>,

    /// The default null plugin: time from issue to completion of each query (e.g. 250us,
    /// 1ms), from a worker thread; 0 completes inside issue_query.
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = super::parse_duration, help_heading = "Null plugin")]
    pub latency: Duration,
    /// A token run (sets use_token_latencies); the default null plugin reports the first
    /// token, then 2 + index % 7 tokens.
    #[arg(long, help_heading = "Null plugin")]
    pub tokens: bool,

    #[command(flatten)]
    pub tuning: TuneFlags,
}

/// How `tune` (and `run --tune`) searches.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct TuneFlags {
    /// run: first find the scenario's expected latency, expected QPS or highest VALID target
    /// QPS by trial runs (as `mlperf-host tune`, logs and user.conf in OUT/tune/), then run
    /// with it.
    #[arg(long, help_heading = "Tune")]
    pub tune: bool,
    /// The minimum duration of each measuring trial (seconds, or a duration with a unit).
    #[arg(long, value_name = "SECS", default_value = "2", value_parser = super::parse_seconds, help_heading = "Tune")]
    pub trial_duration: Duration,
    /// Server: the minimum query count of each trial (early stopping at the 99th percentile
    /// needs several hundred).
    #[arg(long, value_name = "N", default_value_t = 1000, help_heading = "Tune")]
    pub trial_queries: u64,
    /// Server: bisect until the VALID and INVALID rates are within this many percent.
    #[arg(
        long,
        value_name = "PERCENT",
        default_value_t = 5.0,
        help_heading = "Tune"
    )]
    pub precision: f64,
    /// Server: write a rate this many percent below the highest VALID one, so that the full
    /// run, many times longer than the trials, holds its bounds too (0: the highest itself).
    #[arg(
        long,
        value_name = "PERCENT",
        default_value_t = 10.0,
        help_heading = "Tune"
    )]
    pub margin: f64,
    /// The most trial runs in all.
    #[arg(long, value_name = "N", default_value_t = 16, help_heading = "Tune")]
    pub max_trials: usize,
}

impl TuneFlags {
    /// The options, refused when they cannot work.
    pub(crate) fn options(&self) -> anyhow::Result<mlperf_host::tune::TuneOptions> {
        if !(self.precision > 0.0 && self.precision < 100.0) {
            anyhow::bail!(
                "--precision {}: must be a percentage above 0 and below 100",
                self.precision
            );
        }
        if !(self.margin >= 0.0 && self.margin < 100.0) {
            anyhow::bail!(
                "--margin {}: must be a percentage from 0 to below 100",
                self.margin
            );
        }
        if self.trial_queries == 0 {
            anyhow::bail!("--trial-queries 0: a trial needs at least one query");
        }
        if self.max_trials < 2 {
            anyhow::bail!(
                "--max-trials {}: the search needs at least 2 trials",
                self.max_trials
            );
        }
        Ok(mlperf_host::tune::TuneOptions {
            trial_duration: self.trial_duration,
            trial_queries: self.trial_queries,
            precision: self.precision / 100.0,
            margin: self.margin / 100.0,
            max_trials: self.max_trials,
        })
    }
}

/// `NAME=FILE.npy` of `--dataset-input`.
fn parse_dataset_input(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((name, file)) if !name.is_empty() && !name.contains('\0') && !file.is_empty() => {
            Ok((name.to_string(), PathBuf::from(file)))
        }
        _ => Err(format!("expected NAME=FILE.npy, got {text:?}")),
    }
}
