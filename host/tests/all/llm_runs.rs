//! The smollm2 benchmark: the network plugin's `protocol = "openai"` against a real LLM server,
//! llama.cpp's OpenAI-compatible server (llama-cpp-python) serving SmolLM2-135M-Instruct, started
//! here on 127.0.0.1. Every scenario streams tokens and reports TTFT/TPOT; the accuracy run
//! logs the server's token ids and scores ROUGE against the committed references; TEST06
//! passes; a server killed mid-run ends the run INVALID naming the endpoint. Streams a real server would not send (a stall, a malformed event, a
//! stream cut short, a model it does not list) come from a deliberately broken server written
//! here, as the faulty plugin is for plugins.
//!
//! Needs what `bash scripts/test.sh` sets up: .venv-llama (scripts/setup-llm.sh) and
//! data/smollm2 (scripts/benchmarks/prepare.sh smollm2).

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use support::servers::{Kind, Server};
use support::{describe, repo, text, TempDir};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// One test of this file at a time, and none beside the audit tests' timing comparisons: the
/// LLM server and the host share two cores. (None beside the KServe tests' servers would be
/// better still.)
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    support::timings_or_llm()
}

fn require_prompts() {
    for file in ["prompts.npy", "tokenizer.json"] {
        let path = repo().join("data/smollm2").join(file);
        assert!(
            path.is_file(),
            "{} is missing: run `bash scripts/benchmarks/prepare.sh smollm2` (scripts/test.sh does)",
            path.display()
        );
    }
}

/// `mlperf-host run --benchmark smollm2` against `endpoint`, with these arguments.
fn smollm2(out: &Path, endpoint: &str, args: &[&str]) -> Command {
    benchmark("smollm2", out, endpoint, args)
}

fn benchmark(name: &str, out: &Path, endpoint: &str, args: &[&str]) -> Command {
    let mut command = Command::new(EXE);
    command
        .args(["run", "--benchmark", name, "--plugin-set"])
        .arg(format!("endpoints=[{endpoint:?}]"))
        .args(args)
        .arg("--out")
        .arg(out)
        .current_dir(repo())
        .env("MLPERF_HOST_LOG", "info");
    command
}

/// `mlperf-host sweep --benchmark smollm2` against the server at `endpoint`, with `args`, into
/// `out`.
fn llm_sweep(endpoint: &str, out: &Path, args: &[&str]) -> Output {
    Command::new(EXE)
        .args(["sweep", "--benchmark", "smollm2", "--plugin-set"])
        .arg(format!("endpoints=[{endpoint:?}]"))
        .args(args)
        .arg("--out")
        .arg(out)
        .current_dir(repo())
        .output()
        .expect("run mlperf-host sweep")
}

fn run(out: &Path, endpoint: &str, args: &[&str]) -> Output {
    smollm2(out, endpoint, args)
        .output()
        .expect("run mlperf-host")
}

fn read(out: &Path, file: &str) -> String {
    std::fs::read_to_string(out.join(file)).unwrap_or_default()
}

