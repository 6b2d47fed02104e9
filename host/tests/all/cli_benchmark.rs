//! `mlperf-host run --benchmark` and `mlperf-host accuracy`, end to end through the binary,
//! with a benchmark definition whose backend is the null plugin answering with each sample's
//! own data: the data set holds the "predictions", so the accuracy is known in advance.

use crate::support;

use std::path::{Path, PathBuf};

use mlperf_host::samples::write_npy;
use support::TempDir;

use crate::support::mlperf_host;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write_i64(path: &Path, values: &[i64]) {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    write_npy(path, "<i8", values.len(), &[], &bytes).unwrap();
}

/// 100 samples labelled `i % 10`; the inputs (echoed back as predictions) are wrong for every
/// tenth sample: top-1 = 90 %. Returns the definition's path.
fn write_benchmark(dir: &Path, metric: &str) -> PathBuf {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let labels: Vec<i64> = (0..100).map(|i| i % 10).collect();
    let predictions: Vec<i64> = (0..100)
        .map(|i| if i % 10 == 3 { 0 } else { i % 10 })
        .collect();
    write_i64(&data.join("labels.npy"), &labels);
    write_i64(&data.join("inputs.npy"), &predictions);
    std::fs::write(data.join("reference.json"), r#"{"top1": 0.905}"#).unwrap();
    let definition = dir.join("echo.toml");
    let accuracy = if metric == "top1" {
        "metric = \"top1\"\nlabels = \"data/labels.npy\"\nreference = \"data/reference.json\""
    } else {
        "metric = \"none\"\nwhy = \"nothing to compare with\""
    };
    std::fs::write(
        &definition,
        format!(
            r#"name = "echo"
prepare = "make-echo-data"
[dataset]
inputs = "data/inputs.npy"
performance_sample_count = 50
[accuracy]
{accuracy}
[plugin]
name = "null"
config = {{ response = "data" }}
[plugin.scenario.Offline]
workers = 2
[settings]
min_duration_ms = 0
min_query_count = 20
[settings.Offline]
offline_expected_qps = 1000
"#
        ),
    )
    .unwrap();
    definition
}

#[test]
fn an_accuracy_run_scores_the_benchmark_and_writes_accuracy_txt() {
    let dir = TempDir::new();
    let definition = write_benchmark(dir.path(), "top1");
    let output = mlperf_host(
        dir.path(),
        &[
            "run",
            "--benchmark",
            definition.to_str().unwrap(),
            "--scenario",
            "Offline",
            "--mode",
            "AccuracyOnly",
        ],
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(
        stdout.contains("accuracy=90.000%, good=90, total=100"),
        "{stdout}"
    );
    // 90 % of a 90.5 % reference is 99.45 %: just above MLPerf's 99 % line.
    assert!(stdout.contains("99.45% of it: PASS (>= 99%)"), "{stdout}");
    let logs = dir.path().join("mlperf-logs");
    let written = std::fs::read_to_string(logs.join("accuracy.txt")).unwrap();
    assert!(stdout.ends_with(&written));
    // The scenario's plugin table applied (workers = 2), and the model name is the benchmark's.
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(logs.join("result.json")).unwrap()).unwrap();
    let provenance = result["provenance"].to_string();
    assert!(
        provenance.contains(r#"["plugin_attribute_workers","2"]"#),
        "{provenance}"
    );

    // `mlperf-host accuracy` scores the same log the same way.
    let rescored = mlperf_host(
        dir.path(),
        &["accuracy", "--benchmark", definition.to_str().unwrap()],
    );
    assert!(rescored.status.success(), "{}", text(&rescored.stderr));
    assert_eq!(text(&rescored.stdout), written);
}

#[test]
fn accuracy_scores_only_an_accuracy_run_of_its_benchmark_and_fails_below_target() {
    let dir = TempDir::new();
    let definition = write_benchmark(dir.path(), "top1");
    let def = definition.to_str().unwrap();
    let run = |args: &[&str]| {
        let output = mlperf_host(dir.path(), args);
        assert!(output.status.success(), "{}", text(&output.stderr));
    };
    let score =
        |log: &str| mlperf_host(dir.path(), &["accuracy", "--benchmark", def, "--log", log]);
    let refused = |output: std::process::Output, why: &str| {
        assert_eq!(output.status.code(), Some(1), "{}", text(&output.stdout));
        let error = text(&output.stderr);
        assert!(error.contains(why), "{error}");
    };
    // A performance run of the benchmark: refused, and no accuracy.txt written into it.
    run(&[
        "run",
        "--benchmark",
        def,
        "--scenario",
        "Offline",
        "--out",
        "perf",
        "-q",
    ]);
    refused(
        score("perf/mlperf_log_accuracy.json"),
        "the log of a PerformanceOnly run",
    );
    assert!(!dir.path().join("perf/accuracy.txt").exists());
    // Another model's accuracy run.
    run(&[
        "run",
        "--model",
        "resnet50",
        "--mode",
        "AccuracyOnly",
        "--scenario",
        "Offline",
        "--out",
        "other",
        "-q",
    ]);
    refused(
        score("other/mlperf_log_accuracy.json"),
        "a log of model resnet50",
    );
    // A log with no response at all.
    std::fs::create_dir_all(dir.path().join("empty")).unwrap();
    std::fs::write(dir.path().join("empty/mlperf_log_accuracy.json"), "[\n]\n").unwrap();
    refused(
        score("empty/mlperf_log_accuracy.json"),
        "holds no responses",
    );
    // The benchmark's own accuracy run, held to a reference it misses: FAIL, exit 3.
    run(&[
        "run",
        "--benchmark",
        def,
        "--scenario",
        "Offline",
        "--mode",
        "AccuracyOnly",
        "--out",
        "acc",
        "-q",
    ]);
    std::fs::write(dir.path().join("data/reference.json"), r#"{"top1": 1.0}"#).unwrap();
    let below = score("acc/mlperf_log_accuracy.json");
    assert_eq!(below.status.code(), Some(3), "{}", text(&below.stderr));
    assert!(
        text(&below.stdout).contains("FAIL"),
        "{}",
        text(&below.stdout)
    );
}

#[test]
fn a_performance_run_uses_the_benchmark_settings_and_data() {
    let dir = TempDir::new();
    let definition = write_benchmark(dir.path(), "top1");
    let output = mlperf_host(
        dir.path(),
        &[
            "run",
            "--benchmark",
            definition.to_str().unwrap(),
            "--scenario",
            "Offline",
        ],
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("Result is : VALID"), "{stdout}");
    assert!(!stdout.contains("accuracy="), "{stdout}");
    let detail =
        std::fs::read_to_string(dir.path().join("mlperf-logs/mlperf_log_detail.txt")).unwrap();
    assert!(
        detail.contains(r#""key": "qsl_reported_performance_count", "value": 50,"#),
        "the definition's performance_sample_count"
    );
}

#[test]
fn benchmark_problems_are_named_before_anything_runs() {
    let dir = TempDir::new();
    let definition = write_benchmark(dir.path(), "none");
    let spec = definition.to_str().unwrap();
    let refused = mlperf_host(
        dir.path(),
        &["run", "--benchmark", spec, "--mode", "AccuracyOnly"],
    );
    assert_eq!(refused.status.code(), Some(1));
    let stderr = text(&refused.stderr);
    assert!(
        stderr.contains("accuracy is not available (nothing to compare with)"),
        "{stderr}"
    );

    std::fs::remove_file(dir.path().join("data/inputs.npy")).unwrap();
    let missing = mlperf_host(dir.path(), &["run", "--benchmark", spec]);
    assert_eq!(missing.status.code(), Some(1));
    let stderr = text(&missing.stderr);
    assert!(
        stderr.contains("inputs.npy is missing") && stderr.contains("`make-echo-data`"),
        "{stderr}"
    );

    // An empty data set is named by its file, as the definition gives it: no `--dataset`,
    // which the user never typed.
    write_i64(&dir.path().join("data/inputs.npy"), &[]);
    let empty = mlperf_host(dir.path(), &["run", "--benchmark", spec]);
    assert_eq!(empty.status.code(), Some(1));
    let stderr = text(&empty.stderr);
    assert!(
        stderr.contains("data set ") && stderr.contains("inputs.npy: it has no samples"),
        "{stderr}"
    );
    assert!(!stderr.contains("--dataset"), "{stderr}");

    let unknown = mlperf_host(dir.path(), &["run", "--benchmark", "no-such-benchmark"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(text(&unknown.stderr).contains("no benchmark \"no-such-benchmark\";"));
    assert!(!dir.path().join("mlperf-logs").exists());
    // A typo: the name it meant, and the benchmarks there are.
    let typo = mlperf_host(dir.path(), &["run", "--benchmark", "fmnst"]);
    let stderr = text(&typo.stderr);
    assert!(
        stderr.contains("no benchmark \"fmnst\": did you mean \"fmnist\"?"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "the benchmarks: 3d-unet-99, 3d-unet-99.9, bert-99, bert-99.9, digits, fmnist, llama2-70b-99.9, llama3.1-8b, llama3.1-8b-edge, minilm"
        ),
        "{stderr}"
    );
}
