//! The OpenAI HTTP API as LLM servers speak it (vLLM, SGLang, TensorRT-LLM, llama.cpp):
//! `/v1/models` before the run, then one `/v1/completions` or `/v1/chat/completions`
//! request per sample. Streamed answers (server-sent events) report their first token as it
//! arrives, so the host times it; whole answers (Offline) carry every token at once.

use std::time::Duration;

use bytes::Bytes;
use http::{header, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use serde_json::{json, Value};

use super::http::{pooled_client, request_once_more_if_dropped};
use super::sse::SseDecoder;
use super::{excerpt, with_causes, Failure};
use crate::config::Api;
use mlperf_plugin_api::sdk::FailureKind;

/// What every request of a run asks for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Generate {
    pub api: Api,
    pub model: String,
    pub max_tokens: u32,
    pub temperature: f64,
    pub seed: Option<i64>,
    pub stream: bool,
    /// Ask for exactly `max_tokens` tokens (no early end of sequence).
    pub exact_output: bool,
    /// Ask for the generated token ids (`return_token_ids`, vLLM): answers in token ids use
    /// the server's own when it sends them.
    pub token_ids: bool,
    /// Transcriptions: the clips' language.
    pub language: String,
    /// Transcriptions: `json` or `verbose_json`.
    pub response_format: String,
}

/// One sample's prompt.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Prompt {
    Text(String),
    TokenIds(Vec<i32>),
    /// A turn of a conversation: the exchanges before it (user, assistant), then its text
    /// (chat only).
    Conversation {
        history: Vec<(String, String)>,
        text: String,
    },
    /// A clip's 16 kHz float32 samples (transcriptions only).
    Audio(Vec<f32>),
}

/// A sample's answer: the generated text and how many tokens made it, and the tokens' ids
/// when the server sent them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Generated {
    pub text: Vec<u8>,
    pub n_tokens: i64,
    pub token_ids: Option<Vec<u32>>,
}

/// A piece of an answer as it arrived: the first token, or the tokens of a later event; its
/// text, and its ids when the server sent them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Piece<'a> {
    pub first: bool,
    /// Tokens in the piece: the ids sent, else one per event.
    pub tokens: i64,
    pub text: &'a [u8],
    pub ids: Option<&'a [u32]>,
}

/// Called for each piece of an answer as it arrives (a whole answer is one first piece).
pub(crate) type OnPiece<'a> = dyn FnMut(Piece<'_>) + Send + 'a;

#[derive(Clone)]
pub(crate) struct OpenAiClient {
    client: Client<HttpConnector, Full<Bytes>>,
    /// `http://host:port`, no trailing slash.
    base: String,
    max_response: usize,
    stream_timeout: Duration,
}

impl OpenAiClient {
    pub(crate) fn new(
        base: Uri,
        connect_timeout: Duration,
        max_response: usize,
        stream_timeout: Duration,
    ) -> OpenAiClient {
        OpenAiClient {
            client: pooled_client(connect_timeout),
            base: base.to_string().trim_end_matches('/').to_string(),
            max_response,
            stream_timeout,
        }
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<http::Response<hyper::body::Incoming>, String> {
        self.send_typed(method, path, body, "application/json")
            .await
    }

    /// As `send`, with the body's content type.
    pub(super) async fn send_typed(
        &self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        content_type: &str,
    ) -> Result<http::Response<hyper::body::Incoming>, String> {
        let mut request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        if body.is_some() {
            request = request.header(header::CONTENT_TYPE, content_type);
        }
        let request = request
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|e| format!("bad request for {path}: {e}"))?;
        request_once_more_if_dropped(&self.client, request)
            .await
            .map_err(|e| with_causes(format!("{path}: {e}"), &e))
    }

