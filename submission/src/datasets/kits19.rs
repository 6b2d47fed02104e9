//! KiTS19 as the reference's `preprocess.py` leaves it (`preprocessed_data/`): the case list
//! `preprocessed_files.pkl`, whose `file_list` gives each case its `qsl_idx` and whose
//! `image_shape` its size, and the NIfTI copies `nifti/<case>/imaging.nii.gz` (float32
//! `(D, H, W)`, the sample) and `nifti/<case>/segmentation.nii.gz` (uint8 labels, the ground
//! truth), read natively: no pickle of a volume is ever opened.

use std::path::{Path, PathBuf};

use mlperf_kits19::preprocessed_list::read_preprocessed_list;

use super::DatasetError;

/// The case list inside a preprocessed KiTS19 folder.
pub const CASE_LIST: &str = "preprocessed_files.pkl";

/// One case: its name and its preprocessed `(D, H, W)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KitsCase {
    pub name: String,
    pub shape: [usize; 3],
}

/// The cases of a preprocessed KiTS19 folder, in `qsl_idx` order.
#[derive(Debug, Clone)]
pub struct KitsList {
    /// The list file read.
    pub path: PathBuf,
    pub cases: Vec<KitsCase>,
}

impl KitsList {
    /// Reads `dir/preprocessed_files.pkl`.
    pub fn read(dir: &Path) -> Result<KitsList, DatasetError> {
        let path = dir.join(CASE_LIST);
        if !path.is_file() {
            return Err(DatasetError::file(
                &path,
                "no such file: a KiTS19 data set is the folder the reference's preprocess.py writes (preprocessed_files.pkl, nifti/<case>/imaging.nii.gz and segmentation.nii.gz); give that folder",
            ));
        }
        let list =
            read_preprocessed_list(&path).map_err(|e| DatasetError::file(&path, e.to_string()))?;
        let cases = list
            .cases
            .into_iter()
            .map(|case| {
                let [_, d, h, w] = case.image_shape;
                KitsCase {
                    name: case.name,
                    shape: [d, h, w],
                }
            })
            .collect::<Vec<_>>();
        if cases.is_empty() {
            return Err(DatasetError::file(&path, "its file_list names no case"));
        }
        Ok(KitsList { path, cases })
    }

    pub fn len(&self) -> usize {
        self.cases.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cases.is_empty()
    }

    /// The names in `qsl_idx` order.
    pub fn names(&self) -> Vec<String> {
        self.cases.iter().map(|case| case.name.clone()).collect()
    }

    /// The preprocessed image of `case`: the sample.
    pub fn imaging(dir: &Path, case: &str) -> PathBuf {
        dir.join("nifti").join(case).join("imaging.nii.gz")
    }

    /// The preprocessed labels of `case`: the ground truth.
    pub fn segmentation(dir: &Path, case: &str) -> PathBuf {
        dir.join("nifti").join(case).join("segmentation.nii.gz")
    }

    /// Every listed case (the first `count`, when given) has its image and labels under
    /// `dir`, of the listed shape (read from their headers only).
    pub fn check_files(&self, dir: &Path, count: Option<usize>) -> Result<(), DatasetError> {
        let count = count.unwrap_or(self.len()).min(self.len());
        for case in &self.cases[..count] {
            for path in [
                KitsList::imaging(dir, &case.name),
                KitsList::segmentation(dir, &case.name),
            ] {
                if !path.is_file() {
                    return Err(DatasetError::file(
                        &path,
                        format!(
                            "no such file: {} lists case {}, and preprocess.py writes its NIfTI copies there",
                            self.path.display(),
                            case.name
                        ),
                    ));
                }
                let header = mlperf_kits19::nifti::read_nifti_header(&path)
                    .map_err(|e| DatasetError::file(&path, e.to_string()))?;
                let shape = header.shape();
                if shape != case.shape {
                    return Err(DatasetError::file(
                        &path,
                        format!(
                            "shape {shape:?}, where {} gives case {} the image_shape (1, {}, {}, {})",
                            self.path.display(),
                            case.name,
                            case.shape[0],
                            case.shape[1],
                            case.shape[2]
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/kits19/preprocessed_data")
    }

    #[test]
    fn the_case_list_gives_the_references_order_and_shapes() {
        let list = KitsList::read(&fixture()).unwrap();
        assert_eq!(list.names(), ["case_00003", "case_00000", "case_00400"]);
        assert_eq!(list.cases[0].shape, [192, 128, 192]);
        assert_eq!(list.cases[2].shape, [128, 128, 128]);
        list.check_files(&fixture(), None).unwrap();
    }

    #[test]
    fn a_folder_without_the_list_or_a_case_is_refused_by_name() {
        let empty = std::env::temp_dir().join(format!("kits19-empty-{}", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        let error = KitsList::read(&empty).unwrap_err().to_string();
        assert!(
            error.contains("preprocessed_files.pkl: no such file"),
            "{error}"
        );
        let list = KitsList::read(&fixture()).unwrap();
        let error = list.check_files(&empty, Some(1)).unwrap_err().to_string();
        assert!(
            error.contains("nifti/case_00003/imaging.nii.gz: no such file")
                && error.contains("lists case case_00003"),
            "{error}"
        );
        std::fs::remove_dir_all(&empty).unwrap();
    }
}