/// The JSON file `file` under `out`.
fn read_json(out: &Path, file: &str) -> serde_json::Value {
    serde_json::from_str(&read(out, file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// The power result of a token run: tokens per second over the meter's watts, in the Power
/// Summary and result.json.
fn assert_tokens_per_joule(out: &Path, stdout: &str, watts: f64) {
    assert!(stdout.contains("Tokens per joule : "), "{stdout}");
    let result = read_json(out, "result.json");
    let power = &result["power"];
    assert_eq!(power["performance"]["tokens"], true, "{power}");
    let metric = &power["sources"][0]["metric"];
    assert_eq!(metric["efficiency_label"], "Tokens per joule", "{power}");
    let tokens_per_second = power["performance"]["per_second"].as_f64().unwrap();
    let per_joule = metric["efficiency"].as_f64().unwrap();
    assert!(
        tokens_per_second > 1.0 && (per_joule - tokens_per_second / watts).abs() < 1e-3,
        "{power}"
    );
}

/// Several endpoints: each sample's request goes to the next server in turn (round robin), as
/// with KServe, and the run is one run.
#[test]
fn two_llm_servers_share_a_run_round_robin() {
    let _serial = one_at_a_time();
    require_prompts();
    let servers = [
        Server::start(Kind::Llama, "smollm2"),
        Server::start(Kind::Llama, "smollm2"),
    ];
    let out = TempDir::new();
    let output = Command::new(EXE)
        .args(["run", "--benchmark", "smollm2", "--scenario", "Offline"])
        .arg("--plugin-set")
        .arg(format!(
            "endpoints=[{:?}, {:?}]",
            servers[0].http(),
            servers[1].http()
        ))
        .args([
            "--set",
            "min_duration_ms=0",
            "--set",
            "offline_expected_qps=1",
        ])
        .args([
            "--set",
            "min_query_count=12",
            "--set",
            "sample_concatenate_permutation=0",
            "--plugin-set",
            "max_tokens=8",
        ])
        .arg("--out")
        .arg(out.path())
        .current_dir(repo())
        .output()
        .expect("run mlperf-host");
    assert!(output.status.success(), "{}", describe(&output));
    let summary = read(out.path(), "mlperf_log_summary.txt");
    assert!(summary.contains("Samples per second"), "{summary}");
    // uvicorn's access log, one line per answered request.
    let requests = |server: &Server| server.log().matches("POST /v1/chat/completions").count();
    let started = Instant::now();
    while requests(&servers[0]) + requests(&servers[1]) < 12
        && started.elapsed() < Duration::from_secs(5)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        [requests(&servers[0]), requests(&servers[1])],
        [6, 6],
        "{}\n---\n{}",
        servers[0].log(),
        servers[1].log()
    );
}

/// A server that sends its tokens' ids (vLLM, asked with `return_token_ids`): the accuracy log
/// holds the server's ids, not the text's encoding, and TEST06 passes on them.
#[test]
fn the_servers_own_token_ids_are_logged_when_it_sends_them() {
    let _serial = one_at_a_time();
    require_prompts();
    let endpoint = broken_server("smollm2", Broken::VllmTokenIds);
    let out = TempDir::new();
    let output = Command::new(EXE)
        .args(["audit", "--test", "TEST06", "--benchmark", "smollm2"])
        .args(["--scenario", "SingleStream", "--plugin-set"])
        .arg(format!("endpoints=[{endpoint:?}]"))
        .arg("--out")
        .arg(out.path())
        .current_dir(repo())
        .output()
        .expect("run mlperf-host audit");
    assert!(output.status.success(), "{}", describe(&output));
    assert!(read(out.path(), "verify_accuracy.txt").contains("TEST06 verification complete"));
    let log = read(&out.path().join("accuracy"), "mlperf_log_accuracy.json");
    let records: Vec<serde_json::Value> = serde_json::from_str(&log).unwrap();
    assert!(records.len() >= 90, "{} records", records.len());
    for record in &records {
        assert_eq!(int32s(record["data"].as_str().unwrap()), [101, 102, 103, 2]);
        assert_eq!(int32s(record["token_data"].as_str().unwrap()), [101]);
        assert_eq!(record["token_count"].as_u64(), Some(4));
    }
}

/// Equal-issue mode, as MLPerf's LLM benchmarks set it: a performance run issues whole
/// permutations of the data set, so Offline's 8 samples become all 256 (one token each here,
/// to keep it short).
#[test]
fn equal_issue_mode_issues_the_whole_data_set() {
    let _serial = one_at_a_time();
    require_prompts();
    let server = Server::start(Kind::Llama, "smollm2");
    let out = TempDir::new();
    let output = run(
        out.path(),
        &server.http(),
        &[
            "--scenario",
            "Offline",
            "--set",
            "min_duration_ms=0",
            "--set",
            "min_query_count=8",
            "--set",
            "offline_expected_qps=1",
            "--plugin-set",
            "max_tokens=1",
        ],
    );
    assert!(output.status.success(), "{}", describe(&output));
    // As LoadGen reports it: the summary keeps the requested count and points at the detail
    // log's padded one.
    let summary = read(out.path(), "mlperf_log_summary.txt");
    assert!(
        summary.contains("WARNING: sample_concatenate_permutation was set to true."),
        "{summary}"
    );
    let detail = read(out.path(), "mlperf_log_detail.txt");
    for entry in [
        r#""key": "effective_sample_concatenate_permutation", "value": true"#,
        r#""key": "generated_samples_per_query", "value": 256"#,
    ] {
        assert!(detail.contains(entry), "{entry} is not in:\n{detail}");
    }
}

/// The number after `label` and its colon in the summary.
fn summary_value(summary: &str, label: &str) -> f64 {
    summary
        .lines()
        .find_map(|line| line.strip_prefix(label)?.split(':').nth(1))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {label:?} in:\n{summary}"))
}

#[test]
fn an_accuracy_run_scores_rouge_at_the_committed_references() {
    let _serial = one_at_a_time();
    require_prompts();
    let server = Server::start(Kind::Llama, "smollm2");
    let out = TempDir::new();
    let output = run(
        out.path(),
        &server.http(),
        &["--scenario", "Offline", "--mode", "accuracy"],
    );
    assert!(output.status.success(), "{}", describe(&output));
    let accuracy = read(out.path(), "accuracy.txt");
    assert!(accuracy.contains("total=256"), "{accuracy}");
    let rouge1 = accuracy
        .split("rouge1=")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|value| value.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no rouge1 in:\n{accuracy}"));
    assert!(rouge1 >= 99.0, "{accuracy}");
    // The same answers, sentence for sentence.
    assert!(accuracy.contains("rougeLsum=100.0000"), "{accuracy}");
    assert!(accuracy.contains(": PASS"), "{accuracy}");
    // The logged answers are int32 token ids (the benchmark's tokenizer): each sample's the
    // server's own greedy answer, token for token, its token count their number.
    let references = references();
    let log = read(out.path(), "mlperf_log_accuracy.json");
    let records: Vec<serde_json::Value> = serde_json::from_str(&log).unwrap();
    assert_eq!(records.len(), 256);
    for record in &records {
        let index = record["qsl_idx"].as_u64().unwrap() as usize;
        let ids = int32s(record["data"].as_str().unwrap());
        assert_eq!(ids, references[index].output_ids, "sample {index}");
        assert_eq!(record["token_count"].as_u64(), Some(ids.len() as u64));
    }
}

/// A committed reference answer (configs/benchmarks/smollm2/references.json).
struct Reference {
    prompt: String,
    prompt_ids: Vec<i32>,
    output: String,
    output_ids: Vec<i32>,
}

fn references() -> Vec<Reference> {
    let path = repo().join("configs/benchmarks/smollm2/references.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let ids = |value: &serde_json::Value| -> Vec<i32> {
        let ids = value.as_array().unwrap().iter();
        ids.map(|id| id.as_i64().unwrap() as i32).collect()
    };
    json["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|sample| Reference {
            prompt: sample["prompt"].as_str().unwrap().to_owned(),
            prompt_ids: ids(&sample["prompt_ids"]),
            output: sample["output"].as_str().unwrap().to_owned(),
            output_ids: ids(&sample["output_ids"]),
        })
        .collect()
}

/// Little-endian int32s from an accuracy log's hex.
fn int32s(hex: &str) -> Vec<i32> {
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    assert_eq!(bytes.len() % 4, 0, "{hex}");
    bytes
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// The tokenizer.json prepare rebuilds from the model's GGUF gives, in Rust, the ids llama.cpp
/// gave every committed prompt and answer, and decodes the answers back to their text.
#[test]
fn the_rebuilt_tokenizer_gives_llama_cpps_token_ids_for_every_committed_text() {
    require_prompts();
    let path = repo().join("data/smollm2/tokenizer.json");
    let tokenizer = mlperf_tokenizer::Tokenizer::from_file(&path).unwrap();
    let as_i32 = |ids: Vec<u32>| ids.into_iter().map(|id| id as i32).collect::<Vec<_>>();
    let references = references();
    assert_eq!(references.len(), 256);
    for (i, sample) in references.iter().enumerate() {
        let prompt = as_i32(tokenizer.encode(&sample.prompt).unwrap());
        assert_eq!(prompt, sample.prompt_ids, "prompt {i}: {:?}", sample.prompt);
        let output = as_i32(tokenizer.encode(&sample.output).unwrap());
        assert_eq!(output, sample.output_ids, "answer {i}: {:?}", sample.output);
        let ids: Vec<u32> = sample.output_ids.iter().map(|&id| id as u32).collect();
        assert_eq!(tokenizer.decode(&ids).unwrap(), sample.output, "answer {i}");
    }
    // The end-of-turn token TEST06's EOS check counts is the GGUF's EOS, 2.
    assert_eq!(tokenizer.token_id("<|im_end|>"), Some(2));
}

/// TEST06 on a real LLM server: the first token reported matches the logged answer's start,
/// no doubled EOS, each token count the answer's length.
#[test]
fn test06_passes_on_the_servers_streamed_token_ids() {
    let _serial = one_at_a_time();
    require_prompts();
    let server = Server::start(Kind::Llama, "smollm2");
    let out = TempDir::new();
    let output = Command::new(EXE)
        .args(["audit", "--test", "TEST06", "--benchmark", "smollm2"])
        .args(["--scenario", "SingleStream", "--plugin-set"])
        .arg(format!("endpoints=[{:?}]", server.http()))
        // Short answers: the 100 queries TEST06's audit.config asks for in about 20 s.
        .args(["--plugin-set", "max_tokens=8", "--out"])
        .arg(out.path())
        .current_dir(repo())
        .output()
        .expect("run mlperf-host audit");
    assert!(output.status.success(), "{}", describe(&output));
    assert_eq!(
        read(out.path(), "verify_accuracy.txt"),
        "First token check pass: True\nEOS check pass: True\nSample length check pass: True\n\
         TEST06 verification complete\n"
    );
    let log = read(&out.path().join("accuracy"), "mlperf_log_accuracy.json");
    let records: Vec<serde_json::Value> = serde_json::from_str(&log).unwrap();
    assert!(records.len() >= 90, "{} records", records.len());
    for record in &records {
        let ids = int32s(record["data"].as_str().unwrap());
        let first = int32s(record["token_data"].as_str().unwrap());
        assert!(
            (1..=8).contains(&ids.len()) && !first.is_empty() && ids.starts_with(&first),
            "{record}"
        );
    }
}

#[test]
fn a_server_killed_mid_run_ends_it_invalid_naming_the_endpoint() {
    let _serial = one_at_a_time();
    require_prompts();
    let mut server = Server::start(Kind::Llama, "smollm2");
    let out = TempDir::new();
    let child = smollm2(
        out.path(),
        &server.http(),
        &[
            "--scenario",
            "Server",
            "--set",
            "server_target_qps=2",
            "--set",
            "min_duration_ms=30000",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start mlperf-host");
    std::thread::sleep(Duration::from_secs(3));
    let killed = Instant::now();
    server.kill();
    let output = child.wait_with_output().expect("wait for mlperf-host");
    assert!(
        killed.elapsed() < Duration::from_secs(20),
        "the run went on {:?} after the server died",
        killed.elapsed()
    );
    let summary = read(out.path(), "mlperf_log_summary.txt");
    assert!(
        summary.contains("Result is : INVALID"),
        "{summary}\n{}",
        describe(&output)
    );
    let victim = format!("endpoint {}:", server.http());
    assert!(
        summary.contains(&victim),
        "the reason names the endpoint: {summary}"
    );
    assert!(out.path().join("result.json").is_file());
}

/// How the broken server answers a completion request.
#[derive(Clone, Copy, Debug)]
enum Broken {
    /// Two tokens, then silence with the connection open.
    Stalls,
    /// A token, then an event that is not JSON.
    Malformed,
    /// A token, then the connection closes without a finish or `[DONE]`.
    CutShort,
    /// A token, then `[DONE]` without a finish reason (how llama.cpp's server ends a request
    /// it interrupts).
    Interrupted,
    /// Not broken: a whole answer as vLLM streams it, each event with its tokens' ids when the
    /// request asks for them (`return_token_ids`), the last one the end-of-sequence token.
    /// (vLLM does not run on this machine.)
    VllmTokenIds,
    /// Every other completion refused with 503 (an overloaded server), the rest answered.
    Busy,
    /// Each chat answered "Answer N" (N counting the requests), the request's messages and the
    /// answer kept in `CONVERSED`.
    Converses,
    /// Answered as `VllmTokenIds`, each request's first line and body kept in `KEPT`.
    Keeps,
}

/// What a `Keeps` server was sent: each request's first line and body.
static KEPT: std::sync::Mutex<Vec<(String, serde_json::Value)>> = std::sync::Mutex::new(Vec::new());

/// What a `Converses` server was sent (each request's messages) and answered.
static CONVERSED: std::sync::Mutex<Vec<(serde_json::Value, String)>> =
    std::sync::Mutex::new(Vec::new());

/// Completions a `Busy` server has taken.
static BUSY_REQUESTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// An OpenAI-compatible server that lists `model` and answers every completion as `broken`
/// says; it serves until the test process ends.
fn broken_server(model: &'static str, broken: Broken) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve_broken(stream, model, broken));
        }
    });
    address
}

fn serve_broken(stream: TcpStream, model: &str, broken: Broken) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    loop {
        // One request: its head, then a body of Content-Length bytes.
        let mut head = Vec::new();
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap_or(0);
            }
            head.push(line);
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        if head[0].starts_with("GET /v1/models") {
            let json = format!(r#"{{"object":"list","data":[{{"id":"{model}"}}]}}"#);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{json}",
                json.len()
            );
            continue;
        }
        let busy = matches!(broken, Broken::Busy)
            && BUSY_REQUESTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2 == 1;
        if busy {
            let json = r#"{"error":{"message":"server busy"}}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{json}",
                json.len()
            );
            continue;
        }
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
        );
        if let Broken::Converses = broken {
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let mut conversed = CONVERSED.lock().unwrap();
            let answer = format!("Answer {}", conversed.len());
            conversed.push((body["messages"].clone(), answer.clone()));
            drop(conversed);
            for (text, finish) in [(answer.as_str(), "null"), ("", "\"stop\"")] {
                let _ = write!(
                    stream,
                    "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}},\"finish_reason\":{finish}}}]}}\n\n"
                );
            }
            let _ = stream.write_all(b"data: [DONE]\n\n");
            let _ = stream.flush();
            return;
        }
        if let Broken::VllmTokenIds | Broken::Busy | Broken::Keeps = broken {
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            if let Broken::Keeps = broken {
                KEPT.lock().unwrap().push((head[0].clone(), body.clone()));
            }
            let ids = |ids: &str| match body["return_token_ids"].as_bool() {
                Some(true) => format!(",\"token_ids\":{ids}"),
                _ => String::new(),
            };
            for (text, token_ids, finish) in [
                ("Hello", "[101]", "null"),
                (" there", "[102, 103]", "null"),
                ("", "[2]", "\"stop\""),
            ] {
                let _ = write!(
                    stream,
                    "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}}{},\"finish_reason\":{finish}}}]}}\n\n",
                    ids(token_ids)
                );
            }
            let _ = stream.write_all(b"data: [DONE]\n\n");
            let _ = stream.flush();
            return;
        }
        let token = |text: &str| {
            format!(
                "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}},\"finish_reason\":null}}]}}\n\n"
            )
        };
        let _ = stream.write_all(token("Hello").as_bytes());
        match broken {
            Broken::Stalls => {
                let _ = stream.write_all(token(" there").as_bytes());
                let _ = stream.flush();
                std::thread::sleep(Duration::from_secs(60));
            }
            Broken::Malformed => {
                let _ = stream.write_all(b"data: {\"choices\": [oops\n\n");
            }
            // Answered whole above.
            Broken::CutShort
            | Broken::VllmTokenIds
            | Broken::Busy
            | Broken::Converses
            | Broken::Keeps => {}
            Broken::Interrupted => {
                let _ = stream.write_all(b"data: [DONE]\n\n");
            }
        }
        let _ = stream.flush();
        return;
    }
}

