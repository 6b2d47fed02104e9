//! LibriSpeech dev-clean + dev-other as MLPerf's whisper benchmark reads it: the reference's
//! repacked manifest `data/dev-all-repack.json` (MLCommons' automation:
//! get,dataset,whisper) and its 16 kHz WAV clips, whose `fname`s are relative to the data
//! set folder (the reference's `--dataset_dir`). Clip `i` of the manifest, after the entries
//! `Manifest` drops, is `qsl_idx` `i`; the scorer reads the same transcripts.

use std::path::{Path, PathBuf};

use mlperf_whisper::manifest::Manifest;

use super::DatasetError;

/// Where the manifest sits in the data set folder: the automation's layout first, then the
/// folder itself (where `repackage_librispeech.py --output_json` was pointed at it).
pub const MANIFEST_PLACES: [&str; 2] = ["data/dev-all-repack.json", "dev-all-repack.json"];

/// The manifest of the data set folder `dir`: the first of [`MANIFEST_PLACES`] that exists
/// (the first when none does, for the message).
pub fn manifest_file(dir: &Path) -> PathBuf {
    MANIFEST_PLACES
        .iter()
        .map(|place| dir.join(place))
        .find(|path| path.is_file())
        .unwrap_or_else(|| dir.join(MANIFEST_PLACES[0]))
}

/// Reads the manifest of the data set folder `dir`.
pub fn open(dir: &Path) -> Result<Manifest, DatasetError> {
    if !dir.is_dir() {
        return Err(DatasetError::file(
            dir,
            "not a folder: a whisper data set is a folder holding data/dev-all-repack.json and its WAV clips",
        ));
    }
    let path = manifest_file(dir);
    if !path.is_file() {
        return Err(DatasetError::file(
            &path,
            format!("no such file (nor {}): the whisper data set is the reference's repacked LibriSpeech (MLCommons' automation: get,dataset,whisper; or speech2text/utils/repackage_librispeech.py)", dir.join(MANIFEST_PLACES[1]).display()),
        ));
    }
    let manifest =
        Manifest::read(&path, dir).map_err(|e| DatasetError::file(&path, e.to_string()))?;
    if manifest.is_empty() {
        return Err(DatasetError::file(
            &path,
            "it holds no clip of at most 30 s with a transcript",
        ));
    }
    Ok(manifest)
}
