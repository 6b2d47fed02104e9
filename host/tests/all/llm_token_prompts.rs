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

/// `mlperf-host ARGS --benchmark NAME` against `server`'s smollm2 on the data set's first
/// [`RECORDS`] records, one request at a time: llama-server names each logged prompt by the
/// millisecond it came in, so that two at once would be one file.
fn served(args: &[&str], name: &str, server: &Server, dataset: &Path, model: &Path) -> Command {
    let mut command = Command::new(EXE);
    command
        .args(args)
        .args(["--benchmark", name, "--dataset-dir"])
        .arg(dataset)
        .arg("--model-file")
        .arg(model)
        .arg("--plugin-set")
        .arg(format!("endpoints=[{:?}]", server.http()))
        .args(["--plugin-set", "model=smollm2"])
        .args(["--plugin-set", "concurrency=1"])
        .args([
            "--set",
            &format!("performance_sample_count_override={RECORDS}"),
        ])
        .current_dir(repo());
    command
}

/// `run --benchmark NAME` against `server` in AccuracyOnly mode, Offline, 16 new tokens.
fn accuracy_run(name: &str, server: &Server, dataset: &Path, model: &Path, out: &Path) -> Output {
    served(
        &["run", "--scenario", "Offline"],
        name,
        server,
        dataset,
        model,
    )
    .args(["--mode", "AccuracyOnly", "--plugin-set", "max_tokens=16"])
    .arg("--out")
    .arg(out)
    .output()
    .expect("run mlperf-host")
}

/// [`served`], short: 8 new tokens, no minimum duration; asserts that it succeeded.
fn short_run(args: &[&str], name: &str, server: &Server, dataset: &Path, model: &Path) -> Output {
    let output = served(args, name, server, dataset, model)
        .args(["--plugin-set", "max_tokens=8", "--quiet"])
        .args(["--set", "min_duration_ms=0", "--set", "min_query_count=4"])
        .args(["--set", "sample_concatenate_permutation=0"])
        .output()
        .expect("run mlperf-host");
    assert!(
        output.status.success(),
        "{args:?}: {}\n{}",
        describe(&output),
        server.log()
    );
    output
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

/// Both benchmarks' records sent as their token ids and scored with their script's line, then
/// llama2-70b-99.9 run in its Interactive scenario and llama3.1-8b-edge in SingleStream.
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

    // llama2-70b's Interactive scenario: a Server run read for llama2-70b-interactive, with
    // mlperf.conf's 450 ms TTFT and 40 ms TPOT bounds, its first tokens timed as they stream.
    let interactive = dir.path().join("llama2-70b-99.9/interactive");
    short_run(
        &[
            "run",
            "--scenario",
            "Interactive",
            "--set",
            "server_target_qps=1",
            "--out",
            interactive.to_str().unwrap(),
        ],
        "llama2-70b-99.9",
        &server,
        &dir.path().join("llama2-70b-99.9/data"),
        &model,
    );
    let detail = std::fs::read_to_string(interactive.join("mlperf_log_detail.txt")).unwrap();
    for key in [
        "\"key\": \"requested_server_ttft_latency\", \"value\": 450000000",
        "\"key\": \"requested_server_tpot_latency\", \"value\": 40000000",
        "\"key\": \"requested_scenario\", \"value\": \"Server\"",
        "\"result_first_token_mean_latency_ns\"",
    ] {
        assert!(detail.contains(key), "no {key} in the detail log");
    }

    // llama3.1-8b-edge's SingleStream, the edge round's latency scenario, on the edge set's
    // file: one query at a time, its first token timed as it streams.
    let edge = dir.path().join("llama3.1-8b-edge");
    let cnndm = repo().join("tests/fixtures/cnndm");
    reencoded(
        &cnndm.join("cnn_eval.json"),
        &cnndm.join("tokenizer/tokenizer.json"),
        &edge.join("data/sample_cnn_eval_5000.json"),
    );
    let single_stream = edge.join("single-stream");
    short_run(
        &[
            "run",
            "--scenario",
            "SingleStream",
            "--out",
            single_stream.to_str().unwrap(),
        ],
        "llama3.1-8b-edge",
        &server,
        &edge.join("data"),
        &model,
    );
    let detail = std::fs::read_to_string(single_stream.join("mlperf_log_detail.txt")).unwrap();
    for key in [
        "\"key\": \"requested_scenario\", \"value\": \"SingleStream\"",
        "\"key\": \"requested_performance_sample_count_override\", \"value\": 4",
        "\"result_first_token_mean_latency_ns\"",
    ] {
        assert!(detail.contains(key), "no {key} in the detail log");
    }
}

