//! The plugin's settings, parsed from the TOML text the host hands to `create`. Every error
//! names the key and the value at fault.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use mlperf_plugin_api::sdk::{config_error_text, PluginError};
use serde::Deserialize;

/// Upper bounds that turn a typo into an error rather than a million sockets or threads.
const MAX_CONCURRENCY: usize = 65_536;
const MAX_BATCH: usize = 1 << 16;
const MAX_THREADS: usize = 256;
/// The largest answer the host takes (its response cap), and the default.
const MAX_RESPONSE_BYTES: u64 = 1 << 30;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The servers, as `host:port` or `http://host:port` (required, at least one).
    pub endpoints: Vec<String>,
    pub protocol: Protocol,
    /// The served model's name (required).
    pub model: Option<String>,
    /// The model version; empty for the server's choice.
    pub model_version: String,
    /// The model input the samples feed (default: the model's only input).
    pub input: Option<String>,
    /// The output whose per-sample row answers each sample (default: the model's first).
    pub output: Option<String>,
    /// The input's KServe datatype ("FP32", "UINT8", ...; default: the samples' own).
    pub datatype: Option<String>,
    /// One sample's shape as the model takes it, without the batch dimension (default: the
    /// samples' own shape).
    pub shape: Option<Vec<i64>>,
    /// HTTP: send and ask for tensors as raw bytes after the JSON header (the binary tensor
    /// extension; Triton accepts it, MLServer does not).
    pub binary: bool,
    pub balance: Balance,
    /// Requests in flight per endpoint; more wait for a free slot.
    pub concurrency: usize,
    /// Samples per request: a query's samples are sent in requests of up to this many
    /// (client-side batching, for Offline and MultiStream).
    pub max_batch: usize,
    /// A request not answered within this fails its samples and the run.
    pub timeout_ms: u64,
    pub connect_timeout_ms: u64,
    /// Threads of the plugin's async runtime.
    pub threads: usize,
    /// The largest answer read from a server (HTTP body or gRPC message), in bytes: a larger
    /// one fails its samples and the run instead of being read into memory.
    pub max_response_bytes: u64,
    /// OpenAI: `/v1/completions` or `/v1/chat/completions`.
    pub api: Api,
    /// OpenAI: what a sample holds, UTF-8 text or int32 token ids.
    pub prompt: PromptFormat,
    /// OpenAI: the most tokens generated per sample.
    pub max_tokens: u32,
    /// OpenAI: ask for every one of `max_tokens` (a sample's own, or the run's): `min_tokens`
    /// and `ignore_eos` in each request, for answers of known lengths.
    pub exact_output: bool,
    /// OpenAI: 0 for greedy decoding.
    pub temperature: f64,
    /// OpenAI: the sampling seed sent with every request (none when unset).
    pub seed: Option<i64>,
    /// OpenAI: stream tokens as the server generates them (server-sent events), so the first
    /// token is timed when it arrives; false asks for whole answers (Offline).
    pub stream: bool,
    /// OpenAI: the longest wait for a stream's next event; a longer silence fails the run.
    pub stream_timeout_ms: u64,
    /// OpenAI transcriptions: the clips' language, sent with each one.
    pub language: String,
    /// OpenAI transcriptions: the answer's shape, `verbose_json` (its segments carry the
    /// generated tokens, which Offline's tokens per second counts) or `json` (the text; vLLM's
    /// usage then gives the clip's seconds, not its tokens).
    pub response_format: String,
    /// OpenAI: the model's tokenizer.json. With it each answer (and its first token) is
    /// completed as the int32 token ids of its text, as MLPerf's LLM accuracy logs hold them,
    /// and its token count is theirs; without it, as UTF-8 text.
    pub tokenizer: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            endpoints: Vec::new(),
            protocol: Protocol::Http,
            model: None,
            model_version: String::new(),
            input: None,
            output: None,
            datatype: None,
            shape: None,
            binary: false,
            balance: Balance::RoundRobin,
            concurrency: 32,
            max_batch: 1,
            timeout_ms: 10_000,
            connect_timeout_ms: 2_000,
            threads: 2,
            max_response_bytes: MAX_RESPONSE_BYTES,
            api: Api::Completions,
            prompt: PromptFormat::Text,
            max_tokens: 128,
            exact_output: false,
            temperature: 0.0,
            seed: None,
            stream: true,
            stream_timeout_ms: 10_000,
            language: "en".to_owned(),
            response_format: "verbose_json".to_owned(),
            tokenizer: None,
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// HTTP/REST with JSON bodies (`/v2/models/{name}/infer`).
    #[default]
    Http,
    /// gRPC (`inference.GRPCInferenceService`) over HTTP/2.
    Grpc,
    /// The OpenAI HTTP API of LLM servers (vLLM, SGLang, TensorRT-LLM, llama.cpp): one
    /// completion request per sample, its tokens streamed back.
    #[serde(rename = "openai")]
    OpenAi,
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Protocol::Http => "http",
            Protocol::Grpc => "grpc",
            Protocol::OpenAi => "openai",
        })
    }
}

