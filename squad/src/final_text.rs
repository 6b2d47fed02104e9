//! `get_final_text`: the predicted word pieces' text (lowercased, accents stripped) found in
//! the original BasicTokenizer's rendering of the context words, and mapped back through
//! the space-free characters of both to the original text; the whole original span when
//! the two do not line up.

use crate::tokenize::original_basic_tokens;

pub(crate) fn final_text(pred_text: &str, orig_text: &str) -> String {
    let tok_text: Vec<char> = original_basic_tokens(orig_text).join(" ").chars().collect();
    let pred: Vec<char> = pred_text.chars().collect();
    let Some(start) = find(&tok_text, &pred) else {
        return orig_text.to_string();
    };
    // `start + len(pred_text) - 1`: with an empty prediction, one before the start.
    let end = (start + pred.len()).checked_sub(1);
    let orig: Vec<char> = orig_text.chars().collect();
    let (orig_ns, orig_ns_to_s) = strip_spaces(&orig);
    let (tok_ns, tok_ns_to_s) = strip_spaces(&tok_text);
    if orig_ns != tok_ns {
        return orig_text.to_string();
    }
    // tok_s_to_ns: the space-free index of each non-space character of tok_text.
    let to_ns = |s: usize| tok_ns_to_s.binary_search(&s).ok();
    let Some(orig_start) = to_ns(start).and_then(|ns| orig_ns_to_s.get(ns).copied()) else {
        return orig_text.to_string();
    };
    let Some(orig_end) = end
        .and_then(to_ns)
        .and_then(|ns| orig_ns_to_s.get(ns).copied())
    else {
        return orig_text.to_string();
    };
    if orig_end < orig_start {
        return String::new();
    }
    orig[orig_start..=orig_end].iter().collect()
}

/// The characters other than U+0020, and where each was.
fn strip_spaces(text: &[char]) -> (usize, Vec<usize>) {
    let map: Vec<usize> = (0..text.len()).filter(|&i| text[i] != ' ').collect();
    (map.len(), map)
}

/// `haystack.find(needle)` in characters.
fn find(haystack: &[char], needle: &[char]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::final_text;
    use crate::vectors;

    /// accuracy-squad.py's get_final_text on 1,000 (pred_text, orig_text) pairs, most built
    /// as write_predictions builds them, about two thirds falling back to orig_text.
    #[test]
    fn final_text_is_the_scripts() {
        let entries = vectors::load("final_text");
        let mut wrong = Vec::new();
        for entry in &entries {
            let pred = vectors::str_of(entry, "pred_text");
            let orig = vectors::str_of(entry, "orig_text");
            let want = vectors::str_of(entry, "final_text");
            let got = final_text(pred, orig);
            if got != want {
                wrong.push(format!("{pred:?} in {orig:?}: {got:?}, reference {want:?}"));
            }
        }
        vectors::assert_none_wrong("get_final_text", entries.len(), &wrong);
    }

    #[test]
    fn the_fallbacks() {
        // Aligned: the original casing and accents, the trailing "'s" left out.
        assert_eq!(final_text("steve smith", "Steve Smith's"), "Steve Smith");
        assert_eq!(final_text("cafe", "Café,"), "Café");
        // Not found: the whole span.
        assert_eq!(final_text("[UNK]", "x\u{1F642}y"), "x\u{1F642}y");
        // Found, but stripping a decomposed accent shortened the text.
        assert_eq!(final_text("cafe", "cafe\u{301},"), "cafe\u{301},");
        // Found, but U+00A0 is no U+0020 to _strip_spaces.
        assert_eq!(final_text("100", "100\u{a0}MB"), "100\u{a0}MB");
        // An empty prediction: find gives 0, end -1 has no mapping.
        assert_eq!(final_text("", "abc"), "abc");
    }
}
