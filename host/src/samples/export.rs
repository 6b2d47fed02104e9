//! A data set's samples as the host hands them to a plugin, written in the reference's cache
//! layout, so that a submitter can diff them against the tensors their own copy of the
//! reference made (`mlperf-host dataset preprocess`).

use std::path::{Path, PathBuf};

use mlperf_submission::datasets::imagenet::{PREPROCESSED_SUFFIX, VAL_MAP};

use super::cnndm::CnnDmFolder;
use super::coco::CocoFolder;
use super::imagenet::ImagenetFolder;
use super::preprocess::{dims, LoadError, Preprocessing};
use super::source::SampleSource;
use super::squad::SquadFolder;
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
    done: impl FnMut(usize),
) -> Result<usize, ExportError> {
    let entries: Vec<(String, u32)> = (0..folder.len())
        .map(|index| {
            let name = folder.name_of(index).expect("an index of the list");
            (name.to_string(), folder.label_of(index).expect("listed"))
        })
        .collect();
    let written = write_samples(
        &mut folder,
        |index| &entries[index].0,
        preprocessing,
        out,
        done,
    )?;
    let list: String = entries
        .iter()
        .map(|(name, label)| format!("{name} {label}\n"))
        .collect();
    let list_path = out.join(VAL_MAP);
    std::fs::write(&list_path, list).map_err(|e| write_error(&list_path, e))?;
    Ok(written)
}

/// Writes every sample of the COCO folder `folder` through `preprocessing` into `out`, one
/// `<image>.npy` each (the reference harness keeps no cache: these are the tensors its
/// predictor hands the model, to diff against ultralytics' own); calls `done(n)` after each.
pub fn write_coco_tensors(
    mut folder: CocoFolder,
    preprocessing: Option<&Preprocessing>,
    out: &Path,
    done: impl FnMut(usize),
) -> Result<usize, ExportError> {
    let names: Vec<String> = (0..folder.len())
        .map(|index| {
            folder
                .name_of(index)
                .expect("an index of the list")
                .to_string()
        })
        .collect();
    write_samples(&mut folder, |index| &names[index], preprocessing, out, done)
}

/// Each sample of `source`, preprocessed, as `out/<name>.npy` of float32.
fn write_samples<'n>(
    source: &mut dyn SampleSource,
    name_of: impl Fn(usize) -> &'n str,
    preprocessing: Option<&Preprocessing>,
    out: &Path,
    mut done: impl FnMut(usize),
) -> Result<usize, ExportError> {
    std::fs::create_dir_all(out).map_err(|e| write_error(out, e))?;
    let mut worker = preprocessing
        .map(Preprocessing::take_worker)
        .transpose()
        .map_err(LoadError::from)?;
    let mut sample = Vec::new();
    for index in 0..source.len() {
        let layout = source.read(index, &mut sample)?;
        let path = out.join(format!("{}{PREPROCESSED_SUFFIX}", name_of(index)));
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
        done(index + 1);
    }
    if let (Some(worker), Some(preprocessing)) = (worker, preprocessing) {
        preprocessing.return_worker(worker);
    }
    Ok(source.len())
}

fn write_error(path: &Path, error: std::io::Error) -> ExportError {
    ExportError::Write {
        path: path.to_path_buf(),
        message: error.to_string(),
    }
}

/// Every record's prompt token ids as the plugin gets them, into `out/<qsl_idx>.npy`: int32
/// `[len]` each, the record's `tok_input`.
pub fn write_cnndm_token_ids(
    folder: CnnDmFolder,
    out: &Path,
    done: impl FnMut(usize),
) -> Result<usize, ExportError> {
    write_each_sample(folder, "<i4", out, done)
}

/// Every sample of `source` as the plugin gets it, into `out/<qsl_idx>.npy`: a vector of the
/// numpy type `descr` each (token ids, a clip's audio).
pub fn write_each_sample(
    mut source: impl SampleSource,
    descr: &str,
    out: &Path,
    mut done: impl FnMut(usize),
) -> Result<usize, ExportError> {
    std::fs::create_dir_all(out).map_err(|e| write_error(out, e))?;
    let count = source.len();
    let mut sample = Vec::new();
    for index in 0..count {
        let layout = source.read(index, &mut sample)?;
        let path = out.join(format!("{index}.npy"));
        write_npy(&path, descr, layout.shape[0] as usize, &[], &sample)
            .map_err(|e| write_error(&path, e))?;
        done(index + 1);
    }
    Ok(count)
}

/// The three inputs of every feature of the SQuAD folder `folder`, as the plugin gets them,
/// into `out/input_ids.npy`, `input_mask.npy` and `segment_ids.npy`: int64 `[features, 384]`
/// each, row `i` feature `i` (the reference's `eval_features[i].input_ids` and so on).
pub fn write_squad_features(
    mut folder: SquadFolder,
    out: &Path,
    mut done: impl FnMut(usize),
) -> Result<usize, ExportError> {
    std::fs::create_dir_all(out).map_err(|e| write_error(out, e))?;
    let count = folder.len();
    let mut rows: [Vec<u8>; 3] = Default::default();
    let mut sample = Vec::new();
    let mut width = 0;
    for index in 0..count {
        let layout = folder.read(index, &mut sample)?;
        width = layout.shape[1];
        let row = sample.len() / 3;
        for (k, input) in rows.iter_mut().enumerate() {
            input.extend_from_slice(&sample[k * row..(k + 1) * row]);
        }
        done(index + 1);
    }
    for (name, data) in ["input_ids", "input_mask", "segment_ids"].iter().zip(&rows) {
        let path = out.join(format!("{name}.npy"));
        write_npy(&path, "<i8", count, &[width], data).map_err(|e| write_error(&path, e))?;
    }
    Ok(count)
}
