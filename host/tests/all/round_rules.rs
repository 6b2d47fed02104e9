//! The round's rules as data (`configs/rounds/v6.1.toml`, `--round`), the data set's sha256
//! and its pin, and the audit kit: `compare` and `sysinfo --verify`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::support::{self, assert_ok, copy_dir, describe, mlperf_host, TempDir};

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A short null-plugin run into `out` (native engine).
fn run(dir: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["run", "--quiet", "--out", s(out)];
    args.extend_from_slice(extra);
    mlperf_host(dir, &args)
}

/// The findings of `check --json ARGS` as JSON objects.
fn findings(dir: &Path, args: &[&str]) -> Vec<serde_json::Value> {
    let mut full = vec!["check", "--json"];
    full.extend_from_slice(args);
    let output = mlperf_host(dir, &full);
    let findings: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", describe(&output)));
    findings.as_array().unwrap().clone()
}

/// `check --json --allow-native --allow-short` (plus `extra`): the errors' (rule, message).
fn check_errors(dir: &Path, tree: &Path, extra: &[&str]) -> BTreeSet<(String, String)> {
    let mut args = vec!["--allow-native", "--allow-short", s(tree)];
    args.extend_from_slice(extra);
    findings(dir, &args)
        .iter()
        .filter(|f| f["severity"] == "error")
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn messages_of(errors: &BTreeSet<(String, String)>, rule: &str) -> Vec<String> {
    errors
        .iter()
        .filter(|(r, _)| r == rule)
        .map(|(_, m)| m.clone())
        .collect()
}

/// A tree holding `run`'s logs as `benchmark`/`scenario`'s performance run of a datacenter
/// system.
fn tree_of(root: &Path, run: &Path, benchmark: &str, scenario: &str) -> PathBuf {
    let submitter = root.join("closed/org");
    let run_1 = submitter
        .join("results/box")
        .join(benchmark)
        .join(scenario)
        .join("performance/run_1");
    std::fs::create_dir_all(&run_1).unwrap();
    for file in ["mlperf_log_summary.txt", "mlperf_log_detail.txt"] {
        std::fs::copy(run.join(file), run_1.join(file)).unwrap();
    }
    std::fs::create_dir_all(submitter.join("systems")).unwrap();
    std::fs::write(
        submitter.join("systems/box.json"),
        r#"{"system_type": "datacenter", "division": "closed", "submitter": "org"}"#,
    )
    .unwrap();
    root.to_path_buf()
}

/// A token Server run of the null plugin: its first token comes when a worker takes the
/// sample up, so TTFT is well under a millisecond.
fn token_server_run(dir: &Path, out: &Path, tokens: bool) {
    let mut args = vec![
        "--scenario",
        "Server",
        "--set",
        "server_target_qps=500",
        "--set",
        "min_duration_ms=200",
        "--set",
        "min_query_count=100",
    ];
    if tokens {
        args.push("--tokens");
    }
    assert_ok(&run(dir, out, &args));
}

#[test]
fn an_interactive_llm_run_is_held_to_the_rounds_token_latency_limits() {
    let dir = TempDir::new();
    let runs = dir.path().join("runs");
    token_server_run(dir.path(), &runs.join("tokens"), true);
    let tree = tree_of(
        &dir.path().join("tree"),
        &runs.join("tokens"),
        "llama3.1-8b",
        "Interactive",
    );
    let errors = check_errors(dir.path(), &tree, &[]);
    // A Server run in an Interactive folder is what the round expects; its TTFT and TPOT keep
    // llama3.1-8b's Interactive limits (500 ms, 30 ms).
    assert!(
        messages_of(&errors, "scenario-mismatch").is_empty(),
        "{errors:#?}"
    );
    assert!(
        messages_of(&errors, "token-latencies").is_empty(),
        "{errors:#?}"
    );
    assert!(
        messages_of(&errors, "unknown-scenario").is_empty(),
        "{errors:#?}"
    );
    let required = messages_of(&errors, "required-scenarios");
    assert!(
        required.len() == 1 && required[0].contains("requires Offline for llama3.1-8b"),
        "{errors:#?}"
    );
    let sizes = messages_of(&errors, "performance-sample-count");
    assert!(
        sizes.len() == 1 && sizes[0].contains("13368 llama3.1-8b requires"),
        "{errors:#?}"
    );

    // Another round, whose Interactive TTFT limit is 1 us: the same run fails it.
    let round = dir.path().join("tight.toml");
    let text = std::fs::read_to_string(support::repo().join("configs/rounds/v6.1.toml")).unwrap();
    let tight = text.replace(
        "token_latency_ns.Interactive = { ttft = 500000000, tpot = 30000000 }",
        "token_latency_ns.Interactive = { ttft = 1000, tpot = 30000000 }",
    );
    assert_ne!(text, tight);
    std::fs::write(&round, tight).unwrap();
    let errors = check_errors(dir.path(), &tree, &["--round", s(&round)]);
    let limits = messages_of(&errors, "token-latencies");
    assert!(
        limits.len() == 1 && limits[0].contains("must be below 1000 ns and 30000000 ns"),
        "{errors:#?}"
    );

    // A run without token latencies, filed as an LLM's Server run, and as a scenario the
    // round does not give a datacenter llama3.1-8b.
    token_server_run(dir.path(), &runs.join("plain"), false);
    let tree = tree_of(
        &dir.path().join("plain-tree"),
        &runs.join("plain"),
        "llama3.1-8b",
        "Server",
    );
    tree_of(&tree, &runs.join("plain"), "llama3.1-8b", "MultiStream");
    let errors = check_errors(dir.path(), &tree, &[]);
    let tokens = messages_of(&errors, "token-latencies");
    assert!(
        tokens.len() == 1 && tokens[0].contains("must measure token latencies"),
        "{errors:#?}"
    );
    let unknown = messages_of(&errors, "unknown-scenario");
    assert!(
        unknown.len() == 1 && unknown[0].contains("does not have a MultiStream scenario"),
        "{errors:#?}"
    );

    let error = mlperf_host(dir.path(), &["check", "--round", "v0.9", s(&tree)]);
    assert_eq!(error.status.code(), Some(1), "{}", describe(&error));
    assert!(support::text(&error.stderr).contains("round v0.9: not found"));
}

/// A float32 `.npy` of `values`, one sample per value.
fn npy(path: &Path, values: &[f32]) {
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    mlperf_host::samples::write_npy(path, "<f4", values.len(), &[], &data).unwrap();
}

fn sha256_of(path: &Path) -> String {
    Sha256::digest(std::fs::read(path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn logged(run: &Path, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(run.join("mlperf_log_detail.txt")).unwrap();
    text.lines().find_map(|line| {
        let entry: serde_json::Value =
            serde_json::from_str(line.strip_prefix(":::MLLOG ")?).ok()?;
        (entry["key"] == key).then(|| entry["value"].as_str().unwrap().to_string())
    })
}

#[test]
fn a_pinned_data_set_is_logged_and_a_changed_one_refused() {
    let dir = TempDir::new();
    let data = dir.path().join("inputs.npy");
    npy(&data, &[1.0, 2.0, 3.0, 4.0]);
    let digest = sha256_of(&data);
    let definition = dir.path().join("pinned.toml");
    std::fs::write(
        &definition,
        format!(
            r#"name = "pinned"
[dataset]
inputs = "inputs.npy"
sha256 = "{digest}"
[accuracy]
metric = "none"
why = "a test"
[plugin]
name = "null"
"#
        ),
    )
    .unwrap();
    let cache = dir.path().join("cache");
    let args = |out: &str| -> Vec<String> {
        [
            "run",
            "--quiet",
            "--benchmark",
            s(&definition),
            "--set",
            "min_duration_ms=50",
            "--set",
            "min_query_count=20",
            "--out",
            out,
        ]
        .map(String::from)
        .to_vec()
    };
    let with_cache = |args: Vec<String>| {
        std::process::Command::new(env!("CARGO_BIN_EXE_mlperf-host"))
            .args(args)
            .current_dir(dir.path())
            .env("MLPERF_HOST_CACHE_DIR", &cache)
            .env_remove("MLPERF_HOST_LOG")
            .output()
            .unwrap()
    };
    let first = dir.path().join("first");
    assert_ok(&with_cache(args(s(&first))));
    assert_eq!(logged(&first, "sut_dataset_sha256"), Some(digest.clone()));
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(first.join("result.json")).unwrap()).unwrap();
    assert!(
        result.to_string().contains(&digest),
        "result.json names the data set's sha256: {result}"
    );
    assert_eq!(
        std::fs::read_dir(cache.join("sha256")).unwrap().count(),
        1,
        "the digest is cached"
    );

    // The same size, another content, a new modification time: refused before the run.
    std::thread::sleep(std::time::Duration::from_millis(20));
    npy(&data, &[1.0, 2.0, 3.0, 5.0]);
    let changed = sha256_of(&data);
    let second = dir.path().join("second");
    let output = with_cache(args(s(&second)));
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    let stderr = support::text(&output.stderr);
    assert!(
        stderr.contains(&format!("its sha256 is {changed}, not the {digest}"))
            && stderr.contains("inputs.npy"),
        "{stderr}"
    );
    assert!(!second.join("mlperf_log_detail.txt").exists());

    // A pin that is not a sha256 is a definition error naming the key.
    std::fs::write(
        &definition,
        std::fs::read_to_string(&definition)
            .unwrap()
            .replace(&digest, "abc"),
    )
    .unwrap();
    let output = with_cache(args(s(&dir.path().join("third"))));
    assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
    assert!(
        support::text(&output.stderr).contains("[dataset] sha256 = \"abc\": not a sha256"),
        "{}",
        describe(&output)
    );
}

/// An Offline run of a server of known capacity: 2 workers of `service_us` each.
fn offline_run(dir: &Path, out: &Path, service_us: u32, extra: &[&str]) {
    assert_ok(&offline_output(dir, out, service_us, extra));
}

fn offline_output(dir: &Path, out: &Path, service_us: u32, extra: &[&str]) -> std::process::Output {
    let service = format!("service_us={service_us}");
    let mut args = vec![
        "--scenario",
        "Offline",
        "--plugin-set",
        "workers=2",
        "--plugin-set",
        &service,
        "--set",
        "offline_expected_qps=1000",
        "--set",
        "min_duration_ms=1000",
        "--set",
        "min_query_count=1",
    ];
    args.extend_from_slice(extra);
    // Not --quiet: warnings show.
    let mut full = vec!["run", "--out", s(out)];
    full.extend_from_slice(&args);
    mlperf_host(dir, &full)
}

fn compare(dir: &Path, a: &Path, b: &Path) -> (i32, serde_json::Value) {
    let output = mlperf_host(dir, &["compare", "--json", s(a), s(b)]);
    let json = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", describe(&output)));
    (output.status.code().unwrap(), json)
}

fn failed_checks(compared: &serde_json::Value) -> Vec<String> {
    compared["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["passed"] == false)
        .map(|c| format!("{}: {}", c["check"], c["detail"]))
        .collect()
}

#[test]
fn sysinfo_verify_compares_the_description_with_this_machine() {
    let dir = TempDir::new();
    let description = dir.path().join("box.json");
    assert_ok(&mlperf_host(
        dir.path(),
        &[
            "sysinfo",
            "--system",
            "box",
            "--submitter",
            "org",
            "--system-type",
            "edge",
            "--out",
            s(&description),
        ],
    ));
    let output = mlperf_host(dir.path(), &["sysinfo", "--verify", s(&description)]);
    assert_ok(&output);
    let stdout = support::text(&output.stdout);
    assert!(
        stdout.contains("ok   host_processor_core_count") && stdout.contains(", 0 differ"),
        "{stdout}"
    );

    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&description).unwrap()).unwrap();
    let cores = json["host_processor_core_count"].clone();
    json["host_processor_core_count"] = serde_json::json!(cores.as_u64().unwrap_or(1) * 64);
    std::fs::write(&description, json.to_string()).unwrap();
    let output = mlperf_host(dir.path(), &["sysinfo", "--verify", s(&description)]);
    assert_eq!(output.status.code(), Some(3), "{}", describe(&output));
    let stdout = support::text(&output.stdout);
    assert!(
        stdout.contains("DIFF host_processor_core_count") && stdout.contains(", 1 differs"),
        "{stdout}"
    );
}

#[test]
fn a_video_generators_tree_needs_its_sampled_videos_and_reports_seconds() {
    // A 2 ms SingleStream run and an accuracy run filed as wan-2.2-t2v-a14b, whose accuracy
    // folder must hold ten sampled videos (accuracy/videos/<n>.mp4) and whose SingleStream
    // result the checker reports in seconds.
    let dir = TempDir::new();
    let (performance, accuracy_run) = (dir.path().join("perf"), dir.path().join("acc"));
    let quick = [
        "--set",
        "min_duration_ms=200",
        "--set",
        "min_query_count=300",
    ];
    let mut args = vec!["--scenario", "SingleStream", "--latency", "2ms"];
    args.extend_from_slice(&quick);
    assert_ok(&run(dir.path(), &performance, &args));
    assert_ok(&run(
        dir.path(),
        &accuracy_run,
        &["--scenario", "SingleStream", "--mode", "AccuracyOnly"],
    ));
    let model = "wan-2.2-t2v-a14b";
    let tree = tree_of(
        &dir.path().join("tree"),
        &performance,
        model,
        "SingleStream",
    );
    let scenario_dir = tree
        .join("closed/org/results/box")
        .join(model)
        .join("SingleStream");
    let accuracy = scenario_dir.join("accuracy");
    std::fs::create_dir_all(&accuracy).unwrap();
    for file in ["mlperf_log_detail.txt", "mlperf_log_accuracy.json"] {
        std::fs::copy(accuracy_run.join(file), accuracy.join(file)).unwrap();
    }
    std::fs::write(
        accuracy.join("accuracy.txt"),
        "vbench_score: 71.2\nhash=00\n",
    )
    .unwrap();
    let videos_missing = || messages_of(&check_errors(dir.path(), &tree, &[]), "accuracy-files");
    assert_eq!(
        videos_missing(),
        ["missing: wan-2.2-t2v-a14b keeps 10 of its outputs here for the auditors"]
    );
    let videos = accuracy.join("videos");
    std::fs::create_dir_all(&videos).unwrap();
    for video in ["130", "106", "84", "59", "12", "123", "43", "22"] {
        std::fs::write(videos.join(format!("{video}.mp4")), b"video").unwrap();
    }
    assert_eq!(
        videos_missing(),
        ["2 of wan-2.2-t2v-a14b's outputs missing: 238, 32"]
    );
    for video in ["238", "32"] {
        std::fs::write(videos.join(format!("{video}.mp4")), b"video").unwrap();
    }
    assert!(videos_missing().is_empty());
    // The result in seconds: the 90th percentile latency of about 2 ms reads as 0.002 s.
    let output = mlperf_host(dir.path(), &["results", "--format", "json", s(&tree)]);
    assert_ok(&output);
    let rows: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let row = &rows[0];
    assert_eq!(row["units"], "s", "{row}");
    let value = row["value"].as_f64().unwrap();
    assert!((0.0019..0.01).contains(&value), "{row}");
}

#[test]
fn offline_and_multistream_results_are_inferred_from_a_singlestream_run() {
    // One SingleStream run filed under SingleStream, Offline and MultiStream: the checker
    // infers Offline's samples/s (the QPS without LoadGen's overhead) and MultiStream's
    // latency (8 × the early-stopping 99th-percentile estimate); a Server folder cannot hold it.
    let dir = TempDir::new();
    let single = dir.path().join("ss");
    assert_ok(&run(
        dir.path(),
        &single,
        &[
            "--scenario",
            "SingleStream",
            "--latency",
            "500us",
            "--set",
            "min_duration_ms=300",
            // Enough queries for the early-stopping 99th-percentile estimate.
            "--set",
            "min_query_count=1500",
        ],
    ));
    let root = dir.path().join("tree");
    for scenario in ["SingleStream", "Offline", "MultiStream", "Server"] {
        tree_of(&root, &single, "resnet50", scenario);
    }
    let errors = check_errors(dir.path(), &root, &[]);
    let mismatches = messages_of(&errors, "scenario-mismatch");
    assert_eq!(mismatches.len(), 1, "{errors:#?}");
    assert!(
        mismatches[0].starts_with("the run is \"SingleStream\", filed under Server"),
        "{mismatches:?}"
    );
    assert!(
        messages_of(&errors, "inferred-result").is_empty(),
        "{errors:#?}"
    );
    let output = mlperf_host(dir.path(), &["results", "--format", "json", s(&root)]);
    assert_ok(&output);
    let rows: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let row = |scenario: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["scenario"] == scenario)
            .unwrap_or_else(|| panic!("no {scenario} row in {rows}"))
            .clone()
    };
    let logged = |key: &str| -> f64 {
        let text = std::fs::read_to_string(single.join("mlperf_log_detail.txt")).unwrap();
        text.lines()
            .find_map(|line| {
                let entry: serde_json::Value =
                    serde_json::from_str(line.strip_prefix(":::MLLOG ")?).ok()?;
                (entry["key"] == key).then(|| entry["value"].as_f64())?
            })
            .unwrap_or_else(|| panic!("no number {key} in the detail log"))
    };
    let offline = row("Offline");
    assert_eq!(offline["units"], "samples/s");
    assert_eq!(
        offline["value"].as_f64().unwrap(),
        logged("result_qps_without_loadgen_overhead")
    );
    let multi = row("MultiStream");
    assert_eq!(multi["units"], "ms");
    let expected = logged("early_stopping_latency_ms") * 8.0 / 1e6;
    assert!(
        (multi["value"].as_f64().unwrap() - expected).abs() < 1e-9 && expected > 4.0,
        "{multi} vs {expected}"
    );
}

