//! YOLO's mAP as `tools/accuracy-coco.py` scores it (`mlperf-cocoeval`, bit for bit with
//! pycocotools 2.0.11 under numpy 2): each sample's first record of 7-float detections, boxes
//! scaled by the annotation file's image sizes, COCOeval bbox over every image seen; the
//! script's `mAP=…%` line.

use std::path::Path;

use mlperf_cocoeval::accuracy_coco::{run_accuracy_coco, Options, Promotion};
use mlperf_cocoeval::mlperf_log::read_log;

use super::AccuracyError;
use crate::datasets::coco::CocoList;

/// A run's COCO mAP and what it was computed over.
#[derive(Debug, Clone, PartialEq)]
pub struct CocoMap {
    /// COCOeval's 12 summary figures (AP, AP50, AP75, APs, APm, APl, AR1, AR10, AR100, ARs,
    /// ARm, ARl).
    pub stats: [f64; 12],
    /// The script's line, `mAP=53.103%`.
    pub line: String,
    /// The script's `--verbose` counts (results, images, images without results, dupes).
    pub counts: Vec<String>,
}

impl CocoMap {
    /// The mAP in percent.
    pub fn percent(&self) -> f64 {
        100.0 * self.stats[0]
    }
}

/// Scores `log` against `list`'s annotations.
pub(super) fn evaluate(log: &Path, list: &CocoList) -> Result<CocoMap, AccuracyError> {
    let refuse = |message: String| AccuracyError::File {
        path: log.to_path_buf(),
        message,
    };
    let entries = read_log(log).map_err(|e| refuse(e.to_string()))?;
    let options = Options {
        verbose: true,
        // The YOLO reference pins numpy >= 2.2.6.
        promotion: Promotion::Nep50,
    };
    let output = run_accuracy_coco(&list.ground_truth, &entries, options)
        .map_err(|e| refuse(e.to_string()))?;
    Ok(CocoMap {
        stats: output.evaluation.stats(),
        line: output.map_line,
        counts: output.verbose_lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/coco")
    }

    /// The line and counts accuracy-coco.py --verbose printed on each recorded log (with
    /// pycocotools 2.0.11 and numpy 2, tests/fixtures/coco/README.md).
    #[test]
    fn the_scripts_line_and_counts_on_every_recorded_log() {
        let list = CocoList::read(&fixture().join("coco_safe")).unwrap();
        for case in [
            "good",
            "dup_qsl",
            "crowd",
            "ties",
            "perturbed",
            "noobj_dets",
            "yolo_like",
        ] {
            let logs = fixture().join("logs");
            let score = evaluate(&logs.join(case).join("mlperf_log_accuracy.json"), &list).unwrap();
            let printed =
                std::fs::read_to_string(logs.join(format!("{case}.verbose.stdout"))).unwrap();
            assert!(
                printed.lines().any(|line| line == score.line),
                "{case}: {} not in\n{printed}",
                score.line
            );
            for count in &score.counts {
                assert!(printed.lines().any(|line| line == count), "{case}: {count}");
            }
        }
        let error = evaluate(
            &fixture().join("logs/all_empty/mlperf_log_accuracy.json"),
            &list,
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("mlperf_log_accuracy.json"), "{error}");
    }
}
