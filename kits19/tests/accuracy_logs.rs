//! The native scorer on the hand-made accuracy logs, against what the
//! reference accuracy_kits.py printed and wrote for each (logs/<name>/).

mod common;

use common::{case_list, fixture_dir, read_json};
use mlperf_kits19::accuracy::{
    count_classes, read_accuracy_log, score_log, AccuracyError, CaseSet,
};
use mlperf_kits19::nifti::{read_nifti, Voxels};
use serde_json::Value;

fn case_set() -> CaseSet {
    let set = CaseSet::from_case_list(
        &fixture_dir().join("meta/inference_cases.json"),
        fixture_dir().join("preprocessed_data"),
    )
    .unwrap();
    assert_eq!(set.cases, case_list());
    set
}

fn log_path(name: &str) -> std::path::PathBuf {
    fixture_dir()
        .join("logs")
        .join(name)
        .join("mlperf_log_accuracy.json.gz")
}

fn reference_line(name: &str) -> String {
    let out = std::fs::read_to_string(
        fixture_dir()
            .join("logs")
            .join(name)
            .join("accuracy.stdout"),
    )
    .unwrap();
    out.lines()
        .find(|l| l.starts_with("Accuracy:"))
        .expect("Accuracy line")
        .to_string()
}

#[test]
fn scoring_scenarios_reproduce_stdout_and_csv() {
    for name in [
        "exact",
        "perturbed",
        "no_tumour",
        "all_background",
        "shuffled",
    ] {
        let summary =
            score_log(&log_path(name), &case_set()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(summary.accuracy_line(), reference_line(name), "{name}");
        let csv =
            std::fs::read_to_string(fixture_dir().join("logs").join(name).join("summary.csv"))
                .unwrap();
        assert_eq!(summary.to_csv(), csv, "{name} summary.csv");
    }
}

#[test]
fn repeated_qsl_idx_is_rejected_like_the_reference() {
    // reference: AssertionError: Missing some results!
    match score_log(&log_path("duplicate"), &case_set()) {
        Err(AccuracyError::Missing {
            repeated, missing, ..
        }) => {
            assert_eq!(repeated, vec![1]);
            assert_eq!(missing, vec![case_list()[2].clone()]);
        }
        other => panic!("{other:?}"),
    }
    // reference: AssertionError: Number of predictions does not match ...
    match score_log(&log_path("duplicate_extra"), &case_set()) {
        Err(AccuracyError::CountMismatch {
            entries: 4,
            cases: 3,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    for name in ["duplicate", "duplicate_extra"] {
        let err =
            std::fs::read_to_string(fixture_dir().join("logs").join(name).join("accuracy.rc"))
                .unwrap();
        assert_eq!(err.trim(), "1", "{name}: the reference failed too");
    }
}

#[test]
fn class_counts_match_the_records() {
    let rec = read_json("records/accuracy.json");
    let set = case_set();
    let truth: Vec<Vec<u8>> = set
        .cases
        .iter()
        .map(
            |c| match read_nifti(set.segmentation_path(c)).unwrap().voxels {
                Voxels::U8(v) => v,
                _ => panic!("uint8 labels"),
            },
        )
        .collect();
    for name in ["perturbed", "no_tumour", "shuffled"] {
        let entries = read_accuracy_log(log_path(name)).unwrap();
        let counts = rec.get(name).unwrap().get("counts").unwrap();
        for e in entries {
            let case = &set.cases[e.qsl_idx as usize];
            let got = count_classes(&truth[e.qsl_idx as usize], &e.data).unwrap();
            let want = &counts.get(case).unwrap().as_array().unwrap()[0];
            for (k, label) in ["1", "2"].iter().enumerate() {
                let w = want.get(label).unwrap();
                let n = |f: &str| w.get(f).and_then(Value::as_i64).unwrap() as u64;
                assert_eq!(
                    (got[k].intersection, got[k].target, got[k].prediction),
                    (n("intersection"), n("target"), n("prediction")),
                    "{name} {case} label {label}"
                );
            }
        }
    }
}
