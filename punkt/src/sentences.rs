//! `PunktSentenceTokenizer.span_tokenize` with realigned boundaries, as `sent_tokenize` calls
//! it: find each `.`, `?` or `!` followed by other punctuation or by whitespace and a token,
//! decide from the words around it whether it ends a sentence (the first pass by type, the
//! second by collocations, sentence starters and orthographic context), then move closing
//! quotes and brackets after a break into the sentence they close.

use crate::params::{PunktParameters, ORTHO_BEG_LC, ORTHO_LC, ORTHO_MID_UC, ORTHO_UC};
use crate::pychar::{is_ascii_whitespace, is_space, rstripped_len};
use crate::words::{is_non_word, word_tokenize, Token};

/// A possible sentence end: the mark's position, and what follows it in the lookahead
/// (`after_tok`; `next_tok` where it is whitespace and a token).
struct EndContext {
    mark: usize,
    after_end: usize,
    next_token: Option<usize>,
}

/// NLTK's Punkt sentence splitter over one language's parameters.
#[derive(Debug, Clone)]
pub struct SentenceTokenizer {
    params: PunktParameters,
}

/// The orthographic heuristic's answer: the word starts a sentence, does not, or cannot tell.
#[derive(PartialEq)]
enum Starter {
    Yes,
    No,
    Unknown,
}

impl SentenceTokenizer {
    pub fn new(params: PunktParameters) -> Self {
        Self { params }
    }

    /// `sent_tokenize(text)`: the sentences, slices of `text`.
    pub fn sentences<'a>(&self, text: &'a str) -> Vec<&'a str> {
        let bytes: Vec<usize> = text
            .char_indices()
            .map(|(b, _)| b)
            .chain(std::iter::once(text.len()))
            .collect();
        let count = bytes.len() - 1;
        self.spans(text)
            .into_iter()
            .map(|(start, end)| {
                let (start, end) = (start.min(count), end.min(count));
                &text[bytes[start]..bytes[end.max(start)]]
            })
            .collect()
    }

    /// `span_tokenize(text)`: each sentence's start and end, in characters (Python's indices).
    pub fn spans(&self, text: &str) -> Vec<(usize, usize)> {
        let chars: Vec<char> = text.chars().collect();
        let slices = self.slices_from_text(&chars);
        realign_boundaries(&chars, &slices)
    }

    fn slices_from_text(&self, text: &[char]) -> Vec<(usize, usize)> {
        let mut slices = Vec::new();
        let mut last_break = 0;
        for (context, end) in potential_end_contexts(text) {
            if self.contains_sentbreak(&end_context_text(text, &context, end)) {
                slices.push((last_break, context.mark + 1));
                last_break = context.next_token.unwrap_or(context.mark + 1);
            }
        }
        slices.push((last_break, rstripped_len(text)));
        slices
    }

    /// `text_contains_sentbreak`: some token but the last is annotated a sentence break.
    fn contains_sentbreak(&self, text: &[char]) -> bool {
        let mut tokens: Vec<Token> = text
            .split(|&c| c == '\n')
            .filter(|line| line.iter().any(|&c| !is_space(c)))
            .flat_map(word_tokenize)
            .map(Token::new)
            .collect();
        for token in &mut tokens {
            token.annotate_first_pass(&self.params);
        }
        for i in 0..tokens.len().saturating_sub(1) {
            let (head, tail) = tokens.split_at_mut(i + 1);
            self.annotate_second_pass(&mut head[i], &tail[0]);
        }
        tokens.iter().rev().skip(1).any(|token| token.sentbreak)
    }

    /// The token-based pass over a token and the next (section 4 of Kiss and Strunk).
    fn annotate_second_pass(&self, token: &mut Token, next: &Token) {
        if !token.period_final {
            return;
        }
        let typ = token.type_no_period().to_string();
        let next_typ = next.type_no_sentperiod();
        let initial = token.is_initial();
        let params = &self.params;
        if params
            .collocations
            .contains(&(typ.clone(), next_typ.to_string()))
        {
            token.sentbreak = false;
            token.abbr = true;
            return;
        }
        let abbreviation = (token.abbr || token.ellipsis) && !initial;
        if abbreviation
            && (self.ortho_heuristic(next) == Starter::Yes
                || (next.first_upper() && params.sent_starters.contains(next_typ)))
        {
            token.sentbreak = true;
            return;
        }
        if initial || typ == "##number##" {
            let starter = self.ortho_heuristic(next);
            if starter == Starter::No
                || (starter == Starter::Unknown
                    && initial
                    && next.first_upper()
                    && params.ortho(next_typ) & ORTHO_LC == 0)
            {
                token.sentbreak = false;
                token.abbr = true;
            }
        }
    }

    /// Whether `token` starts a sentence, from the cases its type was seen in.
    fn ortho_heuristic(&self, token: &Token) -> Starter {
        if [";", ":", ",", ".", "!", "?"].iter().any(|p| token.is(p)) {
            return Starter::No;
        }
        let context = self.params.ortho(token.type_no_sentperiod());
        if token.first_upper() && context & ORTHO_LC != 0 && context & ORTHO_MID_UC == 0 {
            return Starter::Yes;
        }
        if token.first_lower() && (context & ORTHO_UC != 0 || context & ORTHO_BEG_LC == 0) {
            return Starter::No;
        }
        Starter::Unknown
    }
}

