//! `mlperf-host run`, driven through the built binary.

use crate::support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use support::TempDir;

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// Runs `mlperf-host run ARGS` in `dir` (so the default output directory lands there).
fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(EXE)
        .arg("run")
        .args(args)
        .current_dir(dir)
        .env_remove("MLPERF_HOST_LOG")
        .output()
        .expect("run mlperf-host")
}

fn run(args: &[&str]) -> Output {
    let dir = TempDir::new();
    run_in(dir.path(), args)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn assert_ok(output: &Output) {
    assert!(
        output.status.success(),
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        stdout(output),
        stderr(output)
    );
}

/// Fails with nothing on stdout and a one-line `error: …` message last on stderr (after any
/// log lines); returns that line.
fn assert_error(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(1), "stderr:\n{}", stderr(output));
    assert!(stdout(output).is_empty(), "stdout:\n{}", stdout(output));
    let err = stderr(output);
    let last = err.lines().last().unwrap_or_default().to_string();
    assert!(last.starts_with("error: "), "{err}");
    last
}

/// Settings that make any scenario finish in well under a second.
const QUICK: [&str; 6] = [
    "--set",
    "min_duration_ms=0",
    "--set",
    "min_query_count=100",
    "--set",
    "server_target_qps=5000",
];

fn quick(scenario: &str, extra: &[&str]) -> Output {
    let mut args = vec!["--scenario", scenario];
    args.extend_from_slice(&QUICK);
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn single_stream_run_prints_the_summary() {
    let dir = TempDir::new();
    let mut args = vec!["--scenario", "SingleStream"];
    args.extend_from_slice(&QUICK);
    let output = run_in(dir.path(), &args);
    assert_ok(&output);
    let out = stdout(&output);
    assert!(out.contains("MLPerf Results Summary"), "{out}");
    assert!(out.contains("Scenario : SingleStream"), "{out}");
    assert!(out.contains("Mode     : PerformanceOnly"), "{out}");
    assert!(out.contains("Result is : VALID"), "{out}");
    // The printed summary is the summary file; the other logs are there too, no trace.
    let logs = dir.path().join("mlperf-logs");
    let file = std::fs::read_to_string(logs.join("mlperf_log_summary.txt")).unwrap();
    assert_eq!(out, file);
    for name in [
        "mlperf_log_detail.txt",
        "mlperf_log_accuracy.json",
        "result.json",
    ] {
        assert!(logs.join(name).is_file(), "{name}");
    }
    assert!(!logs.join("mlperf_log_trace.json").exists());
}

#[test]
fn out_and_trace_write_the_logs_where_asked() {
    let dir = TempDir::new();
    let out = dir.path().join("deep/er/logs");
    let mut args = QUICK.to_vec();
    args.extend(["--out", out.to_str().unwrap(), "--trace", "--quiet"]);
    let output = run_in(dir.path(), &args);
    assert_ok(&output);
    assert!(stdout(&output).is_empty());
    for name in [
        "mlperf_log_summary.txt",
        "mlperf_log_detail.txt",
        "mlperf_log_accuracy.json",
        "mlperf_log_trace.json",
        "result.json",
    ] {
        assert!(out.join(name).is_file(), "{name}");
    }
    assert!(!dir.path().join("mlperf-logs").exists());
}

#[test]
fn progress_reaches_the_debug_log() {
    let mut args = QUICK.to_vec();
    args.push("-vv");
    let output = run(&args);
    assert_ok(&output);
    let err = stderr(&output);
    assert!(
        err.contains("progress") && err.contains("samples_completed=100"),
        "{err}"
    );
}

#[test]
fn scenario_and_mode_are_case_insensitive_with_aliases() {
    let output = quick("offline", &["--mode", "performance", "--quiet"]);
    assert_ok(&output);
    assert!(stdout(&output).is_empty(), "--quiet prints no summary");
    let output = quick("SERVER", &["--mode", "PERFORMANCEONLY", "-q"]);
    assert_ok(&output);
}

#[test]
fn offline_run() {
    let output = quick("Offline", &[]);
    assert_ok(&output);
    let out = stdout(&output);
    assert!(out.contains("Scenario : Offline"), "{out}");
    assert!(out.contains("Result is : VALID"), "{out}");
}

#[test]
fn server_run() {
    let output = quick("Server", &["--set", "min_query_count=500"]);
    assert_ok(&output);
    assert!(stdout(&output).contains("Scenario : Server"));
}

#[test]
fn server_run_sleeping_to_each_issue_keeps_the_schedule() {
    // --issue-spin 0: no busy-wait before each query (sleeping wakes tens of µs late, which
    // the schedule absorbs).
    let output = quick(
        "Server",
        &["--set", "min_query_count=2000", "--issue-spin", "0"],
    );
    assert_ok(&output);
    let text = stdout(&output);
    let qps: f64 = text
        .lines()
        .find_map(|line| line.strip_prefix("Completed samples per second"))
        .and_then(|rest| rest.trim_start_matches([' ', ':']).trim().parse().ok())
        .unwrap_or_else(|| panic!("no completed qps in:\n{text}"));
    assert!(
        (4500.0..5500.0).contains(&qps),
        "{qps} qps at a 5000 qps target"
    );
}

#[test]
fn server_run_with_latency() {
    let output = quick(
        "Server",
        &["--latency", "1ms", "--set", "min_query_count=300"],
    );
    assert_ok(&output);
    assert!(stdout(&output).contains("Scenario : Server"));
}

#[test]
fn multi_stream_run() {
    let output = quick("MultiStream", &["--latency", "100us"]);
    assert_ok(&output);
    assert!(stdout(&output).contains("Scenario : MultiStream"));
}

#[test]
fn accuracy_and_submission_runs() {
    for mode in ["AccuracyOnly", "submission"] {
        let output = quick("SingleStream", &["--mode", mode, "--total-samples", "64"]);
        assert_ok(&output);
    }
    // The accuracy mode has no performance result: valid when it had no errors.
    let output = quick(
        "Offline",
        &[
            "--mode",
            "accuracy",
            "--total-samples",
            "64",
            "--require-valid",
        ],
    );
    assert_ok(&output);
}

#[test]
fn token_runs() {
    for (scenario, latency) in [
        ("SingleStream", "0"),
        ("Server", "500us"),
        ("Offline", "1ms"),
    ] {
        let output = quick(
            scenario,
            &[
                "--tokens",
                "--latency",
                latency,
                "--set",
                "min_query_count=1000",
                "-vv",
            ],
        );
        assert_ok(&output);
        let err = stderr(&output);
        assert!(err.contains("use_token_latencies: true"), "{err}");
        let out = stdout(&output).to_lowercase();
        assert!(out.contains("token"), "{scenario}: {out}");
        // The official summary reports no first-token latency for Offline.
        if scenario != "Offline" {
            assert!(out.contains("first token"), "{scenario}: {out}");
        }
        assert!(out.contains("result is : valid"), "{scenario}: {out}");
    }
}

#[test]
fn invalid_run_exits_zero_unless_required_valid() {
    let invalid = [
        "--set",
        "min_duration_ms=0",
        "--set",
        "min_query_count=10",
        "--set",
        "max_query_count=5",
    ];
    let output = run(&invalid);
    assert_ok(&output);
    assert!(stdout(&output).contains("Result is : INVALID"));

    let mut args = invalid.to_vec();
    args.push("--require-valid");
    let output = run(&args);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains("error: the result is INVALID"), "{err}");
    assert!(stdout(&output).contains("Result is : INVALID"));

    let mut args = QUICK.to_vec();
    args.push("--require-valid");
    assert_ok(&run(&args));
}

