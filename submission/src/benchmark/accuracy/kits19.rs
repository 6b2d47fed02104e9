//! 3D-UNet's mean DICE as `accuracy_kits.py` scores it (`mlperf-kits19`, bit for bit with the
//! reference under pandas 1.5.3): each case's uint8 label volume against the folder's
//! `nifti/<case>/segmentation.nii.gz`, kidney and tumour DICE with the script's smoothing,
//! their mean per case, the mean over cases; the script's `Accuracy: mean = …` line and its
//! `summary.csv`.

use std::path::Path;

use mlperf_kits19::accuracy::{score_log, CaseSet};

use super::AccuracyError;
use crate::datasets::kits19::KitsList;

/// A run's DICE scores and what they were computed over.
#[derive(Debug, Clone, PartialEq)]
pub struct KitsDice {
    pub mean_composite: f64,
    pub mean_kidney: f64,
    pub mean_tumor: f64,
    /// The script's line, `Accuracy: mean = 0.86170, kidney = 0.9347, tumor = 0.7887`.
    pub line: String,
    /// The `summary.csv` the script writes: a row per case and the mean.
    pub summary_csv: String,
    pub cases: usize,
}

/// Scores `log` against the ground truth of `list`'s cases under `dir`.
pub(super) fn evaluate(log: &Path, dir: &Path, list: &KitsList) -> Result<KitsDice, AccuracyError> {
    let set = CaseSet {
        cases: list.names(),
        preprocessed_dir: dir.to_path_buf(),
    };
    let summary = score_log(log, &set).map_err(|e| AccuracyError::File {
        path: log.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok(KitsDice {
        mean_composite: summary.mean_composite,
        mean_kidney: summary.mean_kidney,
        mean_tumor: summary.mean_tumor,
        line: summary.accuracy_line(),
        summary_csv: summary.to_csv(),
        cases: summary.cases.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/kits19")
    }

    /// The line accuracy_kits.py printed on each recorded log (pandas 1.5.3, numpy 1.26.4;
    /// tests/fixtures/kits19/README.md), and its summary.csv.
    #[test]
    fn the_scripts_line_and_summary_on_every_recorded_log() {
        let dir = fixture().join("preprocessed_data");
        let list = KitsList::read(&dir).unwrap();
        for case in [
            "exact",
            "perturbed",
            "no_tumour",
            "all_background",
            "shuffled",
        ] {
            let logs = fixture().join("logs").join(case);
            let score = evaluate(&logs.join("mlperf_log_accuracy.json.gz"), &dir, &list).unwrap();
            let printed = std::fs::read_to_string(logs.join("accuracy.stdout")).unwrap();
            assert!(
                printed.lines().any(|line| line == score.line),
                "{case}: {} not in\n{printed}",
                score.line
            );
            let csv = std::fs::read_to_string(logs.join("summary.csv")).unwrap();
            assert_eq!(score.summary_csv, csv, "{case}");
        }
        let error = evaluate(
            &fixture().join("logs/duplicate/mlperf_log_accuracy.json.gz"),
            &dir,
            &list,
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("mlperf_log_accuracy.json.gz"), "{error}");
    }
}
