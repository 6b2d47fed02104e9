//! Errors name the file and, where one is to blame, the header field, so that
//! a bad dataset can be fixed without a hex editor.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum NiftiError {
    #[error("{path}: cannot read file: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: gzip stream is corrupt or truncated: {source}")]
    Gzip {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: only {got} bytes, a NIfTI-1 header needs 348 (plus 4 extension bytes)")]
    ShortHeader { path: PathBuf, got: usize },
    #[error(
        "{path}: header field sizeof_hdr is {little} read little-endian and {big} big-endian; \
         NIfTI-1 needs 348 (NIfTI-2 and Analyze are not supported)"
    )]
    SizeofHdr {
        path: PathBuf,
        little: i32,
        big: i32,
    },
    #[error(
        "{path}: header field magic is {found:?}; only single-file NIfTI-1 (\"n+1\") is supported"
    )]
    Magic { path: PathBuf, found: String },
    #[error("{path}: header field datatype is {code} ({name}), which is not supported")]
    UnsupportedDatatype {
        path: PathBuf,
        code: i16,
        name: &'static str,
    },
    #[error("{path}: header field dim is {dim:?}: {why}")]
    Dim {
        path: PathBuf,
        dim: [i16; 8],
        why: &'static str,
    },
    #[error("{path}: header field vox_offset is {vox_offset}: {why}")]
    VoxOffset {
        path: PathBuf,
        vox_offset: f32,
        why: &'static str,
    },
    #[error(
        "{path}: voxel data truncated: dim {shape:?} x {bytes_per_voxel} bytes needs {need} bytes \
         from vox_offset {offset}, but only {have} are there"
    )]
    Truncated {
        path: PathBuf,
        shape: Vec<usize>,
        bytes_per_voxel: usize,
        need: usize,
        offset: usize,
        have: usize,
    },
    #[error("{path}: header field scl_slope is {slope} (valid) but scl_inter is {inter}, which is not finite")]
    Scaling {
        path: PathBuf,
        slope: f32,
        inter: f32,
    },
}
