//! A whole short submission of `fmnist`, end to end through the binary: an accuracy run, a
//! SingleStream performance run with a simulated power meter, TEST01 and TEST04, a system
//! description from `sysinfo`, `submit`, then `check` — which must flag exactly the shortened
//! runs and the simulated meter, and accept them under `--allow-short`. Then each kind of
//! defect, put into a copy of that tree, yields exactly its finding.
//!
//! Needs what `bash scripts/test.sh` sets up: the .venv with onnxruntime 1.31.1 and
//! `data/fmnist` (scripts/benchmarks/prepare.sh).

use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use sha2::{Digest, Sha256};
use support::{assert_ok, copy_dir, describe, TempDir};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");
/// Keeps each timed run to about a second.
const SHORT: [&str; 2] = ["--set", "min_duration_ms=1000"];

fn mlperf_host(args: &[&str]) -> Output {
    Command::new(EXE)
        .args(args)
        .current_dir(support::repo())
        .env("ORT_DYLIB_PATH", support::ort_library())
        .env_remove("MLPERF_HOST_LOG")
        .output()
        .expect("run mlperf-host")
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The runs and the assembled tree, made once for every test of this file.
struct Submission {
    _dir: TempDir,
    runs: PathBuf,
    tree: PathBuf,
    system_json: PathBuf,
    submit_output: Output,
}

/// Every run made with the official LoadGen (`--engine official`), as a submission must be.
fn submission() -> &'static Submission {
    static SUBMISSION: OnceLock<Submission> = OnceLock::new();
    SUBMISSION.get_or_init(|| make_submission("official"))
}

/// `mlperf-host audit --test TEST` of the fmnist runs in `runs`, into `runs/TEST`; a failed
/// verification (exit 3) is returned, anything else but success fails the test.
fn audit(runs: &Path, test: &str, engine: &str) -> Output {
    let out = runs.join(test);
    let (accuracy_run, performance_run) = (runs.join("accuracy"), runs.join("performance"));
    let mut args = vec![
        "audit",
        "--engine",
        engine,
        "--test",
        test,
        "--benchmark",
        "fmnist",
        "--scenario",
        "SingleStream",
        "--performance-run",
        s(&performance_run),
    ];
    if test == "TEST01" {
        args.extend_from_slice(&["--accuracy-run", s(&accuracy_run)]);
    }
    args.extend_from_slice(&SHORT);
    args.extend_from_slice(&["--out", s(&out), "--quiet"]);
    let output = mlperf_host(&args);
    if output.status.code() != Some(3) {
        assert_ok(&output);
    }
    output
}

