//! `run --scenario Interactive`: a Server run of one of the round's LLM benchmarks whose
//! settings are read for `<model>-interactive`, as the references run it (mlperf.conf's TTFT
//! 500 ms and TPOT 30 ms for llama3.1-8b), logged as that model; `submit` files it into the
//! benchmark's Interactive folder and `check` holds it there to the benchmark's rules; a
//! benchmark without the scenario is refused before anything runs.

use crate::support;

use std::path::Path;

use support::{assert_ok, mlperf_host, repo, text, TempDir};

/// A short null-plugin token run of llama3.1-8b on its 12-record fixture.
const SHORT: [&str; 10] = [
    "--set",
    "min_duration_ms=300",
    "--set",
    "min_query_count=48",
    "--set",
    "server_target_qps=200",
    "--set",
    "performance_sample_count_override=12",
    "--plugin",
    "null",
];

fn logged(detail: &str, key: &str) -> String {
    let marker = format!("\"key\": \"{key}\", \"value\": ");
    let at = detail
        .find(&marker)
        .unwrap_or_else(|| panic!("no {key} in the detail log"));
    let value = &detail[at + marker.len()..];
    value[..value.find([',', '}']).unwrap()].trim().to_string()
}

#[test]
fn an_interactive_run_reads_its_models_settings_and_is_filed_as_interactive() {
    let dir = TempDir::new();
    let run = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec![
            "run",
            "--benchmark",
            "llama3.1-8b",
            "--scenario",
            "Interactive",
            "--tokens",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(&SHORT);
        args.extend_from_slice(extra);
        assert_ok(&mlperf_host(&repo(), &args));
        out
    };
    let performance = run("performance", &[]);
    let detail = std::fs::read_to_string(performance.join("mlperf_log_detail.txt")).unwrap();
    assert_eq!(logged(&detail, "sut_model"), "\"llama3_1-8b-interactive\"");
    assert_eq!(logged(&detail, "effective_scenario"), "\"Server\"");
    assert_eq!(
        logged(&detail, "requested_server_ttft_latency"),
        "500000000"
    );
    assert_eq!(logged(&detail, "requested_server_tpot_latency"), "30000000");
    let accuracy = run("accuracy", &["--mode", "AccuracyOnly"]);

    let system = support::typed_system_description(dir.path(), "ci-dc", "ci", "datacenter");
    let tree = dir.path().join("tree");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    // It files the tree, then says what check finds in it (a short run of a null plugin).
    let submitted = mlperf_host(
        &repo(),
        &[
            "submit",
            "--benchmark",
            "llama3.1-8b",
            "--system",
            &s(&system),
            "--out",
            &s(&tree),
            &s(&performance),
            &s(&accuracy),
        ],
    );
    assert!(
        support::describe(&submitted).contains("llama3.1-8b/Interactive/performance"),
        "{}",
        support::describe(&submitted)
    );
    let benchmark = tree.join("closed/ci/results/ci-dc/llama3.1-8b");
    let folders: Vec<String> = std::fs::read_dir(&benchmark)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(folders, ["Interactive"]);
    assert!(benchmark
        .join("Interactive/performance/run_1/mlperf_log_detail.txt")
        .is_file());
    assert!(benchmark
        .join("Interactive/accuracy/accuracy.txt")
        .is_file());

    // Checked as llama3.1-8b's Interactive folder: its sample counts, no unknown scenario.
    let (_, findings) = support::check_json(&tree, true);
    let rule_at = |rule: &str, file: &str| {
        findings
            .iter()
            .any(|f| f["rule"] == rule && f["file"].as_str().unwrap_or("").contains(file))
    };
    assert!(
        rule_at(
            "performance-sample-count",
            "llama3.1-8b/Interactive/performance"
        ),
        "{findings:#?}"
    );
    assert!(
        !findings.iter().any(|f| f["rule"] == "unknown-scenario"),
        "{findings:#?}"
    );
}

#[test]
fn a_benchmark_without_the_interactive_scenario_is_refused_naming_those_with_it() {
    let dir = TempDir::new();
    let output = mlperf_host(
        &repo(),
        &[
            "run",
            "--benchmark",
            "resnet",
            "--scenario",
            "Interactive",
            "--out",
            dir.path().join("runs").to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("--scenario Interactive: resnet has no Interactive scenario in round v6.1")
            && stderr.contains("llama2-70b-99.9, llama3.1-8b"),
        "{stderr}"
    );
    assert!(!dir.path().join("runs").exists());
}
