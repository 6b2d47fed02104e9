//! Punkt's word tokens and their first, type-based annotation: `PunktLanguageVars`'
//! word-splitting expression (a run of dashes or dots, or a word up to whitespace, other
//! punctuation or a final comma, or any other single character) and `PunktToken`'s derived
//! properties, written out as scanners that make the same choices as Python's `re`.

use crate::params::PunktParameters;
use crate::pychar::{is_digit, is_space, is_word_not_digit};

/// `_re_non_word_chars`: characters that cannot appear within a word.
pub(crate) fn is_non_word(c: char) -> bool {
    matches!(
        c,
        ')' | '"' | ';' | '}' | ']' | '*' | ':' | '@' | '\'' | '(' | '{' | '[' | '?' | '!'
    )
}

/// `_re_word_start`'s complement: characters no word starts with.
fn cannot_start_word(c: char) -> bool {
    matches!(
        c,
        '(' | '"'
            | '`'
            | '{'
            | '['
            | ':'
            | ';'
            | '&'
            | '#'
            | '*'
            | '@'
            | ')'
            | '}'
            | ']'
            | '-'
            | ','
    )
}

/// `_re_multi_char_punct` (`-{2,}`, `\.{2,}`, `(?:\.\s){2,}\.`) at `at`: the length of the
/// first alternative that matches there, each as long as it can be.
fn multi_char_punct(line: &[char], at: usize) -> Option<usize> {
    let is = |i: usize, c: char| line.get(i) == Some(&c);
    for mark in ['-', '.'] {
        if is(at, mark) && is(at + 1, mark) {
            return Some(line[at..].iter().take_while(|&&c| c == mark).count());
        }
    }
    // Spaced dots: as many ". " pairs as there are, then a dot (one pair fewer if the last
    // pair's dot has to be the final one).
    let mut pairs = 0;
    while is(at + 2 * pairs, '.') && line.get(at + 2 * pairs + 1).is_some_and(|&c| is_space(c)) {
        pairs += 1;
    }
    if !is(at + 2 * pairs, '.') {
        pairs = pairs.saturating_sub(1);
    }
    (pairs >= 2).then_some(2 * pairs + 1)
}

/// Whether a word may end before `at` (the lookahead after the lazy `\S+?`).
fn word_ends_before(line: &[char], at: usize) -> bool {
    let Some(&c) = line.get(at) else {
        return true;
    };
    if is_space(c) || is_non_word(c) || multi_char_punct(line, at).is_some() {
        return true;
    }
    c == ',' && {
        match line.get(at + 1) {
            None => true,
            Some(&next) => {
                is_space(next) || is_non_word(next) || multi_char_punct(line, at + 1).is_some()
            }
        }
    }
}

/// `word_tokenize` of one line (the text holds no `\n`): the tokens, in order.
pub(crate) fn word_tokenize(line: &[char]) -> Vec<&[char]> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < line.len() {
        let len = if let Some(len) = multi_char_punct(line, i) {
            len
        } else if is_space(line[i]) {
            i += 1;
            continue;
        } else if !cannot_start_word(line[i]) {
            (i + 1..=line.len())
                .find(|&end| word_ends_before(line, end))
                .map_or(line.len(), |end| end)
                - i
        } else {
            1
        };
        tokens.push(&line[i..i + len]);
        i += len;
    }
    tokens
}

/// A word token and what the two annotation passes find of it.
#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub(crate) text: Vec<char>,
    /// Lowercase, or `##number##` for a number.
    pub(crate) typ: String,
    pub(crate) period_final: bool,
    pub(crate) sentbreak: bool,
    pub(crate) abbr: bool,
    pub(crate) ellipsis: bool,
}

impl Token {
    pub(crate) fn new(text: &[char]) -> Self {
        let lower: String = text.iter().collect::<String>().to_lowercase();
        let typ = if is_number(&lower.chars().collect::<Vec<_>>()) {
            "##number##".to_string()
        } else {
            lower
        };
        Self {
            text: text.to_vec(),
            typ,
            period_final: text.last() == Some(&'.'),
            sentbreak: false,
            abbr: false,
            ellipsis: false,
        }
    }

