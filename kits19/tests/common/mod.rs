//! Shared test helpers: where the fixture lives, a SHA-256 (the records hold
//! numpy byte hashes and only flate2/thiserror may be used), JSON records.

#![allow(dead_code)]

pub(crate) mod sha256;

use std::path::PathBuf;

use serde_json::Value;

/// `$KITS19_FIXTURE`, else `/work/fixtures/kits19` seen from this crate.
pub(crate) fn fixture_dir() -> PathBuf {
    match std::env::var_os("KITS19_FIXTURE") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/kits19"),
    }
}

pub(crate) fn read_json(rel: &str) -> Value {
    let path = fixture_dir().join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str::<serde_json::Value>(&text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub(crate) fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string {key}"))
}

pub(crate) fn usizes(v: &Value) -> Vec<usize> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_i64().expect("integer") as usize)
        .collect()
}

/// The records store floats as Python `repr` strings.
pub(crate) fn repr_f64(v: &Value) -> f64 {
    v.as_str()
        .expect("repr string")
        .parse()
        .expect("float repr")
}

/// Case names in qsl order, from the fixture's meta/inference_cases.json.
pub(crate) fn case_list() -> Vec<String> {
    read_json("meta/inference_cases.json")
        .as_array()
        .expect("list")
        .iter()
        .map(|v| v.as_str().expect("name").to_string())
        .collect()
}
