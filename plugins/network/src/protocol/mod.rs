//! One endpoint: KServe v2 over HTTP/REST or gRPC (health, readiness, metadata and
//! inference), or the OpenAI API of LLM servers, with what the transports share.

pub(crate) mod grpc;
pub(crate) mod http;
pub(crate) mod openai;
pub(crate) mod sse;
pub(crate) mod transcription;

use bytes::Bytes;
use mlperf_plugin_api::sdk::FailureKind;

use crate::config::{Config, Protocol};
use crate::tensor::Datatype;

/// Why one request failed, and what kind of failure it was (the host counts them by kind).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub kind: FailureKind,
    /// The HTTP status, for `FailureKind::Status`; else 0.
    pub status: i32,
    pub message: String,
}

impl Failure {
    pub(crate) fn connection(message: String) -> Failure {
        Failure::of(FailureKind::Connection, message)
    }

    pub(crate) fn stream(message: String) -> Failure {
        Failure::of(FailureKind::Stream, message)
    }

    pub(crate) fn of(kind: FailureKind, message: String) -> Failure {
        Failure {
            kind,
            status: 0,
            message,
        }
    }
}

/// Errors not classified further.
impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::of(FailureKind::Other, message)
    }
}

/// A tensor as model metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TensorMeta {
    pub name: String,
    pub datatype: String,
    /// -1 for a dimension of any size.
    pub shape: Vec<i64>,
}

/// A model's metadata (`GET /v2/models/{name}` or `ModelMetadata`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModelMeta {
    pub name: String,
    pub platform: String,
    pub inputs: Vec<TensorMeta>,
    pub outputs: Vec<TensorMeta>,
}

/// The server's name and version (`GET /v2` or `ServerMetadata`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServerMeta {
    pub name: String,
    pub version: String,
}

/// What every request of a run shares: the model and its input and output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub model: String,
    pub version: String,
    pub input: String,
    pub input_datatype: Datatype,
    pub output: String,
    pub output_datatype: Datatype,
}

/// One inference request: `data` holds the input's elements (little-endian, row-major) for
/// the given shape.
#[derive(Debug, Clone)]
pub(crate) struct Infer {
    pub shape: Vec<i64>,
    pub data: Bytes,
}

/// An endpoint's client. Cheap to clone: clones share the connection pool.
#[derive(Clone)]
pub(crate) enum Client {
    Http(http::HttpClient),
    Grpc(grpc::GrpcClient),
    OpenAi(openai::OpenAiClient),
}

/// What a KServe call on an OpenAI endpoint answers (the plugin never makes one).
const NOT_KSERVE: &str = "not a KServe v2 endpoint (protocol \"openai\")";

impl Client {
    /// A client for `endpoint` (`host:port`, or a URL with scheme `http://`) as the config
    /// says; connections are made when first used.
    pub(crate) fn new(config: &Config, endpoint: &str) -> Result<Client, String> {
        let uri = base_uri(endpoint)?;
        let connect_timeout = config.connect_timeout();
        let max_response = config.max_response_bytes as usize;
        Ok(match config.protocol {
            Protocol::Http => Client::Http(http::HttpClient::new(
                uri,
                connect_timeout,
                config.binary,
                max_response,
            )),
            Protocol::Grpc => {
                Client::Grpc(grpc::GrpcClient::new(uri, connect_timeout, max_response)?)
            }
            Protocol::OpenAi => Client::OpenAi(openai::OpenAiClient::new(
                uri,
                connect_timeout,
                max_response,
                config.stream_timeout(),
            )),
        })
    }

    pub(crate) async fn server_live(&self) -> Result<bool, String> {
        match self {
            Client::Http(c) => c.server_live().await,
            Client::Grpc(c) => c.server_live().await,
            Client::OpenAi(_) => Err(NOT_KSERVE.into()),
        }
    }

