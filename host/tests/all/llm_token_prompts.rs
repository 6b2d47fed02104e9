//! The round's LLM benchmarks that send token ids (llama3.1-8b, llama2-70b-99.9) end to end
//! against a real server that takes them: llama.cpp's own llama-server serving
//! SmolLM2-135M-Instruct. The data sets are the fixtures' records in their real formats
//! (cnn_eval.json; the converted OpenOrca file) with each prompt encoded by SmolLM2's
//! tokenizer, as the references' files hold the real model's ids; `--model-file` is a folder
//! with SmolLM2's tokenizer.json. The server's own log of the prompts it was sent
//! (`--log-prompts-dir`) must be the records' `tok_input`, id for id; the accuracy run's log
//! holds an answer for every record and the reference script's line is printed (SmolLM2
//! summarising licence texts scores what it scores: the targets are not the point here).
//!
//! Needs what `bash scripts/test.sh` sets up: .venv-llama (scripts/setup-llm.sh), llama-server
//! (scripts/setup-llama-server.sh), data/smollm2 and data/punkt.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mlperf_submission::datasets::openorca::CONVERTED;
use mlperf_tokenizer::Tokenizer;
use support::servers::{Kind, Server};
use support::{describe, repo, TempDir};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");
/// Records of each fixture sent (of 12): enough to mix prompt lengths, short enough for a
/// 2-core machine.
const RECORDS: usize = 4;

fn smollm2_tokenizer() -> PathBuf {
    let path = repo().join("data/smollm2/tokenizer.json");
    assert!(
        path.is_file(),
        "{} is missing: run `bash scripts/benchmarks/prepare.sh smollm2` (scripts/test.sh does)",
        path.display()
    );
    path
}

/// A checkpoint folder as `--model-file` takes it: SmolLM2's tokenizer.json only (no
/// tokenizer_config.json: no clean-up of spaces, the fast decoder).
fn model_folder(dir: &Path) -> PathBuf {
    let folder = dir.join("SmolLM2-135M-Instruct");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::copy(smollm2_tokenizer(), folder.join("tokenizer.json")).unwrap();
    folder
}

/// The first [`RECORDS`] records of a fixture's file, each prompt (its `tok_input` decoded by
/// the fixture's own tokenizer) encoded by SmolLM2's tokenizer as its `tok_input`, written to
/// `file`; returns the ids.
fn reencoded(fixture: &Path, tokenizer: &Path, file: &Path) -> Vec<Vec<u32>> {
    let theirs = Tokenizer::from_file(tokenizer).unwrap();
    let ours = Tokenizer::from_file(&smollm2_tokenizer()).unwrap();
    let records: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let mut ids = Vec::new();
    let records: Vec<serde_json::Value> = records
        .into_iter()
        .take(RECORDS)
        .map(|mut record| {
            let fixture_ids: Vec<u32> =
                serde_json::from_value(record["tok_input"].clone()).unwrap();
            let prompt = theirs.decode(&fixture_ids).unwrap();
            let prompt_ids = ours.encode(&prompt).unwrap();
            record["tok_input"] = serde_json::json!(prompt_ids);
            ids.push(prompt_ids);
            record
        })
        .collect();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, serde_json::to_string(&records).unwrap()).unwrap();
    ids
}

/// `run --benchmark NAME` against `server` in AccuracyOnly mode, Offline, 16 new tokens.
fn accuracy_run(name: &str, server: &Server, dataset: &Path, model: &Path, out: &Path) -> Output {
    Command::new(EXE)
        .args(["run", "--benchmark", name, "--scenario", "Offline"])
        .args(["--mode", "AccuracyOnly", "--dataset-dir"])
        .arg(dataset)
        .arg("--model-file")
        .arg(model)
        .arg("--plugin-set")
        .arg(format!("endpoints=[{:?}]", server.http()))
        .args([
            "--plugin-set",
            "model=smollm2",
            "--plugin-set",
            "max_tokens=16",
        ])
        // One request at a time: llama-server names each logged prompt by the millisecond it
        // came in, so that two at once would be one file.
        .args(["--plugin-set", "concurrency=1"])
        .args([
            "--set",
            &format!("performance_sample_count_override={RECORDS}"),
        ])
        .arg("--out")
        .arg(out)
        .current_dir(repo())
        .output()
        .expect("run mlperf-host")
}

/// The server was sent exactly `sent`, in any order (the message lists the lengths of what
/// is missing and of what is extra, the prompts themselves being long).
fn assert_prompts(server: &Server, sent: &[Vec<u32>]) {
    let mut received = server.prompts();
    let mut expected = sent.to_vec();
    received.sort();
    expected.sort();
    let missing: Vec<usize> = expected
        .iter()
        .filter(|p| !received.contains(p))
        .map(Vec::len)
        .collect();
    let extra: Vec<usize> = received
        .iter()
        .filter(|p| !expected.contains(p))
        .map(Vec::len)
        .collect();
    assert!(
        received == expected,
        "{} prompts received, {} sent; not received (lengths): {missing:?}; not sent: {extra:?}",
        received.len(),
        expected.len()
    );
}

/// Every record answered once in the accuracy log, and the script's line in accuracy.txt.
fn assert_scored(out: &Path, line_start: &str) {
    let records = support::accuracy_records(out);
    let mut answered: Vec<u64> = records.iter().map(|(qsl, _)| *qsl).collect();
    answered.sort();
    assert_eq!(answered, (0..RECORDS as u64).collect::<Vec<_>>());
    assert!(
        records
            .iter()
            .all(|(_, data)| !data.is_empty() && data.len() % 4 == 0),
        "int32 token ids for every answer"
    );
    let report = std::fs::read_to_string(out.join("accuracy.txt")).unwrap();
    let line = report.lines().next().unwrap_or_default();
    assert!(
        line.starts_with(line_start) && line.contains(&format!("'gen_num': {RECORDS}")),
        "{report}"
    );
}

#[test]
fn llama3_1_8b_and_llama2_70b_send_their_records_token_ids_to_a_served_model() {
    let _serial = support::timings_or_llm();
    let server = Server::start(Kind::LlamaServer, "smollm2");
    let dir = TempDir::new();
    let model = model_folder(dir.path());

    // Each benchmark's file in its own folder: evaluation.py's line (its figures as strings),
    // evaluate-accuracy.py's (numbers).
    let mut sent = Vec::new();
    for (benchmark, fixture, file, line_start) in [
        ("llama3.1-8b", "cnndm", "cnn_eval.json", "{'rouge1': '"),
        ("llama2-70b-99.9", "openorca", CONVERTED, "{'rouge1': "),
    ] {
        let fixture = repo().join("tests/fixtures").join(fixture);
        let dataset = dir.path().join(benchmark).join("data");
        sent.extend(reencoded(
            &fixture.join(file),
            &fixture.join("tokenizer/tokenizer.json"),
            &dataset.join(file),
        ));
        let out = dir.path().join(benchmark).join("runs");
        let output = accuracy_run(benchmark, &server, &dataset, &model, &out);
        assert!(
            output.status.success(),
            "{}\n{}",
            describe(&output),
            server.log()
        );
        assert_prompts(&server, &sent);
        assert_scored(&out, line_start);
    }
    let out = dir.path().join("llama2-70b-99.9/runs");
    let report = std::fs::read_to_string(out.join("accuracy.txt")).unwrap();
    assert!(report.contains("'tokens_per_sample': "), "{report}");
}
