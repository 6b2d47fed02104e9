//! The v6.1 `llama2-70b-99.9` benchmark through the binary, on the OpenOrca fixture
//! (tests/fixtures/openorca: the reference's pandas pickle of 12 rows, its conversion, a
//! sentencepiece tokenizer trained locally, a synthetic accuracy log that the reference's
//! evaluate-accuracy.py scored): `accuracy` prints the script's line and judges it by the
//! round's targets; `dataset convert` turns the pickle into the records the host reads (with
//! .venv's pandas); a folder holding only the pickle is refused with that command.
//!
//! Needs data/punkt (scripts/benchmarks/prepare.sh punkt) and pandas in .venv
//! (scripts/setup-official-loadgen.sh); scripts/test.sh sets up both.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use mlperf_submission::datasets::openorca::{CONVERTED, PICKLE};
use support::{repo, text, TempDir};

fn fixture() -> PathBuf {
    repo().join("tests/fixtures/openorca")
}

fn host(args: &[&str]) -> Output {
    assert!(
        repo().join("data/punkt/english/ortho_context.tab").is_file(),
        "data/punkt is not prepared: run `bash scripts/benchmarks/prepare.sh punkt` (scripts/test.sh does)"
    );
    support::mlperf_host(&repo(), args)
}

/// .venv's Python, which has pandas.
fn python_with_pandas() -> PathBuf {
    let python = repo().join(".venv/bin/python");
    let has = std::process::Command::new(&python)
        .args(["-c", "import pandas"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        has,
        "{} has no pandas: run `bash scripts/setup-official-loadgen.sh` (scripts/test.sh does)",
        python.display()
    );
    python
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn accuracy_prints_evaluate_accuracy_pys_line_judged_by_the_rounds_targets() {
    let records = read_json(&fixture().join("records/accuracy.json"));
    let printed = records[0]["result_line"].as_str().unwrap();
    let dir = TempDir::new();
    let log = dir.path().join("mlperf_log_accuracy.json");
    std::fs::copy(
        fixture().join("logs/synthetic/mlperf_log_accuracy.json"),
        &log,
    )
    .unwrap();
    let output = host(&[
        "accuracy",
        "--benchmark",
        "llama2-70b-99.9",
        "--log",
        log.to_str().unwrap(),
    ]);
    // The fixture's answers are far shorter than Llama-2's 294 tokens a sample.
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
        "ROUGE1 60.5248 >= 44.386769 (99.9 % of the reference ROUGE1 44.4312): PASS",
        "ROUGEL 59.0055 >= 28.587584 (99.9 % of the reference ROUGEL 28.6162): PASS",
        "TOKENS_PER_SAMPLE 94.4 >= 265.005000 (90 % of the reference TOKENS_PER_SAMPLE 294.45): FAIL",
        "TOKENS_PER_SAMPLE 94.4 <= 323.895000 (110 % of the reference TOKENS_PER_SAMPLE 294.45): PASS",
    ] {
        assert!(report.contains(line), "{line}\n{report}");
    }
}

#[test]
fn dataset_convert_writes_the_records_the_host_reads_beside_a_link_to_the_pickle() {
    let python = python_with_pandas();
    let dir = TempDir::new();
    let source = dir.path().join("open_orca");
    std::fs::create_dir_all(&source).unwrap();
    std::fs::copy(fixture().join(PICKLE), source.join(PICKLE)).unwrap();
    let out = dir.path().join("converted");
    let output = host(&[
        "dataset",
        "convert",
        "--benchmark",
        "llama2-70b-99.9",
        "--dataset-dir",
        source.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--python",
        python.to_str().unwrap(),
    ]);
    let stdout = support::assert_success(&output);
    assert!(stdout.contains("12 records"), "{stdout}");
    assert_eq!(
        std::fs::read(out.join(CONVERTED)).unwrap(),
        std::fs::read(fixture().join(CONVERTED)).unwrap()
    );
    let link = out.join(PICKLE);
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_link(&link).unwrap(), source.join(PICKLE));

    // The converted folder is a data set: each record's tok_input is a sample.
    let ids = dir.path().join("ids");
    support::assert_success(&host(&[
        "dataset",
        "preprocess",
        "--benchmark",
        "llama2-70b-99.9",
        "--dataset-dir",
        out.to_str().unwrap(),
        "--out",
        ids.to_str().unwrap(),
    ]));
    let records = read_json(&fixture().join(CONVERTED));
    for (index, record) in records.as_array().unwrap().iter().enumerate() {
        let npy = std::fs::read(ids.join(format!("{index}.npy"))).unwrap();
        let header = u16::from_le_bytes([npy[8], npy[9]]) as usize;
        let ours: Vec<u64> = npy[10 + header..]
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64)
            .collect();
        let theirs: Vec<u64> = record["tok_input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|id| id.as_u64().unwrap())
            .collect();
        assert_eq!(ours, theirs, "record {index}");
    }
}

#[test]
fn a_pickle_not_converted_or_not_convertible_is_refused_naming_the_fix() {
    let dir = TempDir::new();
    std::fs::copy(fixture().join(PICKLE), dir.path().join(PICKLE)).unwrap();
    let output = host(&[
        "dataset",
        "preprocess",
        "--benchmark",
        "llama2-70b-99.9",
        "--dataset-dir",
        dir.path().to_str().unwrap(),
        "--out",
        dir.path().join("ids").to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("is a pandas pickle") && stderr.contains("mlperf-host dataset convert"),
        "{stderr}"
    );
    assert!(!dir.path().join("ids").exists());

    // Not a pickle: pandas' own complaint, and the file.
    let broken = TempDir::new();
    std::fs::write(broken.path().join(PICKLE), b"not a pickle").unwrap();
    let convert = |python: &Path| {
        host(&[
            "dataset",
            "convert",
            "--benchmark",
            "llama2-70b-99.9",
            "--dataset-dir",
            broken.path().to_str().unwrap(),
            "--out",
            broken.path().join("out").to_str().unwrap(),
            "--python",
            python.to_str().unwrap(),
        ])
    };
    let output = convert(&python_with_pandas());
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(PICKLE) && stderr.contains("could not convert it"),
        "{stderr}"
    );
    assert!(!broken.path().join("out").join(CONVERTED).exists());
    let output = convert(Path::new("/nonexistent/python3"));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("cannot start") && stderr.contains("--python"),
        "{stderr}"
    );
    // A benchmark whose data set is read as it is has nothing to convert.
    let output = host(&[
        "dataset",
        "convert",
        "--benchmark",
        "llama3.1-8b",
        "--dataset-dir",
        dir.path().to_str().unwrap(),
        "--out",
        dir.path().join("out").to_str().unwrap(),
    ]);
    assert!(text(&output.stderr).contains("is read as it is"));
}
