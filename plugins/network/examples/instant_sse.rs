//! A stand-in OpenAI-compatible LLM server that answers instantly, for measuring what an
//! LLM-serving client itself costs (scripts/bench-serving.sh drives it from mlperf-host, AIPerf
//! and GuideLLM). It generates nothing: every completion is `max_tokens` copies of one short
//! token (default 16 when the request names none), streamed as server-sent events or returned
//! whole, so the client's parsing, timing and bookkeeping are all that is left to measure.
//!
//! Raw HTTP/1.1 over TCP with keep-alive, as LLM servers speak it:
//! - `GET /v1/models` (and `GET /health`): the one model, `smollm2` unless `--model` says else.
//! - `GET /stats`: `{"requests": R, "tokens": T}`, the completions answered and the tokens
//!   written since it started, so that a script can time a client's throughput from outside.
//! - `POST /v1/chat/completions` and `POST /v1/completions`: with `"stream": true`, an
//!   event stream in chunked transfer encoding: one `chat.completion.chunk` (or `text_completion`)
//!   event per token, a final event with `finish_reason` "length", a usage event
//!   (`"choices": []`) when `stream_options.include_usage` is true, then `data: [DONE]`.
//!   Without it, one `chat.completion` (or `text_completion`) with its usage.
//!
//! Each event is written on its own (TCP_NODELAY), as a server writes each token when it is
//! generated; `--coalesce` writes a whole stream at once instead. `--first-token-ms F` and
//! `--token-gap-ms G` pace a stream instead, as a model would, the same for every request
//! however many are in flight: its first token F ms after the request was read, each later one
//! G ms after the one before (a server whose timing is known, to compare what clients measure
//! of it).
//!
//! Usage:
//!   cargo run --release -p mlperf-plugin-network --example instant_sse -- \
//!       [--port 8000] [--host 127.0.0.1] [--threads 1] [--model smollm2] [--coalesce]
//!       [--first-token-ms F] [--token-gap-ms G]
//! `--threads` is the async runtime's worker count (default 1: one core). It prints
//! `listening on HOST:PORT` to stderr once it accepts connections (`--port 0`: a free port).

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpStream};

/// The one token every answer repeats (a single token in SmolLM2's and GPT-2's vocabularies).
const TOKEN: &str = " the";
/// Tokens per answer when the request has no `max_tokens`.
const DEFAULT_TOKENS: u64 = 16;
/// The most tokens one answer streams.
const MAX_TOKENS: u64 = 1 << 20;
/// The largest request head and body taken.
const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 16 * 1024 * 1024;

struct Settings {
    model: String,
    coalesce: bool,
    /// Streams paced (None: instant): the first token after this long, each later one this
    /// long after it.
    pacing: Option<(Duration, Duration)>,
    /// Numbers the answers' ids.
    next_id: AtomicU64,
    /// Completions answered and tokens written, for `GET /stats`.
    answered: AtomicU64,
    tokens: AtomicU64,
}

fn usage() -> ! {
    eprintln!(
        "usage: instant_sse [--port PORT] [--host HOST] [--threads N] [--model NAME] [--coalesce] \
         [--first-token-ms F] [--token-gap-ms G]"
    );
    std::process::exit(2);
}

