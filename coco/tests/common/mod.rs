//! Helpers shared by the integration tests: locating data, parsing the
//! reference's recorded answers, comparing f64s by their bits.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use mlperf_cocoeval::detection::Detection;

/// The COCO fixture; `COCO_FIXTURE_DIR` overrides the default sibling path.
pub(crate) fn fixture_dir() -> PathBuf {
    std::env::var_os("COCO_FIXTURE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/coco"))
}

pub(crate) fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

pub(crate) fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `repr()` strings round-trip exactly through Rust's correctly rounded parse.
pub(crate) fn parse_stats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .expect("stats list")
        .iter()
        .map(|s| {
            s.as_str()
                .expect("repr string")
                .parse::<f64>()
                .expect("float repr")
        })
        .collect()
}

/// Panics with every differing stat, printed with bits, if any differs.
pub(crate) fn assert_bits_eq(ctx: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{ctx}: length");
    let bad: Vec<String> = got
        .iter()
        .zip(want)
        .enumerate()
        .filter(|(_, (g, w))| g.to_bits() != w.to_bits())
        .map(|(i, (g, w))| {
            format!(
                "stats[{i}]: got {g:?} ({:#018x}) want {w:?} ({:#018x})",
                g.to_bits(),
                w.to_bits()
            )
        })
        .collect();
    assert!(bad.is_empty(), "{ctx}:\n{}", bad.join("\n"));
}

/// stdout of the reference minus pycocotools' progress and timing lines.
pub(crate) fn stable_lines(stdout: &str) -> Vec<String> {
    const PROGRESS: [&str; 9] = [
        "loading annotations into memory...",
        "Done (t=",
        "creating index...",
        "index created!",
        "Loading and preparing results...",
        "DONE (t=",
        "Running per image evaluation...",
        "Evaluate annotation type *bbox*",
        "Accumulating evaluation results...",
    ];
    stdout
        .lines()
        .filter(|l| !PROGRESS.iter().any(|p| l.starts_with(p)))
        .map(str::to_owned)
        .collect()
}

/// Every field of two detection lists, floats compared by bits.
pub(crate) fn assert_same_detections(ctx: &str, got: &[Detection], want: &[Detection]) {
    assert_eq!(got.len(), want.len(), "{ctx}: detection count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let same = g.image_id == w.image_id
            && g.category_id == w.category_id
            && g.score.to_bits() == w.score.to_bits()
            && g.bbox
                .iter()
                .zip(&w.bbox)
                .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{ctx}: detection {i}: got {g:?} want {w:?}");
    }
}
