//! Sentences, for ROUGE-Lsum: MLPerf's LLM accuracy scripts and the MLPerf Endpoints client
//! strip each text, split it with NLTK's `sent_tokenize` (the Punkt model trained for English)
//! and join the sentences with newlines; `rouge_score` then reads each line as a sentence.
//!
//! Punkt's trained model is not here, so this follows its rules rather than its statistics: a
//! sentence ends at `.`, `?` or `!` (a run of them, and any closing quotes or brackets after
//! them) followed by whitespace, except after an abbreviation it knows (`Dr.`, `e.g.`, ...), a
//! single-letter initial (`J. Smith`, but not `I`), or an ellipsis before a lowercase word.
//! Text that Punkt would split differently (an abbreviation outside the list, a number list)
//! can differ.

/// Abbreviations a period does not end a sentence after (lowercase, without the final
/// period): common English ones, as Punkt's English model has learnt.
const ABBREVIATIONS: &[&str] = &[
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "u.s", "u.k",
    "inc", "ltd", "co", "corp", "fig", "al", "approx", "dept", "est", "gen", "gov", "jan", "feb",
    "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "mt", "ft", "vol",
    "rev", "sen", "rep", "capt", "col", "lt", "sgt", "cf", "a.m", "p.m",
];

/// Closing characters that stay with the sentence they end.
fn closes(c: char) -> bool {
    matches!(c, '"' | '\'' | ')' | ']' | '}' | '\u{201d}' | '\u{2019}')
}

/// `text`'s sentences, each trimmed, none empty.
pub(crate) fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut k = 0;
    while k < chars.len() {
        let (_, c) = chars[k];
        if !matches!(c, '.' | '?' | '!') {
            k += 1;
            continue;
        }
        let mark = k;
        // The whole run of marks, then what closes the sentence.
        let mut end = k;
        while end + 1 < chars.len() && matches!(chars[end + 1].1, '.' | '?' | '!') {
            end += 1;
        }
        while end + 1 < chars.len() && closes(chars[end + 1].1) {
            end += 1;
        }
        k = end + 1;
        let Some(&(_, after)) = chars.get(end + 1) else {
            break;
        };
        if !after.is_whitespace() {
            continue;
        }
        let cut = chars[end].0 + chars[end].1.len_utf8();
        if !ends_sentence(text, &chars, start, mark, end, cut) {
            continue;
        }
        push_trimmed(&mut out, &text[start..cut]);
        start = cut;
    }
    push_trimmed(&mut out, &text[start..]);
    out
}

/// The sentences of `text` as NLTK's users join them for ROUGE-Lsum: stripped, one a line.
pub fn lines_of_sentences(text: &str) -> String {
    sentences(text.trim()).join("\n")
}

/// Whether the marks at `mark..=end` (ending at byte `cut`) end the sentence begun at byte
/// `start`.
fn ends_sentence(
    text: &str,
    chars: &[(usize, char)],
    start: usize,
    mark: usize,
    end: usize,
    cut: usize,
) -> bool {
    let marks: String = chars[mark..=end]
        .iter()
        .map(|&(_, c)| c)
        .filter(|c| matches!(c, '.' | '?' | '!'))
        .collect();
    if marks != "." {
        // `?`, `!`, or several marks: a break, but an ellipsis before a lowercase word.
        let ellipsis = marks.chars().all(|c| c == '.');
        return !(ellipsis && next_word_is_lowercase(&text[cut..]));
    }
    // A single period: not after an abbreviation or an initial.
    let word = text[start..chars[mark].0]
        .rsplit(|c: char| c.is_whitespace() || c == '(' || c == '"')
        .next()
        .unwrap_or("");
    let word = word.to_lowercase();
    // "I." ends a sentence far more often than it is an initial.
    let initial = word.chars().count() == 1 && word.chars().all(char::is_alphabetic) && word != "i";
    !(initial || ABBREVIATIONS.contains(&word.as_str()))
}

fn next_word_is_lowercase(rest: &str) -> bool {
    rest.trim_start()
        .chars()
        .next()
        .is_some_and(char::is_lowercase)
}

fn push_trimmed<'a>(out: &mut Vec<&'a str>, sentence: &'a str) {
    let sentence = sentence.trim();
    if !sentence.is_empty() {
        out.push(sentence);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_end_at_marks_followed_by_whitespace() {
        assert_eq!(
            sentences("The sky is blue.  It rains! Why? \"Because.\" Then (done.) end"),
            [
                "The sky is blue.",
                "It rains!",
                "Why?",
                "\"Because.\"",
                "Then (done.)",
                "end"
            ]
        );
        // A decimal point or a mark inside a word is no end.
        assert_eq!(
            sentences("Pi is 3.14 and x.y is a name. Next"),
            ["Pi is 3.14 and x.y is a name.", "Next"]
        );
    }

    #[test]
    fn abbreviations_initials_and_ellipses_before_lowercase_do_not_end_a_sentence() {
        assert_eq!(
            sentences("Dr. Smith met J. Doe, e.g. at noon. Wait... more. So... Yes."),
            [
                "Dr. Smith met J. Doe, e.g. at noon.",
                "Wait... more.",
                "So...",
                "Yes."
            ]
        );
        // "no" and "I" end sentences.
        assert_eq!(
            sentences("The answer is no. So did I. Then"),
            ["The answer is no.", "So did I.", "Then"]
        );
    }

    #[test]
    fn lines_are_stripped_sentences_and_nothing_makes_no_line() {
        assert_eq!(
            lines_of_sentences("  One. Two.\n\nThree  "),
            "One.\nTwo.\nThree"
        );
        assert_eq!(lines_of_sentences("   "), "");
        assert_eq!(lines_of_sentences("No mark at all"), "No mark at all");
    }
}
