//! The reference's outputs on seeded strings (`tests/data/`, made by its `make_vectors.py`),
//! for the unit tests of each module.

use serde_json::Value;

/// The entries of `tests/data/<name>.json`.
pub(crate) fn load(name: &str) -> Vec<Value> {
    let path = format!("{}/tests/data/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    match serde_json::from_str(&text) {
        Ok(Value::Array(entries)) => entries,
        other => panic!("{path}: not a JSON list: {other:?}"),
    }
}

/// The fixture's vocabulary, which the tokenizer vectors were made with.
pub(crate) fn fixture_vocab() -> crate::vocab::Vocab {
    let path = format!(
        "{}/../tests/fixtures/squad/vocab.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    crate::vocab::Vocab::read(std::path::Path::new(&path)).expect("the fixture's vocab.txt")
}

pub(crate) fn str_of<'a>(entry: &'a Value, key: &str) -> &'a str {
    entry[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} in {entry}"))
}

pub(crate) fn strings(entry: &Value, key: &str) -> Vec<String> {
    entry[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} in {entry}"))
        .iter()
        .map(|v| v.as_str().expect("a string").to_string())
        .collect()
}

pub(crate) fn numbers(entry: &Value, key: &str) -> Vec<u64> {
    entry[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} in {entry}"))
        .iter()
        .map(|v| v.as_u64().expect("a number"))
        .collect()
}

/// Fails with every mismatch listed (at most 20 shown).
pub(crate) fn assert_none_wrong(what: &str, total: usize, wrong: &[String]) {
    assert!(
        wrong.is_empty(),
        "{what}: {} of {total} differ from the reference:\n{}",
        wrong.len(),
        wrong
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