/// Every model of the round with a scenario its system type requires, its performance sample
/// count, the samples its accuracy run covers there and its first accuracy metric: values of
/// the official checker's MODEL_CONFIG["v6.1"] (constants.py at b66003e1), read there, not
/// from configs/rounds/v6.1.toml.
#[rustfmt::skip]
const ROUND_MODELS: [(&str, &str, &str, u64, u64, &str); 21] = [
    ("resnet", "edge", "SingleStream", 1024, 50000, "acc"),
    ("bert-99", "edge", "SingleStream", 10833, 10833, "F1"),
    ("bert-99.9", "edge", "SingleStream", 10833, 10833, "F1"),
    ("3d-unet-99", "datacenter", "Offline", 43, 43, "DICE"),
    ("3d-unet-99.9", "datacenter", "Offline", 43, 43, "DICE"),
    ("llama3.1-8b", "datacenter", "Offline", 13368, 13368, "ROUGE1"),
    ("llama3.1-8b-edge", "edge", "SingleStream", 5000, 5000, "ROUGE1"),
    ("llama2-70b-99.9", "datacenter", "Offline", 24576, 24576, "ROUGE1"),
    ("stable-diffusion-xl", "edge", "SingleStream", 5000, 5000, "CLIP_SCORE"),
    ("rgat", "datacenter", "Offline", 788379, 788379, "acc"),
    ("deepseek-r1", "datacenter", "Offline", 4388, 4388, "exact_match"),
    ("whisper", "datacenter", "Offline", 1633, 1633, "ACCURACY"),
    ("gpt-oss-120b", "datacenter", "Offline", 6396, 4395, "exact_match"),
    ("qwen3-vl-235b-a22b", "datacenter", "Offline", 48289, 48289, "F1_HIERARCHICAL"),
    ("wan-2.2-t2v-a14b", "datacenter", "Offline", 50, 248, "vbench_score"),
    ("dlrm-v3", "datacenter", "Server", 349823, 349823, "DLRM_NE"),
    ("yolo-95", "edge", "SingleStream", 64, 1525, "mAP"),
    ("yolo-99", "edge", "SingleStream", 64, 1525, "mAP"),
    ("e2e-rag-qna", "datacenter", "Offline", 824, 824, "E2E_ACCURACY"),
    ("e2e-rag-db", "datacenter", "Offline", 2515, 2515, "E2E_ACCURACY"),
    ("qwen3.6-27b", "edge", "SingleStream", 995, 995, "mAP"),
];

