//! SQuAD v1.1 as MLPerf's bert benchmark reads it: `dev-v1.1.json` and `vocab.txt` in one
//! folder, made into the reference's features once at open (untimed, as the reference's QSL
//! makes or unpickles them before the run), each handed over as int64 `[3, 384]`: the rows
//! input_ids, input_mask and segment_ids, which the plugin feeds to the model's three inputs
//! (the onnxruntime plugin's `stacked_inputs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mlperf_plugin_api::sdk::DType;
use mlperf_submission::datasets::squad::SquadSet;

use super::arena::SampleLayout;
use super::imagenet::from_dataset;
use super::source::{SampleSource, SourceError};

/// A SQuAD folder opened for reading.
pub struct SquadFolder {
    dir: PathBuf,
    set: Arc<SquadSet>,
    count: usize,
}

impl SquadFolder {
    /// Opens `dir` and makes its features (the first `count` only are samples, when given).
    pub fn open(dir: &Path, count: Option<usize>) -> Result<SquadFolder, SourceError> {
        let set = SquadSet::open(dir).map_err(from_dataset)?;
        if let Some(count) = count {
            if count == 0 || count > set.len() {
                return Err(SourceError::Format {
                    path: set.path.clone(),
                    message: format!(
                        "{count} samples asked for; its {} questions make {} features",
                        set.dataset.examples.len(),
                        set.len()
                    ),
                });
            }
        }
        let count = count.unwrap_or(set.len());
        tracing::info!(
            folder = %dir.display(),
            questions = set.dataset.examples.len(),
            features = set.len(),
            samples = count,
            "opened a SQuAD folder"
        );
        Ok(SquadFolder {
            dir: dir.to_path_buf(),
            set: Arc::new(set),
            count,
        })
    }

    /// The folder's features and what they were made from.
    pub fn set(&self) -> &SquadSet {
        &self.set
    }
}

impl SampleSource for SquadFolder {
    fn describe(&self) -> String {
        format!("{} (SQuAD v1.1)", self.dir.display())
    }

    fn len(&self) -> usize {
        self.count
    }

    fn read(&mut self, index: usize, out: &mut Vec<u8>) -> Result<SampleLayout, SourceError> {
        let shape = (index < self.count)
            .then(|| self.set.write_sample(index, out))
            .flatten()
            .ok_or_else(|| SourceError::OutOfRange {
                source_name: self.describe(),
                index,
                count: self.count,
            })?;
        Ok(SampleLayout {
            dtype: DType::I64,
            shape: shape.iter().map(|&n| n as i64).collect(),
        })
    }

    fn fork(&self) -> Option<Box<dyn SampleSource>> {
        Some(Box::new(SquadFolder {
            dir: self.dir.clone(),
            set: Arc::clone(&self.set),
            count: self.count,
        }))
    }
}
