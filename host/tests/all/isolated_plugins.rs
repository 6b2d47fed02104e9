//! `run --isolate process`: the plugin in a child process. Whatever the plugin does to its
//! process (crash, exit, hang, freeze), the run ends INVALID within its bound with every log
//! written and the cause in the summary, the detail log and result.json; a healthy plugin
//! gives the same results as in-process.

use crate::faulty_plugins::{plugin_sets, signal, start_run, wait_within};
use crate::support::{self, TempDir};

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// An isolated SingleStream run of `plugin` (100 queries); its output and duration.
fn run_isolated(dir: &Path, plugin: &Path, out: &str, extra: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let output = Command::new(EXE)
        .args(["run", "--isolate", "process", "--plugin"])
        .arg(plugin)
        .args(["--out", out, "--total-samples", "64"])
        .args(["--set", "min_duration_ms=0", "--set", "min_query_count=100"])
        .args(extra)
        .current_dir(dir)
        .env_remove("MLPERF_HOST_LOG")
        .output()
        .expect("run mlperf-host");
    (output, started.elapsed())
}

/// The run in `out` exited with `status`, INVALID with `cause` in every place a user looks.
pub(crate) fn assert_invalid_because(output: &Output, status: i32, out: &Path, cause: &str) {
    assert_eq!(
        output.status.code(),
        Some(status),
        "{}",
        support::describe(output)
    );
    let summary = std::fs::read_to_string(out.join("mlperf_log_summary.txt")).unwrap();
    assert!(summary.contains("Result is : INVALID"), "{summary}");
    let detail = std::fs::read_to_string(out.join("mlperf_log_detail.txt")).unwrap();
    assert!(detail.contains(cause), "{cause} not in the detail log");
    assert!(
        detail.contains("\"key\": \"result_validity\""),
        "the detail log is whole"
    );
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("result.json")).unwrap()).unwrap();
    assert!(
        result.to_string().contains(cause),
        "{cause} not in result.json"
    );
}

#[test]
fn a_crash_an_exit_or_a_kill_of_the_plugin_process_ends_the_run_invalid_with_the_cause() {
    let dir = TempDir::new();
    let plugin = support::faulty_plugin();
    for (name, fault, cause) in [
        (
            "segv",
            "fault=segfault",
            "plugin process killed by SIGSEGV after 49 samples",
        ),
        (
            "abort",
            "fault=abort",
            "plugin process killed by SIGABRT after 49 samples",
        ),
        (
            "exit0",
            "fault=exit",
            "plugin process exited with status 0 after 49 samples",
        ),
        // As the OOM killer would.
        ("oom", "fault=kill", "plugin process killed by SIGKILL"),
    ] {
        let sets = plugin_sets(&[fault, "at_sample=50"]);
        let (output, took) = run_isolated(dir.path(), &plugin, name, &sets);
        assert_invalid_because(&output, 1, &dir.path().join(name), cause);
        assert!(
            support::text(&output.stderr).contains(cause),
            "{name}: {}",
            support::describe(&output)
        );
        assert!(took < Duration::from_secs(15), "{name}: took {took:?}");
    }
}

#[test]
fn a_call_that_never_returns_is_ended_after_the_stall_timeout() {
    let dir = TempDir::new();
    let plugin = support::faulty_plugin();
    // flush_queries returns to the host only when the plugin's returns, as in-process: one
    // that never returns ends the run INVALID although every sample completed.
    for call in ["issue_query", "flush_queries"] {
        let fault = format!("fault=hang_{}", &call[..5]);
        let mut args = plugin_sets(&[&fault, "at_sample=50"]);
        args.extend(["--stall-timeout", "1"]);
        let (output, took) = run_isolated(dir.path(), &plugin, call, &args);
        assert_invalid_because(
            &output,
            1,
            &dir.path().join(call),
            &format!("{call} has not returned after 1s"),
        );
        assert!(took < Duration::from_secs(15), "took {took:?}");
    }

    // A destroy that never returns: the process is killed, every file is already written.
    let mut args = plugin_sets(&["fault=hang_destroy"]);
    args.extend(["--stall-timeout", "1"]);
    let (output, took) = run_isolated(dir.path(), &plugin, "stuck", &args);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        support::describe(&output)
    );
    assert!(support::text(&output.stderr).contains("destroy has not returned after 1s"));
    let summary = std::fs::read_to_string(dir.path().join("stuck/mlperf_log_summary.txt")).unwrap();
    assert!(summary.contains("Result is : VALID"), "{summary}");
    assert!(took < Duration::from_secs(15), "took {took:?}");
}

