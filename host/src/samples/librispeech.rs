//! LibriSpeech as MLPerf's whisper benchmark reads it: the repacked manifest and its 16 kHz
//! WAV clips, each clip read when it is loaded (untimed) and handed over as float32 `[n]`,
//! the samples `librosa.load(path, sr=16000)` gives the reference's QSL. The log-mel features
//! and the zero-padding to 30 s are the model server's, in the timed path, as in the
//! reference (vLLM computes them).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use mlperf_plugin_api::sdk::DType;
use mlperf_submission::datasets::librispeech;
use mlperf_whisper::manifest::Manifest;
use mlperf_whisper::wav::read_clip;

use super::arena::SampleLayout;
use super::imagenet::from_dataset;
use super::source::{SampleSource, SourceError};

/// A whisper data set folder opened for reading.
pub struct LibriSpeechFolder {
    dir: PathBuf,
    manifest: Arc<Manifest>,
    count: usize,
    /// One clip's samples, reused.
    audio: Vec<f32>,
}

impl LibriSpeechFolder {
    /// Opens `dir`'s manifest (the first `count` clips only are samples, when given).
    pub fn open(dir: &Path, count: Option<usize>) -> Result<LibriSpeechFolder, SourceError> {
        let manifest = librispeech::open(dir).map_err(from_dataset)?;
        if let Some(count) = count {
            if count == 0 || count > manifest.len() {
                return Err(SourceError::Format {
                    path: manifest.path.clone(),
                    message: format!(
                        "{count} samples asked for; it holds {} clips of at most 30 s",
                        manifest.len()
                    ),
                });
            }
        }
        let count = count.unwrap_or(manifest.len());
        tracing::info!(
            folder = %dir.display(),
            clips = manifest.len(),
            too_long = manifest.too_long,
            no_transcript = manifest.no_transcript,
            samples = count,
            "opened a whisper data set"
        );
        Ok(LibriSpeechFolder {
            dir: dir.to_path_buf(),
            manifest: Arc::new(manifest),
            count,
            audio: Vec::new(),
        })
    }
}

impl SampleSource for LibriSpeechFolder {
    fn describe(&self) -> String {
        format!("{} (LibriSpeech, repacked)", self.dir.display())
    }

    fn len(&self) -> usize {
        self.count
    }

    fn read(&mut self, index: usize, out: &mut Vec<u8>) -> Result<SampleLayout, SourceError> {
        let clip = self
            .manifest
            .clips
            .get(index)
            .filter(|_| index < self.count)
            .ok_or_else(|| SourceError::OutOfRange {
                source_name: self.describe(),
                index,
                count: self.count,
            })?;
        let samples = read_clip(&clip.audio, &mut self.audio).map_err(|e| SourceError::Format {
            path: clip.audio.clone(),
            message: format!(
                "{e} (clip {index}, entry {} of {})",
                clip.entry,
                self.manifest.path.display()
            ),
        })?;
        out.clear();
        out.reserve_exact(4 * samples);
        out.extend(self.audio.iter().flat_map(|s| s.to_le_bytes()));
        Ok(SampleLayout {
            dtype: DType::F32,
            shape: vec![samples as i64],
        })
    }

    fn fork(&self) -> Option<Box<dyn SampleSource>> {
        Some(Box::new(LibriSpeechFolder {
            dir: self.dir.clone(),
            manifest: Arc::clone(&self.manifest),
            count: self.count,
            audio: Vec::new(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/librispeech")
    }

    #[test]
    fn clips_are_float32_audio_in_manifest_order() {
        let mut folder = LibriSpeechFolder::open(&fixture(), None).unwrap();
        assert_eq!(folder.len(), 3);
        let mut bytes = Vec::new();
        let layout = folder.read(0, &mut bytes).unwrap();
        assert_eq!(layout.dtype, DType::F32);
        // records/audio.json: librosa.load gives 53,785 samples, the first 0.000396728515625.
        assert_eq!(layout.shape, [53_785]);
        assert_eq!(
            f32::from_le_bytes(bytes[..4].try_into().unwrap()),
            13.0 / 32768.0
        );
        assert!(folder.read(3, &mut bytes).is_err());
        assert!(LibriSpeechFolder::open(&fixture(), Some(4)).is_err());
        let error = LibriSpeechFolder::open(&fixture().join("manifests"), None)
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("dev-all-repack.json"), "{error}");
    }
}