fn main() {
    let mut port: u16 = 8000;
    let mut host = String::from("127.0.0.1");
    let mut threads: usize = 1;
    let mut model = String::from("smollm2");
    let mut coalesce = false;
    let (mut first_token, mut token_gap) = (Duration::ZERO, Duration::ZERO);
    let millis = |text: String| match text.parse::<f64>() {
        Ok(ms) if ms.is_finite() && ms >= 0.0 => Duration::from_secs_f64(ms / 1e3),
        _ => usage(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--port" => port = value().parse().unwrap_or_else(|_| usage()),
            "--host" => host = value(),
            "--threads" => threads = value().parse().unwrap_or_else(|_| usage()),
            "--model" => model = value(),
            "--coalesce" => coalesce = true,
            "--first-token-ms" => first_token = millis(value()),
            "--token-gap-ms" => token_gap = millis(value()),
            _ => usage(),
        }
    }
    let paced = !first_token.is_zero() || !token_gap.is_zero();
    if threads == 0 || (paced && coalesce) {
        usage();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .expect("the async runtime starts");
    let settings = Arc::new(Settings {
        model,
        coalesce,
        pacing: paced.then_some((first_token, token_gap)),
        next_id: AtomicU64::new(0),
        answered: AtomicU64::new(0),
        tokens: AtomicU64::new(0),
    });
    if let Err(error) = runtime.block_on(listen(&host, port, threads, settings)) {
        eprintln!("instant_sse: {error}");
        std::process::exit(1);
    }
}

/// Accepts connections until accepting fails.
async fn listen(host: &str, port: u16, threads: usize, settings: Arc<Settings>) -> io::Result<()> {
    let listener = TcpListener::bind((host, port)).await?;
    eprintln!(
        "listening on {} ({threads} thread(s))",
        listener.local_addr()?
    );
    loop {
        let (stream, peer) = listener.accept().await?;
        let settings = Arc::clone(&settings);
        tokio::spawn(async move {
            if let Err(e) = serve(stream, &settings).await {
                if !matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe
                ) {
                    eprintln!("{peer}: {e}");
                }
            }
        });
    }
}

/// Reads more bytes into `buffer`; 0 at the end of the stream.
async fn read_more(stream: &TcpStream, buffer: &mut Vec<u8>) -> io::Result<usize> {
    let mut chunk = [0u8; 16 * 1024];
    loop {
        stream.readable().await?;
        match stream.try_read(&mut chunk) {
            Ok(n) => {
                buffer.extend_from_slice(&chunk[..n]);
                return Ok(n);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
}

async fn write_all(stream: &TcpStream, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        stream.writable().await?;
        match stream.try_write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// One request's head: what the answer depends on.
struct Head {
    method: String,
    path: String,
    content_length: usize,
    keep_alive: bool,
}

fn parse_head(head: &[u8]) -> Result<Head, String> {
    let text = std::str::from_utf8(head).map_err(|_| "the request head is not UTF-8")?;
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("bad request line: {request_line:?}"));
    };
    let mut keep_alive = version == "HTTP/1.1";
    let mut content_length = 0;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            content_length = value
                .parse()
                .map_err(|_| format!("bad content-length: {value:?}"))?;
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err("chunked request bodies are not supported: send a content-length".into());
        } else if name.eq_ignore_ascii_case("connection") {
            if value.eq_ignore_ascii_case("close") {
                keep_alive = false;
            } else if value.eq_ignore_ascii_case("keep-alive") {
                keep_alive = true;
            }
        }
    }
    if content_length > MAX_BODY {
        return Err(format!("the body is larger than {MAX_BODY} bytes"));
    }
    let path = target.split('?').next().unwrap_or_default().to_string();
    Ok(Head {
        method: method.to_string(),
        path,
        content_length,
        keep_alive,
    })
}

/// Serves one connection's requests, one after the other, until the client closes it.
async fn serve(stream: TcpStream, settings: &Settings) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut buffer = Vec::with_capacity(16 * 1024);
    loop {
        // The head, up to its blank line.
        let head_end = loop {
            if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break at;
            }
            if buffer.len() > MAX_HEAD {
                return respond_error(&stream, 431, "the request head is too large").await;
            }
            if read_more(&stream, &mut buffer).await? == 0 {
                return Ok(()); // closed between requests
            }
        };
        let head = match parse_head(&buffer[..head_end]) {
            Ok(head) => head,
            Err(message) => return respond_error(&stream, 400, &message).await,
        };
        let body_start = head_end + 4;
        while buffer.len() < body_start + head.content_length {
            if read_more(&stream, &mut buffer).await? == 0 {
                return Ok(());
            }
        }
        let body = buffer[body_start..body_start + head.content_length].to_vec();
        buffer.drain(..body_start + head.content_length);
        answer(&stream, settings, &head, &body).await?;
        if !head.keep_alive {
            return Ok(());
        }
    }
}

