//! CNN-DailyMail as MLPerf's llama3.1-8b reads it: `cnn_eval.json` (or the edge set's
//! `sample_cnn_eval_5000.json`) read whole at open, each record's `tok_input` handed over as
//! int32 `[len]` token ids, as the reference's SUT sends them to the model (`TokensPrompt`):
//! never re-tokenised text. The network plugin sends them with `prompt = "token_ids"`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mlperf_plugin_api::sdk::DType;
use mlperf_submission::benchmark::DatasetFormat;
use mlperf_submission::datasets::cnndm::CnnDmSet;
use mlperf_submission::datasets::token_prompts;

use super::arena::SampleLayout;
use super::imagenet::from_dataset;
use super::source::{SampleSource, SourceError};

/// A CNN-DailyMail evaluation file opened for reading.
pub struct CnnDmFolder {
    set: Arc<CnnDmSet>,
    count: usize,
}

impl CnnDmFolder {
    /// Opens the `format` file in `dir` (CNN-DailyMail's evaluation file, or llama2-70b's
    /// OpenOrca records converted by `dataset convert`: the same shape, read the same way);
    /// the first `count` records only are samples, when given.
    pub fn open(
        format: DatasetFormat,
        dir: &Path,
        count: Option<usize>,
    ) -> Result<CnnDmFolder, SourceError> {
        let set = token_prompts(format, dir).map_err(from_dataset)?;
        if let Some(count) = count {
            if count == 0 || count > set.len() {
                return Err(SourceError::Format {
                    path: set.path.clone(),
                    message: format!("{count} samples asked for; it holds {} records", set.len()),
                });
            }
        }
        let count = count.unwrap_or(set.len());
        tracing::info!(file = %set.path.display(), records = set.len(), samples = count, "opened a file of prompt token ids");
        Ok(CnnDmFolder {
            set: Arc::new(set),
            count,
        })
    }

    /// The file read.
    pub fn path(&self) -> &PathBuf {
        &self.set.path
    }
}

impl SampleSource for CnnDmFolder {
    fn describe(&self) -> String {
        format!("{} (prompt token ids)", self.set.path.display())
    }

    fn len(&self) -> usize {
        self.count
    }

    fn read(&mut self, index: usize, out: &mut Vec<u8>) -> Result<SampleLayout, SourceError> {
        let record = (index < self.count)
            .then(|| &self.set.records[index])
            .ok_or_else(|| SourceError::OutOfRange {
                source_name: self.describe(),
                index,
                count: self.count,
            })?;
        out.clear();
        out.reserve(4 * record.tok_input.len());
        for &id in &record.tok_input {
            // Ids past i32::MAX cannot be an int32 sample; no tokenizer has that many.
            let id = i32::try_from(id).map_err(|_| SourceError::Format {
                path: self.set.path.clone(),
                message: format!("record {index}: token id {id} does not fit int32"),
            })?;
            out.extend_from_slice(&id.to_le_bytes());
        }
        Ok(SampleLayout {
            dtype: DType::I32,
            shape: vec![record.tok_input.len() as i64],
        })
    }

    fn fork(&self) -> Option<Box<dyn SampleSource>> {
        Some(Box::new(CnnDmFolder {
            set: Arc::clone(&self.set),
            count: self.count,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_record_is_its_tok_input_as_int32() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/cnndm");
        let mut folder = CnnDmFolder::open(DatasetFormat::Cnndm, &dir, None).unwrap();
        assert_eq!(folder.len(), 12);
        let mut out = Vec::new();
        let layout = folder.read(2, &mut out).unwrap();
        let ids: Vec<u32> = out
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u32)
            .collect();
        let set = CnnDmSet::open(&dir).unwrap();
        assert_eq!(ids, set.records[2].tok_input);
        assert_eq!(
            (layout.dtype, layout.shape),
            (DType::I32, vec![ids.len() as i64])
        );
        assert!(folder.read(12, &mut out).is_err());
        assert!(CnnDmFolder::open(DatasetFormat::Cnndm, &dir, Some(13)).is_err());
    }
}