#[test]
fn every_model_of_the_round_is_held_to_its_own_numbers() {
    // One tree with every model, each filed by a system of a type that submits it: a
    // null-plugin run of 1024 samples in the model's scenario, an accuracy run of 1024
    // samples, an accuracy.txt without a score. Each model's folder must fail with its own
    // performance sample count (where above 1024), its own accuracy sample count and its own
    // metric, and none may be an unknown benchmark or scenario.
    let dir = TempDir::new();
    let short = [
        "--set",
        "min_duration_ms=100",
        "--set",
        "min_query_count=100",
    ];
    for (scenario, rate) in [
        ("SingleStream", "single_stream_expected_latency_ns=10000"),
        ("Offline", "offline_expected_qps=100000"),
        ("Server", "server_target_qps=2000"),
    ] {
        let mut args = vec!["--scenario", scenario, "--set", rate];
        args.extend_from_slice(&short);
        assert_ok(&run(dir.path(), &dir.path().join(scenario), &args));
    }
    let accuracy_run = dir.path().join("accuracy");
    assert_ok(&run(
        dir.path(),
        &accuracy_run,
        &["--scenario", "Offline", "--mode", "AccuracyOnly"],
    ));
    let submitter = dir.path().join("tree/closed/org");
    std::fs::create_dir_all(submitter.join("systems")).unwrap();
    for system_type in ["datacenter", "edge"] {
        std::fs::write(
            submitter.join(format!("systems/{system_type}-box.json")),
            format!(
                r#"{{"system_type": "{system_type}", "division": "closed", "submitter": "org"}}"#
            ),
        )
        .unwrap();
    }
    for (model, system_type, scenario, ..) in ROUND_MODELS {
        let folder = submitter
            .join(format!("results/{system_type}-box"))
            .join(model)
            .join(scenario);
        let run_1 = folder.join("performance/run_1");
        let accuracy = folder.join("accuracy");
        for dir in [&run_1, &accuracy] {
            std::fs::create_dir_all(dir).unwrap();
        }
        for file in ["mlperf_log_summary.txt", "mlperf_log_detail.txt"] {
            std::fs::copy(dir.path().join(scenario).join(file), run_1.join(file)).unwrap();
        }
        for file in ["mlperf_log_detail.txt", "mlperf_log_accuracy.json"] {
            std::fs::copy(accuracy_run.join(file), accuracy.join(file)).unwrap();
        }
        std::fs::write(accuracy.join("accuracy.txt"), "no score\nhash=00\n").unwrap();
    }
    let errors = check_errors(dir.path(), &dir.path().join("tree"), &[]);
    for rule in ["unknown-benchmark", "unknown-scenario", "scenario-mismatch"] {
        assert!(messages_of(&errors, rule).is_empty(), "{rule}: {errors:#?}");
    }
    let sample_counts = messages_of(&errors, "performance-sample-count");
    let covered = messages_of(&errors, "dataset-size");
    let targets = messages_of(&errors, "accuracy-target");
    for (model, _, scenario, psc, accuracy_samples, metric) in ROUND_MODELS {
        let psc_error =
            format!("effective_performance_sample_count 1024 is below the {psc} {model} requires");
        assert_eq!(
            sample_counts.contains(&psc_error),
            psc > 1024,
            "{model}: {sample_counts:#?}"
        );
        let coverage = format!(
            "the accuracy run covers 1024 samples; {model} {scenario} needs {accuracy_samples}"
        );
        assert!(covered.contains(&coverage), "{model}: {covered:#?}");
        let no_score = format!("no line states {metric} (");
        assert!(
            targets.iter().any(|t| t.starts_with(&no_score)),
            "{model}: {targets:#?}"
        );
    }
}

