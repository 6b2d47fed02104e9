//! KServe v2 over HTTP/REST: JSON bodies, or with `binary` the binary tensor extension (a
//! JSON header followed by raw tensor bytes, its length in `Inference-Header-Content-Length`).
//! Connections are pooled and kept alive (HTTP/1.1).

use std::time::Duration;

use bytes::Bytes;
use http::{header, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use super::{excerpt, with_causes, Infer, ModelMeta, ServerMeta, Target, TensorMeta};
use crate::tensor::{json_elements_to_bytes, write_json_elements, Datatype};

const HEADER_LENGTH: &str = "inference-header-content-length";

#[derive(Clone)]
pub(crate) struct HttpClient {
    client: Client<HttpConnector, Full<Bytes>>,
    /// `http://host:port`, no trailing slash.
    base: String,
    binary: bool,
    /// The largest body read (`max_response_bytes`).
    max_response: usize,
}

impl HttpClient {
    pub(crate) fn new(
        base: Uri,
        connect_timeout: Duration,
        binary: bool,
        max_response: usize,
    ) -> HttpClient {
        HttpClient {
            client: pooled_client(connect_timeout),
            base: base.to_string().trim_end_matches('/').to_string(),
            binary,
            max_response,
        }
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, String)],
        body: Bytes,
    ) -> Result<(StatusCode, http::HeaderMap, Bytes), String> {
        let mut request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let request = request
            .body(Full::new(body))
            .map_err(|e| format!("bad request for {path}: {e}"))?;
        let response = request_once_more_if_dropped(&self.client, request)
            .await
            .map_err(|e| with_causes(format!("{path}: {e}"), &e))?;
        let (parts, body) = response.into_parts();
        // Read no more than the cap: a server (or anything on its port) sending gigabytes
        // fails the request, not the host's memory.
        let body = Limited::new(body, self.max_response)
            .collect()
            .await
            .map_err(|e| match e.downcast_ref::<LengthLimitError>() {
                Some(_) => format!(
                    "{path}: the answer is larger than max_response_bytes = {}",
                    self.max_response
                ),
                None => format!("{path}: reading the answer: {e}"),
            })?
            .to_bytes();
        Ok((parts.status, parts.headers, body))
    }

    async fn get_json(&self, path: &str) -> Result<Value, String> {
        let (status, _, body) = self.send(Method::GET, path, &[], Bytes::new()).await?;
        if !status.is_success() {
            return Err(format!("GET {path}: {status}: {}", excerpt(&body)));
        }
        serde_json::from_slice(&body).map_err(|e| {
            format!(
                "GET {path}: the answer is not JSON ({e}): {}",
                excerpt(&body)
            )
        })
    }

    /// 200 means yes; any other status means no (the protocol's health answer).
    async fn health(&self, path: &str) -> Result<bool, String> {
        let (status, _, _) = self.send(Method::GET, path, &[], Bytes::new()).await?;
        Ok(status == StatusCode::OK)
    }

    pub(crate) async fn server_live(&self) -> Result<bool, String> {
        self.health("/v2/health/live").await
    }

    pub(crate) async fn server_ready(&self) -> Result<bool, String> {
        self.health("/v2/health/ready").await
    }

    pub(crate) async fn server_metadata(&self) -> Result<ServerMeta, String> {
        let value = self.get_json("/v2").await?;
        Ok(ServerMeta {
            name: string(&value, "name"),
            version: string(&value, "version"),
        })
    }

    pub(crate) async fn model_ready(&self, model: &str, version: &str) -> Result<bool, String> {
        self.health(&format!("{}/ready", model_path(model, version)))
            .await
    }

    pub(crate) async fn model_metadata(
        &self,
        model: &str,
        version: &str,
    ) -> Result<ModelMeta, String> {
        let path = model_path(model, version);
        let value = self.get_json(&path).await?;
        let tensors = |key: &str| -> Result<Vec<TensorMeta>, String> {
            let Some(items) = value.get(key).and_then(Value::as_array) else {
                return Ok(Vec::new());
            };
            items
                .iter()
                .map(|item| {
                    let shape = item
                        .get("shape")
                        .and_then(Value::as_array)
                        .map(|dims| dims.iter().map(|d| d.as_i64().unwrap_or(-1)).collect())
                        .unwrap_or_default();
                    Ok(TensorMeta {
                        name: string(item, "name"),
                        datatype: string(item, "datatype"),
                        shape,
                    })
                })
                .collect()
        };
        Ok(ModelMeta {
            name: string(&value, "name"),
            platform: string(&value, "platform"),
            inputs: tensors("inputs")?,
            outputs: tensors("outputs")?,
        })
    }

    pub(crate) async fn infer(&self, target: &Target, request: Infer) -> Result<Vec<u8>, String> {
        let path = format!("{}/infer", model_path(&target.model, &target.version));
        let (headers, body) = if self.binary {
            let header = binary_header(target, &request);
            let length = header.len().to_string();
            let mut body = header;
            body.extend_from_slice(&request.data);
            (
                vec![
                    (
                        header::CONTENT_TYPE.as_str(),
                        "application/octet-stream".into(),
                    ),
                    (HEADER_LENGTH, length),
                ],
                body,
            )
        } else {
            (
                vec![(header::CONTENT_TYPE.as_str(), "application/json".into())],
                json_body(target, &request),
            )
        };
        let (status, headers, body) = self
            .send(Method::POST, &path, &headers, Bytes::from(body))
            .await?;
        if !status.is_success() {
            return Err(format!("POST {path}: {status}: {}", excerpt(&body)));
        }
        read_output(target, &headers, &body).map_err(|e| format!("POST {path}: {e}"))
    }
}

