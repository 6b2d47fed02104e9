//! The repacked LibriSpeech manifest (`data/dev-all-repack.json`, written by the reference's
//! `repackage_librispeech.py`) as `manifest.py`'s `Manifest` reads it for the QSL and the
//! scorer: entries whose `original_duration` is over 30 s are dropped (`MAX_DURATION`), and
//! so are those whose transcript is not text (the reference warns); the rest are the samples,
//! `qsl_idx` in file order, each with its first speed-1 file and its transcript filtered to
//! the labels.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::labels::label_text;
use crate::WhisperError;

/// Clips longer than this many seconds are not samples (`MAX_DURATION`).
pub const MAX_DURATION_S: f64 = 30.0;

/// One sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Clip {
    /// The transcript as the scorer compares with: only label characters.
    pub transcript: String,
    /// The audio file, `os.path.join(dataset_dir, fname)` (an absolute `fname` stays as it is).
    pub audio: PathBuf,
    /// `original_duration`, seconds.
    pub duration_s: f64,
    /// The manifest entry it came from.
    pub entry: usize,
}

/// The samples of a manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub path: PathBuf,
    pub clips: Vec<Clip>,
    /// Entries dropped: over [`MAX_DURATION_S`], and without a text transcript.
    pub too_long: usize,
    pub no_transcript: usize,
}

impl Manifest {
    /// Reads the manifest at `path`, whose `fname`s are relative to `dataset_dir` (the
    /// reference's `--dataset_dir`).
    pub fn read(path: &Path, dataset_dir: &Path) -> Result<Manifest, WhisperError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| WhisperError::file(path, e.to_string()))?;
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            WhisperError::file(path, format!("{e}: a whisper manifest is a JSON list of clips (repackage_librispeech.py's dev-all-repack.json)"))
        })?;
        let Value::Array(entries) = value else {
            return Err(WhisperError::file(
                path,
                "a whisper manifest is a JSON list of clips",
            ));
        };
        let entry_error = |at: String, message: &str| WhisperError::Entry {
            path: path.to_path_buf(),
            at,
            message: message.to_string(),
        };
        let mut manifest = Manifest {
            path: path.to_path_buf(),
            clips: Vec::new(),
            too_long: 0,
            no_transcript: 0,
        };
        for (index, entry) in entries.iter().enumerate() {
            let duration_s = entry
                .get("original_duration")
                .and_then(Value::as_f64)
                .ok_or_else(|| {
                    entry_error(
                        format!("[{index}].original_duration"),
                        "missing or not a number",
                    )
                })?;
            if duration_s > MAX_DURATION_S {
                manifest.too_long += 1;
                continue;
            }
            let Some(transcript) = entry.get("transcript").and_then(Value::as_str) else {
                if entry.get("transcript").is_none() {
                    return Err(entry_error(format!("[{index}].transcript"), "missing"));
                }
                manifest.no_transcript += 1;
                continue;
            };
            let files = entry
                .get("files")
                .and_then(Value::as_array)
                .ok_or_else(|| entry_error(format!("[{index}].files"), "missing or not a list"))?;
            // The first file at speed 1 (the reference's filter_speed), as the QSL loads it.
            let mut fname = None;
            for (number, file) in files.iter().enumerate() {
                let speed = file.get("speed").and_then(Value::as_f64).ok_or_else(|| {
                    entry_error(
                        format!("[{index}].files[{number}].speed"),
                        "missing or not a number",
                    )
                })?;
                if speed == 1.0 {
                    let name = file.get("fname").and_then(Value::as_str).ok_or_else(|| {
                        entry_error(
                            format!("[{index}].files[{number}].fname"),
                            "missing or not text",
                        )
                    })?;
                    fname = Some(name);
                    break;
                }
            }
            let fname = fname
                .ok_or_else(|| entry_error(format!("[{index}].files"), "no file at speed 1"))?;
            manifest.clips.push(Clip {
                transcript: label_text(transcript),
                audio: dataset_dir.join(fname),
                duration_s,
                entry: index,
            });
        }
        Ok(manifest)
    }

    pub fn len(&self) -> usize {
        self.clips.len()
    }

    pub fn is_empty(&self) -> bool {
        self.clips.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_clips_and_non_text_transcripts_are_dropped() {
        let dir = std::env::temp_dir().join(format!("whisper-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.json");
        let file = |name: &str| serde_json::json!([{"fname": name, "speed": 1}]);
        let manifest = serde_json::json!([
            {"transcript": "a b", "files": file("x/a.wav"), "original_duration": 1.0},
            {"transcript": "long", "files": file("x/b.wav"), "original_duration": 30.01},
            {"transcript": null, "files": file("x/c.wav"), "original_duration": 2.0},
            {"transcript": "Edge, 30 s!", "files": file("/abs/d.wav"), "original_duration": 30.0},
        ]);
        std::fs::write(&path, manifest.to_string()).unwrap();
        let read = Manifest::read(&path, Path::new("/data")).unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!((read.too_long, read.no_transcript), (1, 1));
        assert_eq!(read.clips[0].audio, Path::new("/data/x/a.wav"));
        assert_eq!(read.clips[1].transcript, "dge 30 s");
        assert_eq!(read.clips[1].audio, Path::new("/abs/d.wav"));
        assert_eq!(read.clips[1].entry, 3);
        std::fs::write(&path, r#"[{"transcript": "a", "original_duration": 1.0}]"#).unwrap();
        let error = Manifest::read(&path, Path::new("/data"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("[0].files"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
