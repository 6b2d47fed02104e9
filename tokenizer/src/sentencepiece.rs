//! Decoding as transformers' slow `LlamaTokenizer` decodes (sentencepiece underneath), which
//! MLPerf's llama2-70b accuracy script loads (`use_fast=False`): special tokens dropped, the
//! first piece's word-start mark removed (what is left yielded as it is when it is no piece of
//! the vocabulary), byte pieces joined into UTF-8 with one U+FFFD for
//! each byte that starts no valid character, and `▁` read as a space. The fast decoder of
//! tokenizer.json differs from it on broken UTF-8 (one U+FFFD per byte of the whole run) and
//! on an answer whose first piece is a space byte (it strips the space).

use crate::{Tokenizer, TokenizerError};

/// sentencepiece's word-start mark.
const WORD_START: char = '\u{2581}';

/// What the tokenizer folder's `tokenizer_config.json` says of the slow tokenizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlowLlama {
    /// `legacy` (transformers' default when unset: true): sentencepiece also drops the
    /// word-start mark of the first piece that yields text.
    pub legacy: bool,
    /// `add_prefix_space` (default true): the first piece's word-start mark is dropped.
    pub add_prefix_space: bool,
}

impl Tokenizer {
    /// The text of `ids` as the slow LlamaTokenizer's `decode(ids, skip_special_tokens=True)`
    /// gives it.
    pub fn decode_slow_llama(
        &self,
        ids: &[u32],
        slow: SlowLlama,
    ) -> Result<String, TokenizerError> {
        self.check_ids(ids)?;
        let special = self.special_ids();
        let mut pieces = ids
            .iter()
            .filter(|id| special.binary_search(id).is_err())
            .map(|&id| self.inner.id_to_token(id).unwrap_or_default());
        let mut text = String::new();
        let mut bytes = Vec::new();
        let Some(first) = pieces.next() else {
            return Ok(text);
        };
        // The first piece without its mark may be no piece of the vocabulary: sentencepiece
        // then yields it as it is, marks and all; an empty one is no piece at all.
        let (first, verbatim) = match first.strip_prefix(WORD_START) {
            Some(rest) if slow.add_prefix_space => {
                (rest.to_string(), self.inner.token_to_id(rest).is_none())
            }
            _ => (first, false),
        };
        // Whether no piece has been decoded yet: in legacy mode sentencepiece drops the
        // word-start mark of that piece.
        let mut at_start = !verbatim || first.is_empty();
        if verbatim {
            text.push_str(&first);
        }
        let first = (!verbatim).then_some(first);
        for piece in first.into_iter().chain(pieces) {
            let start = std::mem::replace(&mut at_start, false);
            if let Some(byte) = byte_piece(&piece) {
                bytes.push(byte);
                continue;
            }
            push_bytes(&mut text, &mut bytes);
            let piece = match piece.strip_prefix(WORD_START) {
                Some(rest) if slow.legacy && start => rest,
                _ => piece.as_str(),
            };
            for c in piece.chars() {
                text.push(if c == WORD_START { ' ' } else { c });
            }
        }
        push_bytes(&mut text, &mut bytes);
        Ok(text)
    }
}

/// The byte of a byte-fallback piece (`<0x41>`).
fn byte_piece(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

/// `bytes` as UTF-8, each byte that starts no valid character one U+FFFD (decoding starts
/// again at the next byte), and emptied.
fn push_bytes(text: &mut String, bytes: &mut Vec<u8>) {
    let mut rest = bytes.as_slice();
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                text.push_str(valid);
                break;
            }
            Err(error) => {
                let (valid, after) = rest.split_at(error.valid_up_to());
                text.push_str(std::str::from_utf8(valid).unwrap_or_default());
                text.push('\u{FFFD}');
                rest = &after[1..];
            }
        }
    }
    bytes.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lossy(bytes: &[u8]) -> String {
        let mut text = String::new();
        push_bytes(&mut text, &mut bytes.to_vec());
        text
    }

    #[test]
    fn each_byte_that_starts_no_character_is_one_replacement() {
        assert_eq!(lossy("唐鳳".as_bytes()), "唐鳳");
        // 唐 without its middle byte: two replacements, then 鳳 whole (Rust's from_utf8_lossy
        // gives one for the cut sequence).
        assert_eq!(lossy(&[0xE5, 0x90, 0xE9, 0xB3, 0xB3]), "\u{FFFD}\u{FFFD}鳳");
        assert_eq!(lossy(&[0xF0, 0x9F, 0x98]), "\u{FFFD}\u{FFFD}\u{FFFD}");
        assert_eq!(lossy(&[0xC0, 0x80, 0x41]), "\u{FFFD}\u{FFFD}A");
        assert_eq!(byte_piece("<0x0A>"), Some(b'\n'));
        assert_eq!(byte_piece("<0x1>"), None);
        assert_eq!(byte_piece("<s>"), None);
    }
}