#[test]
fn broken_streams_end_the_run_invalid_naming_the_endpoint_and_the_fault() {
    let _serial = one_at_a_time();
    require_prompts();
    let cases = [
        (
            Broken::Stalls,
            "the stream stalled: no event within 500 ms (stream_timeout_ms) after 2 token(s)",
        ),
        (Broken::Malformed, "an event is not JSON"),
        (
            Broken::CutShort,
            "the stream ended after 1 token(s) without a finish_reason or [DONE]",
        ),
        (
            Broken::Interrupted,
            "[DONE] after 1 token(s) without a finish_reason",
        ),
    ];
    for (broken, fault) in cases {
        let endpoint = broken_server("smollm2", broken);
        let out = TempDir::new();
        let started = Instant::now();
        let output = run(
            out.path(),
            &endpoint,
            &[
                "--scenario",
                "SingleStream",
                "--plugin-set",
                "stream_timeout_ms=500",
                "--set",
                "min_duration_ms=0",
                "--set",
                "min_query_count=4",
            ],
        );
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{broken:?}: took {:?}",
            started.elapsed()
        );
        let summary = read(out.path(), "mlperf_log_summary.txt");
        assert!(
            summary.contains("Result is : INVALID"),
            "{broken:?}: {summary}\n{}",
            describe(&output)
        );
        let reason = format!("endpoint {endpoint}: POST /v1/chat/completions: {fault}");
        assert!(
            summary.contains(&reason),
            "{broken:?}: wanted {reason:?} in:\n{summary}"
        );
        assert!(out.path().join("result.json").is_file(), "{broken:?}");
    }
}