/// A run that goes on until something ends it: the null plugin, isolated, 1 ms a query.
const LONG_ISOLATED_RUN: [&str; 8] = [
    "--isolate",
    "process",
    "--latency",
    "1ms",
    "--set",
    "min_duration_ms=600000",
    "--set",
    "min_query_count=1",
];

/// The plugin process of the `mlperf-host` process `host`.
fn plugin_process(host: u32) -> u32 {
    let children =
        std::fs::read_to_string(format!("/proc/{host}/task/{host}/children")).unwrap_or_default();
    if let Some(pid) = children.split_whitespace().next() {
        return pid.parse().unwrap();
    }
    // Without /proc/…/children: the process whose parent is `host`.
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        let ppid: u32 = after_name.split(' ').nth(1).unwrap().parse().unwrap();
        if ppid == host {
            return entry.file_name().to_str().unwrap().parse().unwrap();
        }
    }
    panic!("no plugin process under {host}");
}

#[test]
fn a_frozen_plugin_process_is_killed_when_its_heartbeat_stops() {
    let dir = TempDir::new();
    let host = start_run(dir.path(), "logs", &LONG_ISOLATED_RUN);
    let plugin = plugin_process(host.id());
    let stopped = Instant::now();
    assert!(Command::new("kill")
        .args(["-STOP", &plugin.to_string()])
        .status()
        .unwrap()
        .success());
    let (output, _) = wait_within(host, Duration::from_secs(20));
    let took = stopped.elapsed();
    assert_invalid_because(
        &output,
        1,
        &dir.path().join("logs"),
        "plugin process stopped responding (no heartbeat for 1.5 s)",
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(
        !Path::new(&format!("/proc/{plugin}")).exists(),
        "the frozen process was killed and reaped"
    );
}

#[test]
fn sigterm_to_the_host_ends_the_run_and_its_plugin_process() {
    let dir = TempDir::new();
    let host = start_run(dir.path(), "logs", &LONG_ISOLATED_RUN);
    let plugin = plugin_process(host.id());
    signal(&host, "TERM");
    let (output, _) = wait_within(host, Duration::from_secs(20));
    assert_invalid_because(
        &output,
        143,
        &dir.path().join("logs"),
        "interrupted by SIGTERM",
    );
    assert!(!Path::new(&format!("/proc/{plugin}")).exists());
}

#[test]
fn an_isolated_plugin_reads_the_loaded_samples_and_returns_the_same_accuracy_log() {
    let dir = TempDir::new();
    // Answers every sample with its own data.
    let plugin = support::faulty_plugin();
    let dataset = dir.path().join("samples.npy");
    let count = 40;
    let data: Vec<u8> = (0..count * 12).map(|i| (i * 7 % 251) as u8).collect();
    mlperf_host::samples::write_npy(&dataset, "|u1", count, &[3, 4], &data).unwrap();
    let mut logs = Vec::new();
    for isolate in ["none", "process"] {
        let output = Command::new(EXE)
            .args(["run", "--isolate", isolate, "--plugin"])
            .arg(&plugin)
            .args(["--plugin-set", "echo=true"])
            .arg("--dataset")
            .arg(&dataset)
            // Several sets: each load reaches the plugin process as a new image.
            .args(["--performance-samples", "16", "--mode", "AccuracyOnly"])
            .args(["--out", isolate])
            .current_dir(dir.path())
            .output()
            .unwrap();
        support::assert_ok(&output);
        logs.push(
            std::fs::read_to_string(dir.path().join(isolate).join("mlperf_log_accuracy.json"))
                .unwrap(),
        );
    }
    assert!(logs[0].matches("\"qsl_idx\"").count() == count);
    assert_eq!(logs[0], logs[1]);
    // The data came back: sample 1's bytes, hex.
    let second: String = data[12..24].iter().map(|b| format!("{b:02X}")).collect();
    assert!(logs[1].contains(&second), "{second} in {}", logs[1]);
}

#[test]
fn completions_answered_in_batches_come_back_the_same_isolated() {
    // The null plugin answers an Offline query in one call: an isolated plugin's process
    // sends such calls back as batch records, with the bytes (the samples' own, or none)
    // and token counts of every response.
    let dir = TempDir::new();
    let dataset = dir.path().join("samples.npy");
    let count = 300;
    let data: Vec<u8> = (0..count * 12).map(|i| (i * 7 % 251) as u8).collect();
    mlperf_host::samples::write_npy(&dataset, "|u1", count, &[3, 4], &data).unwrap();
    for (response, tokens) in [("data", true), ("empty", false), ("index", false)] {
        let mut logs = Vec::new();
        for isolate in ["none", "process"] {
            let out = format!("{response}-{isolate}");
            let mut command = Command::new(EXE);
            command
                .args(["run", "--isolate", isolate, "--scenario", "Offline"])
                .arg("--plugin")
                .arg(support::null_plugin())
                .args(["--plugin-set", &format!("response={response}")])
                .arg("--dataset")
                .arg(&dataset)
                .args(["--mode", "AccuracyOnly", "--out", &out])
                .current_dir(dir.path());
            if tokens {
                command.args(["--tokens", "--plugin-set", "tokens=true"]);
            }
            let output = command.output().unwrap();
            support::assert_ok(&output);
            logs.push(
                std::fs::read_to_string(dir.path().join(&out).join("mlperf_log_accuracy.json"))
                    .unwrap(),
            );
        }
        assert_eq!(logs[0].matches("\"qsl_idx\"").count(), count, "{response}");
        assert_eq!(logs[0], logs[1], "{response}");
        let second: String = match response {
            "data" => data[12..24].iter().map(|b| format!("{b:02X}")).collect(),
            "index" => "01000000".into(),
            _ => String::new(),
        };
        assert!(
            logs[1].contains(&format!("\"data\" : \"{second}\"")),
            "{response}: {}",
            &logs[1][..400.min(logs[1].len())]
        );
        if tokens {
            assert!(logs[1].contains("token_count"), "{}", &logs[1][..400]);
        }
    }
}

#[test]
fn token_runs_and_the_result_keys_are_the_same_isolated() {
    let dir = TempDir::new();
    let mut keys = Vec::new();
    for isolate in ["none", "process"] {
        let output = Command::new(EXE)
            .args([
                "run",
                "--isolate",
                isolate,
                "--tokens",
                "--scenario",
                "Server",
            ])
            .args([
                "--set",
                "min_duration_ms=300",
                "--set",
                "min_query_count=200",
            ])
            .args(["--set", "server_target_qps=2000"])
            .args(["--out", isolate])
            .current_dir(dir.path())
            .output()
            .unwrap();
        support::assert_ok(&output);
        let result: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.path().join(isolate).join("result.json")).unwrap(),
        )
        .unwrap();
        let performance = &result["performance"];
        assert_eq!(
            performance["validity"]["valid"], true,
            "{isolate}: {result}"
        );
        // The first tokens crossed the process boundary: token latencies are reported.
        let tokens = performance["tokens"].as_object();
        assert!(tokens.is_some(), "{isolate}: {result}");
        let mut names: Vec<String> = performance.as_object().unwrap().keys().cloned().collect();
        names.extend(tokens.unwrap().keys().map(|k| format!("tokens.{k}")));
        names.sort();
        keys.push(names);
    }
    assert_eq!(keys[0], keys[1]);
}

