//! What a run will do, settled before anything runs. The command line builds a plan from its
//! flags (refusing, with the flag's name, what cannot work); [`super::Session`] carries it out.

use std::path::PathBuf;
use std::time::Duration;

use mlperf_loadgen::{AbandonHook, TestSettings};

use crate::benchmark::{Benchmark, DatasetFormat, PreprocessLimits};
use crate::official::engine::TestSettings as OfficialSettings;

/// One run: a LoadGen test, with a ranging run before it when a power analyzer needs one.
pub struct RunPlan {
    /// The model the config files were read for: a submission files the run under it.
    pub model: String,
    /// Whether the model was asked for (`--model`, or a benchmark's name). A run that names
    /// none reads the config files as the default model's but is not labelled with it: its
    /// logs, report and tuned user.conf name no model.
    pub model_named: bool,
    /// Scores the accuracy log of an accuracy run.
    pub benchmark: Option<Benchmark>,
    /// The test's settings, config files and overrides applied.
    pub settings: TestSettings,
    pub engine: EnginePlan,
    /// A compliance audit.config, checked to parse.
    pub audit_config: Option<PathBuf>,
    pub plugin: PluginPlan,
    pub samples: SamplePlan,
    /// `--power` meter specs; empty for none.
    pub power: Vec<String>,
    /// The LoadGen logs' directory (`ranging/` inside it for a ranging run).
    pub out: PathBuf,
    /// Where result.json (and the official engine's provenance file) go: `out`, except in a
    /// compliance test, whose run folder may hold only LoadGen's files.
    pub results_dir: PathBuf,
    pub log: LogOptions,
    /// Called when a test is given up because a call into an in-process plugin outlasted
    /// `log.stall_timeout`, its logs written (see `TestContext::on_abandoned`): the command
    /// line ends the process there. Without one the session waits for the call.
    pub on_abandoned: Option<AbandonHook>,
}

/// Which LoadGen runs the test.
pub enum EnginePlan {
    Native,
    /// The official LoadGen, with its own settings object (the same values).
    Official(Box<OfficialSettings>),
}

/// The backend plugin and its configuration.
pub struct PluginPlan {
    /// A plugin library path or name.
    pub spec: String,
    /// The configuration (TOML text) its instances are created with.
    pub config: String,
    /// What a failure to start it is reported as, when the user did not name it.
    pub context: Option<String>,
    /// Run it in a process of its own (`--isolate process`).
    pub isolation: Option<crate::plugin::isolated::Isolation>,
    /// The named outputs a response's logged bytes are made of; empty: its data.
    pub logged_outputs: Vec<String>,
    /// The benchmark's post-processing of each response, done by the host.
    pub postprocess: Option<crate::benchmark::postprocess::ResponseTransform>,
    /// Batches the host makes for a plugin that does not batch itself.
    pub batching: crate::plugin::HostBatching,
    /// Hand the plugin a host table as a host of ABI 1.2 would (`plugins test`).
    pub as_host_of_1_2: bool,
    /// Hand it a run description as a host of ABI 1.3 would (`plugins test`): no device.
    pub as_host_of_1_3: bool,
    /// One instance per device of these (ABI 1.4), the queries spread over them; None: one
    /// instance.
    pub devices: Option<crate::plugin::DeviceSelection>,
    /// Where the loaded samples live when the plugin offers memory for them.
    pub sample_memory: SamplePlacement,
}

impl PluginPlan {
    /// The plugin `spec` with `config`, in this process, one instance, everything else as a
    /// plain run has it.
    pub fn new(spec: String, config: String) -> PluginPlan {
        PluginPlan {
            spec,
            config,
            context: None,
            isolation: None,
            logged_outputs: Vec::new(),
            postprocess: None,
            batching: Default::default(),
            as_host_of_1_2: false,
            as_host_of_1_3: false,
            devices: None,
            sample_memory: SamplePlacement::Plugin,
        }
    }
}

/// The sample library.
pub enum SamplePlan {
    /// Samples that carry only their index.
    Indices { total: usize, performance: usize },
    /// A data set file read into the sample arena at load time.
    Dataset {
        path: PathBuf,
        /// Samples that fit in memory; all of them when `None`.
        performance: Option<usize>,
        preprocess: Option<PreprocessPlan>,
        /// Each sample stacks one row per named input along its first axis; empty: a
        /// sample is one tensor.
        input_names: Vec<String>,
        /// Named inputs kept in a file each (`--dataset-input`), instead of `path` (then the
        /// first of them, for messages).
        input_files: Vec<(String, PathBuf)>,
        /// The sha256 the data set must have (a benchmark definition's pin).
        expected_sha256: Option<String>,
        /// How `path` holds the samples (a `.npy` file, or a data set's folder).
        format: DatasetFormat,
        /// A folder's first `count` samples only (the reference's `--count`).
        count: Option<usize>,
    },
}

/// A WebAssembly module preprocessing every sample of the data set.
pub struct PreprocessPlan {
    pub module: PathBuf,
    /// Run on each issued sample, inside the timed path, instead of at load.
    pub timed: bool,
    pub limits: PreprocessLimits,
}

/// When the host notes each sample's hand-over to the plugin and takes the plugin's timing
/// reports (ABI 1.4), to divide the run's latencies (`--sample-timing`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SampleTiming {
    /// For a plugin that reports timing (MLPERF_CAP_SAMPLE_TIMING), or a run that writes a
    /// trace.
    #[default]
    Auto,
    /// Always (a plugin without the capability gets the host's part only).
    On,
    /// Never: no timestamp is taken beyond LoadGen's own.
    Off,
}

impl SamplePlan {
    /// Every sample of the `.npy` file at `path`, as it is (no preprocessing, no names).
    pub fn dataset(path: PathBuf) -> SamplePlan {
        SamplePlan::Dataset {
            path,
            performance: None,
            preprocess: None,
            input_names: Vec::new(),
            input_files: Vec::new(),
            expected_sha256: None,
            format: DatasetFormat::Npy,
            count: None,
        }
    }
}

impl SampleTiming {
    /// On for a plugin of `capabilities` in a run that writes a trace or not.
    pub fn is_on(self, capabilities: u64, trace: bool) -> bool {
        match self {
            SampleTiming::Auto => {
                trace || capabilities & mlperf_plugin_api::ffi::CAP_SAMPLE_TIMING != 0
            }
            SampleTiming::On => true,
            SampleTiming::Off => false,
        }
    }
}

/// Where the loaded samples live when the plugin offers memory for them (ABI 1.4's
/// allocate_samples; `--sample-memory`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SamplePlacement {
    /// In the plugin's memory, when it offers some (pinned host or device memory).
    #[default]
    Plugin,
    /// In the host's memory always: the plugin is never asked (to compare the two).
    Host,
}

/// How the engine logs and paces the test.
#[derive(Clone, Copy)]
pub struct LogOptions {
    /// Also write mlperf_log_trace.json.
    pub trace: bool,
    /// Whether the run divides its latencies (result.json's `latency_breakdown`).
    pub sample_timing: SampleTiming,
    /// Give up on samples that never complete after this long without progress.
    pub drain_timeout: Duration,
    /// How long before each scheduled issue the issuing thread busy-waits.
    pub issue_spin: Duration,
    /// How long a call into the plugin (`issue_query`, `flush_queries`, `destroy`) may take
    /// before the run goes on without it.
    pub stall_timeout: Duration,
}
