//! The round's whisper benchmark end to end on the librispeech fixture (three clips of
//! espeak-ng speech in the real layout, made by the reference's convert and repackage
//! scripts): the scorer's line equals what the reference's accuracy_eval.py printed on the
//! same logs and manifests (records/accuracy.json), `dataset preprocess` writes the float32
//! audio librosa.load gives (records/audio.json), and runs go through the network plugin's
//! transcription API to a stand-in server, since no speech model ships in a package: it
//! answers each clip it knows by the sha256 of the samples it was sent, so an answer proves the
//! audio arrived sample for sample.
//!
//! Needs data/whisper (`prepare.sh whisper`; scripts/test.sh runs it).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::servers::{Kind, Server};
use support::{describe, repo, TempDir};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

fn fixture() -> PathBuf {
    repo().join("tests/fixtures/librispeech")
}

fn prepared() {
    assert!(
        repo().join("data/whisper/english.json").is_file(),
        "data/whisper is not prepared: run `bash scripts/benchmarks/prepare.sh whisper` (scripts/test.sh does)"
    );
}

/// The line accuracy_eval.py printed in `run` of records/accuracy.json.
fn reference_line(run: &str) -> String {
    let records: Vec<serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(fixture().join("records/accuracy.json")).unwrap(),
    )
    .unwrap();
    let record = records.iter().find(|r| r["run"] == run).unwrap();
    assert_eq!(record["rc"], 0);
    record["result_line"].as_str().unwrap().to_owned()
}

fn host(args: &[&str], extra: &[&Path]) -> Output {
    Command::new(EXE)
        .args(args)
        .args(extra)
        .current_dir(repo())
        .output()
        .expect("run mlperf-host")
}

/// Scores `log` (copied into `dir`) with `accuracy --benchmark whisper`; accuracy.txt. Both
/// fixture logs miss the round's target: `accuracy` exits 3 on a scored run that misses it.
fn score(dir: &Path, log: &Path, dataset: Option<&Path>) -> String {
    let copy = dir.join("mlperf_log_accuracy.json");
    std::fs::copy(log, &copy).unwrap();
    let mut command = Command::new(EXE);
    command
        .args(["accuracy", "--benchmark", "whisper", "--log"])
        .arg(&copy);
    if let Some(dataset) = dataset {
        command.arg("--dataset-dir").arg(dataset);
    }
    let output = command.current_dir(repo()).output().unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", describe(&output));
    std::fs::read_to_string(dir.join("accuracy.txt")).unwrap()
}

#[test]
fn the_scorer_prints_the_reference_scripts_line() {
    prepared();
    let dir = TempDir::new();
    let log = fixture().join("logs/synthetic/mlperf_log_accuracy.json");
    // Seven records for three clips: every record counts, as the script counts them.
    let report = score(dir.path(), &log, None);
    let mut lines = report.lines();
    assert_eq!(
        lines.next(),
        Some(reference_line("repacked").as_str()),
        "{report}"
    );
    assert!(report.contains("repeats=4"), "{report}");
    assert!(
        report.contains(": FAIL"),
        "81 % is below the round's target: {report}"
    );

    // A manifest with a clip over 30 s, one with no text transcript and one of exactly 30 s
    // with characters outside the labels: the first two are dropped, so qsl_idx shifts.
    let dataset = dir.path().join("edited");
    std::fs::create_dir_all(dataset.join("data")).unwrap();
    std::fs::copy(
        fixture().join("manifests/with-dropped-entries.json"),
        dataset.join("data/dev-all-repack.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        fixture().join("data/dev-all-repack"),
        dataset.join("data/dev-all-repack"),
    )
    .unwrap();
    let report = score(dir.path(), &log, Some(&dataset));
    assert_eq!(
        report.lines().next(),
        Some(reference_line("with_dropped_entries").as_str()),
        "{report}"
    );
}

#[test]
fn bad_answers_and_folders_are_refused_by_name() {
    prepared();
    let dir = TempDir::new();
    // An index that is no label (42), and a record that is not whole int64s.
    let bad = dir.path().join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    for (data, expected) in [
        ("2A00000000000000", "label index 42"),
        ("0100000000", "5 bytes"),
    ] {
        let log = bad.join("mlperf_log_accuracy.json");
        std::fs::write(
            &log,
            format!("[{{\"seq_id\": 0, \"qsl_idx\": 1, \"data\": \"{data}\"}}]"),
        )
        .unwrap();
        let output = host(&["accuracy", "--benchmark", "whisper", "--log"], &[&log]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success() && stderr.contains(expected),
            "{stderr}"
        );
        assert!(stderr.contains("qsl_idx 1"), "{stderr}");
    }
    // A folder without the manifest names both places it looks.
    let output = host(
        &[
            "dataset",
            "preprocess",
            "--benchmark",
            "whisper",
            "--dataset-dir",
        ],
        &[dir.path(), Path::new("--out"), &dir.path().join("out")],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success() && stderr.contains("data/dev-all-repack.json"),
        "{stderr}"
    );
}

#[test]
fn preprocess_writes_the_audio_librosa_reads() {
    let dir = TempDir::new();
    let out = dir.path().join("audio");
    let output = host(
        &["dataset", "preprocess", "--benchmark", "whisper", "--out"],
        &[&out],
    );
    assert!(output.status.success(), "{}", describe(&output));
    let audio: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture().join("records/audio.json")).unwrap(),
    )
    .unwrap();
    for clip in audio["clips"].as_array().unwrap() {
        let npy = std::fs::read(out.join(format!("{}.npy", clip["qsl_idx"]))).unwrap();
        let header = u16::from_le_bytes([npy[8], npy[9]]) as usize;
        let head = String::from_utf8_lossy(&npy[10..10 + header]);
        assert!(
            head.contains("'<f4'") && head.contains(&format!("({},)", clip["samples"])),
            "{head}"
        );
        use sha2::Digest;
        let digest = format!("{:x}", sha2::Sha256::digest(&npy[10 + header..]));
        assert_eq!(digest, clip["float32_le_sha256"].as_str().unwrap());
    }
}