    /// A whole answer's body, no larger than `max_response_bytes`.
    pub(super) async fn read_body(
        &self,
        path: &str,
        body: hyper::body::Incoming,
    ) -> Result<Bytes, String> {
        let limited = http_body_util::Limited::new(body, self.max_response);
        match limited.collect().await {
            Ok(collected) => Ok(collected.to_bytes()),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(format!(
                "{path}: the answer is larger than max_response_bytes = {}",
                self.max_response
            )),
            Err(e) => Err(format!("{path}: reading the answer: {e}")),
        }
    }

    /// The ids of the models the server serves (`GET /v1/models`).
    pub(crate) async fn models(&self) -> Result<Vec<String>, String> {
        let path = "/v1/models";
        let response = self.send(Method::GET, path, None).await?;
        let status = response.status();
        let body = self.read_body(path, response.into_body()).await?;
        if status != StatusCode::OK {
            return Err(format!("GET {path}: {status}: {}", excerpt(&body)));
        }
        let value: Value = serde_json::from_slice(&body).map_err(|e| {
            format!(
                "GET {path}: the answer is not JSON ({e}): {}",
                excerpt(&body)
            )
        })?;
        let models = value.get("data").and_then(Value::as_array).ok_or_else(|| {
            format!(
                "GET {path}: the answer has no data list: {}",
                excerpt(&body)
            )
        })?;
        Ok(models
            .iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_owned))
            .collect())
    }

    /// Generates one answer; `on_piece` gets the first token's text as soon as it arrives,
    /// then each later event's (for a whole answer: all of it, just before this returns).
    pub(crate) async fn generate(
        &self,
        settings: &Generate,
        prompt: &Prompt,
        max_tokens: u32,
        on_piece: &mut OnPiece<'_>,
    ) -> Result<Generated, Failure> {
        let path = settings.api.path();
        let body = request_body(settings, prompt, max_tokens);
        let response = self
            .send(Method::POST, path, Some(body))
            .await
            .map_err(Failure::connection)?;
        let status = response.status();
        let streamed = is_event_stream(response.headers());
        let body = response.into_body();
        if status != StatusCode::OK {
            let body = self.read_body(path, body).await.unwrap_or_default();
            return Err(Failure {
                kind: FailureKind::Status,
                status: i32::from(status.as_u16()),
                message: format!("POST {path}: {status}: {}", excerpt(&body)),
            });
        }
        if !settings.stream {
            let body = self.read_body(path, body).await.map_err(Failure::stream)?;
            let generated = whole_answer(settings.api, &body)
                .map_err(|e| Failure::stream(format!("POST {path}: {e}")))?;
            on_piece(Piece {
                first: true,
                tokens: generated.n_tokens,
                text: &generated.text,
                ids: generated.token_ids.as_deref(),
            });
            return Ok(generated);
        }
        if !streamed {
            return Err(Failure::stream(format!(
                "POST {path}: the answer is not an event stream (content-type text/event-stream) \
                 although stream = true was asked"
            )));
        }
        self.read_stream(settings.api, body, on_piece)
            .await
            .map_err(|e| Failure::stream(format!("POST {path}: {e}")))
    }

    async fn read_stream(
        &self,
        api: Api,
        mut body: hyper::body::Incoming,
        on_piece: &mut OnPiece<'_>,
    ) -> Result<Generated, String> {
        let mut decoder = SseDecoder::default();
        let mut answer = StreamedAnswer::default();
        let mut received = 0usize;
        loop {
            let frame = match tokio::time::timeout(self.stream_timeout, body.frame()).await {
                Err(_) => {
                    return Err(format!(
                        "the stream stalled: no event within {} ms (stream_timeout_ms) after {} \
                         token(s)",
                        self.stream_timeout.as_millis(),
                        answer.chunks
                    ))
                }
                Ok(None) => break,
                Ok(Some(Err(e))) => {
                    return Err(with_causes(
                        format!("the stream broke after {} token(s): {e}", answer.chunks),
                        &e,
                    ))
                }
                Ok(Some(Ok(frame))) => frame,
            };
            let Ok(data) = frame.into_data() else {
                continue; // trailers
            };
            received += data.len();
            if received > self.max_response {
                return Err(format!(
                    "the stream is longer than max_response_bytes = {}",
                    self.max_response
                ));
            }
            decoder.push(&data);
            while let Some(event) = decoder.next_event()? {
                if answer.take(api, &event, on_piece)? {
                    return Ok(answer.finish());
                }
            }
        }
        if answer.finished {
            return Ok(answer.finish());
        }
        Err(format!(
            "the stream ended after {} token(s) without a finish_reason or [DONE]{}",
            answer.chunks,
            if decoder.has_partial_event() {
                ", in the middle of an event"
            } else {
                ""
            }
        ))
    }
}

