//! The OpenAI side of the plugin: `create` once the endpoints are made (each must list the
//! model), the prompts a query's samples must hold, and the run's attributes.

use mlperf_plugin_api::sdk::{DType, Host, Level, PluginError, Sample};
use tokio::runtime::Runtime;

use mlperf_tokenizer::Tokenizer;

use crate::config::{invalid, Api, Config, PromptFormat};
use crate::dispatch::{Dispatcher, Job, Node, Settings};
use crate::prompt_layout::PromptLayout;
use crate::protocol::openai::Generate;
use crate::{health, protocol_name, Mode, NetworkPlugin};

/// The OpenAI path of `create`: the model listed by every endpoint, then the dispatcher.
pub(crate) fn create(
    config: Config,
    runtime: Runtime,
    nodes: Vec<Node>,
    host: &Host,
) -> Result<NetworkPlugin, PluginError> {
    // Read before any endpoint is asked: a bad file is a configuration error.
    let tokenizer = config
        .tokenizer
        .as_deref()
        .map(Tokenizer::from_file)
        .transpose()
        .map(|tokenizer| tokenizer.map(Box::new))
        .map_err(|e| invalid(format!("tokenizer: {e}")))?;
    runtime
        .block_on(health::check_openai_nodes(&config, &nodes))
        .map_err(|e| PluginError::device(format!("network plugin: {e}")))?;
    let generate = Generate {
        api: config.api,
        model: config.model_name().to_owned(),
        max_tokens: config.max_tokens,
        temperature: config.temperature,
        seed: config.seed,
        stream: config.stream,
        exact_output: config.exact_output,
        token_ids: tokenizer.is_some(),
        language: config.language.clone(),
        response_format: config.response_format.clone(),
    };
    let inputs = host.run().map_or(&[][..], |run| &run.inputs[..]);
    let layout = PromptLayout::of(inputs).map_err(|e| invalid(format!("network plugin: {e}")))?;
    let prompt_dtype = layout.prompt_dtype(DType::U8);
    if layout.has_sessions() && (config.api != Api::Chat || config.prompt != PromptFormat::Text) {
        return Err(invalid(
            "network plugin: conversation turns (inputs session and turn) need api = \"chat\" \
             and prompt = \"text\""
                .to_string(),
        ));
    }
    let named = !inputs.is_empty();
    host.logger().log(
        Level::Info,
        &format!(
            "network plugin: model {:?} on {} over {} {}; {} balancing, {} request(s) in flight \
             per endpoint, max_tokens {}, temperature {}, seed {}, prompts as {}, answers as {}, \
             timeout {} ms",
            config.model_name(),
            config.endpoints.join(", "),
            protocol_name(&config),
            config.api.path(),
            config.balance,
            config.concurrency,
            config.max_tokens,
            config.temperature,
            seed_text(config.seed),
            config.prompt.name(),
            answer_text(&config),
            config.timeout_ms,
        ),
    );
    let attributes = attributes(&config);
    let settings = Settings {
        job: Job::Generate {
            settings: generate,
            prompt: config.prompt,
            layout,
            tokenizer,
        },
        timeout: config.timeout(),
        balance: config.balance,
        concurrency: config.concurrency,
    };
    let dispatcher = Dispatcher::start(runtime, nodes, settings, host.completer(), host.logger());
    Ok(NetworkPlugin {
        mode: Mode::OpenAi {
            prompt: config.prompt,
            // With named inputs the prompt's own type is checked, once, here.
            prompt_dtype: named.then_some(prompt_dtype),
        },
        dispatcher,
        attributes,
    })
}

/// An OpenAI query's samples hold prompts: bytes of text, or int32 token ids.
pub(crate) fn check_prompts(
    samples: &[Sample<'_>],
    format: PromptFormat,
    prompt_dtype: Option<DType>,
) -> Result<(), PluginError> {
    let fits = |dtype: DType| match format {
        PromptFormat::Text => matches!(dtype, DType::U8 | DType::I8 | DType::Bytes),
        PromptFormat::TokenIds => dtype == DType::I32,
        PromptFormat::Audio => dtype == DType::F32,
    };
    let dtype = |s: &Sample<'_>| prompt_dtype.unwrap_or(s.dtype());
    match samples.iter().find(|s| !fits(dtype(s))) {
        None => Ok(()),
        Some(sample) => Err(PluginError::invalid_argument(format!(
            "network plugin: sample {} is {:?}, but prompt = \"{}\" takes {}",
            sample.index(),
            dtype(sample),
            format.name(),
            match format {
                PromptFormat::Text => "uint8 UTF-8 text",
                PromptFormat::TokenIds => "int32 token ids",
                PromptFormat::Audio => "float32 16 kHz audio",
            }
        ))),
    }
}

fn attributes(config: &Config) -> Vec<(String, String)> {
    [
        ("vendor", "OpenAI-compatible LLM server".to_owned()),
        (
            "network_protocol",
            format!("OpenAI API {}", config.api.path()),
        ),
        ("network_nodes", config.endpoints.join(",")),
        ("model", config.model_name().to_owned()),
        ("stream", config.stream.to_string()),
        ("max_tokens", config.max_tokens.to_string()),
        ("temperature", config.temperature.to_string()),
        ("seed", seed_text(config.seed)),
        ("prompt", config.prompt.name().to_owned()),
        ("answer", answer_text(config)),
        ("balance", config.balance.to_string()),
        ("concurrency", config.concurrency.to_string()),
        ("timeout_ms", config.timeout_ms.to_string()),
        ("plugin", format!("network {}", env!("CARGO_PKG_VERSION"))),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect()
}

/// What a completed sample's data is.
fn answer_text(config: &Config) -> String {
    if config.api == Api::Transcriptions {
        return "int64 whisper label indices of the text".to_owned();
    }
    match &config.tokenizer {
        Some(path) => format!("int32 token ids (tokenizer {})", path.display()),
        None => "UTF-8 text".to_owned(),
    }
}

fn seed_text(seed: Option<i64>) -> String {
    seed.map_or_else(|| "none".to_owned(), |s| s.to_string())
}
