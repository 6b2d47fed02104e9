//! The 42 characters whisper's answers are scored in (`accuracy_eval.py`'s `labels`, the
//! reference SUT's `labels_dict`): a space, `a`-`z`, `'`, `0`-`9`, `$`, `%`, `+`, `-`. The
//! SUT logs an answer as the int64 indices of its characters; the scorer turns the indices
//! back into text, and filters the manifest's transcripts to the same characters.

use crate::WhisperError;

/// The labels in index order.
pub const LABELS: [char; 42] = [
    ' ', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r',
    's', 't', 'u', 'v', 'w', 'x', 'y', 'z', '\'', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9',
    '$', '%', '+', '-',
];

/// The index of `c` among the labels, if it is one.
pub fn label_index(c: char) -> Option<u8> {
    match c {
        ' ' => Some(0),
        'a'..='z' => Some(c as u8 - b'a' + 1),
        '\'' => Some(27),
        '0'..='9' => Some(c as u8 - b'0' + 28),
        '$' => Some(38),
        '%' => Some(39),
        '+' => Some(40),
        '-' => Some(41),
        _ => None,
    }
}

/// The reference SUT's answer: `text.lower().strip()`, each character that is a label kept
/// as its index, the others dropped.
pub fn answer_labels(text: &str) -> Vec<u8> {
    text.to_lowercase()
        .trim_matches(is_python_space)
        .chars()
        .filter_map(label_index)
        .collect()
}

/// The manifest's transcripts as `Manifest.parse_transcript` keeps them: the characters that
/// are labels, in order (no lowercasing: the convert script lowercased them).
pub fn label_text(text: &str) -> String {
    text.chars().filter(|c| label_index(*c).is_some()).collect()
}

/// A logged answer's indices back to its text, as `__gather_predictions` does; an index
/// that is no label is an error (the script stops on it with a KeyError).
pub fn text_of_labels(indices: &[i64]) -> Result<String, WhisperError> {
    indices
        .iter()
        .map(|&index| {
            usize::try_from(index)
                .ok()
                .and_then(|i| LABELS.get(i).copied())
                .ok_or_else(|| {
                    WhisperError::Invalid(format!(
                        "label index {index} is not one of the 42 labels (0-41)"
                    ))
                })
        })
        .collect()
}

/// Python's `str.isspace`: Unicode's White_Space and the four ASCII separators U+001C-U+001F.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_are_the_labels_positions() {
        for (index, c) in LABELS.iter().enumerate() {
            assert_eq!(label_index(*c), Some(index as u8), "{c:?}");
        }
        assert_eq!(label_index('A'), None);
        assert_eq!(label_index('.'), None);
    }

    #[test]
    fn indices_outside_the_labels_are_refused() {
        assert_eq!(text_of_labels(&[8, 9, 0, 38, 29]).unwrap(), "hi $1");
        let error = text_of_labels(&[1, 42]).unwrap_err().to_string();
        assert!(error.contains("42"), "{error}");
        assert!(text_of_labels(&[-1]).is_err());
    }
}
