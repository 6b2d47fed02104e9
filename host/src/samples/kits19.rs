//! KiTS19 as the reference's `preprocess.py` leaves it (`preprocessed_data/`), read sample by
//! sample at load time in `preprocessed_files.pkl`'s `file_list` order, which is the
//! reference's `qsl_idx`. Each sample is the case's `nifti/<case>/imaging.nii.gz`, read
//! natively: float32 `(1, D, H, W)` in C order, the array the reference's QSL unpickles
//! (`preprocess.py` writes both from the same array; the fixture's records show them equal).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mlperf_kits19::nifti::{read_nifti, Voxels};
use mlperf_plugin_api::sdk::DType;
use mlperf_submission::datasets::kits19::KitsList;

use super::arena::SampleLayout;
use super::imagenet::from_dataset;
use super::source::{SampleSource, SourceError};

/// A preprocessed KiTS19 folder opened for reading.
pub struct Kits19Folder {
    dir: PathBuf,
    list: Arc<KitsList>,
    count: usize,
}

impl Kits19Folder {
    /// Opens `dir`: its case list (the first `count` cases only, when given) and a check that
    /// every one of those cases' NIfTI copies is there with the listed shape, before any
    /// sample is read.
    pub fn open(dir: &Path, count: Option<usize>) -> Result<Kits19Folder, SourceError> {
        let format = |message: String| SourceError::Format {
            path: dir.to_path_buf(),
            message,
        };
        if !dir.is_dir() {
            return Err(format(
                "not a folder: a KiTS19 data set is the folder preprocess.py writes (preprocessed_files.pkl and nifti/)".into(),
            ));
        }
        let list = KitsList::read(dir).map_err(from_dataset)?;
        if let Some(count) = count {
            if count == 0 || count > list.len() {
                return Err(format(format!(
                    "{count} samples asked for; {} lists {}",
                    list.path.display(),
                    list.len()
                )));
            }
        }
        list.check_files(dir, count).map_err(from_dataset)?;
        let count = count.unwrap_or(list.len());
        tracing::info!(folder = %dir.display(), cases = count, "opened a KiTS19 folder");
        Ok(Kits19Folder {
            dir: dir.to_path_buf(),
            list: Arc::new(list),
            count,
        })
    }

    /// The folder's case list.
    pub fn list(&self) -> &KitsList {
        &self.list
    }

    /// The case name of sample `index`.
    pub fn name_of(&self, index: usize) -> Option<&str> {
        Some(self.list.cases[..self.count].get(index)?.name.as_str())
    }
}

impl SampleSource for Kits19Folder {
    fn describe(&self) -> String {
        format!("{} (KiTS19)", self.dir.display())
    }

    fn len(&self) -> usize {
        self.count
    }

    fn read(&mut self, index: usize, out: &mut Vec<u8>) -> Result<SampleLayout, SourceError> {
        let Some(case) = self.list.cases[..self.count].get(index) else {
            return Err(SourceError::OutOfRange {
                source_name: self.describe(),
                index,
                count: self.len(),
            });
        };
        let path = KitsList::imaging(&self.dir, &case.name);
        let image = read_nifti(&path).map_err(|e| SourceError::Format {
            path: path.clone(),
            message: e.to_string(),
        })?;
        if image.shape() != case.shape {
            return Err(SourceError::Format {
                path,
                message: format!(
                    "shape {:?}, where {} gives case {} the image_shape (1, {}, {}, {})",
                    image.shape(),
                    self.list.path.display(),
                    case.name,
                    case.shape[0],
                    case.shape[1],
                    case.shape[2]
                ),
            });
        }
        out.clear();
        match (&image.voxels, image.scaling) {
            // What preprocess.py writes: float32, no scaling; the array itself.
            (Voxels::F32(values), None) => {
                out.reserve_exact(4 * values.len());
                out.extend(values.iter().flat_map(|v| v.to_le_bytes()));
            }
            // Anything else as the QSL would see it: get_fdata() cast to float32.
            _ => out.extend(image.fdata().iter().flat_map(|v| (*v as f32).to_le_bytes())),
        }
        let [d, h, w] = case.shape.map(|n| n as i64);
        Ok(SampleLayout {
            dtype: DType::F32,
            shape: vec![1, d, h, w],
        })
    }

    fn fork(&self) -> Option<Box<dyn SampleSource>> {
        Some(Box::new(Kits19Folder {
            dir: self.dir.clone(),
            list: Arc::clone(&self.list),
            count: self.count,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/kits19/preprocessed_data")
    }

    /// Each sample's bytes are the float32 array the reference's QSL unpickles: the sha256
    /// numpy gave the pickled images (tests/fixtures/kits19/records/preprocessed.json).
    #[test]
    fn samples_are_the_references_preprocessed_arrays_in_its_order() {
        let mut folder = Kits19Folder::open(&fixture(), None).unwrap();
        assert_eq!(folder.len(), 3);
        let expected = [
            (
                "case_00003",
                [1, 192, 128, 192],
                "029e6386860f247770fbf2299559b6331bb9638e82575cda9097385a83c40eb0",
            ),
            (
                "case_00000",
                [1, 128, 192, 128],
                "2cfe92ad808d567487988f6c3622a1bf559dbc743656cc04577693c9c5a03685",
            ),
            (
                "case_00400",
                [1, 128, 128, 128],
                "2278443459d56b723d699b87951e63f60c4c107138d3667f0cbddc578e6a6129",
            ),
        ];
        let mut out = Vec::new();
        for (index, (name, shape, sha256)) in expected.into_iter().enumerate() {
            let layout = folder.read(index, &mut out).unwrap();
            assert_eq!(folder.name_of(index), Some(name));
            assert_eq!((layout.dtype, layout.shape), (DType::F32, shape.to_vec()));
            let digest: String = Sha256::digest(&out)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(digest, sha256, "{name}");
        }
        let mut fork = SampleSource::fork(&folder).unwrap();
        let mut again = Vec::new();
        fork.read(2, &mut again).unwrap();
        assert_eq!(out, again);
        let error = Kits19Folder::open(&fixture(), Some(4))
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("4 samples asked for"), "{error}");
    }
}