/// The OpenAI endpoint a request goes to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    /// `/v1/completions`: the prompt as given.
    #[default]
    Completions,
    /// `/v1/chat/completions`: the prompt as one user message, under the server's chat
    /// template.
    Chat,
    /// `/v1/audio/transcriptions`: the sample's audio as a WAV file (prompt = "audio"); the
    /// answer's text logged as whisper's label indices (int64), as MLPerf's reference does.
    Transcriptions,
}

impl Api {
    pub fn path(self) -> &'static str {
        match self {
            Api::Completions => "/v1/completions",
            Api::Chat => "/v1/chat/completions",
            Api::Transcriptions => "/v1/audio/transcriptions",
        }
    }
}

/// How a sample holds its prompt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptFormat {
    /// UTF-8 text; trailing NUL bytes are padding.
    #[default]
    Text,
    /// int32 token ids; trailing negative ids are padding. Servers that take token ids
    /// (vLLM, SGLang) see exactly the benchmark's tokens.
    TokenIds,
    /// 16 kHz float32 audio (api = "transcriptions"), sent as a WAV of the same floats.
    Audio,
}

impl PromptFormat {
    pub fn name(self) -> &'static str {
        match self {
            PromptFormat::Text => "text",
            PromptFormat::TokenIds => "token_ids",
            PromptFormat::Audio => "audio",
        }
    }
}

/// How each request picks its endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Balance {
    /// Each in turn.
    #[default]
    RoundRobin,
    /// The one with the fewest requests in flight (the first of them on a tie).
    LeastOutstanding,
}

impl fmt::Display for Balance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Balance::RoundRobin => "round_robin",
            Balance::LeastOutstanding => "least_outstanding",
        })
    }
}

pub(crate) fn invalid(message: impl fmt::Display) -> PluginError {
    PluginError::invalid_config(format!("network plugin config: {message}"))
}

/// toml's message on one line, with the line it points at.
fn toml_message(text: &str, error: &toml::de::Error) -> String {
    config_error_text(text, error.span().map(|s| s.start), error.message())
}

impl Config {
    pub fn parse(text: &str) -> Result<Config, PluginError> {
        let config: Config = toml::from_str(text).map_err(|e| invalid(toml_message(text, &e)))?;
        config.check()?;
        Ok(config)
    }

