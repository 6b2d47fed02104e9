//! The network plugin (plugins/network) against real KServe v2 servers started here on
//! 127.0.0.1: MLServer and NVIDIA Triton (PyTriton), each serving data/digits/model.onnx
//! through the ONNX Runtime version the onnxruntime plugin runs locally. Every scenario over
//! HTTP and gRPC; accuracy logs equal to the local plugin's sample for sample; two servers
//! balanced, one killed mid-run and one frozen mid-run ending the run INVALID with the
//! endpoint named; bad endpoints, models and tensors refused before the run.
//!
//! Needs what `bash scripts/test.sh` sets up: .venv (onnxruntime), .venv-mlserver and
//! .venv-triton (scripts/setup-servers.sh), data/digits.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use support::servers::{closed_port, Kind, Server};
use support::{describe, ort_library, repo, require_data, text, TempDir};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// One test of this file at a time: servers and the host share two cores, and a Server run
/// beside another test's server start would measure the contention.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn mlperf_host(out: &Path, args: &[&str]) -> Output {
    Command::new(EXE)
        .args(args)
        .current_dir(repo())
        .env("ORT_DYLIB_PATH", ort_library())
        .env("MLPERF_HOST_LOG", "info")
        .arg("--out")
        .arg(out)
        .output()
        .expect("run mlperf-host")
}

/// `run --benchmark digits` on the network plugin with these plugin settings.
fn network_args<'a>(settings: &'a [String], rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run", "--benchmark", "digits", "--plugin", "network"];
    for setting in settings {
        args.extend_from_slice(&["--plugin-set", setting]);
    }
    args.extend_from_slice(rest);
    args
}

fn plugin_settings(protocol: &str, endpoints: &[String], extra: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = endpoints.iter().map(|e| format!("{e:?}")).collect();
    let mut settings = vec![
        format!("protocol={protocol:?}"),
        format!("endpoints=[{}]", quoted.join(",")),
        "model=\"digits\"".to_string(),
    ];
    settings.extend(extra.iter().map(|s| s.to_string()));
    settings
}

fn summary(out: &Path) -> String {
    std::fs::read_to_string(out.join("mlperf_log_summary.txt")).unwrap_or_default()
}

