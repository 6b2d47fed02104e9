//! NLTK 3.8.1's `sent_tokenize` spans, recorded on the cnndm fixture's texts and hard cases
//! (`punkt_vectors.json`) and on seeded random texts (`punkt_fuzz_vectors.json.gz`), equal
//! ours on the same English parameters (data/punkt, `prepare.sh punkt`).

use std::io::Read;
use std::path::{Path, PathBuf};

use mlperf_punkt::{PunktParameters, SentenceTokenizer};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn english() -> SentenceTokenizer {
    let dir = repo().join("data/punkt/english");
    assert!(
        dir.join("ortho_context.tab").is_file(),
        "data/punkt is not prepared: run `bash scripts/benchmarks/prepare.sh punkt` (scripts/test.sh does)"
    );
    let params = PunktParameters::read_punkt_tab(&dir).unwrap();
    assert_eq!(params.sizes(), [156, 37, 39, 20366]);
    SentenceTokenizer::new(params)
}

fn vectors(file: &str) -> Vec<serde_json::Value> {
    let path = repo().join("tests/fixtures/cnndm").join(file);
    let mut text = String::new();
    let bytes = std::fs::read(&path).unwrap();
    if file.ends_with(".gz") {
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .unwrap();
    } else {
        text = String::from_utf8(bytes).unwrap();
    }
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["vectors"].as_array().unwrap().clone()
}

fn assert_spans_equal(file: &str, least: usize) {
    let punkt = english();
    let vectors = vectors(file);
    assert!(vectors.len() >= least, "{file}: {} vectors", vectors.len());
    let mut differ = Vec::new();
    for vector in &vectors {
        let text = vector["text"].as_str().unwrap();
        let expected: Vec<(usize, usize)> =
            serde_json::from_value(vector["spans"].clone()).unwrap();
        let ours = punkt.spans(text);
        if ours != expected {
            differ.push(format!("{text:?}\n  nltk {expected:?}\n  ours {ours:?}"));
        }
        if let Some(sentences) = vector.get("sentences") {
            let sentences: Vec<String> = serde_json::from_value(sentences.clone()).unwrap();
            assert_eq!(punkt.sentences(text), sentences, "{text:?}");
        }
    }
    assert!(
        differ.is_empty(),
        "{file}: {} of {} differ:\n{}",
        differ.len(),
        vectors.len(),
        differ[..differ.len().min(5)].join("\n")
    );
}

#[test]
fn spans_equal_nltks_on_the_fixtures_texts_and_hard_cases() {
    assert_spans_equal("punkt_vectors.json", 600);
}

#[test]
fn spans_equal_nltks_on_seeded_random_texts() {
    assert_spans_equal("punkt_fuzz_vectors.json.gz", 2000);
}

#[test]
fn a_broken_parameter_folder_is_an_error_naming_the_file_and_line() {
    let dir = std::env::temp_dir().join(format!("punkt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let error = PunktParameters::read_punkt_tab(&dir)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("abbrev_types.txt") && error.contains("nltk.download('punkt_tab')"),
        "{error}"
    );
    for (name, text) in [
        ("abbrev_types.txt", "dr\nmr"),
        ("sent_starters.txt", "the"),
        ("collocations.tab", "a\tb"),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    std::fs::write(dir.join("ortho_context.tab"), "the\t12\nand\tmany").unwrap();
    let error = PunktParameters::read_punkt_tab(&dir)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("ortho_context.tab:2") && error.contains("\"many\""),
        "{error}"
    );
    std::fs::write(dir.join("collocations.tab"), "a b").unwrap();
    let error = PunktParameters::read_punkt_tab(&dir)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("collocations.tab:1") && error.contains("two tab-separated"),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
