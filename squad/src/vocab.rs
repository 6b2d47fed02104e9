//! A WordPiece `vocab.txt` as transformers' `load_vocab` reads it: one token per line (the
//! line's newline removed, nothing else), its index the line number; a token listed twice
//! takes its later index.

use std::collections::HashMap;
use std::path::Path;

use crate::SquadError;

/// The tokens the features and the tokenizer need.
pub const UNK: &str = "[UNK]";
pub const CLS: &str = "[CLS]";
pub const SEP: &str = "[SEP]";
/// The tokens the slow tokenizer never splits or lowercases (its special tokens).
pub const SPECIAL: [&str; 5] = ["[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"];

#[derive(Debug, Clone)]
pub struct Vocab {
    ids: HashMap<String, u32>,
    tokens: Vec<String>,
    unk: u32,
    cls: u32,
    sep: u32,
}

impl Vocab {
    pub fn read(path: &Path) -> Result<Vocab, SquadError> {
        let text = std::fs::read_to_string(path).map_err(|e| SquadError::File {
            path: path.to_path_buf(),
            message: format!("cannot read it as UTF-8 text: {e}"),
        })?;
        Vocab::from_lines(&text).map_err(|e| SquadError::File {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }

    /// The vocabulary of `text`, its lines split as Python's text mode splits them
    /// (`\n`, `\r\n` and `\r`).
    pub fn from_lines(text: &str) -> Result<Vocab, SquadError> {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let mut lines: Vec<&str> = text.split('\n').collect();
        if lines.last() == Some(&"") {
            lines.pop();
        }
        if lines.len() > u32::MAX as usize {
            return Err(SquadError::Invalid("more than 2^32 tokens".into()));
        }
        let mut ids = HashMap::with_capacity(lines.len());
        for (index, token) in lines.iter().enumerate() {
            ids.insert(token.to_string(), index as u32);
        }
        let find = |token: &str| {
            ids.get(token).copied().ok_or_else(|| {
                SquadError::Invalid(format!(
                    "no line holds {token}: a BERT vocabulary lists [PAD], [UNK], [CLS], [SEP] and [MASK] (is this the model's vocab.txt?)"
                ))
            })
        };
        let (unk, cls, sep) = (find(UNK)?, find(CLS)?, find(SEP)?);
        Ok(Vocab {
            tokens: lines.iter().map(|t| t.to_string()).collect(),
            ids,
            unk,
            cls,
            sep,
        })
    }

    pub fn id(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }

    pub fn contains(&self, token: &str) -> bool {
        self.ids.contains_key(token)
    }

    /// The token on line `id` (every id the tokenizer gives has one).
    pub fn token(&self, id: u32) -> &str {
        self.tokens.get(id as usize).map_or("", String::as_str)
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    pub fn unk(&self) -> u32 {
        self.unk
    }

    pub fn cls(&self) -> u32 {
        self.cls
    }

    pub fn sep(&self) -> u32 {
        self.sep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_tokens_and_the_special_ones_are_required() {
        let vocab = Vocab::from_lines("[PAD]\r\n[UNK]\r[CLS]\n[SEP]\nx\n x\nx\n").unwrap();
        assert_eq!(vocab.len(), 7);
        assert_eq!((vocab.unk(), vocab.cls(), vocab.sep()), (1, 2, 3));
        assert_eq!(vocab.id("x"), Some(6));
        assert_eq!(vocab.id(" x"), Some(5));
        let error = Vocab::from_lines("a\nb\n").unwrap_err().to_string();
        assert!(error.contains("[UNK]"), "{error}");
    }
}