/// How long a pooled connection may sit idle before it is closed rather than reused. Servers
/// close idle keep-alive connections themselves (uvicorn, under MLServer and the llama.cpp
/// OpenAI server, after 5 s): a request sent on a connection just as the server closes it
/// fails with "connection closed before message completed". Below every common server's
/// keep-alive, the client never reuses a connection the server may be closing.
pub(super) const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(2);

/// A keep-alive HTTP/1.1 client with a connection pool.
pub(super) fn pooled_client(connect_timeout: Duration) -> Client<HttpConnector, Full<Bytes>> {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    connector.set_connect_timeout(Some(connect_timeout));
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .build(connector)
}

/// Sends `request` on a pooled connection, and once more on another if the server closed the
/// connection without a byte of answer ("connection closed before message completed"). A
/// server may close a kept-alive connection at any moment, idle timeout or not (llama-server
/// does, rarely, under a Server run's gaps), and such a close says the request was never
/// answered; the retry counts in the sample's latency. A second close is the error.
pub(super) async fn request_once_more_if_dropped(
    client: &Client<HttpConnector, Full<Bytes>>,
    request: Request<Full<Bytes>>,
) -> Result<http::Response<Incoming>, hyper_util::client::legacy::Error> {
    let mut again = Request::new(request.body().clone());
    *again.method_mut() = request.method().clone();
    *again.uri_mut() = request.uri().clone();
    *again.version_mut() = request.version();
    *again.headers_mut() = request.headers().clone();
    match client.request(request).await {
        Err(error) if closed_before_answer(&error) => client.request(again).await,
        answered => answered,
    }
}

/// Whether `error` is a connection closed before any answer came.
fn closed_before_answer(error: &hyper_util::client::legacy::Error) -> bool {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if cause
            .downcast_ref::<hyper::Error>()
            .is_some_and(hyper::Error::is_incomplete_message)
        {
            return true;
        }
        source = cause.source();
    }
    false
}

/// `/v2/models/{model}` or `/v2/models/{model}/versions/{version}`, names percent-encoded.
fn model_path(model: &str, version: &str) -> String {
    if version.is_empty() {
        format!("/v2/models/{}", escape(model))
    } else {
        format!("/v2/models/{}/versions/{}", escape(model), escape(version))
    }
}