#[test]
fn unknown_set_key_lists_the_valid_keys() {
    let err = assert_error(&run(&["--set", "min_durration_ms=0"]));
    assert!(err.contains("min_durration_ms"), "{err}");
    for key in [
        "min_duration_ms",
        "server_target_qps",
        "use_token_latencies",
        "mode",
    ] {
        assert!(err.contains(key), "{key} missing from {err}");
    }
    assert_eq!(
        stderr(&run(&["--set", "min_durration_ms=0"]))
            .lines()
            .count(),
        1
    );
}

#[test]
fn a_second_run_without_out_says_it_replaces_the_first() {
    let dir = TempDir::new();
    let first = run_in(dir.path(), &QUICK);
    assert_ok(&first);
    assert!(!stderr(&first).contains("replacing"), "{}", stderr(&first));
    let second = run_in(dir.path(), &QUICK);
    assert_ok(&second);
    assert!(
        stderr(&second).contains("replacing the previous run's logs in mlperf-logs/"),
        "{}",
        stderr(&second)
    );
    // With --out, the folder is the user's choice: nothing to say.
    for _ in 0..2 {
        let chosen = run_in(dir.path(), &[&QUICK[..], &["--out", "mine"]].concat());
        assert!(
            !stderr(&chosen).contains("replacing"),
            "{}",
            stderr(&chosen)
        );
    }
}