#[test]
fn several_server_issue_threads_share_the_isolated_issue_ring() {
    let dir = TempDir::new();
    let started = Instant::now();
    let output = Command::new(EXE)
        .args(["run", "--isolate", "process", "--scenario", "Server"])
        .args(["--set", "server_num_issue_query_threads=3"])
        .args(["--set", "server_target_qps=20000"])
        .args([
            "--set",
            "min_duration_ms=300",
            "--set",
            "min_query_count=6000",
        ])
        .args(["--drain-timeout", "10", "--out", "threads"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    // Pushed at once without the ring's lock, entries were lost and the drain never ended.
    assert!(started.elapsed() < Duration::from_secs(30));
    support::assert_ok(&output);
    let result: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("threads").join("result.json")).unwrap(),
    )
    .unwrap();
    let performance = &result["performance"];
    let queries = performance["query_count"].as_u64().unwrap();
    assert!(queries >= 6000, "{result}");
    assert_eq!(performance["sample_count"].as_u64(), Some(queries));
    let summary =
        std::fs::read_to_string(dir.path().join("threads").join("mlperf_log_summary.txt")).unwrap();
    assert!(summary.contains("No errors encountered"), "{summary}");
}

#[test]
fn an_isolated_plugin_that_cannot_start_is_refused_with_its_reason() {
    let dir = TempDir::new();
    let (output, _) = run_isolated(dir.path(), &dir.path().join("missing.so"), "logs", &[]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        support::describe(&output)
    );
    assert!(
        support::text(&output.stderr).contains("missing.so"),
        "{}",
        support::describe(&output)
    );
}