fn escape(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn string(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn shape_json(shape: &[i64]) -> String {
    let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
    format!("[{}]", dims.join(","))
}

fn json_body(target: &Target, request: &Infer) -> Vec<u8> {
    let mut body = Vec::with_capacity(request.data.len() * 3 + 200);
    body.extend_from_slice(
        format!(
            "{{\"inputs\":[{{\"name\":{},\"shape\":{},\"datatype\":\"{}\",\"data\":[",
            Value::from(target.input.as_str()),
            shape_json(&request.shape),
            target.input_datatype.name()
        )
        .as_bytes(),
    );
    write_json_elements(&mut body, target.input_datatype, &request.data);
    body.extend_from_slice(
        format!(
            "]}}],\"outputs\":[{{\"name\":{}}}]}}",
            Value::from(target.output.as_str())
        )
        .as_bytes(),
    );
    body
}

fn binary_header(target: &Target, request: &Infer) -> Vec<u8> {
    format!(
        "{{\"inputs\":[{{\"name\":{},\"shape\":{},\"datatype\":\"{}\",\"parameters\":{{\"binary_data_size\":{}}}}}],\
         \"outputs\":[{{\"name\":{},\"parameters\":{{\"binary_data\":true}}}}]}}",
        Value::from(target.input.as_str()),
        shape_json(&request.shape),
        target.input_datatype.name(),
        request.data.len(),
        Value::from(target.output.as_str()),
    )
    .into_bytes()
}

/// The wanted output's bytes from an infer answer: JSON, or a JSON header and raw tensors.
fn read_output(target: &Target, headers: &http::HeaderMap, body: &[u8]) -> Result<Vec<u8>, String> {
    let header_length = match headers.get(HEADER_LENGTH) {
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|&n| n <= body.len())
                .ok_or_else(|| format!("bad {HEADER_LENGTH} header {value:?}"))?,
        ),
        None => None,
    };
    let (json, mut raw) = match header_length {
        Some(n) => body.split_at(n),
        None => (body, &[][..]),
    };
    let answer: Value = serde_json::from_slice(json)
        .map_err(|e| format!("the answer is not JSON ({e}): {}", excerpt(json)))?;
    let outputs = answer
        .get("outputs")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("the answer has no outputs: {}", excerpt(json)))?;
    for output in outputs {
        let binary_size = output
            .pointer("/parameters/binary_data_size")
            .and_then(Value::as_u64)
            .map(|n| n as usize);
        let name = output.get("name").and_then(Value::as_str).unwrap_or("");
        let wanted = name == target.output || outputs.len() == 1;
        if let Some(size) = binary_size {
            if size > raw.len() {
                return Err(format!(
                    "output {name:?} says {size} binary bytes but {} follow",
                    raw.len()
                ));
            }
            let (data, rest) = raw.split_at(size);
            raw = rest;
            if wanted {
                check_datatype(target, output)?;
                return Ok(data.to_vec());
            }
        } else if wanted {
            let datatype = check_datatype(target, output)?;
            let data = output
                .get("data")
                .ok_or_else(|| format!("output {name:?} has no data"))?;
            return json_elements_to_bytes(datatype, data)
                .map_err(|e| format!("output {name:?}: {e}"));
        }
    }
    Err(format!(
        "the answer has no output {:?}: {}",
        target.output,
        excerpt(json)
    ))
}