    pub(crate) fn type_no_period(&self) -> &str {
        match self.typ.strip_suffix('.') {
            Some(stem) if self.typ.chars().count() > 1 => stem,
            _ => &self.typ,
        }
    }

    pub(crate) fn type_no_sentperiod(&self) -> &str {
        if self.sentbreak {
            self.type_no_period()
        } else {
            &self.typ
        }
    }

    pub(crate) fn first_upper(&self) -> bool {
        self.text.first().is_some_and(|c| c.is_uppercase())
    }

    pub(crate) fn first_lower(&self) -> bool {
        self.text.first().is_some_and(|c| c.is_lowercase())
    }

    /// `\.\.+$`
    fn is_ellipsis(&self) -> bool {
        self.text.len() >= 2 && self.text.iter().all(|&c| c == '.')
    }

    /// `[^\W\d]\.$`: a letter and a period.
    pub(crate) fn is_initial(&self) -> bool {
        matches!(self.text[..], [c, '.'] if is_word_not_digit(c))
    }

    pub(crate) fn is(&self, text: &str) -> bool {
        self.text.iter().copied().eq(text.chars())
    }

    /// The first pass: `.`, `?` and `!` break sentences, dots are an ellipsis, and a word
    /// ending in a period is an abbreviation if the parameters know it, else a break.
    pub(crate) fn annotate_first_pass(&mut self, params: &PunktParameters) {
        if self.is(".") || self.is("?") || self.is("!") {
            self.sentbreak = true;
        } else if self.is_ellipsis() {
            self.ellipsis = true;
        } else if self.period_final && !self.text.ends_with(&['.', '.']) {
            let stem: String = self.text[..self.text.len() - 1]
                .iter()
                .collect::<String>()
                .to_lowercase();
            let last_part = stem.rsplit('-').next().unwrap_or_default();
            if params.abbrev_types.contains(&stem) || params.abbrev_types.contains(last_part) {
                self.abbr = true;
            } else {
                self.sentbreak = true;
            }
        }
    }
}

/// `_RE_NUMERIC` (`^-?[\.,]?\d[\d,\.-]*\.?$`) over the whole lowercase token.
fn is_number(text: &[char]) -> bool {
    let mut rest = text;
    if let ['-', tail @ ..] = rest {
        rest = tail;
    }
    if let ['.' | ',', tail @ ..] = rest {
        rest = tail;
    }
    match rest {
        [first, tail @ ..] if is_digit(*first) => tail
            .iter()
            .all(|&c| is_digit(c) || matches!(c, ',' | '.' | '-')),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let chars: Vec<char> = text.chars().collect();
        word_tokenize(&chars)
            .into_iter()
            .map(|t| t.iter().collect())
            .collect()
    }

    #[test]
    fn words_split_as_punkts_expression_splits_them() {
        assert_eq!(
            words("Mr. Smith, (aged 3.5) left..."),
            ["Mr.", "Smith", ",", "(", "aged", "3.5", ")", "left", "..."]
        );
        assert_eq!(
            words("a,b a, b end. . . x--y"),
            ["a,b", "a", ",", "b", "end", ". . .", "x", "--", "y"]
        );
        assert_eq!(words("\"Yes.\" ok?!"), ["\"", "Yes.", "\"", "ok", "?", "!"]);
    }

    #[test]
    fn numbers_are_one_type() {
        for number in ["3", "-3.5", ",5", "1,000.", "12-3"] {
            assert_eq!(
                Token::new(&number.chars().collect::<Vec<_>>()).typ,
                "##number##"
            );
        }
        for word in ["3a", "--3", "a3", "."] {
            assert_ne!(
                Token::new(&word.chars().collect::<Vec<_>>()).typ,
                "##number##"
            );
        }
    }
}
