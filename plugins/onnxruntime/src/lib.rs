//! An ONNX Runtime backend for mlperf-host: runs an .onnx model on the host's samples and
//! answers each with its row of one output. ONNX Runtime is loaded at run time from `library`
//! (or ORT_DYLIB_PATH); `config.rs` lists the settings. Samples are checked against the model
//! input in issue_query, run inline or by worker threads with dynamic batching
//! (`batching/`), and completed in one host call per batch with the output's raw bytes
//! (little-endian on the little-endian machines ONNX Runtime runs on).

mod attributes;
mod batching;
mod config;
mod runtime;
mod session;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mlperf_plugin_api::ffi::{
    CAP_ASYNC_COMPLETION, CAP_CONCURRENT_ISSUE, CAP_NATIVE_BATCHING, CAP_NEEDS_SAMPLE_DATA,
    CAP_SAMPLE_TIMING,
};
use mlperf_plugin_api::sdk::{
    Completer, Device, DeviceKind, Host, Level, PluginError, Sample, SutPlugin,
};

pub use config::{Config, Provider};

use batching::inline::Inline;
use batching::item::check_all;
use batching::workers::Workers;
use batching::Failure;
use session::engine::{open_session, Engine};
use session::model::{InputSpec, Io, ModelFile};

pub struct OnnxRuntimePlugin {
    input: InputSpec,
    mode: Mode,
    failure: Arc<Failure>,
    attributes: Vec<(String, String)>,
}

enum Mode {
    Inline(Box<Inline>),
    /// Dropped with the plugin, which runs what is queued and joins the threads.
    Workers(Workers),
}

impl SutPlugin for OnnxRuntimePlugin {
    fn devices(text: &str) -> Result<Vec<Device>, PluginError> {
        let config = Config::parse(text)?;
        Ok(config
            .listed_devices()
            .into_iter()
            .map(|(ordinal, gpu)| Device {
                ordinal,
                kind: if gpu {
                    DeviceKind::Gpu
                } else {
                    DeviceKind::Cpu
                },
                name: format!("{}:{ordinal}", config.provider),
                id: None,
                memory_bytes: 0,
            })
            .collect())
    }

    fn create(text: &str, host: &Host) -> Result<Self, PluginError> {
        let mut config = Config::parse(text)?;
        // An instance of one device of several: a GPU's is its device_id.
        if let Some(device) = host.run().and_then(|run| run.device.as_ref()) {
            if matches!(config.provider, Provider::Cuda | Provider::Tensorrt) {
                config.device_id = device.ordinal;
            }
        }
        let model = ModelFile::read(config.model_path())?;
        let library = runtime::library_path(
            config.library.as_deref(),
            std::env::var_os(runtime::LIBRARY_ENV),
            Path::new(".venv"),
        )?;
        let runtime = runtime::load(&library)?;
        let first = open_session(&runtime, &config)?;
        let io = Io::of(
            &first,
            config.model_path(),
            config.input.as_deref(),
            &config.stacked_inputs,
            config.output.as_deref(),
            &config.outputs,
            &config.stacked_outputs,
        )?;
        check_named_inputs(host, &io.input)?;
        let max_batch = if io.input.batch_of_one {
            1
        } else {
            config.max_batch
        };
        let failure = Arc::new(Failure::new(host.completer()));
        let engine = |session| -> Result<Engine, PluginError> {
            let mut engine = Engine::new(session, &io)?;
            let started = Instant::now();
            let (level, message) = match engine.warm_up(max_batch) {
                Ok(true) => (
                    Level::Debug,
                    format!(
                        "onnxruntime plugin: warmed up a session with a batch of {max_batch} \
                         zero sample(s) in {:.1} ms",
                        started.elapsed().as_secs_f64() * 1e3
                    ),
                ),
                Ok(false) => (
                    Level::Debug,
                    "onnxruntime plugin: no warm-up (the model's sample shape is dynamic)".into(),
                ),
                Err(e) => (
                    Level::Warn,
                    format!("onnxruntime plugin: the warm-up batch failed: {e}"),
                ),
            };
            host.logger().log(level, &message);
            Ok(engine)
        };
        let mode = if config.workers == 0 {
            Mode::Inline(Box::new(Inline::new(
                engine(first)?,
                max_batch,
                host.logger(),
            )))
        } else {
            let mut engines = vec![engine(first)?];
            for _ in 1..config.workers {
                engines.push(engine(open_session(&runtime, &config)?)?);
            }
            Mode::Workers(Workers::start(
                engines,
                max_batch,
                Duration::from_micros(config.max_wait_us),
                host.completer(),
                Arc::clone(&failure),
                host.logger(),
                pinned_cores(&config, host),
            )?)
        };
        let attributes = attributes::attributes(&attributes::Facts {
            config: &config,
            runtime: &runtime,
            model: &model,
            io: &io,
            max_batch,
        });
        host.logger().log(
            Level::Info,
            &format!(
                "onnxruntime plugin: {} (input {}, output {}, {}) on {} with ONNX Runtime {} from \
                 {}; {} worker(s), max_batch {max_batch}, max_wait_us {}, {} intra-op / {} \
                 inter-op thread(s) per session",
                model.path.display(),
                io.describe_input(),
                io.describe_output(),
                io.precision(&model),
                config.device(),
                runtime.version,
                runtime.path.display(),
                config.workers,
                config.max_wait_us,
                config.intra_op_threads,
                config.inter_op_threads,
            ),
        );
        Ok(OnnxRuntimePlugin {
            input: io.input,
            mode,
            failure,
            attributes,
        })
    }