fn is_event_stream(headers: &http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"))
}

fn request_body(settings: &Generate, prompt: &Prompt, max_tokens: u32) -> Vec<u8> {
    let prompt_value = match prompt {
        Prompt::Text(text) | Prompt::Conversation { text, .. } => Value::from(text.as_str()),
        Prompt::TokenIds(ids) => json!(ids),
        Prompt::Audio(_) => Value::Null,
    };
    let mut body = json!({
        "model": settings.model,
        "max_tokens": max_tokens,
        "temperature": settings.temperature,
        "stream": settings.stream,
    });
    if settings.exact_output {
        // Every token asked for: vLLM and SGLang take ignore_eos, llama.cpp and vLLM min_tokens.
        body["min_tokens"] = Value::from(max_tokens);
        body["ignore_eos"] = Value::from(true);
    }
    match settings.api {
        Api::Completions | Api::Transcriptions => body["prompt"] = prompt_value,
        Api::Chat => {
            let mut messages = Vec::new();
            if let Prompt::Conversation { history, .. } = prompt {
                for (user, assistant) in history {
                    messages.push(json!({"role": "user", "content": user}));
                    messages.push(json!({"role": "assistant", "content": assistant}));
                }
            }
            messages.push(json!({"role": "user", "content": prompt_value}));
            body["messages"] = Value::from(messages);
        }
    }
    if let Some(seed) = settings.seed {
        body["seed"] = Value::from(seed);
    }
    if settings.stream {
        // Servers that support it end the stream with the exact token count.
        body["stream_options"] = json!({"include_usage": true});
    }
    if settings.token_ids {
        // vLLM sends each choice's `token_ids`; servers that do not know the field ignore it.
        body["return_token_ids"] = Value::from(true);
    }
    serde_json::to_vec(&body).expect("a JSON value serialises")
}

/// The first choice's text: `text` (completions) or `message.content` / `delta.content`
/// (chat).
fn choice_text<'a>(api: Api, choice: &'a Value, field: &str) -> Option<&'a str> {
    match api {
        Api::Completions | Api::Transcriptions => choice.get("text"),
        Api::Chat => choice.get(field).and_then(|m| m.get("content")),
    }
    .and_then(Value::as_str)
}

fn server_error(value: &Value) -> Option<String> {
    let error = value.get("error")?;
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| error.to_string());
    Some(format!("the server reports an error: {message}"))
}

/// A choice's `token_ids` (vLLM's, asked with `return_token_ids`), if it has them.
fn choice_token_ids(choice: &Value) -> Result<Option<Vec<u32>>, String> {
    let Some(value) = choice.get("token_ids").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let not_ids = || format!("token_ids is not a list of token ids: {value}");
    value
        .as_array()
        .ok_or_else(not_ids)?
        .iter()
        .map(|id| {
            id.as_u64()
                .and_then(|id| u32::try_from(id).ok())
                .ok_or_else(not_ids)
        })
        .collect::<Result<Vec<u32>, String>>()
        .map(Some)
}

fn completion_tokens(value: &Value) -> Option<i64> {
    value
        .pointer("/usage/completion_tokens")
        .and_then(Value::as_i64)
}