/// The accuracy log as qsl_idx -> hex data (completion order differs between runs).
fn accuracy_by_index(out: &Path) -> BTreeMap<u64, String> {
    let log = std::fs::read_to_string(out.join("mlperf_log_accuracy.json")).unwrap();
    let entries: Vec<serde_json::Value> = serde_json::from_str(&log).unwrap();
    entries
        .iter()
        .map(|e| {
            (
                e["qsl_idx"].as_u64().unwrap(),
                e["data"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The local onnxruntime plugin's accuracy log of digits, made once per test binary.
fn local_accuracy() -> BTreeMap<u64, String> {
    static LOCAL: std::sync::OnceLock<BTreeMap<u64, String>> = std::sync::OnceLock::new();
    LOCAL
        .get_or_init(|| {
            let out = TempDir::new();
            let args = ["run", "--benchmark", "digits", "--scenario", "Offline"];
            let output = mlperf_host(out.path(), &[&args[..], &["--mode", "accuracy"]].concat());
            assert!(output.status.success(), "{}", describe(&output));
            accuracy_by_index(out.path())
        })
        .clone()
}

/// An Offline accuracy run through the network plugin matches the local plugin's log.
fn assert_accuracy_matches_local(settings: &[String], what: &str) {
    let out = TempDir::new();
    let args = network_args(settings, &["--scenario", "Offline", "--mode", "accuracy"]);
    let output = mlperf_host(out.path(), &args);
    assert!(output.status.success(), "{what}: {}", describe(&output));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("accuracy=97.108%"), "{what}: {stdout}");
    let remote = accuracy_by_index(out.path());
    assert_eq!(remote.len(), 899, "{what}");
    assert_eq!(
        remote,
        local_accuracy(),
        "{what}: answers differ from the local plugin's"
    );
}

/// `plugins test network` with these settings over the digits data set says CONFORMS.
fn assert_conforms(settings: &[String], what: &str) {
    let mut command = Command::new(EXE);
    command
        .args([
            "plugins",
            "test",
            "network",
            "--dataset",
            "data/digits/inputs.npy",
        ])
        .current_dir(repo())
        .env("ORT_DYLIB_PATH", ort_library());
    for setting in settings.iter().chain([&"output=\"label\"".to_string()]) {
        command.args(["--plugin-set", setting]);
    }
    let output = command.output().expect("run mlperf-host");
    assert!(
        output.status.success() && text(&output.stdout).contains("CONFORMS: 13 passed, 0 failed"),
        "{what}: {}",
        describe(&output)
    );
}

/// Short performance runs of every scenario; each completes all its samples, and the run
/// names the network SUT and its nodes.
fn assert_every_scenario_runs(settings: &[String], what: &str, latency_bound_ms: u64) {
    let bound = format!("server_target_latency_ns={}", latency_bound_ms * 1_000_000);
    for (scenario, extra) in [
        ("SingleStream", vec![]),
        (
            "MultiStream",
            vec!["--set", "multi_stream_expected_latency_ns=2000000"],
        ),
        (
            "Server",
            vec!["--set", "server_target_qps=200", "--set", &bound],
        ),
        ("Offline", vec!["--set", "offline_expected_qps=2000"]),
    ] {
        let out = TempDir::new();
        let mut rest = vec![
            "--scenario",
            scenario,
            "--set",
            "min_duration_ms=500",
            "--set",
            "min_query_count=64",
        ];
        rest.extend_from_slice(&extra);
        let output = mlperf_host(out.path(), &network_args(settings, &rest));
        assert!(
            output.status.success(),
            "{what} {scenario}: {}",
            describe(&output)
        );
        let result: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.path().join("result.json")).unwrap())
                .unwrap();
        let validity = &result["performance"]["validity"];
        assert_eq!(
            validity["all_samples_completed"], true,
            "{what} {scenario}: {validity}"
        );
        let summary = summary(out.path());
        assert!(
            summary.contains("SUT name : Network SUT\n"),
            "{what} {scenario}: {summary}"
        );
        let detail = std::fs::read_to_string(out.path().join("mlperf_log_detail.txt")).unwrap();
        assert!(detail.contains("network_nodes"), "{what} {scenario}");
        if scenario == "SingleStream" {
            assert!(summary.contains("Result is : VALID"), "{what}: {summary}");
        }
    }
}

#[test]
fn mlserver_over_http_and_grpc_runs_every_scenario_with_the_local_plugins_answers() {
    let _serial = one_at_a_time();
    require_data("digits");
    let server = Server::start(Kind::MlServer, "digits");
    for (protocol, endpoint) in [("http", server.http()), ("grpc", server.grpc())] {
        let what = format!("MLServer {protocol}");
        let batched = plugin_settings(protocol, std::slice::from_ref(&endpoint), &["max_batch=64"]);
        assert_accuracy_matches_local(&batched, &what);
        let single = plugin_settings(protocol, &[endpoint], &["max_batch=8"]);
        assert_every_scenario_runs(&single, &what, 50);
        // The conformance suite a vendor runs, on the shipped plugin against this server.
        assert_conforms(&single, &what);
    }
}

#[test]
fn triton_over_http_json_binary_and_grpc_gives_the_local_plugins_answers() {
    let _serial = one_at_a_time();
    require_data("digits");
    let server = Server::start(Kind::Triton, "digits");
    let transports = [
        ("http", server.http(), "binary=false"),
        ("http", server.http(), "binary=true"),
        ("grpc", server.grpc(), "max_batch=64"),
    ];
    for (protocol, endpoint, extra) in transports {
        let what = format!("Triton {protocol} {extra}");
        let settings = plugin_settings(protocol, &[endpoint], &[extra, "max_batch=64"]);
        assert_accuracy_matches_local(&settings, &what);
    }
    // Triton's Python backend answers in milliseconds: a generous bound.
    let settings = plugin_settings("grpc", &[server.grpc()], &[]);
    assert_every_scenario_runs(&settings, "Triton grpc", 200);
}

/// Requests answered per endpoint, from the plugin's closing log lines.
fn answered(stderr: &str, endpoint: &str) -> u64 {
    let needle = format!("endpoint {endpoint}: ");
    stderr
        .lines()
        .filter_map(|line| line.split_once(&needle))
        .filter_map(|(_, rest)| rest.split_whitespace().next()?.parse().ok())
        .next()
        .unwrap_or_else(|| panic!("no closing line for {endpoint} in:\n{stderr}"))
}

/// A 30 s Server run at `qps`, with `fault` done to a server 2 s in; the run must end
/// within 20 s, failing. Returns its output.
fn server_run_with_a_fault(
    out: &Path,
    settings: &[String],
    qps: u32,
    fault: impl FnOnce(),
) -> Output {
    let qps = format!("server_target_qps={qps}");
    let args = network_args(
        settings,
        &[
            "--scenario",
            "Server",
            "--set",
            &qps,
            "--set",
            "min_duration_ms=30000",
        ],
    );
    let started = Instant::now();
    let run = Command::new(EXE)
        .args(&args)
        .current_dir(repo())
        .arg("--out")
        .arg(out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    fault();
    let output = run.wait_with_output().unwrap();
    let took = started.elapsed();
    assert!(!output.status.success(), "{}", describe(&output));
    assert!(took < Duration::from_secs(20), "took {took:?}");
    output
}

#[test]
fn two_servers_share_the_load_and_one_killed_mid_run_ends_it_invalid_naming_it() {
    let _serial = one_at_a_time();
    require_data("digits");
    let first = Server::start(Kind::MlServer, "digits");
    let mut second = Server::start(Kind::MlServer, "digits");
    let endpoints = [first.http(), second.http()];

    for balance in ["round_robin", "least_outstanding"] {
        let out = TempDir::new();
        let policy = format!("balance={balance:?}");
        let settings = plugin_settings("http", &endpoints, &[&policy]);
        let args = network_args(
            &settings,
            &[
                "--scenario",
                "Server",
                "--set",
                "server_target_qps=200",
                "--set",
                "min_duration_ms=1000",
                "--set",
                "min_query_count=100",
            ],
        );
        let output = mlperf_host(out.path(), &args);
        assert!(output.status.success(), "{balance}: {}", describe(&output));
        let stderr = text(&output.stderr);
        let (a, b) = (
            answered(&stderr, &endpoints[0]),
            answered(&stderr, &endpoints[1]),
        );
        assert!(a + b >= 100, "{balance}: {a} + {b}");
        assert!(
            a > 10 && b > 10,
            "{balance}: one endpoint idle: {a} and {b}"
        );
        if balance == "round_robin" {
            assert!(a.abs_diff(b) <= 1, "round robin: {a} and {b}");
        }
    }

    // The second server is killed 2 s into a run.
    let out = TempDir::new();
    let settings = plugin_settings("http", &endpoints, &[]);
    let output = server_run_with_a_fault(out.path(), &settings, 200, || second.kill());
    let stderr = text(&output.stderr);
    let victim = format!("endpoint {}:", endpoints[1]);
    assert!(stderr.contains(&victim), "{stderr}");
    let summary = summary(out.path());
    assert!(summary.contains("Result is : INVALID"), "{summary}");
    assert!(
        summary.contains(&victim),
        "the reason names the endpoint: {summary}"
    );
    for log in [
        "mlperf_log_detail.txt",
        "mlperf_log_accuracy.json",
        "result.json",
    ] {
        assert!(out.path().join(log).is_file(), "{log} missing");
    }
}

#[test]
fn a_server_that_stops_answering_times_out_and_ends_the_run_invalid() {
    let _serial = one_at_a_time();
    require_data("digits");
    let server = Server::start(Kind::MlServer, "digits");
    let out = TempDir::new();
    let settings = plugin_settings("grpc", &[server.grpc()], &["timeout_ms=1000"]);
    let output = server_run_with_a_fault(out.path(), &settings, 100, || server.signal("STOP"));
    server.signal("CONT");
    let stderr = text(&output.stderr);
    assert!(stderr.contains("no answer within 1000 ms"), "{stderr}");
    let summary = summary(out.path());
    assert!(summary.contains("Result is : INVALID"), "{summary}");
    let reason = format!("endpoint {}: no answer within 1000 ms", server.grpc());
    assert!(summary.contains(&reason), "{summary}");
}

#[test]
fn endpoints_models_and_tensors_that_do_not_fit_are_refused_before_the_run() {
    let _serial = one_at_a_time();
    require_data("digits");
    let server = Server::start(Kind::MlServer, "digits");
    let refused = |protocol: &str, endpoint: String, extra: &[&str], expected: &str| {
        let out = TempDir::new();
        let settings = plugin_settings(protocol, &[endpoint], extra);
        let output = mlperf_host(
            out.path(),
            &network_args(&settings, &["--scenario", "Offline"]),
        );
        assert!(
            !output.status.success(),
            "{expected}: {}",
            describe(&output)
        );
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains(expected),
            "wanted {expected:?} in:\n{stderr}"
        );
        assert!(
            !out.path().join("mlperf_log_summary.txt").exists(),
            "{expected}: a run was timed"
        );
    };
    let closed = format!("127.0.0.1:{}", closed_port());
    refused(
        "http",
        closed.clone(),
        &[],
        &format!("endpoint {closed}: is the server live"),
    );
    refused("http", closed.clone(), &[], "Connection refused");
    refused(
        "grpc",
        closed.clone(),
        &[],
        &format!("endpoint {closed}: is the server live"),
    );
    refused(
        "http",
        server.http(),
        &["model=\"mnist\""],
        "model \"mnist\" is not ready (or not served) there",
    );
    refused(
        "grpc",
        server.grpc(),
        &["model=\"mnist\""],
        "model \"mnist\" is not ready (or not served) there",
    );
    refused(
        "http",
        server.http(),
        &["output=\"logits\""],
        "output = \"logits\" is not one of the model's outputs (\"label\", \"probabilities\")",
    );
    refused(
        "grpc",
        server.grpc(),
        &["datatype=\"UINT8\""],
        "datatype = \"UINT8\", but the model's input \"input\" is FP32",
    );
    refused(
        "http",
        server.http(),
        &["shape=[8, 9]"],
        "shape = [8, 9] does not fit the model's input \"input\" of shape [-1, 64]",
    );
    // The second endpoint is checked too.
    let out = TempDir::new();
    let settings = plugin_settings("http", &[server.http(), closed.clone()], &[]);
    let output = mlperf_host(
        out.path(),
        &network_args(&settings, &["--scenario", "Offline"]),
    );
    assert!(
        text(&output.stderr).contains(&format!("endpoint {closed}")),
        "{}",
        describe(&output)
    );
    // Samples that do not fit the served input are refused at the first query, untimed
    // data aside: fmnist's 784 floats against digits' 64.
    let out = TempDir::new();
    let settings = plugin_settings("http", &[server.http()], &[]);
    let mut args = network_args(&settings, &["--scenario", "SingleStream"]);
    let fmnist = repo().join("data/fmnist/inputs.npy");
    let fmnist = fmnist.to_str().unwrap();
    if Path::new(fmnist).is_file() {
        args.extend_from_slice(&["--dataset", fmnist]);
        let output = mlperf_host(out.path(), &args);
        assert!(!output.status.success(), "{}", describe(&output));
        let stderr = text(&output.stderr);
        assert!(stderr.contains("do not fit the model's input"), "{stderr}");
    }
}
