//! One error type for the crate; every variant names the file, key or value
//! at fault so that a bad input can be fixed without a debugger.

use std::path::PathBuf;

/// Everything that can go wrong while reading inputs or reproducing the script.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: invalid JSON: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: {what} id {id}: key `{key}` has invalid value {value}")]
    BadValue {
        path: PathBuf,
        what: &'static str,
        id: i64,
        key: &'static str,
        value: String,
    },
    #[error("accuracy log entry seq_id {seq_id}: `data` is not valid hex: {reason}")]
    BadHex { seq_id: u64, reason: String },
    #[error(
        "accuracy log entry seq_id {seq_id}: payload of {len} bytes is not a whole number of float32 values"
    )]
    PayloadNotF32 { seq_id: u64, len: usize },
    #[error(
        "accuracy log entry seq_id {seq_id}: {floats} float32 values is not a whole number of 7-float detections"
    )]
    PartialDetection { seq_id: u64, floats: usize },
    #[error("accuracy log entry seq_id {seq_id}: qsl_idx {qsl_idx} is outside the {images} images of the annotation file")]
    QslOutOfRange {
        seq_id: u64,
        qsl_idx: i64,
        images: usize,
    },
    #[error("accuracy log entry seq_id {seq_id}: key `{key}` value {value} cannot be converted to an integer as Python's int() would")]
    NotInteger {
        seq_id: u64,
        key: &'static str,
        value: f32,
    },
    #[error("image id {image_id} (qsl_idx {qsl_idx}) has no `coco_url`, which --verbose prints")]
    MissingCocoUrl { image_id: i64, qsl_idx: i64 },
    /// The reference crashes here (`anns[0]` in `COCO.loadRes` raises
    /// IndexError) rather than scoring zero; callers should treat it as a
    /// failed accuracy run, not as mAP=0.
    #[error("the accuracy log holds no detection at all; the reference accuracy-coco.py fails on this (IndexError in COCO.loadRes)")]
    NoDetections,
}

impl Error {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn json(path: &std::path::Path, source: serde_json::Error) -> Self {
        Error::Json {
            path: path.to_path_buf(),
            source,
        }
    }
}