/// Every `[.?!]` followed by other punctuation, or by whitespace and a token (the period
/// context expression, one mark a match).
fn end_marks(text: &[char]) -> impl Iterator<Item = EndContext> + '_ {
    (0..text.len()).filter_map(|mark| {
        if !matches!(text[mark], '.' | '?' | '!') {
            return None;
        }
        let next = *text.get(mark + 1)?;
        if is_non_word(next) {
            return Some(EndContext {
                mark,
                after_end: mark + 2,
                next_token: None,
            });
        }
        if !is_space(next) {
            return None;
        }
        let token = (mark + 1..text.len()).find(|&i| !is_space(text[i]))?;
        let end = (token..text.len())
            .find(|&i| is_space(text[i]))
            .unwrap_or(text.len());
        Some(EndContext {
            mark,
            after_end: end,
            next_token: Some(token),
        })
    })
}

/// `_match_potential_end_contexts`: each mark with the start of the word before it, the
/// marks whose word overlaps the next mark's dropped (so `!!!` is decided once, at its last).
fn potential_end_contexts(text: &[char]) -> Vec<(EndContext, usize)> {
    let mut contexts = Vec::new();
    let mut previous: Option<(EndContext, (usize, usize))> = None;
    let mut previous_slice = (0, 0);
    for context in end_marks(text) {
        let before = &text[previous_slice.1..context.mark];
        // The last whitespace's index, 0 if there is none (or it is the first character).
        let last_space = before
            .iter()
            .rposition(|&c| is_ascii_whitespace(c))
            .unwrap_or(0);
        let word_start = if last_space != 0 {
            last_space + previous_slice.1 + 1
        } else {
            previous_slice.0
        };
        let word = (word_start, context.mark);
        if let Some((match_, slice)) = previous.take() {
            if slice.1 <= word.0 {
                contexts.push((match_, slice.0));
            }
        }
        previous = Some((context, word));
        previous_slice = word;
    }
    if let Some((match_, slice)) = previous {
        contexts.push((match_, slice.0));
    }
    contexts
}

/// The word before the mark, the mark, and what follows it.
fn end_context_text(text: &[char], context: &EndContext, word_start: usize) -> Vec<char> {
    let mut out = text[word_start..context.mark].to_vec();
    out.extend_from_slice(&text[context.mark..context.after_end.min(text.len())]);
    out
}

/// Python's `text[start:stop]` bounds.
fn clamp(len: usize, (start, stop): (usize, usize)) -> (usize, usize) {
    let stop = stop.min(len);
    (start.min(stop), stop)
}

/// `_realign_boundaries`: closing quotes and brackets after a break (then whitespace, `--` or
/// the end of a line) join the sentence they close.
fn realign_boundaries(text: &[char], slices: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut realign = 0;
    for (i, &(start, stop)) in slices.iter().enumerate() {
        let sentence = (start + realign, stop);
        let non_empty = {
            let (s, e) = clamp(text.len(), sentence);
            s < e
        };
        let Some(&next) = slices.get(i + 1) else {
            if non_empty {
                out.push(sentence);
            }
            continue;
        };
        let (s, e) = clamp(text.len(), next);
        match closing_run(&text[s..e]) {
            Some((closing, end)) => {
                out.push((sentence.0, next.0 + closing));
                realign = end;
            }
            None => {
                realign = 0;
                if non_empty {
                    out.push(sentence);
                }
            }
        }
    }
    out
}

/// `re_boundary_realignment.match`: the fewest closing characters followed by whitespace
/// (taken too), `--` or a line's end; their count and where the match ends.
fn closing_run(text: &[char]) -> Option<(usize, usize)> {
    let mut k = 0;
    loop {
        if !matches!(text.get(k), Some('"' | '\'' | ')' | ']' | '}')) {
            return None;
        }
        k += 1;
        match text.get(k) {
            Some(&c) if is_space(c) => {
                let end = (k..text.len())
                    .find(|&i| !is_space(text[i]))
                    .unwrap_or(text.len());
                return Some((k, end));
            }
            Some('-') if text.get(k + 1) == Some(&'-') => return Some((k, k)),
            None => return Some((k, k)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn english_like() -> SentenceTokenizer {
        SentenceTokenizer::new(PunktParameters::new(
            ["mr", "dr", "u.s", "e.g", "inc"],
            [("##number##", "international")],
            ["the", "and"],
            [("smith", 2), ("and", 16 | 32), ("i", 32 | 4)],
        ))
    }

    #[test]
    fn abbreviations_do_not_end_sentences_and_brackets_stay() {
        let punkt = english_like();
        assert_eq!(
            punkt.sentences("Mr. Smith went to the U.S. on Monday. He left. (He did.) Then?"),
            [
                "Mr. Smith went to the U.S. on Monday.",
                "He left.",
                "(He did.)",
                "Then?"
            ]
        );
        assert_eq!(
            punkt.sentences("  Very bad acting!!! I promise.  "),
            ["  Very bad acting!!!", "I promise."]
        );
        assert!(punkt.sentences("").is_empty());
        // An initial before an unknown capitalised word is no break; a word is (NLTK 3.8.1).
        assert_eq!(punkt.spans("A b. Cé d"), [(0, 9)]);
        assert_eq!(punkt.spans("A bc. Cé d"), [(0, 5), (6, 10)]);
    }
}