fn check_datatype(target: &Target, output: &Value) -> Result<Datatype, String> {
    let name = output.get("datatype").and_then(Value::as_str).unwrap_or("");
    if name != target.output_datatype.name() {
        return Err(format!(
            "output {:?} is {name}, but the model's metadata said {}",
            target.output,
            target.output_datatype.name()
        ));
    }
    Ok(target.output_datatype)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target {
            model: "digits".into(),
            version: String::new(),
            input: "input".into(),
            input_datatype: Datatype::F32,
            output: "label".into(),
            output_datatype: Datatype::I64,
        }
    }

    fn request() -> Infer {
        let data: Vec<u8> = [0.5f32, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        Infer {
            shape: vec![1, 2],
            data: Bytes::from(data),
        }
    }

    #[test]
    fn the_json_body_is_a_v2_infer_request() {
        let body: Value = serde_json::from_slice(&json_body(&target(), &request())).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "inputs": [{"name": "input", "shape": [1, 2], "datatype": "FP32", "data": [0.5, 2.0]}],
                "outputs": [{"name": "label"}]
            })
        );
    }

    #[test]
    fn the_binary_header_gives_the_size_and_asks_for_binary_outputs() {
        let header: Value = serde_json::from_slice(&binary_header(&target(), &request())).unwrap();
        assert_eq!(header["inputs"][0]["parameters"]["binary_data_size"], 8);
        assert_eq!(header["outputs"][0]["parameters"]["binary_data"], true);
        assert!(header["inputs"][0].get("data").is_none());
    }

    #[test]
    fn outputs_are_read_from_json_and_from_binary_answers() {
        let json = br#"{"model_name":"digits","outputs":[
            {"name":"probabilities","datatype":"FP32","shape":[1,1],"data":[0.25]},
            {"name":"label","datatype":"INT64","shape":[2],"data":[7,3]}]}"#;
        let bytes = read_output(&target(), &http::HeaderMap::new(), json).unwrap();
        assert_eq!(bytes, [7i64.to_le_bytes(), 3i64.to_le_bytes()].concat());

        let header = br#"{"outputs":[
            {"name":"probabilities","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":4}},
            {"name":"label","datatype":"INT64","shape":[1],"parameters":{"binary_data_size":8}}]}"#;
        let mut body = header.to_vec();
        body.extend_from_slice(&0.25f32.to_le_bytes());
        body.extend_from_slice(&9i64.to_le_bytes());
        let mut headers = http::HeaderMap::new();
        headers.insert(HEADER_LENGTH, header.len().to_string().parse().unwrap());
        assert_eq!(
            read_output(&target(), &headers, &body).unwrap(),
            9i64.to_le_bytes()
        );
    }

    #[test]
    fn a_wrong_or_missing_output_is_an_error() {
        let wrong_type = br#"{"outputs":[{"name":"label","datatype":"FP32","shape":[1],"data":[1.0]},{"name":"x","datatype":"FP32","shape":[1],"data":[1.0]}]}"#;
        let error = read_output(&target(), &http::HeaderMap::new(), wrong_type).unwrap_err();
        assert!(
            error.contains("is FP32, but the model's metadata said INT64"),
            "{error}"
        );
        let missing = br#"{"outputs":[{"name":"a","datatype":"INT64","shape":[1],"data":[1]},{"name":"b","datatype":"INT64","shape":[1],"data":[1]}]}"#;
        let error = read_output(&target(), &http::HeaderMap::new(), missing).unwrap_err();
        assert!(error.contains("no output \"label\""), "{error}");
        let error = read_output(&target(), &http::HeaderMap::new(), b"oops").unwrap_err();
        assert!(error.contains("not JSON"), "{error}");
    }

    /// A server on a loopback port answering `ok` to every request of every connection,
    /// kept alive, except those `drop_unanswered(connection, request)` picks (both 0-based),
    /// whose connection it closes on reading them; and a count of the connections accepted.
    fn keep_alive_server(
        drop_unanswered: fn(usize, usize) -> bool,
    ) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::{BufRead, BufReader, Write};
        use std::sync::atomic::{AtomicUsize, Ordering};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = std::sync::Arc::new(AtomicUsize::new(0));
        let counter = std::sync::Arc::clone(&accepted);
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let connection = counter.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut writer = stream;
                    let (mut line, mut request) = (String::new(), 0);
                    while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                        if line == "\r\n" {
                            if drop_unanswered(connection, request) {
                                return;
                            }
                            request += 1;
                            let answer = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                            if writer.write_all(answer.as_bytes()).is_err() {
                                return;
                            }
                        }
                        line.clear();
                    }
                });
            }
        });
        (port, accepted)
    }

    /// A pooled client and a runtime of one thread to drive it, for the tests' requests.
    fn pooled_client_and_runtime() -> (Client<HttpConnector, Full<Bytes>>, tokio::runtime::Runtime)
    {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        (pooled_client(Duration::from_secs(5)), runtime)
    }

    /// A connection idle past the pool's timeout is not reused: the next request opens a new
    /// one, where a server closing idle connections (uvicorn after 5 s) would fail it.
    #[test]
    fn an_idle_connection_is_not_reused_past_the_pool_timeout() {
        use std::sync::atomic::Ordering;
        let (port, accepted) = keep_alive_server(|_, _| false);
        let (client, runtime) = pooled_client_and_runtime();
        let get = || {
            let request = Request::builder()
                .uri(format!("http://127.0.0.1:{port}/"))
                .body(Full::new(Bytes::new()))
                .unwrap();
            runtime.block_on(async {
                let response = client.request(request).await.unwrap();
                response.into_body().collect().await.unwrap().to_bytes()
            })
        };
        assert_eq!(get(), "ok");
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(get(), "ok");
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "kept alive while busy");
        std::thread::sleep(POOL_IDLE_TIMEOUT + Duration::from_millis(700));
        assert_eq!(get(), "ok");
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            2,
            "idle past the timeout: a new one"
        );
    }

    /// A kept-alive connection the server closes on reading a request, without answering it,
    /// costs a second send on a new connection, not the sample.
    #[test]
    fn a_request_the_server_drops_unanswered_is_sent_once_more() {
        use std::sync::atomic::Ordering;
        // The first connection's second request is closed unanswered.
        let (port, accepted) =
            keep_alive_server(|connection, request| (connection, request) == (0, 1));
        let (client, runtime) = pooled_client_and_runtime();
        let post = || {
            let request = Request::builder()
                .method(Method::POST)
                .uri(format!("http://127.0.0.1:{port}/"))
                .body(Full::new(Bytes::from_static(b"{}")))
                .unwrap();
            runtime.block_on(async {
                let response = request_once_more_if_dropped(&client, request)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok::<_, String>(response.into_body().collect().await.unwrap().to_bytes())
            })
        };
        assert_eq!(post().unwrap(), "ok");
        assert_eq!(post().unwrap(), "ok", "sent again on a new connection");
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
        // Without the retry, the same close is the sample's error.
        let (port, _) = keep_alive_server(|_, request| request == 1);
        let plain = |client: &Client<HttpConnector, Full<Bytes>>| {
            let request = Request::builder()
                .uri(format!("http://127.0.0.1:{port}/"))
                .body(Full::new(Bytes::new()))
                .unwrap();
            runtime.block_on(client.request(request))
        };
        assert!(plain(&client).is_ok());
        let closed = plain(&client).unwrap_err();
        assert!(closed_before_answer(&closed), "{closed:?}");
    }
    #[test]
    fn model_paths_escape_names() {
        assert_eq!(model_path("digits", ""), "/v2/models/digits");
        assert_eq!(model_path("a b/c", "2"), "/v2/models/a%20b%2Fc/versions/2");
    }
}