/// An int32 .npy data set of `rows` rows of `columns` tokens.
fn token_rows(path: &Path, rows: usize, columns: usize) {
    let data: Vec<u8> = (0..rows * columns)
        .flat_map(|token| (3 + (token * 7919 % 30000) as i32).to_le_bytes())
        .collect();
    mlperf_host::samples::write_npy(path, "<i4", rows, &[columns as i64], &data).unwrap();
}

#[test]
fn an_e2e_rag_tree_the_official_checker_passes_passes_and_each_defect_fails() {
    // e2e-rag-qna runs without a minimum duration, so a whole closed submission fits here:
    // the official engine, 824 samples of 270 tokens echoed by the null plugin (Offline,
    // accuracy and performance), TEST09 (mean length 270 within [246.43, 301.19]), a
    // datacenter system. The official checker (b66003e1, --version v6.1) said "submission
    // looks OK" of this tree, and failed each defect below; `check` must agree.
    let dir = TempDir::new();
    token_rows(&dir.path().join("tokens.npy"), 824, 270);
    let common = [
        "--engine",
        "official",
        "--model",
        "e2e-rag-qna",
        "--scenario",
        "Offline",
        "--dataset",
        "tokens.npy",
        "--plugin-set",
        "response=data",
        "--latency",
        "100us",
        "--set",
        "min_duration_ms=0",
        "--set",
        "min_query_count=824",
        "--quiet",
    ];
    let invoke = |first: &[&str], out: &str| {
        let mut args = first.to_vec();
        args.extend_from_slice(&common);
        args.extend_from_slice(&["--out", out]);
        assert_ok(&mlperf_host(dir.path(), &args));
    };
    invoke(&["run", "--mode", "AccuracyOnly"], "acc");
    invoke(&["run"], "perf");
    invoke(&["audit", "--test", "TEST09"], "TEST09");
    // The end-to-end scorer's line (the checker's pattern `Accuracy: N`), as its script writes
    // it; the null plugin cannot answer questions.
    std::fs::write(dir.path().join("acc/accuracy.txt"), "Accuracy: 41.5\n").unwrap();
    assert_ok(&mlperf_host(
        dir.path(),
        &[
            "sysinfo",
            "--system",
            "dc-box",
            "--submitter",
            "org",
            "--division",
            "closed",
            "--system-type",
            "datacenter",
            "--status",
            "available",
            "--out",
            "dc-box.json",
        ],
    ));
    support::fill_in(&dir.path().join("dc-box.json"));
    let tree = dir.path().join("tree");
    // The submitter's measurements.json fields are filled in after `submit`: it exits 3 until.
    mlperf_host(
        dir.path(),
        &[
            "submit",
            "--system",
            "dc-box.json",
            "--out",
            "tree",
            "acc",
            "perf",
            "TEST09",
        ],
    );
    let offline = tree.join("closed/org/results/dc-box/e2e-rag-qna/Offline");
    support::fill_in(&offline.join("measurements.json"));
    let output = mlperf_host(dir.path(), &["check", "tree"]);
    assert_ok(&output);
    assert!(
        support::text(&output.stdout).contains("tree: 0 errors, 0 warnings"),
        "{}",
        describe(&output)
    );
    let damaged = |file: &str, change: &dyn Fn(String) -> String| {
        let copy = dir.path().join("damaged");
        let _ = std::fs::remove_dir_all(&copy);
        copy_dir(&tree, &copy);
        let path = copy
            .join("closed/org/results/dc-box/e2e-rag-qna/Offline")
            .join(file);
        if file == "TEST09" {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, change(text)).unwrap();
        }
        findings(dir.path(), &["damaged"])
            .iter()
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let key = |name: &str, from: &str, to: &str| {
        let (from, to) = (
            format!("\"key\": \"{name}\", \"value\": {from}"),
            format!("\"key\": \"{name}\", \"value\": {to}"),
        );
        move |text: String| {
            assert!(text.contains(&from), "no {from}");
            text.replace(&from, &to)
        }
    };
    // (the file, its damage, the one rule it breaks)
    type Damage<'a> = (&'a str, &'a dyn Fn(String) -> String, &'a str);
    let cases: [Damage; 5] = [
        (
            "accuracy/accuracy.txt",
            &|text| text.replace("Accuracy: 41.5", "Accuracy: 30.0"),
            "accuracy-target",
        ),
        ("TEST09", &|text| text, "compliance-missing"),
        (
            "TEST09/verify_output_len.txt",
            &|text| text.replace("TEST PASS", "TEST FAIL"),
            "compliance-accuracy",
        ),
        (
            "performance/run_1/mlperf_log_detail.txt",
            &key("effective_qsl_rng_seed", "2085463073848966840", "7"),
            "seeds",
        ),
        (
            "accuracy/mlperf_log_detail.txt",
            &key("effective_accuracy_sample_count", "824", "823"),
            "dataset-size",
        ),
    ];
    for (file, change, rule) in cases {
        assert_eq!(damaged(file, change), [rule], "{file}");
    }
}