async fn answer(
    stream: &TcpStream,
    settings: &Settings,
    head: &Head,
    body: &[u8],
) -> io::Result<()> {
    let connection = if head.keep_alive {
        "keep-alive"
    } else {
        "close"
    };
    match (head.method.as_str(), head.path.as_str()) {
        ("GET", "/v1/models") => {
            let models = json!({"object": "list",
                                "data": [{"id": settings.model, "object": "model"}]});
            respond_json(stream, 200, &models.to_string(), connection).await
        }
        ("GET", "/health") => respond_json(stream, 200, "{}", connection).await,
        ("GET", "/stats") => {
            let stats = json!({"requests": settings.answered.load(Ordering::Relaxed),
                               "tokens": settings.tokens.load(Ordering::Relaxed)});
            respond_json(stream, 200, &stats.to_string(), connection).await
        }
        ("POST", "/v1/chat/completions") => {
            complete(stream, settings, true, body, connection).await
        }
        ("POST", "/v1/completions") => complete(stream, settings, false, body, connection).await,
        (_, "/v1/models" | "/health" | "/stats" | "/v1/chat/completions" | "/v1/completions") => {
            respond_json(stream, 405, &error_json("method not allowed"), connection).await
        }
        (_, path) => {
            let message = format!("no route {path}");
            respond_json(stream, 404, &error_json(&message), connection).await
        }
    }
}

fn error_json(message: &str) -> String {
    json!({"error": {"message": message}}).to_string()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        _ => "Error",
    }
}

async fn respond_json(
    stream: &TcpStream,
    status: u16,
    body: &str,
    connection: &str,
) -> io::Result<()> {
    let response = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: {connection}\r\n\r\n{body}",
        reason(status),
        body.len()
    );
    write_all(stream, response.as_bytes()).await
}

/// Answers a request it cannot read, and closes the connection.
async fn respond_error(stream: &TcpStream, status: u16, message: &str) -> io::Result<()> {
    respond_json(stream, status, &error_json(message), "close").await
}

/// The prompt's length in words, a stand-in for its token count.
fn prompt_tokens(request: &Value) -> u64 {
    fn words(value: &Value) -> u64 {
        match value {
            Value::String(text) => text.split_whitespace().count() as u64,
            Value::Array(items) => items.iter().map(words).sum(),
            Value::Object(fields) => fields
                .iter()
                .filter(|(key, _)| matches!(key.as_str(), "content" | "text"))
                .map(|(_, value)| words(value))
                .sum(),
            _ => 0,
        }
    }
    request
        .get("messages")
        .or_else(|| request.get("prompt"))
        .map_or(0, words)
}

/// One HTTP chunk holding one server-sent event.
fn push_event(out: &mut Vec<u8>, data: &str) {
    let event_len = "data: ".len() + data.len() + 2;
    out.extend_from_slice(format!("{event_len:x}\r\ndata: ").as_bytes());
    out.extend_from_slice(data.as_bytes());
    out.extend_from_slice(b"\n\n\r\n");
}