    fn issue_query(
        &self,
        samples: &[Sample<'_>],
        completer: &Completer,
    ) -> Result<(), PluginError> {
        self.failure.check()?;
        match &self.mode {
            Mode::Inline(inline) => inline.issue(samples, &self.input, completer, &self.failure),
            Mode::Workers(workers) => {
                // Every sample is checked before any is queued: an error refuses the query.
                let runs =
                    check_all(samples, &self.input).map_err(PluginError::invalid_argument)?;
                workers.submit(samples, &runs);
                Ok(())
            }
        }
    }

    fn flush_queries(&self) -> Result<(), PluginError> {
        if let Mode::Workers(workers) = &self.mode {
            workers.flush();
        }
        self.failure.check()
    }

    fn attributes(&self) -> Vec<(String, String)> {
        self.attributes.clone()
    }
}

/// A run of named inputs (ABI 1.3, `--input-names`) must name the model inputs the plugin
/// feeds, in the order their rows lie: a data set stacked in another order would feed each
/// row to the wrong input.
fn check_named_inputs(host: &Host, input: &InputSpec) -> Result<(), PluginError> {
    let Some(run) = host.run() else {
        return Ok(());
    };
    let named: Vec<&str> = run.inputs.iter().map(|input| input.name.as_str()).collect();
    if named.is_empty() || named == input.names_in_row_order() {
        return Ok(());
    }
    Err(PluginError::invalid_config(format!(
        "onnxruntime plugin: the samples' named inputs [{}] are not the {} in the order their \
         rows lie",
        named.join(", "),
        input.label()
    )))
}

/// A CPU instance of several (`devices`, ABI 1.4): the cores its workers keep to.
fn pinned_cores(config: &Config, host: &Host) -> Option<Vec<usize>> {
    let run = host.run()?;
    run.device.as_ref()?;
    if config.provider != Provider::Cpu || run.instance_count < 2 {
        return None;
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let pinned = batching::pinning::cores_of(run.instance_index, run.instance_count, cores);
    host.logger().log(
        Level::Info,
        &format!(
            "onnxruntime plugin: CPU instance {} of {}: workers kept to cores {pinned:?}",
            run.instance_index, run.instance_count
        ),
    );
    Some(pinned)
}

mlperf_plugin_api::export_plugin!(
    OnnxRuntimePlugin,
    name = "onnxruntime",
    version = env!("CARGO_PKG_VERSION"),
    capabilities = CAP_ASYNC_COMPLETION
        | CAP_CONCURRENT_ISSUE
        | CAP_NATIVE_BATCHING
        | CAP_NEEDS_SAMPLE_DATA
        | CAP_SAMPLE_TIMING,
);
