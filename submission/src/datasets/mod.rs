//! The MLPerf data sets in the layouts submitters have on disk: the lists that give each
//! sample its `qsl_idx` and its ground truth, shared by the host's sample readers and the
//! accuracy scorers (which read the same list, as the reference scripts do).

pub mod cnndm;
pub mod coco;
pub mod imagenet;
pub mod kits19;
pub mod librispeech;
pub mod openorca;
pub mod squad;

use std::path::{Path, PathBuf};

use crate::benchmark::DatasetFormat;

/// The records of an LLM data set of prompt token ids at `path`: CNN-DailyMail's evaluation
/// file (`cnndm`), or the converted OpenOrca file (`openorca`), which have the same shape.
pub fn token_prompts(format: DatasetFormat, path: &Path) -> Result<cnndm::CnnDmSet, DatasetError> {
    match format {
        DatasetFormat::OpenOrca => openorca::open(path),
        _ => cnndm::CnnDmSet::open(path),
    }
}

/// A data set folder that does not hold what its layout needs, named down to the file and line.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("{}: {message}", path.display())]
    File { path: PathBuf, message: String },
    #[error("{}:{line}: {message}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

impl DatasetError {
    pub(crate) fn file(path: impl Into<PathBuf>, message: impl Into<String>) -> DatasetError {
        DatasetError::File {
            path: path.into(),
            message: message.into(),
        }
    }
}
