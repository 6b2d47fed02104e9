use std::path::PathBuf;

/// What is wrong with a manifest, a WAV file, the spelling map or a logged answer.
#[derive(Debug, thiserror::Error)]
pub enum WhisperError {
    #[error("{}: {message}", path.display())]
    File { path: PathBuf, message: String },
    /// An entry of the manifest (`[3].files[0].fname`) missing or of the wrong type.
    #[error("{}: {at}: {message}", path.display())]
    Entry {
        path: PathBuf,
        at: String,
        message: String,
    },
    #[error("{0}")]
    Invalid(String),
}

impl WhisperError {
    pub(crate) fn file(path: impl Into<PathBuf>, message: impl Into<String>) -> WhisperError {
        WhisperError::File {
            path: path.into(),
            message: message.into(),
        }
    }
}
