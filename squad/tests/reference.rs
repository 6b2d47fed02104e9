//! The port against what the reference produced on the fixture (tests/fixtures/squad,
//! README.md there): the examples and features of create_squad_data.py, the slow
//! BertTokenizer's tokens, and accuracy-squad.py's predictions.json and printed line on the
//! synthetic logs.

use std::path::{Path, PathBuf};

use mlperf_squad::dataset::SquadDataset;
use mlperf_squad::evaluate::evaluate;
use mlperf_squad::features::{convert, FeatureSettings};
use mlperf_squad::log::{decode_logits, LogitDtype};
use mlperf_squad::predict::{predictions, PredictSettings};
use mlperf_squad::tokenize::{original_basic_tokens, BertTokenizer};
use mlperf_squad::vocab::Vocab;
use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/squad")
}

fn json(name: &str) -> Value {
    let path = fixture().join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn open() -> (SquadDataset, BertTokenizer) {
    let dataset = SquadDataset::read(&fixture().join("dev-v1.1.json")).unwrap();
    let vocab = Vocab::read(&fixture().join("vocab.txt")).unwrap();
    (dataset, BertTokenizer::new(vocab))
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn examples_are_read_squad_examples() {
    let (dataset, _) = open();
    let expected = json("reference_examples.json");
    let expected = expected.as_array().unwrap();
    assert_eq!(dataset.examples.len(), expected.len());
    for (example, reference) in dataset.examples.iter().zip(expected) {
        assert_eq!(example.qas_id, reference["qas_id"].as_str().unwrap());
        assert_eq!(
            example.question_text,
            reference["question_text"].as_str().unwrap()
        );
        assert_eq!(
            example.doc_tokens.to_vec(),
            strings(&reference["doc_tokens"]),
            "{}",
            example.qas_id
        );
    }
}

#[test]
fn the_slow_tokenizer_gives_the_references_tokens() {
    let (_, tokenizer) = open();
    let vectors = json("tokenizer_vectors.json");
    let mut wrong = Vec::new();
    for vector in vectors.as_array().unwrap() {
        let text = vector["text"].as_str().unwrap();
        let ids: Vec<u32> = vector["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        if tokenizer.tokenize(text) != ids {
            wrong.push(format!(
                "{text:?}: {:?}, reference {:?}",
                tokenizer.tokens(text),
                strings(&vector["tokens"])
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn the_original_basic_tokenizer_gives_the_references_tokens() {
    let vectors = json("basic_tokenizer_vectors.json");
    let mut wrong = Vec::new();
    for vector in vectors.as_array().unwrap() {
        let text = vector["text"].as_str().unwrap();
        let expected = strings(&vector["tokens"]);
        let got = original_basic_tokens(text);
        if got != expected {
            wrong.push(format!("{text:?}: {got:?}, reference {expected:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn features_are_convert_examples_to_features() {
    let (dataset, tokenizer) = open();
    let settings = FeatureSettings::default();
    let features = convert(&dataset, &tokenizer, &settings);
    let expected = json("reference_features.json");
    let expected = expected.as_array().unwrap();
    assert_eq!(features.len(), expected.len());
    let mut inputs = vec![0i64; 3 * 384];
    for (feature, reference) in features.iter().zip(expected) {
        let id = feature.unique_id;
        assert_eq!(id, reference["unique_id"].as_u64().unwrap());
        assert_eq!(
            feature.example_index as u64,
            reference["example_index"].as_u64().unwrap()
        );
        assert_eq!(
            feature.doc_span_index as u64,
            reference["doc_span_index"].as_u64().unwrap()
        );
        let tokens: Vec<&str> = feature
            .token_ids
            .iter()
            .map(|&t| tokenizer.vocab().token(t))
            .collect();
        assert_eq!(tokens, strings(&reference["tokens"]), "{id}");
        for (key, value) in reference["token_to_orig_map"].as_object().unwrap() {
            let position: usize = key.parse().unwrap();
            assert_eq!(
                feature.orig_word(position),
                Some(value.as_u64().unwrap() as usize),
                "{id} {position}"
            );
            assert_eq!(
                feature.is_max_context(position),
                reference["token_is_max_context"][key].as_bool().unwrap(),
                "{id} {position}"
            );
        }
        assert_eq!(
            feature.token_to_orig.len(),
            reference["token_to_orig_map"].as_object().unwrap().len()
        );
        feature.write_inputs(&settings, &mut inputs);
        for (row, name) in ["input_ids", "input_mask", "segment_ids"]
            .iter()
            .enumerate()
        {
            let expected: Vec<i64> = reference[name]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_i64().unwrap())
                .collect();
            assert_eq!(
                inputs[row * 384..(row + 1) * 384],
                expected[..],
                "{id} {name}"
            );
        }
    }
}

/// The gzipped logs of the fixture, unpacked by the system's gzip.
fn gunzip(path: &Path) -> Vec<u8> {
    let output = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(path)
        .output()
        .expect("run gzip");
    assert!(output.status.success());
    output.stdout
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// accuracy-squad.py's predictions.json and evaluate_v1.1.py's line on each synthetic log
/// (records/accuracy.json), with the reference's tokenization module.
#[test]
fn predictions_and_line_are_the_scripts() {
    let (dataset, tokenizer) = open();
    let features = convert(&dataset, &tokenizer, &FeatureSettings::default());
    let records = json("records/accuracy.json");
    for run in ["synthetic", "synthetic_fp16", "synthetic_transposed"] {
        let record = &records["runs"][run];
        let command = record["command"].as_str().unwrap();
        let dtype = if command.contains("float16") {
            LogitDtype::Float16
        } else {
            LogitDtype::Float32
        };
        let transposed = command.contains("--output_transposed");
        let log: Value =
            serde_json::from_slice(&gunzip(&fixture().join(record["log"].as_str().unwrap())))
                .unwrap();
        let mut logits: Vec<Option<Vec<f64>>> = vec![None; features.len()];
        for entry in log.as_array().unwrap() {
            let index = entry["qsl_idx"].as_u64().unwrap() as usize;
            let bytes = hex(entry["data"].as_str().unwrap());
            logits[index] = Some(decode_logits(&bytes, dtype, transposed).unwrap());
        }
        let answers = predictions(
            &dataset,
            &features,
            &tokenizer,
            &|i| logits[i].clone(),
            &PredictSettings::default(),
        );
        let written =
            std::fs::read_to_string(fixture().join(format!("logs/{run}/predictions.json")))
                .unwrap();
        assert_eq!(answers.to_json(), written, "{run}");
        let score = evaluate(&dataset, &answers);
        assert_eq!(score.line(), record["printed"].as_str().unwrap(), "{run}");
    }
}
