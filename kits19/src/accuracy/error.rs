//! Each error names the log or case at fault. The comment on each variant
//! says what the reference does in the same situation.

use std::path::PathBuf;

use crate::nifti::NiftiError;

#[derive(Debug, thiserror::Error)]
pub enum AccuracyError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not valid JSON: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error(
        "{path}: not a case list (a JSON list of case names, as meta/inference_cases.json): {why}"
    )]
    CaseList { path: PathBuf, why: &'static str },
    #[error("{path}: accuracy log entry {entry}: {why}")]
    Entry {
        path: PathBuf,
        entry: usize,
        why: String,
    },
    /// Reference: `AssertionError: Number of predictions does not match
    /// number of samples in validation set!`
    #[error(
        "{path}: {entries} log entries but {cases} cases; every case must appear exactly once"
    )]
    CountMismatch {
        path: PathBuf,
        entries: usize,
        cases: usize,
    },
    /// Reference: `Invalid qsl_idx!` (negative) or an IndexError (too big).
    #[error("{path}: accuracy log entry {entry}: qsl_idx {qsl_idx} is outside 0..{cases}")]
    QslIdx {
        path: PathBuf,
        entry: usize,
        qsl_idx: i64,
        cases: usize,
    },
    /// Reference: numpy's `cannot reshape array of size …`.
    #[error(
        "{path}: accuracy log entry {entry} (qsl_idx {qsl_idx}, {case}): {got} bytes of uint8 \
         data, but the case's shape {shape:?} needs {want}"
    )]
    Length {
        path: PathBuf,
        entry: usize,
        qsl_idx: i64,
        case: String,
        shape: Vec<usize>,
        got: usize,
        want: usize,
    },
    /// Reference: `AssertionError: Missing some results!` (a repeated
    /// qsl_idx, given the entry count already matched).
    #[error("{path}: qsl_idx repeated {repeated:?}, so cases {missing:?} have no result")]
    Missing {
        path: PathBuf,
        repeated: Vec<i64>,
        missing: Vec<String>,
    },
    /// Reference: IndexError inside `np.eye(3)[…]`.
    #[error(
        "{case}: {what} holds label {value}; only 0 (background), 1 (kidney), 2 (tumour) are valid"
    )]
    LabelValue {
        case: String,
        what: &'static str,
        value: f64,
    },
    #[error("{case}: ground truth shape {truth:?} differs from the expected {expected:?}")]
    Shape {
        case: String,
        truth: Vec<usize>,
        expected: Vec<usize>,
    },
    #[error(transparent)]
    Nifti(#[from] NiftiError),
}
