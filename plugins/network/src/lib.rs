//! A network backend for mlperf-host: the Query Dispatch Library of MLPerf's network
//! division. Each query's samples go to KServe v2 / Open Inference Protocol servers (Triton,
//! MLServer, OpenVINO Model Server, KServe) over HTTP/REST or gRPC, and each answer's output
//! row completes its sample; or, with `protocol = "openai"`, each sample's prompt goes to an
//! LLM server's OpenAI API and its streamed tokens answer it (first token, then the text and
//! token count). The host's timing includes the network. `config.rs` lists the settings.
//! Before the run every endpoint is checked (live, ready, model ready, metadata; or the model
//! listed); during it a request that fails or times out fails the run at once, naming its
//! endpoint.

mod config;
mod dispatch;
mod health;
mod model;
mod openai_sut;
mod prompt_layout;
mod protocol;
mod sessions;
mod tensor;

/// The protocol's gRPC messages and client, compiled from proto/kserve_v2.proto.
pub mod kserve {
    tonic::include_proto!("inference");
}

use mlperf_plugin_api::ffi::{
    CAP_ASYNC_COMPLETION, CAP_CONCURRENT_ISSUE, CAP_NEEDS_SAMPLE_DATA, CAP_TOKENS,
};
use mlperf_plugin_api::sdk::{Completer, DType, Host, Level, PluginError, Sample, SutPlugin};

pub use config::{Api, Balance, Config, PromptFormat, Protocol};

use dispatch::{Dispatcher, Job, Node, Settings, Work};
use model::Io;
use protocol::Client;

/// The SUT name: the network division asks for "Network SUT" in it.
pub const SUT_NAME: &str = "Network SUT";

pub struct NetworkPlugin {
    mode: Mode,
    dispatcher: Dispatcher,
    attributes: Vec<(String, String)>,
}

enum Mode {
    /// KServe v2: samples are tensors, sent in requests of up to `max_batch`.
    Kserve { io: Io, max_batch: usize },
    /// OpenAI: each sample is a prompt, one request each.
    OpenAi {
        prompt: PromptFormat,
        /// The prompt input's type, when the run names inputs.
        prompt_dtype: Option<DType>,
    },
}

impl SutPlugin for NetworkPlugin {
    fn create(text: &str, host: &Host) -> Result<Self, PluginError> {
        let config = Config::parse(text)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(config.threads)
            .thread_name("mlperf-network")
            .enable_all()
            .build()
            .map_err(|e| PluginError::internal(format!("network plugin: tokio runtime: {e}")))?;
        let mut nodes = Vec::with_capacity(config.endpoints.len());
        for endpoint in &config.endpoints {
            // The runtime is entered because gRPC channels start their connection task there.
            let _entered = runtime.enter();
            let client = Client::new(&config, endpoint)
                .map_err(|e| config::invalid(format!("endpoints: {e}")))?;
            nodes.push(Node::new(endpoint.clone(), client));
        }
        if config.protocol == Protocol::OpenAi {
            return openai_sut::create(config, runtime, nodes, host);
        }
        if host.run().is_some_and(|run| run.token_latencies) {
            return Err(config::invalid(
                "a token run needs protocol = \"openai\": KServe answers carry no tokens",
            ));
        }
        let checked = runtime
            .block_on(health::check_nodes(&config, &nodes))
            .map_err(|e| PluginError::device(format!("network plugin: {e}")))?;
        let attributes = attributes(&config, &checked);
        host.logger().log(
            Level::Info,
            &format!(
                "network plugin: model {:?} ({}, input {}, output {}: {}) on {} over {}; {} \
                 balancing, {} request(s) in flight per endpoint, up to {} sample(s) per \
                 request, timeout {} ms",
                config.model_name(),
                checked.platform,
                checked.io.describe_input(),
                checked.io.target.output,
                checked.io.target.output_datatype.name(),
                config.endpoints.join(", "),
                protocol_name(&config),
                config.balance,
                config.concurrency,
                config.max_batch,
                config.timeout_ms,
            ),
        );
        let settings = Settings {
            job: Job::Infer(checked.io.target.clone()),
            timeout: config.timeout(),
            balance: config.balance,
            concurrency: config.concurrency,
        };
        let dispatcher =
            Dispatcher::start(runtime, nodes, settings, host.completer(), host.logger());
        Ok(NetworkPlugin {
            mode: Mode::Kserve {
                io: checked.io,
                max_batch: config.max_batch,
            },
            dispatcher,
            attributes,
        })
    }

    fn issue_query(
        &self,
        samples: &[Sample<'_>],
        _completer: &Completer,
    ) -> Result<(), PluginError> {
        self.dispatcher.check()?;
        let (io, max_batch) = match &self.mode {
            Mode::Kserve { io, max_batch } => (io, *max_batch),
            Mode::OpenAi {
                prompt,
                prompt_dtype,
            } => {
                openai_sut::check_prompts(samples, *prompt, *prompt_dtype)?;
                for sample in samples {
                    let work = Work::new(std::slice::from_ref(sample), Vec::new());
                    self.dispatcher.send(work);
                }
                return Ok(());
            }
        };
        // Every sample is checked before any is sent: an error refuses the whole query.
        let layout = io
            .check_samples(samples)
            .map_err(|e| PluginError::invalid_argument(format!("network plugin: {e}")))?;
        let per_request = if layout.batched { max_batch } else { 1 };
        for chunk in samples.chunks(per_request) {
            let work = Work::new(chunk, layout.request_shape(chunk.len()));
            self.dispatcher.send(work);
        }
        Ok(())
    }

    fn flush_queries(&self) -> Result<(), PluginError> {
        self.dispatcher.check()
    }

    fn attributes(&self) -> Vec<(String, String)> {
        self.attributes.clone()
    }
}

pub(crate) fn protocol_name(config: &Config) -> &'static str {
    match (config.protocol, config.binary) {
        (Protocol::OpenAi, _) => "OpenAI API",
        (Protocol::Grpc, _) => "KServe v2 gRPC",
        (Protocol::Http, false) => "KServe v2 HTTP/REST (JSON)",
        (Protocol::Http, true) => "KServe v2 HTTP/REST (binary tensors)",
    }
}

fn attributes(config: &Config, checked: &health::Checked) -> Vec<(String, String)> {
    let io = &checked.io;
    let mut servers = checked.servers.clone();
    servers.dedup();
    [
        ("vendor", "KServe v2 / Open Inference Protocol".to_owned()),
        ("network_protocol", protocol_name(config).to_owned()),
        ("network_nodes", config.endpoints.join(",")),
        ("server", servers.join(", ")),
        ("model", config.model_name().to_owned()),
        ("model_version", config.model_version.clone()),
        ("model_platform", checked.platform.clone()),
        ("precision", io.target.input_datatype.name().to_lowercase()),
        ("input", io.describe_input()),
        (
            "output",
            format!("{}: {}", io.target.output, io.target.output_datatype.name()),
        ),
        ("balance", config.balance.to_string()),
        ("concurrency", config.concurrency.to_string()),
        ("max_batch", config.max_batch.to_string()),
        ("timeout_ms", config.timeout_ms.to_string()),
        ("plugin", format!("network {}", env!("CARGO_PKG_VERSION"))),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect()
}

mlperf_plugin_api::export_plugin!(
    NetworkPlugin,
    name = "Network SUT",
    version = env!("CARGO_PKG_VERSION"),
    capabilities = CAP_ASYNC_COMPLETION | CAP_CONCURRENT_ISSUE | CAP_NEEDS_SAMPLE_DATA | CAP_TOKENS,
);
