//! transformers' slow `BertTokenizer` (4.57, uncased), as the reference's QSL and accuracy
//! script build it from `vocab.txt`, and the original BERT `BasicTokenizer` the accuracy
//! script's `get_final_text` uses.
//!
//! The slow tokenizer's `tokenize(text)`:
//! 1. lowercases every character on its own, special tokens (`[UNK] [SEP] [PAD] [CLS] [MASK]`)
//!    and newlines aside;
//! 2. splits the special tokens out, keeping each whole;
//! 3. for the rest, BasicTokenizer: drops NUL, U+FFFD and control characters, maps
//!    whitespace to spaces, spaces out CJK ideographs, NFC-normalises, splits on Python's
//!    whitespace, lowercases and strips accents (NFD, dropping Mn) each word, splits off
//!    punctuation;
//! 4. WordPiece: greedy longest match, `##` continuations, `[UNK]` for a word longer than 100
//!    characters or with no match.

use unicode_general_category::GeneralCategory;
use unicode_normalization::UnicodeNormalization;

use crate::pystr;
use crate::vocab::{Vocab, SPECIAL};

const MAX_INPUT_CHARS_PER_WORD: usize = 100;

/// The slow, uncased BertTokenizer over a vocabulary.
#[derive(Debug, Clone)]
pub struct BertTokenizer {
    vocab: Vocab,
}

impl BertTokenizer {
    pub fn new(vocab: Vocab) -> BertTokenizer {
        BertTokenizer { vocab }
    }

    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// The token ids of `text` (`convert_tokens_to_ids(tokenize(text))`).
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        self.tokenize_into(text, &mut ids);
        ids
    }

    /// As `tokenize`, the tokens as strings.
    pub fn tokens(&self, text: &str) -> Vec<String> {
        self.tokenize(text)
            .into_iter()
            .map(|id| self.vocab.token(id).to_string())
            .collect()
    }

    pub fn tokenize_into(&self, text: &str, ids: &mut Vec<u32>) {
        let lowered = lower_outside_special(text);
        for (piece, special) in split_special(&lowered) {
            if special {
                ids.push(self.vocab.id(piece).unwrap_or(self.vocab.unk()));
                continue;
            }
            // A special token the basic tokenizer left whole (say "[SEP]" made by dropping a
            // control character) goes through WordPiece like any word, as there.
            for word in basic_tokens(piece, BasicFlavour::Transformers) {
                wordpiece(&self.vocab, &word, ids);
            }
        }
    }
}

/// Step 1: each character lowercased on its own (`re.sub` over `(.+?)`, whose `.` leaves
/// newlines alone), the special tokens left as they are.
fn lower_outside_special(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(token) = SPECIAL.iter().find(|t| rest.starts_with(**t)) {
            out.push_str(token);
            rest = &rest[token.len()..];
            continue;
        }
        if c == '\n' {
            out.push(c);
        } else {
            pystr::push_lower_char(c, &mut out);
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Step 2: `text` cut around each special token, in order: (piece, is a special token).
fn split_special(text: &str) -> Vec<(&str, bool)> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        if let Some(token) = SPECIAL.iter().find(|t| rest.starts_with(**t)) {
            if start < at {
                pieces.push((&text[start..at], false));
            }
            pieces.push((&text[at..at + token.len()], true));
            at += token.len();
            start = at;
        } else {
            at += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    if start < text.len() {
        pieces.push((&text[start..], false));
    }
    pieces
}

/// Which BasicTokenizer: transformers' (NFC before the split, special tokens never split)
/// or the original BERT one of the reference's `tokenization.py` (Google's, as
/// DeepLearningExamples' TensorFlow copy has it: no NFC, special tokens split like any
/// text; tests/fixtures/squad/PORTING.md on the PyTorch copy, which differs there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BasicFlavour {
    Transformers,
    Original,
}

/// Step 3, BasicTokenizer.tokenize with do_lower_case.
fn basic_tokens(text: &str, flavour: BasicFlavour) -> Vec<String> {
    let mut cleaned = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if is_bert_whitespace(c) {
            cleaned.push(' ');
        } else if is_cjk(c) {
            cleaned.push(' ');
            cleaned.push(c);
            cleaned.push(' ');
        } else {
            cleaned.push(c);
        }
    }
    let normalized: String = match flavour {
        BasicFlavour::Transformers => cleaned.nfc().collect(),
        BasicFlavour::Original => cleaned,
    };
    let mut split_tokens: Vec<String> = Vec::new();
    for word in pystr::split(&normalized) {
        if flavour == BasicFlavour::Transformers && SPECIAL.contains(&word) {
            split_tokens.push(word.to_string());
            continue;
        }
        let lowered = pystr::lower(word);
        let stripped: String = lowered
            .nfd()
            .filter(|c| pystr::category(*c) != GeneralCategory::NonspacingMark)
            .collect();
        split_on_punctuation(&stripped, &mut split_tokens);
    }
    let joined = split_tokens.join(" ");
    pystr::split(&joined).map(str::to_string).collect()
}