/// llama3.1-8b as a submitter runs it, against the served model: Offline, Server and
/// Interactive performance runs (token throughput, TTFT and TPOT measured), an accuracy run in
/// each scenario filed, TEST06 on the Offline one, then `submit` and `check`. The runs are
/// short and the data set 4 records, so `check` finds the counts and durations wanting; what
/// is asserted is that every scenario ran on the server's answers and was filed and checked
/// as the round's llama3.1-8b.
#[test]
fn llama3_1_8b_runs_every_round_scenario_audits_and_submits_against_a_served_model() {
    let _serial = support::timings_or_llm();
    let server = Server::start(Kind::LlamaServer, "smollm2");
    let dir = TempDir::new();
    let model = model_folder(dir.path());
    let fixture = repo().join("tests/fixtures/cnndm");
    let dataset = dir.path().join("cnndm");
    reencoded(
        &fixture.join("cnn_eval.json"),
        &fixture.join("tokenizer/tokenizer.json"),
        &dataset.join("cnn_eval.json"),
    );
    let runs = dir.path().join("runs");
    let host = |args: &[&str]| short_run(args, "llama3.1-8b", &server, &dataset, &model);
    let detail = |out: &Path| std::fs::read_to_string(out.join("mlperf_log_detail.txt")).unwrap();
    for scenario in ["Offline", "Server", "Interactive"] {
        let rate = match scenario {
            "Offline" => "offline_expected_qps=1",
            _ => "server_target_qps=1",
        };
        let performance = runs.join(scenario).join("performance");
        host(&[
            "run",
            "--scenario",
            scenario,
            "--set",
            rate,
            "--out",
            performance.to_str().unwrap(),
        ]);
        let logged = detail(&performance);
        let key = if scenario == "Offline" {
            "\"result_tokens_per_second\""
        } else {
            "\"result_first_token_mean_latency_ns\""
        };
        assert!(logged.contains(key), "{scenario}: no {key}");
        if scenario == "Interactive" {
            assert!(
                logged.contains("\"key\": \"requested_server_ttft_latency\", \"value\": 500000000"),
                "the Interactive bounds"
            );
        }
        let accuracy = runs.join(scenario).join("accuracy");
        host(&[
            "run",
            "--scenario",
            scenario,
            "--mode",
            "AccuracyOnly",
            "--out",
            accuracy.to_str().unwrap(),
        ]);
        assert!(accuracy.join("accuracy.txt").is_file(), "{scenario}");
    }
    let test06 = runs.join("Offline/TEST06");
    host(&[
        "audit",
        "--test",
        "TEST06",
        "--scenario",
        "Offline",
        "--set",
        "offline_expected_qps=1",
        "--out",
        test06.to_str().unwrap(),
    ]);
    let verdict = std::fs::read_to_string(test06.join("verify_accuracy.txt")).unwrap();
    assert!(
        verdict.contains("TEST06 verification complete"),
        "{verdict}"
    );

    let system = support::typed_system_description(dir.path(), "ci-dc", "ci", "datacenter");
    let tree = dir.path().join("tree");
    let mut submit = vec![
        "submit".to_string(),
        "--benchmark".into(),
        "llama3.1-8b".into(),
        "--system".into(),
        system.display().to_string(),
        "--out".into(),
        tree.display().to_string(),
    ];
    for scenario in ["Offline", "Server", "Interactive"] {
        for kind in ["performance", "accuracy"] {
            submit.push(runs.join(scenario).join(kind).display().to_string());
        }
    }
    submit.push(test06.display().to_string());
    support::mlperf_host(&repo(), &submit);
    let results = tree.join("closed/ci/results/ci-dc/llama3.1-8b");
    for scenario in ["Offline", "Server", "Interactive"] {
        for file in [
            "performance/run_1/mlperf_log_detail.txt",
            "accuracy/accuracy.txt",
            "accuracy/mlperf_log_accuracy.json",
        ] {
            assert!(
                results.join(scenario).join(file).is_file(),
                "{scenario}/{file}"
            );
        }
    }
    assert!(results.join("Offline/TEST06/verify_accuracy.txt").is_file());
    let (_, findings) = support::check_json(&tree, true);
    // Held to llama3.1-8b's rules in each folder; nothing filed where it does not belong.
    for scenario in ["Offline", "Server", "Interactive"] {
        let folder = format!("llama3.1-8b/{scenario}/");
        assert!(
            findings
                .iter()
                .any(|f| f["rule"] == "performance-sample-count"
                    && f["file"].as_str().unwrap_or("").contains(&folder)),
            "{scenario}: {findings:#?}"
        );
    }
    for rule in ["unknown-scenario", "required-scenarios"] {
        assert!(
            !findings.iter().any(|f| f["rule"] == rule),
            "{rule}: {findings:#?}"
        );
    }
}
