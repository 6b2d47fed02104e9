//! End to end: an accuracy log plus the preprocessed ground truth in, a
//! [`Summary`] out.

use std::path::{Path, PathBuf};

use super::dice::{count_classes, dice};
use super::error::AccuracyError;
use super::log::{assign_entries, read_accuracy_log};
use super::summary::{CaseScore, Summary};
use crate::nifti::{read_nifti, read_nifti_header};

/// The cases in qsl order (`meta/inference_cases.json`, which is also
/// `preprocessed_files.pkl["file_list"]`) and where their labels live.
pub struct CaseSet {
    pub cases: Vec<String>,
    /// The reference's `preprocessed_data_dir`; ground truth is read from
    /// `nifti/<case>/segmentation.nii.gz` under it.
    pub preprocessed_dir: PathBuf,
}

impl CaseSet {
    /// Reads the qsl order from a `meta/inference_cases.json`-style file.
    pub fn from_case_list(
        list: &Path,
        preprocessed_dir: impl Into<PathBuf>,
    ) -> Result<Self, AccuracyError> {
        let err = |why| AccuracyError::CaseList {
            path: list.to_path_buf(),
            why,
        };
        let text = std::fs::read_to_string(list).map_err(|source| AccuracyError::Io {
            path: list.to_path_buf(),
            source,
        })?;
        let doc = serde_json::from_str::<serde_json::Value>(&text).map_err(|source| {
            AccuracyError::Json {
                path: list.to_path_buf(),
                source,
            }
        })?;
        let cases = doc
            .as_array()
            .ok_or_else(|| err("the document is not a list"))?
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| err("an item is not a string"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            cases,
            preprocessed_dir: preprocessed_dir.into(),
        })
    }

    pub fn segmentation_path(&self, case: &str) -> PathBuf {
        self.preprocessed_dir
            .join("nifti")
            .join(case)
            .join("segmentation.nii.gz")
    }
}

/// Ground truth as `get_fdata().astype(np.uint8)`, checked to be 0..=2.
fn load_truth(set: &CaseSet, case: &str) -> Result<(Vec<usize>, Vec<u8>), AccuracyError> {
    let img = read_nifti(set.segmentation_path(case))?;
    let labels = img
        .fdata()
        .into_iter()
        .map(|v| {
            if v == 0.0 || v == 1.0 || v == 2.0 {
                Ok(v as u8)
            } else {
                Err(AccuracyError::LabelValue {
                    case: case.to_string(),
                    what: "ground truth",
                    value: v,
                })
            }
        })
        .collect::<Result<Vec<u8>, _>>()?;
    Ok((img.shape(), labels))
}

/// Scores `log` against the cases' ground truth. The predictions (from the
/// log) are all held, as in the reference; ground truth is loaded one case at
/// a time rather than all at once.
pub fn score_log(log: &Path, set: &CaseSet) -> Result<Summary, AccuracyError> {
    let entries = read_accuracy_log(log)?;
    // shapes come from the headers alone, as the reference takes them from
    // preprocessed_files.pkl before it looks at any volume
    let shapes = set
        .cases
        .iter()
        .map(|c| read_nifti_header(set.segmentation_path(c)).map(|h| h.shape()))
        .collect::<Result<Vec<_>, _>>()?;
    let preds = assign_entries(entries, &set.cases, &shapes, log)?;
    let mut rows = Vec::with_capacity(set.cases.len());
    for ((case, shape), pred) in set.cases.iter().zip(&shapes).zip(&preds) {
        let (truth_shape, truth) = load_truth(set, case)?;
        if &truth_shape != shape {
            return Err(AccuracyError::Shape {
                case: case.clone(),
                truth: truth_shape,
                expected: shape.clone(),
            });
        }
        let counts =
            count_classes(&truth, pred).map_err(|(is_pred, v)| AccuracyError::LabelValue {
                case: case.clone(),
                what: if is_pred {
                    "prediction"
                } else {
                    "ground truth"
                },
                value: f64::from(v),
            })?;
        rows.push(CaseScore::new(
            case.clone(),
            dice(counts[0]),
            dice(counts[1]),
        ));
    }
    Ok(Summary::new(rows))
}
