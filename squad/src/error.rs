use std::path::PathBuf;

/// What is wrong with a SQuAD file, a vocabulary or a logged response, named down to the key.
#[derive(Debug, thiserror::Error)]
pub enum SquadError {
    #[error("{}: {message}", path.display())]
    File { path: PathBuf, message: String },
    /// A key of the dev set (`data[3].paragraphs[0].qas[2].id`) missing or of the wrong type.
    #[error("{at}: {message}")]
    Key { at: String, message: String },
    #[error("{0}")]
    Invalid(String),
}
