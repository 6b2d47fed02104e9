//! A data set's samples as the host hands them to a plugin, written in the reference's cache
//! layout, so that a submitter can diff them against the tensors their own copy of the
//! reference made (`mlperf-host dataset preprocess`).

use std::path::{Path, PathBuf};

use mlperf_submission::datasets::imagenet::{PREPROCESSED_SUFFIX, VAL_MAP};

use super::imagenet::ImagenetFolder;
use super::preprocess::{dims, LoadError, Preprocessing};
use super::source::SampleSource;
use super::{write_npy, SourceError};

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("{}: {message}", path.display())]
    Write { path: PathBuf, message: String },
}

impl From<SourceError> for ExportError {
    fn from(error: SourceError) -> ExportError {
        ExportError::Load(LoadError::Source(error))
    }
}

/// Writes every sample of the ImageNet folder `folder`, through `preprocessing` unless the
/// folder is the preprocessed cache already, into `out` as the reference's cache lays them out
/// (`<image>.npy`, float32 `[3, 224, 224]`, and a copy of the list); calls `done(n)` after each.
/// Returns how many were written.
pub fn write_imagenet_cache(
    mut folder: ImagenetFolder,
    preprocessing: Option<&Preprocessing>,
    out: &Path,
    mut done: impl FnMut(usize),
) -> Result<usize, ExportError> {
    let write_error = |path: &Path, error: std::io::Error| ExportError::Write {
        path: path.to_path_buf(),
        message: error.to_string(),
    };
    std::fs::create_dir_all(out).map_err(|e| write_error(out, e))?;
    let mut worker = preprocessing
        .map(Preprocessing::take_worker)
        .transpose()
        .map_err(LoadError::from)?;
    let mut sample = Vec::new();
    let mut list = String::new();
    for index in 0..folder.len() {
        let layout = folder.read(index, &mut sample)?;
        let name = folder
            .name_of(index)
            .expect("an index of the list")
            .to_string();
        let path = out.join(format!("{name}{PREPROCESSED_SUFFIX}"));
        let (shape, data): (Vec<i64>, &[u8]) = match worker.as_mut() {
            Some(worker) => {
                let output = worker
                    .run(index, &sample, &dims(&layout.shape))
                    .map_err(LoadError::from)?;
                let shape = output.shape.dims().iter().map(|&d| d as i64).collect();
                (shape, output.data)
            }
            None => (layout.shape.clone(), &sample),
        };
        let (count, rest) = shape
            .split_first()
            .expect("a preprocessed image has a rank");
        write_npy(&path, "<f4", *count as usize, rest, data).map_err(|e| write_error(&path, e))?;
        list.push_str(&format!(
            "{name} {}\n",
            folder.label_of(index).expect("listed")
        ));
        done(index + 1);
    }
    let list_path = out.join(VAL_MAP);
    std::fs::write(&list_path, list).map_err(|e| write_error(&list_path, e))?;
    if let (Some(worker), Some(preprocessing)) = (worker, preprocessing) {
        preprocessing.return_worker(worker);
    }
    Ok(folder.len())
}
