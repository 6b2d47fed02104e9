//! `EnglishSpellingNormalizer`: British spellings to American ones, word by word, from
//! openai-whisper's `whisper/normalizers/english.json` (1,740 pairs, read from the user's
//! copy of the package: it is not ours to ship). The map is used as it is, its two odd
//! entries included (`archaeology` → `archeology</span>`, a key with spaces that no word
//! matches).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::WhisperError;

/// Where the file sits inside an installed or unpacked openai-whisper.
pub const SPELLING_MAP_IN_PACKAGE: &str = "whisper/normalizers/english.json";

#[derive(Debug, Clone, Default)]
pub struct SpellingMap {
    mapping: HashMap<String, String>,
    /// The file read, for messages.
    pub path: PathBuf,
}

impl SpellingMap {
    /// Reads `english.json`: one JSON object of text to text.
    pub fn read(path: &Path) -> Result<SpellingMap, WhisperError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            WhisperError::file(
                path,
                format!("{e}: the spelling map is openai-whisper's {SPELLING_MAP_IN_PACKAGE} (pip download --no-deps --no-binary :all: openai-whisper==20250625, or `prepare.sh whisper`)"),
            )
        })?;
        let mapping: HashMap<String, String> = serde_json::from_str(&text).map_err(|e| {
            WhisperError::file(
                path,
                format!("{e}: expected openai-whisper's spelling map, one JSON object of words to words"),
            )
        })?;
        if mapping.is_empty() {
            return Err(WhisperError::file(path, "the spelling map is empty"));
        }
        Ok(SpellingMap {
            mapping,
            path: path.to_path_buf(),
        })
    }

    /// A map of the given pairs (tests).
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> SpellingMap {
        SpellingMap {
            mapping: pairs
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            path: PathBuf::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.mapping.len()
    }

    pub fn is_empty(&self) -> bool {
        self.mapping.is_empty()
    }

    /// Each word replaced by its American spelling, joined by single spaces.
    pub(crate) fn apply(&self, text: &str) -> String {
        let words: Vec<&str> = text
            .split_whitespace()
            .map(|word| self.mapping.get(word).map_or(word, String::as_str))
            .collect();
        words.join(" ")
    }
}