/// Tests whose verdict rests on timings (a latency bound, a rate, a comparison of two runs'
/// speeds): `scripts/test.sh` runs every `timed` test alone, one after another, after the
/// rest, so that no other test takes the CPU they measure.
mod timed {
    use super::*;

    #[test]
    fn compare_passes_a_rerun_within_two_percent_and_names_what_differs() {
        let _timings = support::timings_or_llm();
        let dir = TempDir::new();
        let (a, b, slow, seeded) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("slow"),
            dir.path().join("seeded"),
        );
        // 2 workers of 2 ms: 1000 samples/s; of 2.1 ms: 952 samples/s, 4.8 % slower.
        offline_run(dir.path(), &a, 2000, &[]);
        offline_run(dir.path(), &b, 2000, &[]);
        offline_run(dir.path(), &slow, 2100, &[]);
        // A seed that is not the round's: the run says so before it starts.
        let output = offline_output(dir.path(), &seeded, 2000, &["--set", "qsl_rng_seed=7"]);
        assert_ok(&output);
        assert!(
        support::text(&output.stderr).contains(
            "qsl_rng_seed 7 is not round v6.1's 2085463073848966840: `check` refuses a submission of this run"
        ),
        "{}",
        describe(&output)
    );

        let (code, compared) = compare(dir.path(), &a, &b);
        assert_eq!(code, 0, "{compared:#}");
        let difference = compared["difference_percent"].as_f64().unwrap();
        assert!(difference.abs() < 2.0, "{compared:#}");

        let (code, compared) = compare(dir.path(), &a, &slow);
        assert_eq!(code, 3, "{compared:#}");
        let failed = failed_checks(&compared);
        assert!(
            failed.len() == 1 && failed[0].contains("result within 2 %"),
            "{failed:#?}"
        );
        let difference = compared["difference_percent"].as_f64().unwrap();
        assert!((-6.0..-3.5).contains(&difference), "{compared:#}");

        let (code, compared) = compare(dir.path(), &a, &seeded);
        assert_eq!(code, 3, "{compared:#}");
        let failed = failed_checks(&compared);
        assert!(
            failed.len() == 1
                && failed[0].contains("same settings and seeds")
                && failed[0].contains("effective_qsl_rng_seed"),
            "{failed:#?}"
        );

        let output = mlperf_host(dir.path(), &["compare", s(&a), s(dir.path())]);
        assert_eq!(output.status.code(), Some(1), "{}", describe(&output));
        assert!(support::text(&output.stderr).contains("not a LoadGen run directory"));
    }
}
