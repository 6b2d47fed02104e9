//! Where sample data comes from: a data set file read sample by sample at load time.

use std::path::{Path, PathBuf};

use super::arena::SampleLayout;

/// A data set, readable by sample index.
pub trait SampleSource: Send {
    /// What the source reads (a path), for messages.
    fn describe(&self) -> String;
    /// Number of samples.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Sample `index`'s bytes into `out` (replacing its contents), and their layout.
    fn read(&mut self, index: usize, out: &mut Vec<u8>) -> Result<SampleLayout, SourceError>;
}

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{}: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error("{}: {message}", path.display())]
    Format { path: PathBuf, message: String },
    #[error("{source_name}: sample {index} is out of range ({count} samples)")]
    OutOfRange {
        source_name: String,
        index: usize,
        count: usize,
    },
}

impl SourceError {
    pub fn io(path: &Path, error: std::io::Error) -> SourceError {
        SourceError::Io {
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }
}