#[test]
fn timed_preprocessing_runs_in_the_plugin_process_with_the_same_answers() {
    support::require_data("fmnist");
    let dir = TempDir::new();
    let run = |out: &Path, isolated: bool, scenario: &str| {
        let mut command = Command::new(EXE);
        command
            .args(["run", "--benchmark", "fmnist", "--scenario", scenario])
            .args(["--mode", "AccuracyOnly", "--preprocess-timed", "--out"])
            .arg(out)
            .current_dir(support::repo())
            .env("ORT_DYLIB_PATH", support::ort_library())
            .env_remove("MLPERF_HOST_LOG");
        if isolated {
            command.args(["--isolate", "process"]);
        }
        let output = command.output().expect("run mlperf-host");
        assert!(output.status.success(), "{}", support::describe(&output));
        output
    };
    // SingleStream reuses each query's output buffer once its sample is released (the plugin
    // process tracks what it completed); Offline preprocesses one query of every sample;
    // Server's two workers batch queries, so a buffer is reused while others are in flight
    // (one handed back too early would be overwritten under a worker: other answers).
    for scenario in ["SingleStream", "Offline", "Server"] {
        let (inline, isolated) = (
            dir.path().join(format!("inline-{scenario}")),
            dir.path().join(format!("isolated-{scenario}")),
        );
        run(&inline, false, scenario);
        run(&isolated, true, scenario);
        // The same responses for the same samples (Offline's workers complete in any order).
        let log = |dir: &Path| {
            let text = std::fs::read_to_string(dir.join("mlperf_log_accuracy.json")).unwrap();
            let records: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
            let mut samples: Vec<(u64, String)> = records
                .iter()
                .map(|r| (r["qsl_idx"].as_u64().unwrap(), r["data"].to_string()))
                .collect();
            samples.sort();
            samples
        };
        let (inline_log, isolated_log) = (log(&inline), log(&isolated));
        assert_eq!(inline_log.len(), 10_000, "{scenario}");
        assert!(
            inline_log == isolated_log,
            "{scenario}: the responses differ"
        );
        let score = |dir: &Path| std::fs::read_to_string(dir.join("accuracy.txt")).unwrap();
        assert_eq!(score(&inline), score(&isolated), "{scenario}");
        let detail = std::fs::read_to_string(isolated.join("mlperf_log_detail.txt")).unwrap();
        assert!(detail.contains(r#""key": "sut_preprocess_timed", "value": "true""#));
    }
}