#[test]
fn a_sweep_counts_failed_requests_by_kind_and_goes_on() {
    require_prompts();
    let endpoint = broken_server("smollm2", Broken::Busy);
    // In the host's process, and in a process of its own: the plugin's failures and its
    // later tokens reach the sweep either way.
    for isolate in ["none", "process"] {
        let out = TempDir::new();
        let output = llm_sweep(
            &endpoint,
            out.path(),
            &[
                "--concurrency",
                "1",
                "--duration",
                "1s",
                "--warmup",
                "0s",
                "--isolate",
                isolate,
                "--accuracy",
                "--accuracy-samples",
                "6",
            ],
        );
        assert!(output.status.success(), "{isolate}: {}", describe(&output));
        let sweep = read_json(out.path(), "sweep.json");
        let point = &sweep["points"][0];
        // The accuracy pass goes on past refused requests and says it is incomplete.
        let results = read_json(out.path(), "accuracy/accuracy_results.json");
        let counts = &results["accuracy_scores"][0]["response_counts"];
        let missing = counts["missing"].as_u64().unwrap();
        assert!((2..=4).contains(&missing), "{isolate}: {results:#}");
        assert_eq!(counts["issued"], 6, "{results:#}");
        assert_eq!(results["accuracy_scores"][0]["complete"], false);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains(&format!("{missing} failed, 0 never ended")),
            "{isolate}: {stdout}"
        );
        // Half the requests refused, each counted under its status; the other half answered.
        let failed = point["failed"].as_u64().unwrap();
        let completed = point["completed"].as_u64().unwrap();
        assert!(failed >= 5 && completed >= 5, "{isolate}: {point:#}");
        assert!(failed.abs_diff(completed) <= 1, "{isolate}: {point:#}");
        let busy = &point["errors"]["status 503"];
        assert_eq!(busy["count"].as_u64(), Some(failed), "{isolate}: {point:#}");
        let first = busy["first"].as_str().unwrap();
        assert!(
            first.contains(&format!(
                "endpoint {endpoint}: POST /v1/chat/completions: 503"
            )),
            "{first}"
        );
        assert_eq!(point["result"], "INVALID");
        let why = point["invalid_because"][0].as_str().unwrap();
        assert!(why.contains("request(s) failed (status 503: "), "{why}");
        // Each answer streams 3 events: 2 gaps after its first, timed either way.
        let gaps = point["itl_ns"]["count"].as_u64().unwrap();
        assert!(gaps >= completed, "{isolate}: {gaps} gaps, {point:#}");
    }
}

