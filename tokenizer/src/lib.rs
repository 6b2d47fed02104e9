//! Text to token ids and back, for LLM benchmarks whose server answers with text: a
//! `tokenizer.json` in the Hugging Face format (the one MLPerf's LLM references load with
//! `AutoTokenizer`), read with the `tokenizers` crate. The network plugin turns answers into
//! the token ids the accuracy log holds; the host's ROUGE scorer turns them back into text.

mod sentencepiece;

pub use sentencepiece::SlowLlama;

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    #[error("{}: cannot read the tokenizer: {message}", path.display())]
    Read { path: PathBuf, message: String },
    #[error("{}: cannot encode {text:?}: {message}", path.display())]
    Encode {
        path: PathBuf,
        text: String,
        message: String,
    },
    #[error("{}: token id {id} is outside the vocabulary of {vocabulary} tokens", path.display())]
    UnknownId {
        path: PathBuf,
        id: u32,
        vocabulary: usize,
    },
    #[error("{}: cannot decode the token ids: {message}", path.display())]
    Decode { path: PathBuf, message: String },
}

/// A tokenizer read from a file; shared by threads (`Send + Sync`).
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    /// Ids below this are in the vocabulary (added tokens included).
    vocabulary: usize,
    /// The ids of the added tokens marked special.
    special: Vec<u32>,
    path: PathBuf,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("path", &self.path)
            .field("vocabulary", &self.vocabulary)
            .finish()
    }
}

impl Tokenizer {
    pub fn from_file(path: &Path) -> Result<Tokenizer, TokenizerError> {
        let read_error = |message: String| TokenizerError::Read {
            path: path.to_path_buf(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| read_error(e.to_string()))?;
        let inner =
            tokenizers::Tokenizer::from_bytes(&bytes).map_err(|e| read_error(e.to_string()))?;
        let vocabulary = inner.get_vocab_size(true);
        if vocabulary == 0 {
            return Err(read_error("its vocabulary is empty".into()));
        }
        let mut special: Vec<u32> = inner
            .get_added_tokens_decoder()
            .into_iter()
            .filter(|(_, token)| token.special)
            .map(|(id, _)| id)
            .collect();
        special.sort_unstable();
        Ok(Tokenizer {
            inner,
            vocabulary,
            special,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The ids of `text` as the model would read it: no special tokens added (a chat template
    /// or the server adds those).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, TokenizerError> {
        let encoding = self
            .inner
            .encode_fast(text, false)
            .map_err(|e| TokenizerError::Encode {
                path: self.path.clone(),
                text: text.chars().take(80).collect(),
                message: e.to_string(),
            })?;
        Ok(encoding.get_ids().to_vec())
    }

    /// The text of `ids`, special tokens (end of sequence and the like) left out. An id outside
    /// the vocabulary is an error rather than silently dropped.
    pub fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        self.check_ids(ids)?;
        self.inner
            .decode(ids, true)
            .map_err(|e| TokenizerError::Decode {
                path: self.path.clone(),
                message: e.to_string(),
            })
    }

    fn check_ids(&self, ids: &[u32]) -> Result<(), TokenizerError> {
        match ids.iter().find(|&&id| id as usize >= self.vocabulary) {
            Some(&id) => Err(TokenizerError::UnknownId {
                path: self.path.clone(),
                id,
                vocabulary: self.vocabulary,
            }),
            None => Ok(()),
        }
    }

    /// The ids of the added tokens marked special (`<s>`, `</s>`, `<unk>`): what decoding with
    /// `skip_special_tokens` leaves out.
    fn special_ids(&self) -> &[u32] {
        &self.special
    }

    /// The id of a special token such as `<|im_end|>`, if the vocabulary has it.
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }
}

/// For tests of this crate and of those that use it.
pub mod testing {
    /// A byte-level BPE as GPT-2-style models have, small enough to follow by hand: "a", "b",
    /// the space byte "Ġ", two merges, and a special end token "<|end|>" (id 5). "ab ab" is
    /// [3, 4]; "b a" is [1, 2, 0].
    pub const SMALL_TOKENIZER_JSON: &str = r#"{
        "version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [{"id": 5, "content": "<|end|>", "single_word": false, "lstrip": false,
                          "rstrip": false, "normalized": false, "special": true}],
        "normalizer": null,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
        "post_processor": null,
        "decoder": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                  "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                  "vocab": {"a": 0, "b": 1, "Ġ": 2, "ab": 3, "Ġab": 4, "<|end|>": 5},
                  "merges": [["a", "b"], ["Ġ", "ab"]]}
    }"#;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> (tempdir::Dir, Tokenizer) {
        let dir = tempdir::Dir::new();
        let path = dir.path.join("tokenizer.json");
        std::fs::write(&path, crate::testing::SMALL_TOKENIZER_JSON).unwrap();
        let tokenizer = Tokenizer::from_file(&path).unwrap();
        (dir, tokenizer)
    }

    #[test]
    fn encodes_through_the_merges_and_decodes_back_without_special_tokens() {
        let (_dir, tokenizer) = small();
        assert_eq!(tokenizer.encode("ab ab").unwrap(), [3, 4]);
        assert_eq!(tokenizer.encode("ba").unwrap(), [1, 0]);
        assert_eq!(tokenizer.encode("").unwrap(), Vec::<u32>::new());
        assert_eq!(tokenizer.decode(&[3, 4, 5]).unwrap(), "ab ab");
        assert_eq!(tokenizer.decode(&[1, 2, 0]).unwrap(), "b a");
        assert_eq!(tokenizer.token_id("<|end|>"), Some(5));
        assert_eq!(tokenizer.token_id("<|none|>"), None);
    }

    #[test]
    fn an_id_outside_the_vocabulary_is_refused_naming_it() {
        let (_dir, tokenizer) = small();
        let error = tokenizer.decode(&[3, 6]).unwrap_err().to_string();
        assert!(
            error.contains("token id 6 is outside the vocabulary of 6 tokens"),
            "{error}"
        );
        assert!(error.contains("tokenizer.json"), "{error}");
    }

    #[test]
    fn a_missing_or_malformed_file_is_an_error_naming_it() {
        let dir = tempdir::Dir::new();
        let missing = dir.path.join("absent.json");
        let error = Tokenizer::from_file(&missing).unwrap_err().to_string();
        assert!(
            error.contains("absent.json: cannot read the tokenizer"),
            "{error}"
        );
        let malformed = dir.path.join("malformed.json");
        std::fs::write(&malformed, r#"{"model": {"type": "BPE"}}"#).unwrap();
        let error = Tokenizer::from_file(&malformed).unwrap_err().to_string();
        assert!(
            error.contains("malformed.json: cannot read the tokenizer"),
            "{error}"
        );
    }

    /// A folder removed when dropped (no dependency for three tests).
    mod tempdir {
        use std::path::PathBuf;
        use std::sync::atomic::{AtomicUsize, Ordering};

        pub(super) struct Dir {
            pub path: PathBuf,
        }

        impl Dir {
            pub(super) fn new() -> Dir {
                static NEXT: AtomicUsize = AtomicUsize::new(0);
                let path = std::env::temp_dir().join(format!(
                    "mlperf-tokenizer-test-{}-{}",
                    std::process::id(),
                    NEXT.fetch_add(1, Ordering::Relaxed)
                ));
                std::fs::create_dir_all(&path).unwrap();
                Dir { path }
            }
        }

        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.path);
            }
        }
    }
}
