//! What can go wrong reading a compliance test's inputs; every error names its file.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ComplianceError {
    /// A file that cannot be read or written.
    #[error("{}: {message}", path.display())]
    File { path: PathBuf, message: String },
    /// A file whose content is not what the verification reads.
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    /// One record of an accuracy log that cannot be decoded.
    #[error("{}: record {record} (qsl_idx {qsl_idx}): {message}", path.display())]
    Record {
        path: PathBuf,
        record: usize,
        qsl_idx: u64,
        message: String,
    },
    /// An accuracy log that cannot be read as one.
    #[error(transparent)]
    AccuracyLog(#[from] crate::logs::accuracy::AccuracyLogError),
    /// A detail log that cannot be read as one.
    #[error(transparent)]
    Log(#[from] crate::logs::DetailLogError),
    /// A detail log without an entry the verification needs.
    #[error("{}: no {key} entry{hint}", path.display())]
    MissingKey {
        path: PathBuf,
        key: String,
        /// Why it may be missing (empty, or starting with a space).
        hint: String,
    },
    /// Neither the model's nor the test's audit.config exists.
    #[error(
        "no audit.config for {test} and model {model}: neither {} nor {} exists",
        model_specific.display(),
        generic.display()
    )]
    AuditConfigNotFound {
        test: String,
        model: String,
        model_specific: PathBuf,
        generic: PathBuf,
    },
    /// No `configs/audit` directory where one is looked for.
    #[error("no configs/audit directory: looked for {searched}")]
    ConfigsNotFound { searched: String },
    /// The benchmark's metric could not score an accuracy log.
    #[error(transparent)]
    Accuracy(#[from] crate::benchmark::accuracy::AccuracyError),
}

impl ComplianceError {
    pub(crate) fn file(path: &std::path::Path, error: impl std::fmt::Display) -> Self {
        ComplianceError::File {
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }

    pub(crate) fn invalid(path: &std::path::Path, message: impl Into<String>) -> Self {
        ComplianceError::Invalid {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}