#[test]
fn what_runs_and_builds_leave_in_the_clone_is_ignored_by_git() {
    let root = support::repo();
    let left = [
        "mlperf-logs/mlperf_log_detail.txt",
        "tuned/user.conf",
        "host/python/alias/build/lib/x.py",
        "host/python/mlperf_host.egg-info/PKG-INFO",
    ];
    let output = Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["check-ignore", "--no-index"])
        .args(left)
        .output()
        .expect("git");
    let ignored = stdout(&output);
    for path in left {
        assert!(
            ignored.lines().any(|l| l == path),
            "{path} is not ignored:\n{ignored}"
        );
    }
}

#[test]
fn a_plugin_key_typo_names_the_key_and_the_plugins_keys_on_one_line() {
    let output = run(&["--plugin-set", "wrkers=2"]);
    let err = assert_error(&output);
    assert!(err.contains("unknown field `wrkers`"), "{err}");
    assert!(
        err.contains("`workers`") && err.contains("`latency_us`"),
        "{err}"
    );
    // The plugin is there; how to build it is not the problem.
    assert!(!err.contains("build it with"), "{err}");
    assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
}

#[test]
fn bad_set_values_name_key_and_value() {
    for arg in [
        "min_query_count=lots",
        "min_query_count=-3",
        "print_timestamps=maybe",
        "server_target_qps=nan",
        "mode=Turbo",
    ] {
        let err = assert_error(&run(&["--set", arg]));
        assert!(err.contains(arg), "{arg}: {err}");
    }
    let err = assert_error(&run(&["--set", "scenario=Offline"]));
    assert!(err.contains("--scenario"), "{err}");
    // Not key=value: a clap usage error.
    let output = run(&["--set", "min_query_count"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("key=value"));
}

#[test]
fn set_accepts_every_type() {
    let output = run(&[
        "--set",
        "min_duration_ms=0",
        "--set",
        "min_query_count=0x40",
        "--set",
        "print_timestamps=false",
        "--set",
        "single_stream_expected_latency_ns=2e6",
        "--set",
        "mode=PerformanceOnly",
        "-vv",
    ]);
    assert_ok(&output);
    let err = stderr(&output);
    assert!(err.contains("min_query_count: 64"), "{err}");
    assert!(
        err.contains("single_stream_expected_latency_ns: 2000000.0"),
        "{err}"
    );
}

#[test]
fn malformed_user_conf_names_file_and_line() {
    let dir = TempDir::new();
    let conf = dir.write(
        "user.conf",
        "# a comment\n*.*.min_query_count = 10\nresnet50.SingleStream.target_latency 5\n",
    );
    let output = run_in(dir.path(), &["--user-conf", conf.to_str().unwrap()]);
    let err = assert_error(&output);
    assert!(err.contains("user.conf:3"), "{err}");
    assert!(!dir.path().join("mlperf-logs").exists(), "nothing ran");

    let err = assert_error(&run_in(dir.path(), &["--user-conf", "missing.conf"]));
    assert!(err.contains("missing.conf"), "{err}");
}

#[test]
fn user_conf_is_applied_after_mlperf_conf_and_set_after_both() {
    let dir = TempDir::new();
    let conf = dir.write(
        "user.conf",
        "*.*.min_duration = 0\nresnet50.SingleStream.min_query_count = 50\n\
         *.Offline.min_query_count = 70\n",
    );
    let conf = conf.to_str().unwrap();
    let output = run_in(dir.path(), &["--user-conf", conf, "-vv"]);
    assert_ok(&output);
    let err = stderr(&output);
    assert!(err.contains("min_query_count: 50"), "{err}");
    // mlperf.conf's seeds are there too.
    assert!(err.contains("qsl_rng_seed: 2085463073848966840"), "{err}");

    // Another model sees only the wildcard lines.
    let output = run_in(dir.path(), &["--user-conf", conf, "--model", "bert", "-vv"]);
    assert_ok(&output);
    assert!(stderr(&output).contains("min_query_count: 100"));

    let output = run_in(
        dir.path(),
        &["--user-conf", conf, "--set", "min_query_count=20", "-vv"],
    );
    assert_ok(&output);
    assert!(stderr(&output).contains("min_query_count: 20"));
}

#[test]
fn custom_mlperf_conf() {
    let dir = TempDir::new();
    let conf = dir.write(
        "rules.conf",
        "*.*.min_duration = 0\n*.SingleStream.min_query_count = 37\n*.*.qsl_rng_seed = 42\n",
    );
    let output = run_in(
        dir.path(),
        &["--mlperf-conf", conf.to_str().unwrap(), "-vv"],
    );
    assert_ok(&output);
    let err = stderr(&output);
    assert!(err.contains("min_query_count: 37"), "{err}");
    assert!(err.contains("qsl_rng_seed: 42,"), "{err}");
    assert!(stdout(&output).contains("Result is : "));

    let bad = dir.write("bad.conf", "*.*.min_duration=0\n");
    let err = assert_error(&run_in(
        dir.path(),
        &["--mlperf-conf", bad.to_str().unwrap()],
    ));
    assert!(err.contains("bad.conf:1"), "{err}");
}

#[test]
fn audit_conf_is_checked_and_applied() {
    let dir = TempDir::new();
    // Applied after --set: the run stops after 5 queries of the 100 it needs.
    dir.write("audit.config", "*.*.max_query_count = 5\n");
    let mut args = QUICK.to_vec();
    let output = run_in(dir.path(), &args);
    assert!(stdout(&output).contains("Result is : VALID"));
    args.extend(["--audit-conf", "audit.config"]);
    let output = run_in(dir.path(), &args);
    assert_ok(&output);
    assert!(stdout(&output).contains("Result is : INVALID"));

    let err = assert_error(&run_in(dir.path(), &["--audit-conf", "nowhere.config"]));
    assert!(err.contains("nowhere.config"), "{err}");
    dir.write("broken.config", "*.*.min_query_count = x\n");
    let err = assert_error(&run_in(dir.path(), &["--audit-conf", "broken.config"]));
    assert!(err.contains("broken.config:1"), "{err}");
}

/// A run that would take ten minutes if it started.
const LONG: [&str; 2] = ["--set", "min_duration_ms=600000"];

#[test]
fn out_dir_under_a_file_fails_before_running() {
    let dir = TempDir::new();
    let file = dir.write("not-a-dir", "");
    for out in [file.join("logs"), file.clone()] {
        let mut args = LONG.to_vec();
        args.extend(["--out", out.to_str().unwrap()]);
        let started = Instant::now();
        let err = assert_error(&run_in(dir.path(), &args));
        assert!(started.elapsed() < Duration::from_secs(30));
        assert!(err.contains(out.to_str().unwrap()), "{err}");
    }
}

#[cfg(unix)]
#[test]
fn read_only_out_dir_fails_before_running() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    if std::fs::write(locked.join("probe"), b"").is_ok() {
        // Root ignores permission bits: nothing to test.
        eprintln!("skipped: the read-only directory is writable here (root?)");
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
        return;
    }
    for out in [locked.clone(), locked.join("sub")] {
        let mut args = LONG.to_vec();
        args.extend(["--out", out.to_str().unwrap()]);
        let err = assert_error(&run_in(dir.path(), &args));
        assert!(err.contains(out.to_str().unwrap()), "{err}");
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn bad_flags_are_usage_errors() {
    for args in [
        &["--scenario", "Batch"][..],
        &["--mode", "Fast"],
        &["--latency", "5"],
        &["--latency", "5h"],
        &["--drain-timeout", "soon"],
        &["--issue-spin", "soon"],
        &["--no-such-flag"],
    ] {
        let output = run(args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    let err = assert_error(&run(&[
        "--total-samples",
        "10",
        "--performance-samples",
        "11",
    ]));
    assert!(err.contains("--performance-samples"), "{err}");
    // Bounds and counts of nothing, which used to be taken: a stall timeout of 0 (every
    // plugin then blamed for a stall), a sweep point of 0 s, a bench of no queries (-0/s).
    for (args, named) in [
        (&["run", "--stall-timeout", "0"][..], "--stall-timeout"),
        (&["sweep", "--duration", "0s"], "--duration"),
        (&["bench", "--queries", "0"], "--queries"),
        (&["bench", "--qps=-5"], "--qps"),
        (&["plugins", "test", "null", "--timeout", "0"], "--timeout"),
    ] {
        let output = Command::new(EXE).args(args).output().unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(named), "{args:?}: {err}");
    }
}

#[test]
fn engine_refusals_are_one_line_errors() {
    let err = assert_error(&quick("Offline", &["--mode", "FindPeakPerformance"]));
    assert!(err.contains("FindPeakPerformance"), "{err}");
    // An Offline query no memory can hold is refused, not an abort mid-run.
    let err = assert_error(&run(&[
        "--scenario",
        "Offline",
        "--set",
        "offline_expected_qps=1e10",
    ]));
    assert!(
        err.contains("cannot be allocated") && err.contains("offline_expected_qps"),
        "{err}"
    );
}

#[test]
fn log_filter_from_the_environment() {
    let dir = TempDir::new();
    let output = Command::new(EXE)
        .arg("run")
        .args(QUICK)
        .current_dir(dir.path())
        .env("MLPERF_HOST_LOG", "debug")
        .output()
        .unwrap();
    assert_ok(&output);
    assert!(stderr(&output).contains("DEBUG"), "{}", stderr(&output));

    let output = Command::new(EXE)
        .arg("run")
        .args(QUICK)
        .arg("-q")
        .current_dir(dir.path())
        .env("MLPERF_HOST_LOG", "[[not a filter")
        .output()
        .unwrap();
    assert_ok(&output);
    assert!(stderr(&output).contains("ignoring MLPERF_HOST_LOG"));
}

#[test]
fn bench_still_parses() {
    let output = Command::new(EXE)
        .args(["bench", "--help"])
        .output()
        .unwrap();
    assert_ok(&output);
    assert!(stdout(&output).contains("--case"));
}

/// A .npy data set of `count` samples of 6 bytes, sample i holding i, i+1, … (mod 256).
fn write_u8_dataset(dir: &Path, count: usize) -> std::path::PathBuf {
    let path = dir.join("samples.npy");
    let data: Vec<u8> = (0..count)
        .flat_map(|i| (0..6).map(move |k| ((i + k) % 256) as u8))
        .collect();
    mlperf_host::samples::write_npy(&path, "|u1", count, &[2, 3], &data).unwrap();
    path
}

#[test]
fn dataset_samples_reach_the_default_null_plugin_in_place() {
    let dir = TempDir::new();
    let dataset = write_u8_dataset(dir.path(), 300);
    let output = run_in(
        dir.path(),
        &[
            "--scenario",
            "Offline",
            "--mode",
            "AccuracyOnly",
            "--dataset",
            dataset.to_str().unwrap(),
            "--performance-samples",
            "100",
            "--plugin-set",
            "response=data",
            "--quiet",
        ],
    );
    assert_ok(&output);
    let log =
        std::fs::read_to_string(dir.path().join("mlperf-logs/mlperf_log_accuracy.json")).unwrap();
    let records: Vec<serde_json::Value> = serde_json::from_str(&log).unwrap();
    assert_eq!(records.len(), 300);
    for record in &records {
        let index = record["qsl_idx"].as_u64().unwrap() as usize;
        let expected: String = (0..6)
            .map(|k| format!("{:02X}", (index + k) % 256))
            .collect();
        assert_eq!(record["data"].as_str().unwrap(), expected, "sample {index}");
    }
}

#[test]
fn dataset_problems_are_one_line_errors_naming_the_file() {
    let dir = TempDir::new();
    let dataset = write_u8_dataset(dir.path(), 10);
    let dataset = dataset.to_str().unwrap();
    let csv = dir.path().join("samples.csv");
    std::fs::write(&csv, "1,2,3\n").unwrap();
    let truncated = dir.path().join("cut.npy");
    let bytes = std::fs::read(dataset).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 3]).unwrap();
    let cases: [(Vec<&str>, &[&str]); 5] = [
        (
            vec!["--dataset", csv.to_str().unwrap()],
            &["samples.csv", "expected a .npy"],
        ),
        (vec!["--dataset", "absent.npy"], &["absent.npy"]),
        (
            vec!["--dataset", truncated.to_str().unwrap()],
            &["cut.npy", "truncated"],
        ),
        (
            vec!["--dataset", dataset, "--total-samples", "5"],
            &["--total-samples", "--dataset"],
        ),
        (
            vec!["--dataset", dataset, "--performance-samples", "11"],
            &["performance sample count 11", "(10)"],
        ),
    ];
    for (args, words) in cases {
        let err = assert_error(&run_in(dir.path(), &args));
        for word in words {
            assert!(err.contains(word), "{args:?}: {err}");
        }
    }
    assert!(!dir.path().join("mlperf-logs").exists());
}

#[test]
fn latency_configures_only_the_default_null_plugin() {
    let null = support::null_plugin();
    let err = assert_error(&quick(
        "SingleStream",
        &["--plugin", null.to_str().unwrap(), "--latency", "1ms"],
    ));
    assert!(
        err.contains("--latency") && err.contains("--plugin-set"),
        "{err}"
    );
}

#[test]
fn a_config_path_that_is_a_fifo_is_refused_before_it_is_opened() {
    // Opening a FIFO waits for a writer: each of these used to block the command forever.
    let dir = TempDir::new();
    let fifo = dir.path().join("config.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let fifo = fifo.to_str().unwrap();
    for flag in [
        "--user-conf",
        "--audit-conf",
        "--plugin-config",
        "--benchmark",
    ] {
        let child = Command::new(EXE)
            .args(["run", flag, fifo, "--out"])
            .arg(dir.path().join("logs"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (output, _) = crate::faulty_plugins::wait_within(child, Duration::from_secs(30));
        let err = stderr(&output);
        assert!(!output.status.success(), "{flag}: {err}");
        assert!(
            err.contains("config.fifo") && err.contains("a FIFO (named pipe), not a regular file"),
            "{flag}: {err}"
        );
    }
}

#[test]
fn a_query_too_large_to_hold_is_refused_with_the_setting_to_lower_on_both_engines() {
    // Used to end in `memory allocation of 32000008184 bytes failed` and exit 134 (the
    // official engine: std::bad_alloc), leaving a partial detail log.
    let dir = TempDir::new();
    for engine in ["native", "official"] {
        let out = dir.path().join(engine);
        let output = run(&[
            "--engine",
            engine,
            "--scenario",
            "MultiStream",
            "--set",
            "multi_stream_samples_per_query=4000000000",
            "--out",
            out.to_str().unwrap(),
        ]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{engine}: {err}");
        assert!(
            err.contains("a query of 4000000000 samples")
                && err.contains("lower multi_stream_samples_per_query"),
            "{engine}: {err}"
        );
    }
}

#[test]
fn a_schedule_the_official_engine_would_generate_past_memory_is_refused() {
    // The official LoadGen generates every query before the first: SingleStream expecting
    // 1 ns a query is 600 billion of them, and 10^8 Server qps 60 billion (an RSS of 16 GB
    // after a minute, then the out-of-memory killer).
    if mlperf_host::loadgen::available_memory().is_none() {
        return;
    }
    let dir = TempDir::new();
    for (scenario, setting, fix) in [
        (
            "SingleStream",
            "single_stream_expected_latency_ns=1",
            "raise single_stream_expected_latency_ns or lower min_duration_ms",
        ),
        (
            "Server",
            "server_target_qps=100000000",
            "lower server_target_qps or min_duration_ms",
        ),
    ] {
        let out = dir.path().join(scenario);
        let output = run(&[
            "--engine",
            "official",
            "--scenario",
            scenario,
            "--set",
            setting,
            "--out",
            out.to_str().unwrap(),
        ]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{scenario}: {err}");
        assert!(
            err.contains("the official LoadGen holds the whole schedule before issuing: its ")
                && err.contains(fix),
            "{scenario}: {err}"
        );
    }
}

#[test]
fn a_detail_log_that_cannot_be_written_whole_is_named_and_cut_back_to_its_last_whole_line() {
    // A file size limit (RLIMIT_FSIZE, SIGXFSZ ignored) fails writes as a full disk does, at a
    // byte count that falls mid-line: the error used to name no file and leave the line torn.
    let dir = TempDir::new();
    let output = Command::new("bash")
        .args(["-c", "trap '' XFSZ; ulimit -f 16; exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_mlperf-host"))
        .args(["run", "--set", "min_duration_ms=200", "--out", "logs"])
        .current_dir(dir.path())
        .env_remove("MLPERF_HOST_LOG")
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains("logs/mlperf_log_detail.txt: File too large")
            && err.contains("cut back to its last whole line, at "),
        "{err}"
    );
    let detail = std::fs::read_to_string(dir.path().join("logs/mlperf_log_detail.txt")).unwrap();
    assert!(
        detail.len() > 4096 && detail.len() <= 16 * 1024,
        "{}",
        detail.len()
    );
    assert!(detail.ends_with('\n'));
    for line in detail.lines() {
        let json = line.strip_prefix(":::MLLOG ").expect(line);
        serde_json::from_str::<serde_json::Value>(json).expect(line);
    }
}