fn whole_answer(api: Api, body: &[u8]) -> Result<Generated, String> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| format!("the answer is not JSON ({e}): {}", excerpt(body)))?;
    if let Some(error) = server_error(&value) {
        return Err(error);
    }
    let choice = value
        .pointer("/choices/0")
        .ok_or_else(|| format!("the answer has no choices: {}", excerpt(body)))?;
    let text = choice_text(api, choice, "message")
        .ok_or_else(|| format!("the answer's choice has no text: {}", excerpt(body)))?;
    let n_tokens = completion_tokens(&value).ok_or_else(|| {
        format!(
            "the answer has no usage.completion_tokens: {}",
            excerpt(body)
        )
    })?;
    Ok(Generated {
        text: text.as_bytes().to_vec(),
        n_tokens,
        token_ids: choice_token_ids(choice)?,
    })
}

/// A streamed answer as its events arrive.
#[derive(Debug, Default)]
struct StreamedAnswer {
    text: Vec<u8>,
    /// Events that carried a token.
    chunks: i64,
    /// The server's own count, when it sends usage.
    usage: Option<i64>,
    /// The tokens' ids, when the server sends them with its events.
    token_ids: Option<Vec<u32>>,
    finished: bool,
}

impl StreamedAnswer {
    /// Takes one event; true at `[DONE]`.
    fn take(&mut self, api: Api, event: &str, on_piece: &mut OnPiece<'_>) -> Result<bool, String> {
        if event.trim() == "[DONE]" {
            // A complete answer says why it ended; llama.cpp's server, for one, ends a request
            // it interrupts for a newer one with a bare [DONE].
            if !self.finished {
                return Err(format!(
                    "[DONE] after {} token(s) without a finish_reason: the server cut the answer \
                     short (llama-cpp-python does when a request arrives while it streams, unless \
                     started with --interrupt_requests false)",
                    self.chunks
                ));
            }
            return Ok(true);
        }
        let value: Value = serde_json::from_str(event).map_err(|e| {
            format!(
                "an event is not JSON ({e}) after {} token(s): {}",
                self.chunks,
                excerpt(event.as_bytes())
            )
        })?;
        if let Some(error) = server_error(&value) {
            return Err(error);
        }
        if let Some(tokens) = completion_tokens(&value) {
            self.usage = Some(tokens);
        }
        let Some(choice) = value.pointer("/choices/0") else {
            return Ok(false); // the usage event has no choices
        };
        let finish = choice.get("finish_reason").is_some_and(|r| !r.is_null());
        let ids = choice_token_ids(choice)?;
        if let Some(ids) = &ids {
            self.token_ids.get_or_insert_default().extend(ids);
        }
        // Each event before the finish carries one token (a token may decode to no text on
        // its own); the finishing event counts only if it carries text.
        if let Some(text) = choice_text(api, choice, "delta") {
            if !finish || !text.is_empty() {
                on_piece(Piece {
                    first: self.chunks == 0,
                    tokens: ids.as_ref().map_or(1, |ids| ids.len() as i64),
                    text: text.as_bytes(),
                    ids: ids.as_deref(),
                });
                self.chunks += 1;
                self.text.extend_from_slice(text.as_bytes());
            }
        }
        self.finished |= finish;
        Ok(false)
    }