/// `run --benchmark whisper --scenario Offline ARGS` against `server`, into `out`; it must
/// succeed.
fn offline_run(server: &Server, out: &Path, args: &[&str]) {
    let endpoints = format!("endpoints=[{:?}]", server.http());
    let output = Command::new(EXE)
        .args(["run", "--benchmark", "whisper", "--scenario", "Offline"])
        .args(args)
        .args(["--plugin-set", &endpoints, "--out"])
        .arg(out)
        .current_dir(repo())
        .output()
        .expect("run mlperf-host");
    assert!(
        output.status.success(),
        "{}\n{}",
        describe(&output),
        server.log()
    );
}

/// `run --benchmark whisper` against the stand-in: an accuracy run scored as the reference
/// scores the same answers, the server sent every clip's exact samples with the reference's
/// decoding, and a performance run that reports tokens per second (whisper's Offline result).
#[test]
fn whisper_transcribes_each_clip_through_a_transcription_endpoint() {
    prepared();
    let server = Server::start(Kind::Transcriptions, "whisper");
    let dir = TempDir::new();
    let accuracy = dir.path().join("accuracy");
    offline_run(&server, &accuracy, &["--mode", "AccuracyOnly"]);
    let report = std::fs::read_to_string(accuracy.join("accuracy.txt")).unwrap();
    assert_eq!(
        report.lines().next(),
        Some(reference_line("served").as_str()),
        "{report}"
    );
    let mut answered: Vec<u64> = support::accuracy_records(&accuracy)
        .iter()
        .map(|r| r.0)
        .collect();
    answered.sort();
    assert_eq!(answered, [0, 1, 2]);

    let audio: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture().join("records/audio.json")).unwrap(),
    )
    .unwrap();
    let mut expected: Vec<&str> = audio["clips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["float32_le_sha256"].as_str().unwrap())
        .collect();
    let requests = server.transcriptions();
    let mut sent: Vec<&str> = requests
        .iter()
        .map(|r| r["digest"].as_str().unwrap())
        .collect();
    expected.sort();
    sent.sort();
    assert_eq!(sent, expected);
    let fields = &requests[0]["fields"];
    assert_eq!(fields["model"], "openai/whisper-large-v3");
    assert_eq!(
        (&fields["language"], &fields["temperature"]),
        (&"en".into(), &"0".into())
    );
    assert_eq!(fields["max_completion_tokens"], "200");
    // verbose_json: vLLM's json answer counts seconds, not the tokens Offline's result needs.
    assert_eq!(fields["response_format"], "verbose_json");

    // Few samples: the stand-in answers some 50 a second, and the round's 1,633 would take
    // half a minute.
    let performance = dir.path().join("performance");
    offline_run(
        &server,
        &performance,
        &[
            "--set",
            "min_duration_ms=0",
            "--set",
            "offline_expected_qps=1",
            "--set",
            "performance_sample_count_override=3",
            "--set",
            "min_query_count=1",
        ],
    );
    let summary = std::fs::read_to_string(performance.join("mlperf_log_summary.txt")).unwrap();
    // The tokens of the stand-in's verbose_json segments.
    let tokens_per_second: f64 = summary
        .lines()
        .find_map(|line| line.strip_prefix("Tokens per second: "))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no tokens per second: {summary}"));
    assert!(tokens_per_second > 0.0, "{summary}");
}