#[test]
fn conversation_turns_carry_their_sessions_history_with_the_servers_own_answers() {
    require_prompts();
    let endpoint = broken_server("smollm2", Broken::Converses);
    let out = TempDir::new();
    // 3 sessions of 3 turns, 2 in flight: turn t of a session goes 3 requests after turn t-1.
    let output = llm_sweep(
        &endpoint,
        out.path(),
        &[
            "--synthetic-input",
            "fixed:6",
            "--sessions",
            "3:3",
            "--concurrency",
            "2",
            "--max-requests",
            "9",
            "--duration",
            "5s",
            "--warmup",
            "0s",
        ],
    );
    assert!(output.status.success(), "{}", describe(&output));
    let conversed = CONVERSED.lock().unwrap().clone();
    assert_eq!(conversed.len(), 9);
    let messages = |k: usize| conversed[k].0.as_array().unwrap().clone();
    // Three of each turn: 1, 3 and 5 messages (two a turn before it, then its own).
    let mut lengths: Vec<usize> = (0..9).map(|k| messages(k).len()).collect();
    lengths.sort_unstable();
    assert_eq!(lengths, [1, 1, 1, 3, 3, 3, 5, 5, 5]);
    for k in 0..9 {
        let sent = messages(k);
        if sent.len() == 1 {
            continue;
        }
        // The turn before it: a request that sent exactly its earlier messages, and whose
        // answer is the assistant's message before its own.
        let before = (0..9)
            .find(|&j| messages(j)[..] == sent[..sent.len() - 2])
            .unwrap_or_else(|| panic!("request {k} follows no earlier turn: {sent:?}"));
        let assistant = &sent[sent.len() - 2];
        assert_eq!(assistant["role"], "assistant");
        assert_eq!(
            assistant["content"],
            conversed[before].1.as_str(),
            "{sent:?}"
        );
    }
    // The sessions say different things.
    let openings: std::collections::BTreeSet<String> = (0..9)
        .filter(|&k| messages(k).len() == 1)
        .map(|k| messages(k)[0]["content"].to_string())
        .collect();
    assert_eq!(openings.len(), 3);
    let sweep = read_json(out.path(), "sweep.json");
    let point = &sweep["points"][0];
    assert_eq!(point["failed"], 0, "{sweep:#}");
    // Each request's input tokens are its whole history's: every message it sent, by the
    // model's tokenizer (each user message 6 tokens, each answer as long as its text).
    let tokenizer =
        mlperf_tokenizer::Tokenizer::from_file(&repo().join("data/smollm2/tokenizer.json"))
            .unwrap();
    let sent: Vec<usize> = (0..9)
        .map(|k| {
            messages(k)
                .iter()
                .map(|m| {
                    tokenizer
                        .encode(m["content"].as_str().unwrap())
                        .unwrap()
                        .len()
                })
                .sum()
        })
        .collect();
    let inputs = &point["input_tokens"];
    assert_eq!(inputs["count"], 9, "{point:#}");
    let mean = inputs["mean"].as_f64().unwrap();
    let expected = sent.iter().sum::<usize>() as f64 / 9.0;
    assert!(
        (mean - expected).abs() < 1e-9,
        "{mean} != {expected}: {sent:?}"
    );
    assert_eq!(
        inputs["max"],
        *sent.iter().max().unwrap() as f64,
        "{sent:?}"
    );
}

