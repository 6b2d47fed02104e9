//! The fixture logs as scored under numpy 1.26 (tools/gen_legacy.py), where
//! `float32 * int` promotes to float64: `Promotion::Legacy` must match those
//! bits too, and the `ties` log shows the two numpy generations disagree.

mod common;

use common::*;
use mlperf_cocoeval::accuracy_coco::Options;
use mlperf_cocoeval::detection::read_results_json;
use mlperf_cocoeval::mlperf_log::read_log;
use mlperf_cocoeval::{run_accuracy_coco, GroundTruth, Promotion};

#[test]
fn legacy_promotion_matches_numpy1() {
    let gt = GroundTruth::load(&fixture_dir().join("coco_safe/annotations/instances_val2017.json"))
        .unwrap();
    let root = data_dir().join("legacy_np1");
    let mut n = 0;
    for e in std::fs::read_dir(&root).unwrap() {
        let d = e.unwrap().path();
        if !d.join("stats.json").exists() {
            continue;
        }
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        let log = read_log(
            &fixture_dir()
                .join("logs")
                .join(&name)
                .join("mlperf_log_accuracy.json"),
        )
        .unwrap();
        let opts = Options {
            verbose: false,
            promotion: Promotion::Legacy,
        };
        let out = run_accuracy_coco(&gt, &log, opts).unwrap();
        let want = read_json(&d.join("stats.json"));
        assert_bits_eq(&name, &out.evaluation.stats(), &parse_stats(&want["stats"]));
        let dets = read_results_json(&d.join("coco-results.json")).unwrap();
        assert_same_detections(&name, &out.detections, &dets);
        let stdout = std::fs::read_to_string(d.join("stdout")).unwrap();
        assert_eq!(out.stable_stdout_lines(), stable_lines(&stdout), "{name}");
        n += 1;
    }
    assert!(n >= 10, "only {n} legacy logs");
}

#[test]
fn numpy_generations_disagree_on_ties_log() {
    let gt = GroundTruth::load(&fixture_dir().join("coco_safe/annotations/instances_val2017.json"))
        .unwrap();
    let log = read_log(&fixture_dir().join("logs/ties/mlperf_log_accuracy.json")).unwrap();
    let line = |promotion| {
        let opts = Options {
            verbose: false,
            promotion,
        };
        run_accuracy_coco(&gt, &log, opts).unwrap().map_line
    };
    assert_eq!(line(Promotion::Nep50), "mAP=34.633%");
    assert_eq!(line(Promotion::Legacy), "mAP=33.562%");
}