    fn finish(self) -> Generated {
        Generated {
            n_tokens: self.usage.unwrap_or(self.chunks),
            text: self.text,
            token_ids: self.token_ids,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(api: Api, stream: bool) -> Generate {
        Generate {
            api,
            model: "smollm2".into(),
            max_tokens: 16,
            temperature: 0.0,
            seed: Some(3),
            stream,
            exact_output: false,
            token_ids: false,
            language: "en".into(),
            response_format: "verbose_json".into(),
        }
    }

    #[test]
    fn request_bodies_follow_each_api() {
        let body: Value = serde_json::from_slice(&request_body(
            &settings(Api::Completions, true),
            &Prompt::Text("Hi".into()),
            16,
        ))
        .unwrap();
        assert_eq!(
            body,
            json!({"model": "smollm2", "prompt": "Hi", "max_tokens": 16, "temperature": 0.0,
                   "seed": 3, "stream": true, "stream_options": {"include_usage": true}})
        );
        let body: Value = serde_json::from_slice(&request_body(
            &settings(Api::Chat, false),
            &Prompt::TokenIds(vec![1, 2]),
            16,
        ))
        .unwrap();
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": [1, 2]}])
        );
        assert!(body.get("stream_options").is_none() && body.get("prompt").is_none());
        // A turn of a conversation carries the exchanges before it.
        let turn = Prompt::Conversation {
            history: vec![("Hi".into(), "Hello".into())],
            text: "And?".into(),
        };
        let body: Value =
            serde_json::from_slice(&request_body(&settings(Api::Chat, true), &turn, 8)).unwrap();
        assert_eq!(
            body["messages"],
            json!([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"},
                   {"role": "user", "content": "And?"}])
        );
        // A request's own length, every token of it when exact output is asked.
        let mut exact = settings(Api::Completions, true);
        exact.exact_output = true;
        let body: Value =
            serde_json::from_slice(&request_body(&exact, &Prompt::Text("Hi".into()), 7)).unwrap();
        assert_eq!(
            (
                &body["max_tokens"],
                &body["min_tokens"],
                &body["ignore_eos"]
            ),
            (&json!(7), &json!(7), &json!(true))
        );
    }

    fn stream(api: Api, events: &[&str]) -> (Result<Generated, String>, Vec<Vec<u8>>) {
        let mut firsts = Vec::new();
        let mut answer = StreamedAnswer::default();
        let mut record = |piece: Piece<'_>| {
            if piece.first {
                firsts.push(piece.text.to_vec());
            } else {
                assert!(!firsts.is_empty(), "a later piece before the first");
                firsts.push([b"+".as_slice(), piece.text].concat());
            }
        };
        for event in events {
            match answer.take(api, event, &mut record) {
                Ok(true) => return (Ok(answer.finish()), firsts),
                Ok(false) => {}
                Err(e) => return (Err(e), firsts),
            }
        }
        (Err("no [DONE]".into()), firsts)
    }

    #[test]
    fn a_completion_stream_counts_its_tokens_and_reports_the_first() {
        // As llama.cpp's server streams: one event per token, then an empty finishing one.
        let events = [
            r#"{"choices":[{"text":"Hello","index":0,"finish_reason":null}]}"#,
            r#"{"choices":[{"text":"","index":0,"finish_reason":null}]}"#,
            r#"{"choices":[{"text":" world","index":0,"finish_reason":null}]}"#,
            r#"{"choices":[{"text":"","index":0,"finish_reason":"length"}]}"#,
            "[DONE]",
        ];
        let (answer, firsts) = stream(Api::Completions, &events);
        let answer = answer.unwrap();
        assert_eq!(answer.text, b"Hello world");
        assert_eq!(answer.n_tokens, 3);
        // The first token, then each later event's, as they came.
        assert_eq!(
            firsts,
            [b"Hello".to_vec(), b"+".to_vec(), b"+ world".to_vec()]
        );
    }

    #[test]
    fn a_chat_stream_skips_the_role_event_and_prefers_the_servers_usage() {
        // As vLLM streams with include_usage: the last token comes with the finish reason.
        let events = [
            r#"{"choices":[{"delta":{"role":"assistant"},"finish_reason":null}]}"#,
            r#"{"choices":[{"delta":{"content":"A"},"finish_reason":null}]}"#,
            r#"{"choices":[{"delta":{"content":"B"},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":4}}"#,
            "[DONE]",
        ];
        let (answer, firsts) = stream(Api::Chat, &events);
        let answer = answer.unwrap();
        assert_eq!((answer.text.as_slice(), answer.n_tokens), (&b"AB"[..], 4));
        // The role event is no token; the finishing one carries the last.
        assert_eq!(firsts, [b"A".to_vec(), b"+B".to_vec()]);
    }

