//! The reference's own outputs, recorded on the librispeech fixture
//! (tests/fixtures/librispeech/records, made by its make_vectors.py with openai-whisper
//! 20250625 and mlcommons/inference b66003e1), equal ours: EnglishTextNormalizer on 3,294
//! label texts, compute_wer_with_concatenation on 1,500 word lists, the SUT's label mapping,
//! and librosa.load's float32 audio of each clip.

use std::path::{Path, PathBuf};

use mlperf_whisper::labels::{answer_labels, LABELS};
use mlperf_whisper::manifest::Manifest;
use mlperf_whisper::normalizer::{EnglishTextNormalizer, SpellingMap};
use mlperf_whisper::wav::read_clip;
use mlperf_whisper::wer::concatenation_distance;
use sha2::{Digest, Sha256};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fixture() -> PathBuf {
    repo().join("tests/fixtures/librispeech")
}

fn records(name: &str) -> Vec<serde_json::Value> {
    let path = fixture().join("records").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap()
}

pub fn normalizer() -> EnglishTextNormalizer {
    let path = repo().join("data/whisper/english.json");
    assert!(
        path.is_file(),
        "data/whisper is not prepared: run `bash scripts/benchmarks/prepare.sh whisper` (scripts/test.sh does)"
    );
    let map = SpellingMap::read(&path).unwrap();
    assert_eq!(map.len(), 1739);
    EnglishTextNormalizer::new(map)
}

#[test]
fn the_normaliser_writes_what_openai_whispers_writes() {
    let normalizer = normalizer();
    let vectors = records("normalizer_vectors.json");
    assert!(vectors.len() > 3000, "{} vectors", vectors.len());
    let mut differ = Vec::new();
    for vector in &vectors {
        let input = vector["input"].as_str().unwrap();
        let expected = vector["output"]
            .as_str()
            .expect("the reference raised on no vector");
        let ours = normalizer.normalize(input).unwrap();
        if ours != expected {
            differ.push(format!(
                "{input:?}\n  reference {expected:?}\n  ours      {ours:?}"
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} differ:\n{}",
        differ.len(),
        vectors.len(),
        differ[..differ.len().min(20)].join("\n")
    );
}

#[test]
fn word_distances_are_the_reference_helpers() {
    let vectors = records("wer_vectors.json");
    assert_eq!(vectors.len(), 1500);
    for vector in &vectors {
        let words =
            |key: &str| -> Vec<String> { serde_json::from_value(vector[key].clone()).unwrap() };
        let (hypothesis, reference) = (words("hypothesis"), words("reference"));
        let hyp: Vec<&str> = hypothesis.iter().map(String::as_str).collect();
        let refs: Vec<&str> = reference.iter().map(String::as_str).collect();
        let expected = (
            vector["distance"].as_u64().unwrap() as usize,
            vector["words"].as_u64().unwrap() as usize,
        );
        assert_eq!(
            concatenation_distance(&hyp, &refs),
            expected,
            "{hyp:?} against {refs:?}"
        );
    }
}

#[test]
fn answers_map_to_labels_as_the_reference_sut_maps_them() {
    for vector in records("label_vectors.json") {
        let text = vector["text"].as_str().unwrap();
        let expected: Vec<u8> = serde_json::from_value(vector["labels"].clone()).unwrap();
        assert_eq!(answer_labels(text), expected, "{text:?}");
    }
    assert_eq!(LABELS.len(), 42);
}

#[test]
fn clips_read_as_librosa_reads_them() {
    let root = fixture();
    let manifest = Manifest::read(&root.join("data/dev-all-repack.json"), &root).unwrap();
    let audio: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("records/audio.json")).unwrap())
            .unwrap();
    let clips = audio["clips"].as_array().unwrap();
    assert_eq!(manifest.len(), clips.len());
    let mut samples = Vec::new();
    for (clip, record) in manifest.clips.iter().zip(clips) {
        let count = read_clip(&clip.audio, &mut samples).unwrap();
        assert_eq!(count as u64, record["samples"].as_u64().unwrap());
        let bytes: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
        let digest = format!("{:x}", Sha256::digest(&bytes));
        assert_eq!(
            digest,
            record["float32_le_sha256"].as_str().unwrap(),
            "{}",
            clip.audio.display()
        );
    }
}