fn make_submission(engine: &str) -> Submission {
    support::require_data("fmnist");
    let dir = TempDir::new();
    let runs = dir.path().join("runs");
    let run = |name: &str, extra: &[&str]| {
        let out = runs.join(name);
        let mut args = vec![
            "run",
            "--engine",
            engine,
            "--benchmark",
            "fmnist",
            "--scenario",
            "SingleStream",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", s(&out), "--quiet"]);
        assert_ok(&mlperf_host(&args));
    };
    run("accuracy", &["--mode", "AccuracyOnly"]);
    // The compliance runs are compared with the performance run's timing. fmnist's
    // SingleStream p90 (about 8 us) moves between processes on a shared VM (8.0 to 11.5 us
    // measured), past TEST01's and TEST04's 20 %: when a verification fails, the performance
    // run and both audits are made again, up to six times (check reads the verdicts filed).
    for attempt in 1..=6 {
        let mut performance = vec!["--power", "sim:200?period_ms=100"];
        performance.extend_from_slice(&SHORT);
        run("performance", &performance);
        let failed: Vec<Output> = ["TEST01", "TEST04"]
            .into_iter()
            .map(|test| audit(&runs, test, engine))
            .filter(|output| output.status.code() == Some(3))
            .collect();
        if failed.is_empty() {
            break;
        }
        assert!(attempt < 6, "{}", describe(&failed[0]));
        eprintln!(
            "attempt {attempt}: a verification failed: {}",
            describe(&failed[0])
        );
    }
    let system_json = support::system_description(dir.path(), "ci-edge-box", "mlperf-host-ci");
    let tree = dir.path().join("tree");
    let submit_output = mlperf_host(&[
        "submit",
        "--benchmark",
        "fmnist",
        "--system",
        s(&system_json),
        "--out",
        s(&tree),
        s(&runs.join("accuracy")),
        s(&runs.join("performance")),
        s(&runs.join("TEST01")),
        s(&runs.join("TEST04")),
    ]);
    Submission {
        _dir: dir,
        runs,
        tree,
        system_json,
        submit_output,
    }
}

fn scenario_dir(tree: &Path) -> PathBuf {
    tree.join("closed/mlperf-host-ci/results/ci-edge-box/fmnist/SingleStream")
}

/// `check --json` on `tree`: its exit code and (severity, rule, file) of each finding.
fn check(tree: &Path, allow_short: bool) -> (i32, BTreeSet<(String, String, String)>) {
    let (code, findings) = support::check_json(tree, allow_short);
    let set = findings
        .iter()
        .map(|f| {
            (
                f["severity"].as_str().unwrap().to_string(),
                f["rule"].as_str().unwrap().to_string(),
                f["file"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (code.unwrap(), set)
}

fn errors(findings: &BTreeSet<(String, String, String)>) -> BTreeSet<(String, String)> {
    findings
        .iter()
        .filter(|(severity, _, _)| severity == "error")
        .map(|(_, rule, file)| (rule.clone(), file.clone()))
        .collect()
}

const SCENARIO: &str = "closed/mlperf-host-ci/results/ci-edge-box/fmnist/SingleStream";

#[test]
fn the_short_submission_fails_only_for_being_short_and_passes_with_allow_short() {
    let submission = submission();
    // submit checks the tree it made: the short runs are errors.
    assert_eq!(
        submission.submit_output.status.code(),
        Some(3),
        "{}",
        describe(&submission.submit_output)
    );
    let (code, findings) = check(&submission.tree, false);
    assert_eq!(code, 3);
    let expected: BTreeSet<(String, String)> = [
        ("min-duration", "performance/run_1/mlperf_log_detail.txt"),
        (
            "min-duration",
            "TEST01/performance/run_1/mlperf_log_detail.txt",
        ),
        (
            "min-duration",
            "TEST04/performance/run_1/mlperf_log_detail.txt",
        ),
        ("power-simulated", "performance/power_summary.json"),
    ]
    .iter()
    .map(|(rule, file)| (rule.to_string(), format!("{SCENARIO}/{file}")))
    .collect();
    assert_eq!(errors(&findings), expected, "{findings:#?}");

    let (code, findings) = check(&submission.tree, true);
    assert_eq!(code, 0, "{findings:#?}");
    assert!(errors(&findings).is_empty());
}

#[test]
fn the_tree_holds_the_runs_as_the_rules_lay_them_out() {
    let submission = submission();
    let scenario = scenario_dir(&submission.tree);
    let runs = &submission.runs;
    for file in [
        "performance/run_1/mlperf_log_summary.txt",
        "performance/run_1/mlperf_log_detail.txt",
        "accuracy/mlperf_log_summary.txt",
        "accuracy/mlperf_log_detail.txt",
        "TEST01/verify_accuracy.txt",
        "TEST01/verify_performance.txt",
        "TEST01/performance/run_1/mlperf_log_detail.txt",
        "TEST04/verify_performance.txt",
        "TEST04/performance/run_1/mlperf_log_summary.txt",
        "measurements.json",
        "user.conf",
        "README.md",
    ] {
        assert!(scenario.join(file).is_file(), "{file} missing");
    }
    let submitter = submission.tree.join("closed/mlperf-host-ci");
    assert!(submitter.join("systems/ci-edge-box.json").is_file());
    assert!(submitter.join("code/fmnist/README.md").is_file());
    assert!(submitter.join("src").is_dir());
    // The power trace byte for byte.
    assert_eq!(
        std::fs::read(scenario.join("performance/run_1/spl.txt")).unwrap(),
        std::fs::read(runs.join("performance/spl.txt")).unwrap()
    );
    // The accuracy log truncated, the full log's sha256 in accuracy.txt.
    let full = std::fs::read(runs.join("accuracy/mlperf_log_accuracy.json")).unwrap();
    let kept = std::fs::read(scenario.join("accuracy/mlperf_log_accuracy.json")).unwrap();
    assert!(full.len() > 10 * 1024);
    assert!(kept.len() <= 10 * 1024);
    assert_eq!(&kept[..4096], &full[..4096]);
    assert_eq!(&kept[kept.len() - 4096..], &full[full.len() - 4096..]);
    let hash: String = Sha256::digest(&full)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let accuracy = std::fs::read_to_string(scenario.join("accuracy/accuracy.txt")).unwrap();
    assert!(accuracy.starts_with("accuracy="), "{accuracy}");
    assert!(accuracy.contains(&format!("\nhash={hash}\n")), "{accuracy}");
    // The user.conf reproduces the performance run's shortened duration.
    let user_conf = std::fs::read_to_string(scenario.join("user.conf")).unwrap();
    assert!(
        user_conf.contains("fmnist.SingleStream.min_duration = 1000\n"),
        "{user_conf}"
    );
}

/// Timed: its own submission's TEST01 and TEST04 compare speeds of fmnist's 8 us p90, which
/// moves past their 20 % beside other tests (a clean-clone CI run saw six attempts fail).
mod timed {
    use super::*;

    /// The same submission made with the native engine: closed results need the official
    /// LoadGen, so each of its logs is refused, and accepted only as a test under --allow-native.
    #[test]
    fn a_submission_the_native_engine_made_needs_allow_native() {
        let native = make_submission("native");
        let (code, findings) = check(&native.tree, true);
        assert_eq!(code, 3);
        let expected: BTreeSet<(String, String)> = [
            "accuracy/mlperf_log_detail.txt",
            "performance/run_1/mlperf_log_detail.txt",
            "TEST01/performance/run_1/mlperf_log_detail.txt",
            "TEST04/performance/run_1/mlperf_log_detail.txt",
        ]
        .iter()
        .map(|file| ("official-loadgen".to_string(), format!("{SCENARIO}/{file}")))
        .collect();
        assert_eq!(errors(&findings), expected, "{findings:#?}");
        let output = mlperf_host(&["check", "--allow-short", "--allow-native", s(&native.tree)]);
        assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
        let stdout = support::text(&output.stdout);
        assert!(
            stdout.contains("[official-loadgen]")
                && stdout.contains("loadgen_version \"6.0.17 compatible\", git hash \"mlperf-host"),
            "{stdout}"
        );
    }
}

/// A copy of the good tree for a test to damage.
fn damaged_copy() -> (TempDir, PathBuf) {
    let dir = TempDir::new();
    let tree = dir.path().join("tree");
    copy_dir(&submission().tree, &tree);
    (dir, tree)
}

fn edit(path: &Path, change: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(path).unwrap();
    let changed = change(text.clone());
    assert_ne!(
        text,
        changed,
        "the edit of {} changed nothing",
        path.display()
    );
    std::fs::write(path, changed).unwrap();
}

/// Damages a copy and expects exactly `rule` on `file` as the error under --allow-short.
fn expect_only(rule: &str, file: &str, damage: impl FnOnce(&Path)) {
    let (_dir, tree) = damaged_copy();
    damage(&tree);
    let (code, findings) = check(&tree, true);
    assert_eq!(code, 3, "{findings:#?}");
    let expected: BTreeSet<(String, String)> = [(rule.to_string(), file.to_string())].into();
    assert_eq!(errors(&findings), expected, "{findings:#?}");
}

#[test]
fn a_wrong_seed_is_found() {
    expect_only(
        "seeds",
        &format!("{SCENARIO}/performance/run_1/mlperf_log_detail.txt"),
        |tree| {
            edit(
                &scenario_dir(tree).join("performance/run_1/mlperf_log_detail.txt"),
                |t| t.replace("2085463073848966840", "2085463073848966841"),
            )
        },
    );
}

#[test]
fn an_invalid_result_is_found() {
    expect_only(
        "result-valid",
        &format!("{SCENARIO}/performance/run_1/mlperf_log_detail.txt"),
        |tree| {
            edit(
                &scenario_dir(tree).join("performance/run_1/mlperf_log_detail.txt"),
                |t| t.replace("\"value\": \"VALID\"", "\"value\": \"INVALID\""),
            );
            edit(
                &scenario_dir(tree).join("performance/run_1/mlperf_log_summary.txt"),
                |t| t.replace("Result is : VALID", "Result is : INVALID"),
            )
        },
    );
}

#[test]
fn a_summary_that_disagrees_with_its_detail_log_is_found() {
    let summary = format!("{SCENARIO}/performance/run_1/mlperf_log_summary.txt");
    expect_only("summary-matches-detail", &summary, |tree| {
        edit(&tree.join(&summary), |t| {
            t.replace("Result is : VALID", "Result is : INVALID")
        })
    });
    expect_only("summary-matches-detail", &summary, |tree| {
        edit(&tree.join(&summary), |t| {
            t.lines()
                .map(|line| match line.split_once("percentile latency (ns) : ") {
                    Some((head, _)) => format!("{head}percentile latency (ns) : 12345"),
                    None => line.to_string(),
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
    });
}

#[test]
fn an_empty_or_cut_accuracy_log_is_found() {
    let log = format!("{SCENARIO}/accuracy/mlperf_log_accuracy.json");
    for text in ["", "[\n", "[]\n"] {
        expect_only("accuracy-log-whole", &log, |tree| {
            std::fs::write(tree.join(&log), text).unwrap()
        });
    }
}

#[test]
fn an_accuracy_below_target_is_found() {
    expect_only(
        "accuracy-target",
        &format!("{SCENARIO}/accuracy/accuracy.txt"),
        |tree| {
            edit(&scenario_dir(tree).join("accuracy/accuracy.txt"), |t| {
                let rest = t.split_once('%').unwrap().1.to_string();
                format!("accuracy=50.000%{rest}")
            })
        },
    );
}

#[test]
fn a_missing_hash_is_found() {
    expect_only(
        "accuracy-hash",
        &format!("{SCENARIO}/accuracy/accuracy.txt"),
        |tree| {
            edit(&scenario_dir(tree).join("accuracy/accuracy.txt"), |t| {
                t.lines()
                    .filter(|l| !l.starts_with("hash="))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        },
    );
}

#[test]
fn an_untruncated_accuracy_log_is_found() {
    expect_only(
        "accuracy-log-truncated",
        &format!("{SCENARIO}/accuracy/mlperf_log_accuracy.json"),
        |tree| {
            std::fs::copy(
                submission().runs.join("accuracy/mlperf_log_accuracy.json"),
                scenario_dir(tree).join("accuracy/mlperf_log_accuracy.json"),
            )
            .unwrap();
        },
    );
}

#[test]
fn a_failed_compliance_test_is_found() {
    expect_only(
        "compliance-performance",
        &format!("{SCENARIO}/TEST04/verify_performance.txt"),
        |tree| {
            edit(
                &scenario_dir(tree).join("TEST04/verify_performance.txt"),
                |t| t.replace("TEST PASS", "TEST FAIL"),
            )
        },
    );
}

#[test]
fn a_missing_compliance_test_is_found() {
    expect_only(
        "compliance-missing",
        &format!("{SCENARIO}/TEST01"),
        |tree| std::fs::remove_dir_all(scenario_dir(tree).join("TEST01")).unwrap(),
    );
}

#[test]
fn a_measurements_field_left_empty_is_found() {
    expect_only(
        "measurements-fields",
        &format!("{SCENARIO}/measurements.json"),
        |tree| {
            edit(&scenario_dir(tree).join("measurements.json"), |t| {
                t.replace("\"retraining\": \"No\"", "\"retraining\": \"\"")
            })
        },
    );
}

#[test]
fn power_samples_outside_the_window_are_found() {
    expect_only(
        "power-window",
        &format!("{SCENARIO}/performance/run_1/spl.txt"),
        |tree| {
            // Every sample a year earlier: none inside the LoadGen window.
            edit(&scenario_dir(tree).join("performance/run_1/spl.txt"), |t| {
                t.lines()
                    .map(|line| {
                        let mut fields: Vec<String> = line.split(',').map(String::from).collect();
                        let year: u32 = fields[1][6..10].parse().unwrap();
                        fields[1].replace_range(6..10, &(year - 1).to_string());
                        fields.join(",")
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        },
    );
}

#[test]
fn a_missing_system_description_is_found() {
    expect_only(
        "system-json",
        "closed/mlperf-host-ci/systems/ci-edge-box.json",
        |tree| {
            std::fs::remove_file(tree.join("closed/mlperf-host-ci/systems/ci-edge-box.json"))
                .unwrap()
        },
    );
    // The description used is the one given to submit.
    assert!(submission().system_json.is_file());
}

/// The first number after `label` in `text`.
fn number_after(text: &str, label: &str) -> f64 {
    let at = text
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in {text}"))
        + label.len();
    let digits: String = text[at..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    digits.parse().unwrap()
}

#[test]
fn results_lists_the_trees_result_as_its_summary_gives_it() {
    let submission = submission();
    let output = mlperf_host(&["results", "--format", "json", s(&submission.tree)]);
    assert_ok(&output);
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    let scenario = scenario_dir(&submission.tree);
    let summary =
        std::fs::read_to_string(scenario.join("performance/run_1/mlperf_log_summary.txt")).unwrap();
    let estimate_ns = number_after(&summary, "Early stopping 90.0th percentile estimate:");
    assert_eq!(row["value"].as_f64(), Some(estimate_ns / 1e6));
    assert_eq!(row["units"], "ms");
    assert_eq!(
        row["valid"].as_bool(),
        Some(summary.contains("Result is : VALID"))
    );
    for (key, value) in [
        ("division", "closed"),
        ("submitter", "mlperf-host-ci"),
        ("system", "ci-edge-box"),
        ("benchmark", "fmnist"),
        ("scenario", "SingleStream"),
    ] {
        assert_eq!(row[key], value, "{key}");
    }
    let power: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(scenario.join("performance/power_summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(row["power"], power["sources"][0]["metric"]["power_metric"]);
    assert_eq!(row["power_units"], "millijoules");
    let accuracy = std::fs::read_to_string(scenario.join("accuracy/accuracy.txt")).unwrap();
    let figure = number_after(&accuracy, "accuracy=");
    let shown = row["accuracy"].as_str().unwrap();
    assert!(
        shown.starts_with(&format!("accuracy={figure:.3}%")),
        "{shown} vs {accuracy}"
    );

    // The run folders the tree was made from give the same figures.
    let output = mlperf_host(&[
        "results",
        "--format",
        "csv",
        s(&submission.runs.join("performance")),
        s(&submission.runs.join("accuracy")),
    ]);
    assert_ok(&output);
    let csv = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("division,submitter,system,benchmark,scenario,metric,value"));
    let cells: Vec<&str> = lines[1].split(',').collect();
    // A run folder has no system description: no system (its SUT is the plugin).
    assert_eq!(cells[2..5], ["", "fmnist", "SingleStream"]);
    assert_eq!(cells[6].parse::<f64>().ok(), Some(estimate_ns / 1e6));
    assert!(
        lines[2].contains(&format!("accuracy={figure:.3}%")),
        "{csv}"
    );
    // An accuracy run's figure is its accuracy, not an empty throughput.
    let cells: Vec<&str> = lines[2].split(',').collect();
    assert_eq!(cells[5..8], ["Accuracy", "", ""], "{csv}");

    // Anything else is refused, naming it.
    let elsewhere = submission.runs.parent().unwrap().join("systems");
    let output = mlperf_host(&["results", s(&elsewhere)]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("systems") && stderr.contains("neither a submission tree"),
        "{stderr}"
    );
    // A path that cannot be opened says why, whichever command reads it.
    let dir = TempDir::new();
    let looped = dir.path().join("loop");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    for command in ["results", "report"] {
        let output = mlperf_host(&[command, s(&looped)]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{command}");
        assert!(
            stderr.contains("Too many levels of symbolic links") && !stderr.contains("not a run"),
            "{command}: {stderr}"
        );
    }
}

#[test]
fn the_tree_records_the_data_sets_sha256() {
    let measurements: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(scenario_dir(&submission().tree).join("measurements.json"))
            .unwrap(),
    )
    .unwrap();
    let inputs = std::fs::read(support::repo().join("data/fmnist/inputs_u8.npy")).unwrap();
    let digest: String = Sha256::digest(&inputs)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(measurements["dataset_sha256"], digest.as_str());
}

#[test]
fn runs_of_different_data_sets_are_found() {
    // The accuracy run's log states another data set than the one measurements.json records.
    expect_only(
        "dataset-hash",
        "closed/mlperf-host-ci/results/ci-edge-box/fmnist",
        |tree| {
            edit(
                &scenario_dir(tree).join("accuracy/mlperf_log_detail.txt"),
                |text| {
                    let other = "0".repeat(64);
                    format!(
                        "{text}:::MLLOG {{\"key\": \"sut_dataset_sha256\", \"value\": \"{other}\", \"time_ms\": 0, \"namespace\": \"mlperf::logging\", \"event_type\": \"POINT_IN_TIME\", \"metadata\": {{}}}}\n"
                    )
                },
            )
        },
    );
}

#[test]
fn a_tree_filed_under_a_round_model_is_held_to_the_rounds_numbers() {
    // The same runs filed as resnet50 (the round's `resnet`): its data set has 50,000 images
    // and an edge system submits SingleStream, MultiStream and Offline; fmnist's 88 % top-1
    // reads as resnet's `acc` and passes its 75.7 % target.
    let (_dir, tree) = damaged_copy();
    let results = tree.join("closed/mlperf-host-ci/results/ci-edge-box");
    std::fs::rename(results.join("fmnist"), results.join("resnet50")).unwrap();
    let (code, findings) = check(&tree, true);
    assert_eq!(code, 3, "{findings:#?}");
    let resnet = "closed/mlperf-host-ci/results/ci-edge-box/resnet50";
    let expected: BTreeSet<(String, String)> = [
        ("required-scenarios".to_string(), resnet.to_string()),
        (
            "dataset-size".to_string(),
            format!("{resnet}/SingleStream/accuracy/mlperf_log_detail.txt"),
        ),
    ]
    .into();
    assert_eq!(errors(&findings), expected, "{findings:#?}");
}

#[test]
fn a_bert_99_tree_of_minilm_runs_fails_what_the_official_checker_fails() {
    // minilm (a BERT-style encoder, 456 sentences) filed as bert-99 by an edge system:
    // SingleStream and Offline, an accuracy and a short performance run each, no TEST01.
    // The official checker (tools/submission at b66003e1, `--version v6.1`) on this tree
    // fails, per scenario: performance_sample_count 456 < 10833, the test duration, the
    // Offline query's 10833 samples, the accuracy run's coverage of the data set, the F1
    // target (its accuracy check fails without a line), TEST01 missing. `check` must fail
    // each of them, and nothing else.
    support::require_data("minilm");
    let dir = TempDir::new();
    let performance = [
        "--set",
        "min_duration_ms=1000",
        "--set",
        "min_query_count=64",
    ];
    let (tree, output) = run_and_submit(
        dir.path(),
        "minilm",
        &["SingleStream", "Offline"],
        &performance,
    );
    // minilm is not a model of the round: filed, then refused as unknown-benchmark.
    assert_eq!(output.status.code(), Some(3), "{}", describe(&output));
    let submitter = tree.join("closed/mlperf-host-ci");
    for folder in ["results/ci-edge-box", "code"] {
        let folder = submitter.join(folder);
        std::fs::rename(folder.join("minilm"), folder.join("bert-99")).unwrap();
    }
    let (code, findings) = check(&tree, false);
    assert_eq!(code, 3, "{findings:#?}");
    let bert = "closed/mlperf-host-ci/results/ci-edge-box/bert-99";
    let mut expected = BTreeSet::new();
    for scenario in ["SingleStream", "Offline"] {
        let performance = format!("{bert}/{scenario}/performance/run_1/mlperf_log_detail.txt");
        let accuracy = format!("{bert}/{scenario}/accuracy");
        let mut add = |rule: &str, file: String| expected.insert((rule.to_string(), file));
        add("performance-sample-count", performance.clone());
        add("min-duration", performance.clone());
        if scenario == "Offline" {
            add("offline-samples-per-query", performance);
        }
        add("dataset-size", format!("{accuracy}/mlperf_log_detail.txt"));
        add("accuracy-target", format!("{accuracy}/accuracy.txt"));
        add("compliance-missing", format!("{bert}/{scenario}/TEST01"));
    }
    assert_eq!(errors(&findings), expected, "{findings:#?}");
}

#[test]
fn a_resnet_tree_fails_what_the_official_checker_fails() {
    // The v6.1 `resnet` benchmark on its bundled ImageNet fixture (13 photographs, a
    // random-weight model), SingleStream, an accuracy run and a short performance run, filed
    // by an edge system. The official checker (tools/submission at b66003e1, `--version
    // v6.1`) on the same tree (host/tests/data/resnet_official_checker/) reads accuracy.txt's
    // `accuracy=0.000%` below 75.6954 and fails: MultiStream and Offline missing, the test
    // duration, the accuracy run's 13 of 50,000 samples, TEST01 and TEST04 missing; `check`
    // must fail each of them, and nothing else (performance_sample_count is mlperf.conf's 1024).
    let dir = TempDir::new();
    let performance = [
        "--set",
        "min_duration_ms=1000",
        "--set",
        "min_query_count=64",
        "--set",
        "single_stream_expected_latency_ns=50000",
    ];
    let (tree, output) = run_and_submit(dir.path(), "resnet", &["SingleStream"], &performance);
    assert_eq!(output.status.code(), Some(3), "{}", describe(&output));
    let accuracy = std::fs::read_to_string(tree.join(
        "closed/mlperf-host-ci/results/ci-edge-box/resnet/SingleStream/accuracy/accuracy.txt",
    ))
    .unwrap();
    assert!(
        accuracy.starts_with("accuracy=0.000%, good=0, total=13\n"),
        "{accuracy}"
    );
    let (code, findings) = check(&tree, false);
    assert_eq!(code, 3, "{findings:#?}");
    let resnet = "closed/mlperf-host-ci/results/ci-edge-box/resnet";
    let scenario = format!("{resnet}/SingleStream");
    let expected: BTreeSet<(String, String)> = [
        ("required-scenarios", resnet.to_string()),
        (
            "min-duration",
            format!("{scenario}/performance/run_1/mlperf_log_detail.txt"),
        ),
        (
            "accuracy-target",
            format!("{scenario}/accuracy/accuracy.txt"),
        ),
        (
            "dataset-size",
            format!("{scenario}/accuracy/mlperf_log_detail.txt"),
        ),
        ("compliance-missing", format!("{scenario}/TEST01")),
        ("compliance-missing", format!("{scenario}/TEST04")),
    ]
    .into_iter()
    .map(|(rule, file)| (rule.to_string(), file))
    .collect();
    assert_eq!(errors(&findings), expected, "{findings:#?}");
}

/// An accuracy run and a performance run (`performance` settings) of `benchmark` on the
/// official engine for each scenario, filed by `submit` for an edge system: the tree and
/// submit's output.
fn run_and_submit(
    dir: &Path,
    benchmark: &str,
    scenarios: &[&str],
    performance: &[&str],
) -> (PathBuf, Output) {
    let mut run_dirs = Vec::new();
    for scenario in scenarios {
        for (mode, extra) in [
            ("accuracy", &["--mode", "AccuracyOnly"][..]),
            ("performance", performance),
        ] {
            let out = dir.join("runs").join(format!("{scenario}-{mode}"));
            let mut args = vec![
                "run",
                "--engine",
                "official",
                "--benchmark",
                benchmark,
                "--scenario",
                scenario,
                "--quiet",
                "--out",
                s(&out),
            ];
            args.extend_from_slice(extra);
            assert_ok(&mlperf_host(&args));
            run_dirs.push(out);
        }
    }
    let system_json = support::system_description(dir, "ci-edge-box", "mlperf-host-ci");
    let tree = dir.join("tree");
    let mut args = vec![
        "submit",
        "--benchmark",
        benchmark,
        "--system",
        s(&system_json),
        "--out",
        s(&tree),
    ];
    args.extend(run_dirs.iter().map(|d| s(d)));
    let output = mlperf_host(&args);
    (tree, output)
}