    /// The model name; `check` made sure there is one.
    pub fn model_name(&self) -> &str {
        self.model.as_deref().expect("checked by Config::check")
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    pub fn connect_timeout(&self) -> Duration {
        Duration::from_millis(self.connect_timeout_ms)
    }

    fn check(&self) -> Result<(), PluginError> {
        if self.endpoints.is_empty() {
            return Err(invalid(
                "`endpoints` is missing: list the servers, e.g. endpoints = [\"127.0.0.1:8080\"]",
            ));
        }
        if self.model.as_deref().is_none_or(str::is_empty) {
            return Err(invalid(
                "`model` is missing: set it to the served model's name, e.g. model = \"digits\"",
            ));
        }
        let limited = [
            ("concurrency", self.concurrency, 1, MAX_CONCURRENCY),
            ("max_batch", self.max_batch, 1, MAX_BATCH),
            ("threads", self.threads, 1, MAX_THREADS),
        ];
        for (key, value, least, most) in limited {
            if value < least || value > most {
                return Err(invalid(format!(
                    "{key} = {value} is out of range ({least} to {most})"
                )));
            }
        }
        if !(1024..=MAX_RESPONSE_BYTES).contains(&self.max_response_bytes) {
            return Err(invalid(format!(
                "max_response_bytes = {} is out of range (1024 to {MAX_RESPONSE_BYTES})",
                self.max_response_bytes
            )));
        }
        for (key, value) in [
            ("timeout_ms", self.timeout_ms),
            ("connect_timeout_ms", self.connect_timeout_ms),
        ] {
            if value == 0 {
                return Err(invalid(format!("{key} = 0: give it at least 1 ms")));
            }
        }
        if let Some(shape) = &self.shape {
            if let Some(bad) = shape.iter().find(|&&d| d < 1) {
                return Err(invalid(format!(
                    "shape = {shape:?}: dimension {bad} is not a size (each is >= 1; the batch \
                     dimension is not part of it)"
                )));
            }
        }
        if self.binary && self.protocol == Protocol::Grpc {
            return Err(invalid(
                "binary = true is for protocol \"http\" (gRPC always sends raw bytes)",
            ));
        }
        if self.protocol == Protocol::OpenAi {
            self.check_openai()?;
        } else if let Some(tokenizer) = &self.tokenizer {
            return Err(invalid(format!(
                "tokenizer = {:?} is for protocol \"openai\" (KServe answers are tensors)",
                tokenizer.display().to_string()
            )));
        }
        Ok(())
    }

    /// The KServe keys mean nothing to an OpenAI server, and each sample is one request.
    fn check_openai(&self) -> Result<(), PluginError> {
        let kserve_only = [
            ("input", self.input.is_some()),
            ("output", self.output.is_some()),
            ("datatype", self.datatype.is_some()),
            ("shape", self.shape.is_some()),
            ("binary", self.binary),
            ("model_version", !self.model_version.is_empty()),
        ];
        if let Some((key, _)) = kserve_only.iter().find(|(_, set)| *set) {
            return Err(invalid(format!(
                "{key} is a KServe setting; protocol \"openai\" sends each sample's prompt as is"
            )));
        }
        if self.max_batch != 1 {
            return Err(invalid(format!(
                "max_batch = {}: protocol \"openai\" sends one prompt per request (servers batch \
                 requests themselves)",
                self.max_batch
            )));
        }
        if self.max_tokens == 0 {
            return Err(invalid("max_tokens = 0: ask for at least 1 token"));
        }
        if !(self.temperature.is_finite() && (0.0..=2.0).contains(&self.temperature)) {
            return Err(invalid(format!(
                "temperature = {} is out of range (0 to 2; 0 is greedy)",
                self.temperature
            )));
        }
        if self.stream_timeout_ms == 0 {
            return Err(invalid("stream_timeout_ms = 0: give it at least 1 ms"));
        }
        let transcribing = self.api == Api::Transcriptions;
        if transcribing != (self.prompt == PromptFormat::Audio) {
            return Err(invalid(format!(
                "api = \"{}\" with prompt = \"{}\": transcriptions take prompt = \"audio\", and audio goes to api = \"transcriptions\"",
                match self.api {
                    Api::Completions => "completions",
                    Api::Chat => "chat",
                    Api::Transcriptions => "transcriptions",
                },
                self.prompt.name()
            )));
        }
        if transcribing && (self.stream || self.tokenizer.is_some()) {
            return Err(invalid(
                "api = \"transcriptions\" answers whole texts, logged as whisper's labels: set stream = false and no tokenizer",
            ));
        }
        if self.language.is_empty() || self.language.chars().any(|c| !c.is_ascii_alphabetic()) {
            return Err(invalid(format!(
                "language = {:?}: an ISO-639-1 code, e.g. \"en\"",
                self.language
            )));
        }
        if !["json", "verbose_json"].contains(&self.response_format.as_str()) {
            return Err(invalid(format!(
                "response_format = {:?}: \"verbose_json\" (text and tokens) or \"json\" (text)",
                self.response_format
            )));
        }
        Ok(())
    }

    pub fn stream_timeout(&self) -> Duration {
        Duration::from_millis(self.stream_timeout_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        Config::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn a_full_config_parses() {
        let config = Config::parse(
            r#"
            endpoints = ["127.0.0.1:8080", "http://10.0.0.2:8080"]
            protocol = "grpc"
            model = "digits"
            model_version = "1"
            input = "input-0"
            output = "label"
            datatype = "FP32"
            shape = [64]
            balance = "least_outstanding"
            concurrency = 8
            max_batch = 64
            timeout_ms = 500
            threads = 4
            "#,
        )
        .unwrap();
        assert_eq!(config.protocol, Protocol::Grpc);
        assert_eq!(config.balance, Balance::LeastOutstanding);
        assert_eq!(config.endpoints.len(), 2);
        assert_eq!(config.shape, Some(vec![64]));
        assert_eq!(config.timeout(), Duration::from_millis(500));
    }

    #[test]
    fn missing_and_bad_values_name_their_key() {
        assert!(error("model = \"m\"").contains("`endpoints` is missing"));
        assert!(error("endpoints = [\"a:1\"]").contains("`model` is missing"));
        let text = error("endpoints = [\"a:1\"]\nmodel = \"m\"\nconcurrency = 0");
        assert!(text.contains("concurrency = 0 is out of range"), "{text}");
        let text = error("endpoints = [\"a:1\"]\nmodel = \"m\"\nprotocol = \"udp\"");
        assert!(text.contains("line 3 (`protocol = \"udp\"`)"), "{text}");
        let text = error("endpoints = [\"a:1\"]\nmodel = \"m\"\nshape = [0, 3]");
        assert!(text.contains("dimension 0 is not a size"), "{text}");
        let text = error("endpoints = [\"a:1\"]\nmodel = \"m\"\ntimeout_ms = 0");
        assert!(text.contains("timeout_ms = 0"), "{text}");
        let text =
            error("endpoints = [\"a:1\"]\nmodel = \"m\"\nprotocol = \"grpc\"\nbinary = true");
        assert!(
            text.contains("binary = true is for protocol \"http\""),
            "{text}"
        );
        assert!(error("endpoints = [\"a:1\"]\nmodel = \"m\"\nendpoint = 1").contains("endpoint"));
    }

    #[test]
    fn openai_settings_parse_and_kserve_keys_are_refused_with_it() {
        let base = "endpoints = [\"a:1\"]\nmodel = \"m\"\nprotocol = \"openai\"\n";
        let config = Config::parse(&format!(
            "{base}api = \"chat\"\nprompt = \"token_ids\"\nmax_tokens = 64\nseed = 7\nstream = false"
        ))
        .unwrap();
        assert_eq!(config.protocol, Protocol::OpenAi);
        assert_eq!(config.api.path(), "/v1/chat/completions");
        assert_eq!(config.prompt, PromptFormat::TokenIds);
        assert_eq!(
            (config.max_tokens, config.seed, config.stream),
            (64, Some(7), false)
        );
        let text = error(&format!("{base}output = \"label\""));
        assert!(text.contains("output is a KServe setting"), "{text}");
        let text = error(&format!("{base}max_batch = 8"));
        assert!(
            text.contains("max_batch = 8: protocol \"openai\" sends one prompt"),
            "{text}"
        );
        let text = error(&format!("{base}temperature = -1.0"));
        assert!(text.contains("temperature = -1 is out of range"), "{text}");
        let text = error(&format!("{base}max_tokens = 0"));
        assert!(text.contains("max_tokens = 0"), "{text}");
        let text = error(&format!("{base}api = \"embeddings\""));
        assert!(text.contains("line 4"), "{text}");
        let config = Config::parse(&format!("{base}tokenizer = \"t/tokenizer.json\"")).unwrap();
        assert_eq!(config.tokenizer, Some(PathBuf::from("t/tokenizer.json")));
        let text = error("endpoints = [\"a:1\"]\nmodel = \"m\"\ntokenizer = \"t.json\"");
        assert!(
            text.contains("tokenizer = \"t.json\" is for protocol \"openai\""),
            "{text}"
        );
    }

    #[test]
    fn transcription_settings_parse_and_bad_ones_name_their_key() {
        let base = "endpoints = [\"a:1\"]\nmodel = \"m\"\nprotocol = \"openai\"\napi = \"transcriptions\"\nprompt = \"audio\"\n";
        let base = &format!("{base}stream = false\n");
        let config = Config::parse(base).unwrap();
        assert_eq!(
            (config.language.as_str(), config.response_format.as_str()),
            ("en", "verbose_json")
        );
        let config = Config::parse(&format!("{base}response_format = \"json\"")).unwrap();
        assert_eq!(config.response_format, "json");
        let text = error(&format!("{base}response_format = \"srt\""));
        assert!(text.contains("response_format = \"srt\""), "{text}");
        let text = error(&format!("{base}language = \"en-US\""));
        assert!(text.contains("language = \"en-US\""), "{text}");
        let text = error(&base.replace("false", "true"));
        assert!(text.contains("set stream = false"), "{text}");
    }
}
