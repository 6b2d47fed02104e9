//! Python's character classes, as `re` (Unicode patterns) and `str` methods read them: NLTK's
//! regular expressions and tests are written in them, and Rust's own classes differ at the
//! edges (`\s` of U+001C-U+001F, `\w` of combining marks).

use unicode_general_category::{get_general_category, GeneralCategory as G};

/// `re`'s `\s` and `str.isspace()`: ASCII's whitespace with the information separators
/// U+001C-U+001F, and Unicode's (bidirectional class WS, B or S, or category Zs).
pub(crate) fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\u{0b}'
            | '\u{0c}'
            | '\r'
            | '\u{1c}'..='\u{1f}'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// `string.whitespace`: ASCII's six only (NLTK looks for the last space of a word with it).
pub(crate) fn is_ascii_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{0b}' | '\u{0c}')
}

/// `[^\W\d]`: a word character (`\w`: letters, numbers, `_`) that is no decimal digit.
pub(crate) fn is_word_not_digit(c: char) -> bool {
    c == '_'
        || matches!(
            get_general_category(c),
            G::UppercaseLetter
                | G::LowercaseLetter
                | G::TitlecaseLetter
                | G::ModifierLetter
                | G::OtherLetter
                | G::LetterNumber
                | G::OtherNumber
        )
}

/// `\d`: a decimal digit (category Nd).
pub(crate) fn is_digit(c: char) -> bool {
    get_general_category(c) == G::DecimalNumber
}

/// `str.rstrip()`'s length in characters.
pub(crate) fn rstripped_len(text: &[char]) -> usize {
    text.iter()
        .rposition(|&c| !is_space(c))
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_python_not_rust() {
        // Python's \s takes the information separators; Rust's char::is_whitespace does not.
        assert!(is_space('\u{1c}') && !'\u{1c}'.is_whitespace());
        assert!(is_space('\u{202f}') && is_space('\u{85}'));
        assert!(!is_space('\u{200b}'));
        assert!(is_word_not_digit('é') && is_word_not_digit('²') && is_word_not_digit('_'));
        assert!(!is_word_not_digit('7') && !is_word_not_digit('\u{0301}'));
        assert!(is_digit('٣') && !is_digit('²'));
        assert_eq!(rstripped_len(&['a', ' ', '\u{3000}']), 1);
    }
}