#[test]
fn a_server_without_the_model_is_refused_before_the_run() {
    let endpoint = broken_server("another-model", Broken::CutShort);
    let out = TempDir::new();
    let output = run(out.path(), &endpoint, &["--scenario", "Offline"]);
    assert!(!output.status.success(), "{}", describe(&output));
    let stderr = text(&output.stderr);
    let expected = format!(
        "endpoint {endpoint}: model \"smollm2\" is not served there (GET /v1/models lists [\"another-model\"])"
    );
    assert!(
        stderr.contains(&expected),
        "wanted {expected:?} in:\n{stderr}"
    );
    assert!(!out.path().join("mlperf_log_summary.txt").exists());
}

/// Tests whose verdict rests on timings (a latency bound, a rate, a comparison of two runs'
/// speeds): `scripts/test.sh` runs every `timed` test alone, one after another, after the
/// rest, so that no other test takes the CPU they measure.
mod timed {
    use super::*;

    #[test]
    fn every_scenario_streams_tokens_from_a_real_llm_server_and_reports_ttft_and_tpot() {
        let _serial = one_at_a_time();
        require_prompts();
        let server = Server::start(Kind::Llama, "smollm2");
        // Equal-issue off: on, every run would issue the whole data set (see the test below).
        let short = [
            "--set",
            "min_duration_ms=0",
            "--set",
            "sample_concatenate_permutation=0",
        ];
        let scenarios: [(&str, &[&str]); 4] = [
            ("SingleStream", &["--set", "min_query_count=6"]),
            ("MultiStream", &["--set", "min_query_count=2"]),
            (
                "Server",
                &["--set", "server_target_qps=2", "--set", "min_query_count=8"],
            ),
            // With a simulated meter: tokens per joule.
            (
                "Offline",
                &[
                    "--set",
                    "offline_expected_qps=1",
                    "--set",
                    "min_query_count=8",
                    "--power",
                    "sim:50",
                ],
            ),
        ];
        for (scenario, settings) in scenarios {
            let out = TempDir::new();
            let args = [&["--scenario", scenario][..], &short, settings].concat();
            let output = run(out.path(), &server.http(), &args);
            assert!(output.status.success(), "{scenario}: {}", describe(&output));
            let summary = read(out.path(), "mlperf_log_summary.txt");
            let detail = read(out.path(), "mlperf_log_detail.txt");
            // Tokens per second (the official summary has none for MultiStream); TTFT and TPOT
            // where answers stream.
            let tokens_per_second = match scenario {
                "MultiStream" => None,
                "Server" => Some((
                    "Completed tokens per second",
                    "result_completed_tokens_per_second",
                )),
                "Offline" => Some(("Tokens per second: ", "result_tokens_per_second")),
                _ => Some(("TPS w/o loadgen overhead", "result_token_throughput")),
            };
            if let Some((label, key)) = tokens_per_second {
                assert!(summary.contains(label), "{scenario}: {summary}");
                assert!(
                    detail.contains(&format!("\"{key}\"")),
                    "{scenario}: no {key} in the detail log"
                );
            }
            assert!(
                summary.contains("No errors encountered during test."),
                "{scenario}: {summary}"
            );
            if scenario != "Offline" {
                // Measured, and before the answer's end: a query's whole latency bounds it
                // (not a fixed time: MultiStream's eight prompts queue at the one server, and
                // its last first token came after 15 s on a slow machine).
                let ttft = summary_value(&summary, "Mean First Token latency (ns)");
                let latency = summary_value(&summary, "Mean latency (ns)");
                assert!(
                    ttft > 1e6 && ttft <= latency,
                    "{scenario}: TTFT {ttft} ns, latency {latency} ns\n{summary}"
                );
                assert!(
                    summary.contains("percentile time to output token (ns)"),
                    "{scenario}: {summary}"
                );
                assert!(
                    detail.contains("\"result_first_token_mean_latency_ns\""),
                    "{scenario}: no TTFT in the detail log"
                );
            }
            if scenario == "Offline" {
                assert_tokens_per_joule(out.path(), &text(&output.stdout), 50.0);
            }
            let stderr = text(&output.stderr);
            assert!(
                stderr.contains(&format!("endpoint {}: ", server.http())),
                "{scenario}: the plugin's closing count is missing:\n{stderr}"
            );
        }
    }

    #[test]
    fn the_interactive_variant_runs_the_server_scenario_under_tighter_token_bounds() {
        let _serial = one_at_a_time();
        require_prompts();
        let server = Server::start(Kind::Llama, "smollm2");
        let out = TempDir::new();
        let output = benchmark(
            "smollm2-interactive",
            out.path(),
            &server.http(),
            &[
                "--scenario",
                "Server",
                "--set",
                "min_duration_ms=0",
                "--set",
                "min_query_count=6",
                "--set",
                "sample_concatenate_permutation=0",
            ],
        )
        .output()
        .expect("run mlperf-host");
        assert!(output.status.success(), "{}", describe(&output));
        let summary = read(out.path(), "mlperf_log_summary.txt");
        // smollm2.toml's settings, but the variant's bounds and rate.
        for line in [
            "ttft_latency (ns): 500000000",
            "tpot_latency (ns): 25000000",
            "target_qps : 1",
            "performance_sample_count : 256",
            "TTFT Early Stopping Result:",
        ] {
            assert!(summary.contains(line), "{line:?} is not in:\n{summary}");
        }
    }

