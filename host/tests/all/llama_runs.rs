//! The v6.1 `llama3.1-8b` and `llama3.1-8b-edge` benchmarks through the binary, on the
//! CNN-DailyMail fixture (tests/fixtures/cnndm: 12 records in cnn_eval.json's format, a locally
//! trained tokenizer, a synthetic accuracy log that the reference's evaluation.py scored):
//! `accuracy` prints the script's line and judges it by the round's targets, the edge set's
//! for the edge benchmark; `dataset preprocess` writes each record's tok_input; a folder
//! holding both sets is refused before anything runs.
//!
//! Needs data/punkt (scripts/benchmarks/prepare.sh punkt; scripts/test.sh runs it).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use support::{repo, text, TempDir};

fn fixture() -> PathBuf {
    repo().join("tests/fixtures/cnndm")
}

fn host(args: &[&str]) -> Output {
    assert!(
        repo().join("data/punkt/english/ortho_context.tab").is_file(),
        "data/punkt is not prepared: run `bash scripts/benchmarks/prepare.sh punkt` (scripts/test.sh does)"
    );
    support::mlperf_host(&repo(), args)
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The synthetic log in a folder of its own (accuracy.txt is written beside it).
fn synthetic_log(dir: &Path) -> PathBuf {
    let log = dir.join("mlperf_log_accuracy.json");
    std::fs::copy(
        fixture().join("logs/synthetic/mlperf_log_accuracy.json"),
        &log,
    )
    .unwrap();
    log
}

#[test]
fn accuracy_prints_evaluation_pys_line_judged_by_the_rounds_targets() {
    let records = read_json(&fixture().join("records/accuracy.json"));
    let printed = records[0]["result_line"].as_str().unwrap();
    let dir = TempDir::new();
    let log = synthetic_log(dir.path());
    let output = host(&[
        "accuracy",
        "--benchmark",
        "llama3.1-8b",
        "--log",
        log.to_str().unwrap(),
    ]);
    // 12 short answers are far below the 13,368 articles' length target.
    assert_eq!(
        output.status.code(),
        Some(3),
        "{}",
        support::describe(&output)
    );
    let report = std::fs::read_to_string(dir.path().join("accuracy.txt")).unwrap();
    assert_eq!(
        report.lines().next(),
        Some(printed),
        "{}",
        text(&output.stdout)
    );
    for line in [
        "ROUGE1 60.4306 >= 38.391408 (99 % of the reference ROUGE1 38.7792): PASS",
        "GEN_LEN 2563 >= 7350879.600000 (90 % of the reference GEN_LEN 8167644): FAIL",
        "GEN_LEN 2563 <= 8984408.400000 (110 % of the reference GEN_LEN 8167644): PASS",
    ] {
        assert!(report.contains(line), "{line}\n{report}");
    }

    // The edge set is its own file; the same answers meet the edge set's bounds.
    let edge = TempDir::new();
    std::fs::copy(
        fixture().join("cnn_eval.json"),
        edge.path().join("sample_cnn_eval_5000.json"),
    )
    .unwrap();
    let output = host(&[
        "accuracy",
        "--benchmark",
        "llama3.1-8b-edge",
        "--dataset-dir",
        edge.path().to_str().unwrap(),
        "--log",
        log.to_str().unwrap(),
    ]);
    assert_eq!(
        output.status.code(),
        Some(3),
        "{}",
        support::describe(&output)
    );
    let report = std::fs::read_to_string(dir.path().join("accuracy.txt")).unwrap();
    assert_eq!(report.lines().next(), Some(printed));
    assert!(
        report.contains("(99 % of the reference ROUGE1 39.06): PASS"),
        "{report}"
    );
    assert!(report.contains("reference GEN_LEN 3051113"), "{report}");
}

#[test]
fn dataset_preprocess_writes_each_records_token_ids() {
    let dir = TempDir::new();
    let out = dir.path().join("ids");
    support::assert_success(&host(&[
        "dataset",
        "preprocess",
        "--benchmark",
        "llama3.1-8b",
        "--out",
        out.to_str().unwrap(),
    ]));
    let records = read_json(&fixture().join("cnn_eval.json"));
    let records = records.as_array().unwrap();
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), records.len());
    for (index, record) in records.iter().enumerate() {
        let npy = std::fs::read(out.join(format!("{index}.npy"))).unwrap();
        let header = u16::from_le_bytes([npy[8], npy[9]]) as usize;
        let head = String::from_utf8_lossy(&npy[10..10 + header]).into_owned();
        let ids: Vec<u64> = npy[10 + header..]
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64)
            .collect();
        let expected: Vec<u64> = record["tok_input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|id| id.as_u64().unwrap())
            .collect();
        assert!(head.contains("'descr': '<i4'"), "{head}");
        assert!(
            head.contains(&format!("'shape': ({},)", expected.len())),
            "{head}"
        );
        assert_eq!(ids, expected, "record {index}");
    }
}

#[test]
fn a_folder_holding_both_sets_is_refused_naming_them() {
    let dir = TempDir::new();
    for name in ["cnn_eval.json", "sample_cnn_eval_5000.json"] {
        std::fs::copy(fixture().join("cnn_eval.json"), dir.path().join(name)).unwrap();
    }
    let output = host(&[
        "dataset",
        "preprocess",
        "--benchmark",
        "llama3.1-8b",
        "--dataset-dir",
        dir.path().to_str().unwrap(),
        "--out",
        dir.path().join("ids").to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("holds both cnn_eval.json") && stderr.contains("sample_cnn_eval_5000.json"),
        "{stderr}"
    );
    assert!(!dir.path().join("ids").exists());
}