    #[test]
    fn malformed_and_error_events_are_errors() {
        let (answer, _) = stream(
            Api::Completions,
            &[r#"{"choices":[{"text":"a"}]}"#, "{oops"],
        );
        let error = answer.unwrap_err();
        assert!(
            error.contains("an event is not JSON") && error.contains("after 1 token(s)"),
            "{error}"
        );
        let (answer, _) = stream(
            Api::Completions,
            &[r#"{"error":{"message":"out of memory"}}"#],
        );
        assert!(answer
            .unwrap_err()
            .contains("the server reports an error: out of memory"));
        let (answer, _) = stream(
            Api::Completions,
            &[r#"{"choices":[{"text":"a"}]}"#, "[DONE]"],
        );
        let error = answer.unwrap_err();
        assert!(
            error.contains("[DONE] after 1 token(s) without a finish_reason"),
            "{error}"
        );
    }

    #[test]
    fn token_ids_are_asked_for_and_taken_from_the_servers_events_when_sent() {
        let mut asking = settings(Api::Completions, true);
        asking.token_ids = true;
        let body: Value =
            serde_json::from_slice(&request_body(&asking, &Prompt::Text("Hi".into()), 16)).unwrap();
        assert_eq!(body["return_token_ids"], json!(true));
        // As vLLM streams with return_token_ids: each event's choice has its tokens' ids.
        let events = [
            r#"{"choices":[{"text":"Hel","token_ids":[17],"finish_reason":null}]}"#,
            r#"{"choices":[{"text":"lo","token_ids":[18, 19],"finish_reason":null}]}"#,
            r#"{"choices":[{"text":"","token_ids":[2],"finish_reason":"stop"}]}"#,
            "[DONE]",
        ];
        let mut firsts = Vec::new();
        let mut answer = StreamedAnswer::default();
        let mut record = |piece: Piece<'_>| {
            if piece.first {
                firsts.push(piece.ids.map(<[u32]>::to_vec));
            }
        };
        for event in events {
            answer.take(Api::Completions, event, &mut record).unwrap();
        }
        let answer = answer.finish();
        assert_eq!(answer.token_ids, Some(vec![17, 18, 19, 2]));
        assert_eq!(firsts, [Some(vec![17])]);
        // llama.cpp's events have none.
        let (answer, _) = stream(
            Api::Completions,
            &[
                r#"{"choices":[{"text":"a","finish_reason":"stop"}]}"#,
                "[DONE]",
            ],
        );
        assert_eq!(answer.unwrap().token_ids, None);
        let (answer, _) = stream(
            Api::Completions,
            &[r#"{"choices":[{"text":"a","token_ids":[-1]}]}"#],
        );
        let error = answer.unwrap_err();
        assert!(
            error.contains("token_ids is not a list of token ids"),
            "{error}"
        );
        let body =
            br#"{"choices":[{"text":"Yes.","token_ids":[5, 6]}],"usage":{"completion_tokens":2}}"#;
        let answer = whole_answer(Api::Completions, body).unwrap();
        assert_eq!(answer.token_ids, Some(vec![5, 6]));
    }

    #[test]
    fn whole_answers_need_their_token_count() {
        let body = br#"{"choices":[{"message":{"role":"assistant","content":"Yes."},"finish_reason":"stop"}],
                        "usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}"#;
        let answer = whole_answer(Api::Chat, body).unwrap();
        assert_eq!((answer.text.as_slice(), answer.n_tokens), (&b"Yes."[..], 2));
        let error = whole_answer(Api::Completions, br#"{"choices":[{"text":"x"}]}"#).unwrap_err();
        assert!(error.contains("no usage.completion_tokens"), "{error}");
        let error = whole_answer(Api::Completions, br#"{"choices":[]}"#).unwrap_err();
        assert!(error.contains("no choices"), "{error}");
    }
}
