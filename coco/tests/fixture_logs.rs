//! Every log of the COCO fixture against what the reference accuracy-coco.py
//! printed and what pycocotools' COCOeval returned on the same json.

mod common;

use std::path::Path;

use common::*;
use mlperf_cocoeval::accuracy_coco::Options;
use mlperf_cocoeval::detection::read_results_json;
use mlperf_cocoeval::mlperf_log::read_log;
use mlperf_cocoeval::{run_accuracy_coco, Error, GroundTruth};

fn gt() -> GroundTruth {
    GroundTruth::load(&fixture_dir().join("coco_safe/annotations/instances_val2017.json"))
        .expect("fixture annotations")
}

fn log_names() -> Vec<String> {
    let dir = fixture_dir().join("logs");
    let mut v: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    assert!(
        v.len() >= 10,
        "expected the fixture's log variants, found {v:?}"
    );
    v
}

fn check_log(gt: &GroundTruth, logs: &Path, name: &str) {
    let entries = read_log(&logs.join(name).join("mlperf_log_accuracy.json")).unwrap();
    let rc = std::fs::read_to_string(logs.join(format!("{name}.rc"))).unwrap();
    if rc.trim() != "0" {
        // The reference crashed (all payloads empty): so must we, distinctly.
        let err = run_accuracy_coco(gt, &entries, Options::default()).unwrap_err();
        assert!(matches!(err, Error::NoDetections), "{name}: {err}");
        return;
    }
    for verbose in [false, true] {
        let opts = Options {
            verbose,
            ..Options::default()
        };
        let out = run_accuracy_coco(gt, &entries, opts).unwrap();
        let suffix = if verbose { "verbose.stdout" } else { "stdout" };
        let stdout = std::fs::read_to_string(logs.join(format!("{name}.{suffix}"))).unwrap();
        assert_eq!(
            out.stable_stdout_lines(),
            stable_lines(&stdout),
            "{name} ({suffix})"
        );
        if !verbose {
            let stats = read_json(&logs.join(format!("{name}.stats.json")));
            assert_bits_eq(name, &out.evaluation.stats(), &parse_stats(&stats["stats"]));
            let ids: Vec<i64> = stats["img_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_i64().unwrap())
                .collect();
            assert_eq!(out.image_ids, ids, "{name}: evaluated image ids");
            let want = read_results_json(&logs.join(name).join("coco-results.json")).unwrap();
            assert_same_detections(name, &out.detections, &want);
        }
    }
}

#[test]
fn every_fixture_log_matches_reference() {
    let gt = gt();
    let logs = fixture_dir().join("logs");
    for name in log_names() {
        check_log(&gt, &logs, &name);
    }
}

#[test]
fn duplicates_keep_first_record() {
    let gt = gt();
    let entries = read_log(&fixture_dir().join("logs/dup_qsl/mlperf_log_accuracy.json")).unwrap();
    let opts = Options {
        verbose: true,
        ..Options::default()
    };
    let out = run_accuracy_coco(&gt, &entries, opts).unwrap();
    assert_eq!(out.verbose_lines[3], "ignored 3 dupes");
}