    #[test]
    fn a_sweep_of_three_points_runs_valid_against_the_real_llm_server_with_its_token_counts() {
        let _serial = one_at_a_time();
        require_prompts();
        let server = Server::start(Kind::Llama, "smollm2");
        let out = TempDir::new();
        let output = llm_sweep(
            &server.http(),
            out.path(),
            &[
                "--concurrency",
                "1,2",
                "--rate",
                "0.5",
                "--arrivals",
                "poisson",
                "--duration",
                "6s",
                "--warmup",
                "1s",
                "--seed",
                "3",
                "--accuracy",
                "--accuracy-samples",
                "8",
            ],
        );
        assert!(output.status.success(), "{}", describe(&output));
        let sweep = read_json(out.path(), "sweep.json");
        let points = sweep["points"].as_array().expect("points");
        assert_eq!(points.len(), 3, "{sweep:#}");
        assert!(sweep["stopped"].is_null(), "{sweep:#}");
        for (index, point) in points.iter().enumerate() {
            assert_eq!(point["result"], "VALID", "{point:#}");
            // Each answer counted by the model's tokenizer equals the server's usage count.
            let completed = point["completed"].as_u64().unwrap();
            assert!(completed >= 1, "{point:#}");
            assert_eq!(
                point["tokens_counted"].as_u64(),
                Some(completed),
                "{point:#}"
            );
            assert_eq!(point["token_count_mismatches"], 0, "{point:#}");
            // The prompts (committed, 4-30 words) and the answers (at most max_tokens = 32).
            let input = point["input_tokens"]["mean"].as_f64().unwrap();
            let output = point["output_tokens"]["max"].as_f64().unwrap();
            assert!((3.0..60.0).contains(&input), "{point:#}");
            assert!((1.0..=32.0).contains(&output), "{point:#}");
            assert!(point["ttft_ns"]["p50"].as_f64().unwrap() > 0.0, "{point:#}");
            let tpot = point["tpot_ns"]["p50"].as_f64().unwrap();
            assert!(tpot > 0.0, "{point:#}");
            // Inter-token latency, one gap per streamed event after the first (the server streams
            // a token an event): about as many gaps as tokens after each first, their median near
            // the median TPOT.
            let tokens = point["output_tokens"]["mean"].as_f64().unwrap() * completed as f64;
            let gaps = point["itl_ns"]["count"].as_f64().unwrap();
            assert!(
                gaps >= 0.8 * (tokens - completed as f64) && gaps <= tokens,
                "{gaps} gaps for {tokens} tokens: {point:#}"
            );
            let itl = point["itl_ns"]["p50"].as_f64().unwrap();
            assert!(
                itl > 0.5 * tpot && itl < 2.0 * tpot,
                "ITL {itl} TPOT {tpot}"
            );
            // Each point's own file holds the same figures.
            let own: serde_json::Value =
                serde_json::from_str(&read(out.path(), &format!("point-{}.json", index + 1)))
                    .expect("point json");
            assert_eq!(&own, point);
        }
        // The accuracy pass: the first 8 prompts answered as the committed greedy references
        // were, in the LoadGen accuracy log and in each point's Endpoints accuracy results.
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains("(no verdict: 8 of the data set's 256 samples)"),
            "{stdout}"
        );
        let accuracy = read(out.path(), "accuracy/accuracy.txt");
        assert!(
            accuracy.contains("total=8") && accuracy.contains(": PASS"),
            "{accuracy}"
        );
        let log = read_json(out.path(), "accuracy/mlperf_log_accuracy.json");
        assert_eq!(log.as_array().map(Vec::len), Some(8));
        for index in 1..=3 {
            let file = format!("endpoints/point-{index}/accuracy/accuracy_results.json");
            let results = read_json(out.path(), &file);
            let entry = &results["accuracy_scores"][0];
            assert_eq!(entry["dataset_name"], "smollm2", "{results:#}");
            // 8 of the data set's 256: answered, not complete.
            assert_eq!(entry["complete"], false, "{results:#}");
            assert_eq!(entry["response_counts"]["scored"], 8, "{results:#}");
            let rouge1: f64 = entry["score"]["rouge1"].as_str().unwrap().parse().unwrap();
            assert!(rouge1 >= 99.0, "{results:#}");
        }
        // A closed loop of 2 keeps 2 in flight.
        let in_flight = points[1]["mean_concurrency"].as_f64().unwrap();
        assert!(in_flight > 1.8, "{in_flight}");
        let csv = read(out.path(), "sweep.csv");
        assert_eq!(
            csv.lines().filter(|l| l.contains(",VALID,")).count(),
            3,
            "{csv}"
        );

