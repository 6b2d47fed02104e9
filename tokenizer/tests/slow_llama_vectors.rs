//! The slow LlamaTokenizer's decoding (transformers 4.46.2 on sentencepiece 0.2.0) of 3,000
//! seeded id sequences on the openorca fixture's tokenizer, with `legacy` false (the
//! fixture's and Llama-2-chat's config) and true: equal to the last character
//! (tests/fixtures/openorca/make_fixture.py decode-vectors made them).

use std::io::Read;
use std::path::Path;

use mlperf_tokenizer::{SlowLlama, Tokenizer};

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/openorca")
}

#[test]
fn the_slow_tokenizers_decoding_of_every_vector_is_ours() {
    let tokenizer = Tokenizer::from_file(&fixture().join("tokenizer/tokenizer.json")).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(fixture().join("records/decode_vectors.json.gz")).unwrap(),
    )
    .read_to_string(&mut text)
    .unwrap();
    let vectors: serde_json::Value = serde_json::from_str(&text).unwrap();
    let samples = vectors["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 3000);
    let mut fast_differs = 0;
    for (legacy, key) in [(false, "legacy_false"), (true, "legacy_true")] {
        let slow = SlowLlama {
            legacy,
            add_prefix_space: true,
        };
        for sample in samples {
            let ids: Vec<u32> = sample["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|id| id.as_u64().unwrap() as u32)
                .collect();
            let expected = sample[key].as_str().unwrap();
            let ours = tokenizer.decode_slow_llama(&ids, slow).unwrap();
            assert_eq!(ours, expected, "ids {ids:?}, legacy {legacy}");
            if !legacy && tokenizer.decode(&ids).unwrap() != expected {
                fast_differs += 1;
            }
        }
    }
    // The vectors are made to reach where the fast decoder differs (broken UTF-8, a leading
    // space byte): the test would not tell the two apart otherwise.
    assert!(fast_differs > 100, "{fast_differs}");
}