fn split_on_punctuation(word: &str, out: &mut Vec<String>) {
    let mut current = String::new();
    for c in word.chars() {
        if is_punctuation(c) {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            out.push(c.to_string());
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
}

/// Step 4: WordPiece of one word, its ids appended to `ids`.
fn wordpiece(vocab: &Vocab, word: &str, ids: &mut Vec<u32>) {
    for token in pystr::split(word) {
        let chars: Vec<char> = token.chars().collect();
        if chars.len() > MAX_INPUT_CHARS_PER_WORD {
            ids.push(vocab.unk());
            continue;
        }
        let mark = ids.len();
        let mut start = 0;
        let mut piece = String::new();
        while start < chars.len() {
            let mut end = chars.len();
            let mut found = None;
            while start < end {
                piece.clear();
                if start > 0 {
                    piece.push_str("##");
                }
                piece.extend(&chars[start..end]);
                if let Some(id) = vocab.id(&piece) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => ids.push(id),
                None => {
                    ids.truncate(mark);
                    ids.push(vocab.unk());
                    break;
                }
            }
            start = end;
        }
    }
}

/// `tokenization.BasicTokenizer(do_lower_case=True).tokenize(text)`, which `get_final_text`
/// uses to line the answer up with the context: whole-word lowercasing (final sigma kept),
/// no special tokens, every C* character dropped. This is transformers' class with Google's
/// constructor, as the fixture's reference runs import it (its NFC pass changes nothing
/// once accents are stripped). Google's own copy keeps Co/Cn characters, and DeepLearningExamples'
/// PyTorch copy keeps `[SEP]`-like words whole (tests/fixtures/squad/PORTING.md §7).
pub fn original_basic_tokens(text: &str) -> Vec<String> {
    basic_tokens(text, BasicFlavour::Original)
}

/// The BasicTokenizer step of the slow `BertTokenizer` (transformers' class with the
/// special tokens as `never_split`): what `tokenize` hands to WordPiece.
pub fn transformers_basic_tokens(text: &str) -> Vec<String> {
    basic_tokens(text, BasicFlavour::Transformers)
}

/// `get_final_text`'s BasicTokenizer as a type ([`original_basic_tokens`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BasicTokenizer;

impl BasicTokenizer {
    pub fn tokenize(&self, text: &str) -> Vec<String> {
        original_basic_tokens(text)
    }
}

fn is_bert_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r') || pystr::category(c) == GeneralCategory::SpaceSeparator
}

fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && pystr::is_other(c)
}

fn is_punctuation(c: char) -> bool {
    let cp = c as u32;
    (33..=47).contains(&cp)
        || (58..=64).contains(&cp)
        || (91..=96).contains(&cp)
        || (123..=126).contains(&cp)
        || pystr::is_punctuation_category(c)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B820..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vectors;

    /// transformers' slow BertTokenizer and its BasicTokenizer (Google's constructor, as
    /// get_final_text builds it) on 621 strings: accents, CJK, Thai, Malayalam, combining
    /// marks, ß, İ, Σ, every kind of whitespace and control, [SEP] inside words, long words.
    #[test]
    fn tokens_are_the_slow_tokenizers() {
        let tokenizer = BertTokenizer::new(vectors::fixture_vocab());
        let entries = vectors::load("tokenizer");
        let mut wrong = Vec::new();
        for entry in &entries {
            let text = vectors::str_of(entry, "text");
            let ids: Vec<u32> = vectors::numbers(entry, "ids")
                .into_iter()
                .map(|id| id as u32)
                .collect();
            if tokenizer.tokenize(text) != ids {
                wrong.push(format!("{text:?}: {:?}", tokenizer.tokens(text)));
            }
            let basic = vectors::strings(entry, "basic");
            if original_basic_tokens(text) != basic {
                wrong.push(format!(
                    "basic {text:?}: {:?}, reference {basic:?}",
                    original_basic_tokens(text)
                ));
            }
        }
        vectors::assert_none_wrong("tokenize", entries.len(), &wrong);
    }

    #[test]
    fn hand_picked_strings() {
        let vocab = Vocab::from_lines(
            "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\n##b\ni\n##s\nσ\n##σ\nς\n[\n]\nsep\n",
        )
        .unwrap();
        let tokenizer = BertTokenizer::new(vocab);
        // Special tokens stay whole anywhere; a lower-case one is text.
        assert_eq!(
            tokenizer.tokens("a[SEP]b [sep]"),
            ["a", "[SEP]", "b", "[", "sep", "]"]
        );
        // Per-character lowercasing: no final sigma in the slow tokenizer...
        assert_eq!(tokenizer.tokens("ΣΣ"), ["σ", "##σ"]);
        // ...but get_final_text's BasicTokenizer lowercases the whole word.
        assert_eq!(original_basic_tokens("ΑΣ"), ["ας"]);
        // İ lowercases to i + U+0307, which accent stripping then drops.
        assert_eq!(tokenizer.tokens("İs"), ["i", "##s"]);
        // More than 100 characters: one [UNK]; no match at some position: one [UNK].
        assert_eq!(tokenizer.tokens(&"a".repeat(101)), ["[UNK]"]);
        assert_eq!(tokenizer.tokens("abx"), ["[UNK]"]);
        // NUL, Cf and Cc (\x1c too, though Python's split would split on it) are deleted;
        // U+2028 (Zl) is no BERT whitespace but Python's split splits on it.
        assert_eq!(
            tokenizer.tokens("a\u{0}b\u{200b}b\x1cb"),
            ["a", "##b", "##b", "##b"]
        );
        assert_eq!(tokenizer.tokens("a\u{2028}b"), ["a", "b"]);
    }
}