        // Synthetic requests on the same server: groups of 4 prompts sharing 16 tokens, then 24
        // of their own, exact by the model's tokenizer; answers of drawn lengths (4 to 12), every
        // token of them asked for.
        let synthetic = TempDir::new();
        let output = llm_sweep(
            &server.http(),
            synthetic.path(),
            &[
                "--synthetic-input",
                "fixed:24",
                "--shared-prefix",
                "4:16",
                "--synthetic-output",
                "uniform:4:12",
                "--synthetic-count",
                "16",
                "--concurrency",
                "1",
                "--duration",
                "4s",
                "--warmup",
                "0s",
                "--accuracy",
                "--accuracy-samples",
                "2",
            ],
        );
        assert!(output.status.success(), "{}", describe(&output));
        let sweep = read_json(synthetic.path(), "sweep.json");
        // Synthetic prompts are not the benchmark's: answered, but not scored by its references.
        assert_eq!(sweep["accuracy"]["answered"], 2, "{sweep:#}");
        assert!(sweep["accuracy"]["score"].is_null(), "{sweep:#}");
        let point = &sweep["points"][0];
        assert_eq!(point["result"], "VALID", "{point:#}");
        assert!(point["completed"].as_u64().unwrap() >= 2, "{point:#}");
        assert_eq!(point["token_count_mismatches"], 0, "{point:#}");
        let input = &point["input_tokens"];
        assert_eq!(
            (input["mean"].as_f64(), input["max"].as_f64()),
            (Some(40.0), Some(40.0))
        );
        // The prompts' rows (uint8, NUL padded): alike for 16 tokens within a group of 4.
        let npy = std::fs::read(synthetic.path().join("synthetic-prompts.npy")).unwrap();
        let header = String::from_utf8_lossy(&npy[..128]).into_owned();
        let width: usize = header
            .split("(16, ")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("{header}"));
        let rows = &npy[npy.len() - 16 * width..];
        let row = |k: usize| &rows[k * width..(k + 1) * width];
        let common = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
        assert!(
            common(row(0), row(3)) >= 16,
            "{:?}",
            String::from_utf8_lossy(row(0))
        );
        assert!(common(row(4), row(7)) >= 16);
        assert!(common(row(0), row(4)) < 16);
        // The server's usage counts: each answer as long as its request asked.
        let summary = read_json(
            synthetic.path(),
            "endpoints/point-1/performance/result_summary.json",
        );
        let lengths = &summary["output_sequence_lengths"];
        let (min, max) = (
            lengths["min"].as_f64().unwrap(),
            lengths["max"].as_f64().unwrap(),
        );
        assert!(min >= 4.0 && max <= 12.0, "{lengths:#}");
    }
}

/// A server whose every answer is garbage once made a sweep print each failure (800,793 lines
/// in 2 s), then sent it 128,000 requests in 20 s, each failed; now 100 failures in a row end
/// the point and the sweep, and the point's files count them.
#[test]
fn a_sweep_on_a_server_answering_garbage_stops_after_100_failures_in_a_row() {
    require_prompts();
    let endpoint = broken_server("smollm2", Broken::Malformed);
    let out = TempDir::new();
    let started = Instant::now();
    let output = llm_sweep(
        &endpoint,
        out.path(),
        &[
            "--concurrency",
            "8,16",
            "--duration",
            "20s",
            "--warmup",
            "0s",
        ],
    );
    let took = started.elapsed();
    assert!(output.status.success(), "{}", describe(&output));
    assert!(took < Duration::from_secs(10), "{took:?}: it ran on");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(
            "sweep stopped: point 1 (concurrency 8): 100 requests in a row failed: the point was \
             stopped: the 1 point(s) after it were not run"
        ),
        "{stdout}"
    );
    assert!(output.stderr.is_empty(), "{}", describe(&output));
    let sweep = read_json(out.path(), "sweep.json");
    let points = sweep["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{sweep:#}");
    let failed = points[0]["failed"].as_u64().unwrap();
    // The 100, and those in flight when the hundredth failed.
    assert!((100..=108).contains(&failed), "{sweep:#}");
    let stream = &points[0]["errors"]["stream"];
    assert_eq!(stream["count"].as_u64(), Some(failed), "{sweep:#}");
    assert!(
        stream["first"]
            .as_str()
            .is_some_and(|first| first.contains("an event is not JSON")),
        "{sweep:#}"
    );
}

/// Synthetic prompts without a tokenizer go to the network plugin as token ids on the
/// completions API, the plugin named or given by its library's path alike.
#[test]
fn synthetic_prompts_go_as_token_ids_to_the_network_plugin_by_name_or_by_path() {
    let endpoint = broken_server("smollm2", Broken::Keeps);
    let library = support::plugin_library("libmlperf_plugin_network.so");
    for spec in ["network", library.to_str().unwrap()] {
        KEPT.lock().unwrap().clear();
        let out = TempDir::new();
        let output = Command::new(EXE)
            .args(["sweep", "--plugin", spec, "--plugin-set"])
            .arg(format!("endpoints=[{endpoint:?}]"))
            .args([
                "--plugin-set",
                "model=\"smollm2\"",
                "--plugin-set",
                "protocol=\"openai\"",
            ])
            .args(["--synthetic-input", "fixed:6", "--concurrency", "1"])
            .args(["--max-requests", "3", "--duration", "5s", "--warmup", "0s"])
            .arg("--out")
            .arg(out.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "{spec}: {}", describe(&output));
        let kept = KEPT.lock().unwrap().clone();
        assert_eq!(kept.len(), 3, "{spec}: {kept:?}");
        for (line, body) in kept {
            assert!(line.starts_with("POST /v1/completions "), "{spec}: {line}");
            let prompt = body["prompt"]
                .as_array()
                .unwrap_or_else(|| panic!("{body}"));
            assert_eq!(prompt.len(), 6, "{spec}: {body}");
            assert!(prompt.iter().all(serde_json::Value::is_u64), "{body}");
        }
    }
}
