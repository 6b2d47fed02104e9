//! `whisper.normalizers.EnglishTextNormalizer` (openai-whisper 20250625), which
//! `accuracy_eval.py` runs on every answer and transcript before counting word errors.
//!
//! It is ported for the text the scorer hands it: characters of the 42 labels (a space,
//! `a`-`z`, `'`, digits, `$ % + -`), which both sides are filtered to first. On that
//! alphabet lowercasing, the bracket rules and NFKD are the identity, and the symbol rule
//! makes `'`, `+` and `-` spaces; [`EnglishTextNormalizer::normalize`] refuses any other
//! character rather than guess what Python's Unicode tables would do with it.

mod numbers;
mod spelling;

use std::sync::LazyLock;

use regex::Regex;

pub use spelling::{SpellingMap, SPELLING_MAP_IN_PACKAGE};

use crate::labels::label_index;
use crate::WhisperError;

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("the normaliser's patterns are valid")
}

static FILLERS: LazyLock<Regex> = LazyLock::new(|| regex(r"\b(hmm|mm|mhm|mmm|uh|um)\b"));
static SPACE_APOSTROPHE: LazyLock<Regex> = LazyLock::new(|| regex(r"\s+'"));
static SYMBOL_BEFORE_NON_DIGIT: LazyLock<Regex> = LazyLock::new(|| regex(r"[.$¢€£]([^0-9])"));
static PERCENT_AFTER_NON_DIGIT: LazyLock<Regex> = LazyLock::new(|| regex(r"([^0-9])%"));
static SPACES: LazyLock<Regex> = LazyLock::new(|| regex(r"\s+"));

/// The contractions and abbreviations, applied in this order.
const REPLACERS: [(&str, &str); 49] = [
    // common contractions
    (r"\bwon't\b", "will not"),
    (r"\bcan't\b", "can not"),
    (r"\blet's\b", "let us"),
    (r"\bain't\b", "aint"),
    (r"\by'all\b", "you all"),
    (r"\bwanna\b", "want to"),
    (r"\bgotta\b", "got to"),
    (r"\bgonna\b", "going to"),
    (r"\bi'ma\b", "i am going to"),
    (r"\bimma\b", "i am going to"),
    (r"\bwoulda\b", "would have"),
    (r"\bcoulda\b", "could have"),
    (r"\bshoulda\b", "should have"),
    (r"\bma'am\b", "madam"),
    // titles and prefixes
    (r"\bmr\b", "mister "),
    (r"\bmrs\b", "missus "),
    (r"\bst\b", "saint "),
    (r"\bdr\b", "doctor "),
    (r"\bprof\b", "professor "),
    (r"\bcapt\b", "captain "),
    (r"\bgov\b", "governor "),
    (r"\bald\b", "alderman "),
    (r"\bgen\b", "general "),
    (r"\bsen\b", "senator "),
    (r"\brep\b", "representative "),
    (r"\bpres\b", "president "),
    (r"\brev\b", "reverend "),
    (r"\bhon\b", "honorable "),
    (r"\basst\b", "assistant "),
    (r"\bassoc\b", "associate "),
    (r"\blt\b", "lieutenant "),
    (r"\bcol\b", "colonel "),
    (r"\bjr\b", "junior "),
    (r"\bsr\b", "senior "),
    (r"\besq\b", "esquire "),
    // perfect tenses
    (r"'d been\b", " had been"),
    (r"'s been\b", " has been"),
    (r"'d gone\b", " had gone"),
    (r"'s gone\b", " has gone"),
    (r"'d done\b", " had done"),
    (r"'s got\b", " has got"),
    // general contractions
    (r"n't\b", " not"),
    (r"'re\b", " are"),
    (r"'s\b", " is"),
    (r"'d\b", " would"),
    (r"'ll\b", " will"),
    (r"'t\b", " not"),
    (r"'ve\b", " have"),
    (r"'m\b", " am"),
];

static COMPILED_REPLACERS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    REPLACERS
        .iter()
        .map(|(pattern, replacement)| (regex(pattern), *replacement))
        .collect()
});

/// The normaliser, with its spelling map.
#[derive(Debug, Clone)]
pub struct EnglishTextNormalizer {
    spelling: SpellingMap,
}

impl EnglishTextNormalizer {
    pub fn new(spelling: SpellingMap) -> EnglishTextNormalizer {
        EnglishTextNormalizer { spelling }
    }

    /// `EnglishTextNormalizer()(text)` for text of the labels.
    pub fn normalize(&self, text: &str) -> Result<String, WhisperError> {
        if let Some(c) = text.chars().find(|c| label_index(*c).is_none()) {
            return Err(WhisperError::Invalid(format!(
                "{c:?} is not one of the 42 labels: the normaliser is ported for label text only"
            )));
        }
        let s = FILLERS.replace_all(text, "");
        let mut s = SPACE_APOSTROPHE.replace_all(&s, "'").into_owned();
        for (pattern, replacement) in COMPILED_REPLACERS.iter() {
            s = pattern.replace_all(&s, *replacement).into_owned();
        }
        // Commas between digits and periods are not labels; the symbol rule keeps the
        // numeric symbols and makes the other labels that are no letter or digit spaces.
        let s: String = s
            .chars()
            .map(|c| match c {
                '\'' | '+' | '-' => ' ',
                c => c,
            })
            .collect();
        let s = numbers::standardize_numbers(&s);
        let s = self.spelling.apply(&s);
        let s = SYMBOL_BEFORE_NON_DIGIT.replace_all(&s, " ${1}");
        let s = PERCENT_AFTER_NON_DIGIT.replace_all(&s, "${1} ");
        Ok(SPACES.replace_all(&s, " ").into_owned())
    }
}