    pub(crate) async fn server_ready(&self) -> Result<bool, String> {
        match self {
            Client::Http(c) => c.server_ready().await,
            Client::Grpc(c) => c.server_ready().await,
            Client::OpenAi(_) => Err(NOT_KSERVE.into()),
        }
    }

    pub(crate) async fn server_metadata(&self) -> Result<ServerMeta, String> {
        match self {
            Client::Http(c) => c.server_metadata().await,
            Client::Grpc(c) => c.server_metadata().await,
            Client::OpenAi(_) => Err(NOT_KSERVE.into()),
        }
    }

    pub(crate) async fn model_ready(&self, model: &str, version: &str) -> Result<bool, String> {
        match self {
            Client::Http(c) => c.model_ready(model, version).await,
            Client::Grpc(c) => c.model_ready(model, version).await,
            Client::OpenAi(_) => Err(NOT_KSERVE.into()),
        }
    }

    pub(crate) async fn model_metadata(
        &self,
        model: &str,
        version: &str,
    ) -> Result<ModelMeta, String> {
        match self {
            Client::Http(c) => c.model_metadata(model, version).await,
            Client::Grpc(c) => c.model_metadata(model, version).await,
            Client::OpenAi(_) => Err(NOT_KSERVE.into()),
        }
    }

    /// Runs one request; the answer is the output tensor's elements as little-endian bytes.
    pub(crate) async fn infer(&self, target: &Target, request: Infer) -> Result<Vec<u8>, String> {
        match self {
            Client::Http(c) => c.infer(target, request).await,
            Client::Grpc(c) => c.infer(target, request).await,
            Client::OpenAi(_) => Err(NOT_KSERVE.into()),
        }
    }
}

/// `host:port` or `http://host:port[/]` as `http://host:port`.
fn base_uri(endpoint: &str) -> Result<::http::Uri, String> {
    let text = endpoint.trim().trim_end_matches('/');
    let with_scheme = if text.contains("://") {
        text.to_string()
    } else {
        format!("http://{text}")
    };
    let uri: ::http::Uri = with_scheme
        .parse()
        .map_err(|e| format!("{endpoint:?} is not host:port or http://host:port ({e})"))?;
    if uri.scheme_str() != Some("http") {
        return Err(format!(
            "{endpoint:?}: only http:// endpoints are supported (no TLS)"
        ));
    }
    if uri.port_u16().is_none() {
        return Err(format!("{endpoint:?} has no port (host:port)"));
    }
    if uri.path() != "/" && !uri.path().is_empty() {
        return Err(format!("{endpoint:?} has a path; give host:port only"));
    }
    Ok(uri)
}

/// `text` followed by each cause of `error` it does not already say, so that a refused or
/// reset connection says so ("…: tcp connect error: Connection refused").
pub(crate) fn with_causes(mut text: String, error: &dyn std::error::Error) -> String {
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// An error response's body, short enough for one log line.
pub(crate) fn excerpt(body: &[u8]) -> String {
    const MOST: usize = 300;
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.len() <= MOST {
        return text.to_string();
    }
    let mut end = MOST;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_host_port_or_http_urls() {
        assert_eq!(
            base_uri("127.0.0.1:8080").unwrap().to_string(),
            "http://127.0.0.1:8080/"
        );
        assert_eq!(
            base_uri("http://localhost:9000/")
                .unwrap()
                .authority()
                .unwrap()
                .as_str(),
            "localhost:9000"
        );
        assert!(base_uri("https://a:1").unwrap_err().contains("no TLS"));
        assert!(base_uri("localhost").unwrap_err().contains("no port"));
        assert!(base_uri("a:1/v2").unwrap_err().contains("has a path"));
        assert!(base_uri("a b:1").is_err());
    }

    #[test]
    fn long_bodies_are_cut() {
        assert_eq!(excerpt(b" short \n"), "short");
        let long = "é".repeat(400);
        let cut = excerpt(long.as_bytes());
        assert!(cut.ends_with('…') && cut.len() < 310);
    }
}