async fn complete(
    stream: &TcpStream,
    settings: &Settings,
    chat: bool,
    body: &[u8],
    connection: &str,
) -> io::Result<()> {
    let request: Value = match serde_json::from_slice(body) {
        Ok(value @ Value::Object(_)) => value,
        _ => {
            let message = error_json("the body is not a JSON object");
            return respond_json(stream, 400, &message, connection).await;
        }
    };
    let tokens = request
        .get("max_tokens")
        .or_else(|| request.get("max_completion_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_TOKENS)
        .min(MAX_TOKENS);
    let prompt_tokens = prompt_tokens(&request);
    let stream_answer = request.get("stream").and_then(Value::as_bool) == Some(true);
    let include_usage = request
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        == Some(true);
    let usage = json!({"prompt_tokens": prompt_tokens, "completion_tokens": tokens,
                       "total_tokens": prompt_tokens + tokens});
    let number = settings.next_id.fetch_add(1, Ordering::Relaxed);
    let (id, object) = if chat {
        (format!("chatcmpl-{number}"), "chat.completion")
    } else {
        (format!("cmpl-{number}"), "text_completion")
    };
    // The model's name as JSON (quoted, escaped), for the events written by hand.
    let model = Value::from(settings.model.as_str()).to_string();

    if !stream_answer {
        let text = TOKEN.repeat(tokens as usize);
        let choice = if chat {
            json!({"index": 0, "message": {"role": "assistant", "content": text},
                   "finish_reason": "length"})
        } else {
            json!({"index": 0, "text": text, "finish_reason": "length"})
        };
        let answer = json!({"id": id, "object": object, "created": 0, "model": settings.model,
                            "choices": [choice], "usage": usage});
        respond_json(stream, 200, &answer.to_string(), connection).await?;
        settings.answered.fetch_add(1, Ordering::Relaxed);
        settings.tokens.fetch_add(tokens, Ordering::Relaxed);
        return Ok(());
    }

    let chunk_object = if chat {
        "chat.completion.chunk"
    } else {
        "text_completion"
    };
    let prefix = format!(
        r#"{{"id":"{id}","object":"{chunk_object}","created":0,"model":{model},"choices":"#
    );
    let token = Value::from(TOKEN).to_string();
    let (token_choice, final_choice) = if chat {
        (
            format!(r#"[{{"index":0,"delta":{{"content":{token}}},"finish_reason":null}}]}}"#),
            r#"[{"index":0,"delta":{},"finish_reason":"length"}]}"#.to_string(),
        )
    } else {
        (
            format!(r#"[{{"index":0,"text":{token},"finish_reason":null}}]}}"#),
            r#"[{"index":0,"text":"","finish_reason":"length"}]}"#.to_string(),
        )
    };
    let token_event = format!("{prefix}{token_choice}");

    let mut out = Vec::with_capacity(if settings.coalesce {
        (tokens as usize + 4) * (token_event.len() + 16) + 256
    } else {
        512
    });
    out.extend_from_slice(
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
             transfer-encoding: chunked\r\nconnection: {connection}\r\n\r\n"
        )
        .as_bytes(),
    );
    if chat {
        // As llama.cpp's and vLLM's servers begin: the assistant's role, no content.
        let role = format!(
            r#"{prefix}[{{"index":0,"delta":{{"role":"assistant"}},"finish_reason":null}}]}}"#
        );
        push_event(&mut out, &role);
    }
    let started = settings.pacing.map(|_| tokio::time::Instant::now());
    for k in 0..tokens {
        if let (Some((first_token, token_gap)), Some(started)) = (settings.pacing, started) {
            // Due times from the request, not from the last write: no drift over a stream.
            tokio::time::sleep_until(started + first_token + token_gap * (k as u32)).await;
        }
        push_event(&mut out, &token_event);
        if !settings.coalesce {
            write_all(stream, &out).await?;
            out.clear();
            settings.tokens.fetch_add(1, Ordering::Relaxed);
        }
    }
    push_event(&mut out, &format!("{prefix}{final_choice}"));
    if include_usage {
        push_event(&mut out, &format!("{prefix}[],\"usage\":{usage}}}"));
    }
    push_event(&mut out, "[DONE]");
    out.extend_from_slice(b"0\r\n\r\n");
    write_all(stream, &out).await?;
    if settings.coalesce {
        settings.tokens.fetch_add(tokens, Ordering::Relaxed);
    }
    settings.answered.fetch_add(1, Ordering::Relaxed);
    Ok(())
}
