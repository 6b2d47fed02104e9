//! A data set of named inputs kept in one `.npy` file each (`--dataset-input NAME=FILE.npy`):
//! sample i is row i of every file, laid out one after another in the arena, each input
//! starting at a multiple of [`SAMPLE_ALIGN`], so inputs of different element types and shapes
//! travel as one sample.

use std::path::PathBuf;

use mlperf_plugin_api::sdk::DType;

use super::arena::{SampleLayout, SAMPLE_ALIGN};
use super::named_inputs::{check_names, NamedInput};
use super::npy::NpySource;
use super::source::{SampleSource, SourceError};

/// The files of a data set of named inputs, read sample by sample.
pub struct NamedFiles {
    files: Vec<NpySource>,
    parts: Vec<NamedInput>,
    sample_bytes: usize,
    row: Vec<u8>,
}

impl NamedFiles {
    /// Opens every `(name, file)`; they must hold the same number of samples.
    pub fn open(inputs: &[(String, PathBuf)]) -> Result<NamedFiles, SourceError> {
        let names: Vec<&str> = inputs.iter().map(|(name, _)| name.as_str()).collect();
        if let (Err(message), Some((_, path))) = (check_names(&names), inputs.first()) {
            return Err(SourceError::Format {
                path: path.clone(),
                message,
            });
        }
        let mut files = Vec::with_capacity(inputs.len());
        let mut parts = Vec::with_capacity(inputs.len());
        let mut offset = 0usize;
        let mut row = Vec::new();
        for (name, path) in inputs {
            let mut file = NpySource::open(path)?;
            let invalid = |message: String| SourceError::Format {
                path: path.clone(),
                message,
            };
            if let Some((first, _)) = inputs.first().filter(|_| !files.is_empty()) {
                let expected: &NpySource = &files[0];
                if file.len() != expected.len() {
                    return Err(invalid(format!(
                        "input '{name}' has {} samples where input '{first}' ({}) has {}",
                        file.len(),
                        expected.describe(),
                        expected.len()
                    )));
                }
            }
            let (layout, length) = if file.is_empty() {
                (
                    SampleLayout {
                        dtype: DType::U8,
                        shape: Vec::new(),
                    },
                    0,
                )
            } else {
                let layout = file.read(0, &mut row)?;
                (layout, row.len())
            };
            parts.push(NamedInput {
                name: name.clone(),
                dtype: layout.dtype.to_raw(),
                shape: layout.shape,
                offset: offset as u64,
                length: length as u64,
            });
            offset = (offset + length).next_multiple_of(SAMPLE_ALIGN);
            files.push(file);
        }
        let sample_bytes = parts
            .last()
            .map_or(0, |last| (last.offset + last.length) as usize);
        Ok(NamedFiles {
            files,
            parts,
            sample_bytes,
            row,
        })
    }

    /// The inputs, in the order they were given.
    pub fn parts(&self) -> &[NamedInput] {
        &self.parts
    }
}

impl SampleSource for NamedFiles {
    fn describe(&self) -> String {
        let files: Vec<String> = self.files.iter().map(SampleSource::describe).collect();
        files.join(" + ")
    }

    fn len(&self) -> usize {
        self.files.first().map_or(0, SampleSource::len)
    }

    /// Sample `index`: each input's row at its offset, zero bytes between them. Its layout is
    /// raw bytes; the inputs' own layouts are [`Self::parts`].
    fn read(&mut self, index: usize, out: &mut Vec<u8>) -> Result<SampleLayout, SourceError> {
        out.clear();
        out.resize(self.sample_bytes, 0);
        for (file, part) in self.files.iter_mut().zip(&self.parts) {
            file.read(index, &mut self.row)?;
            let at = part.offset as usize;
            out[at..at + self.row.len()].copy_from_slice(&self.row);
        }
        Ok(SampleLayout {
            dtype: DType::U8,
            shape: vec![self.sample_bytes as i64],
        })
    }
}
