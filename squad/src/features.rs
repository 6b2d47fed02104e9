//! `convert_examples_to_features` (the reference's `create_squad_data.py`, not training):
//! each question's tokens (at most `max_query_length`) and its paragraph's word pieces in
//! spans of at most `max_seq_length - query - 3` tokens, `doc_stride` apart; each span one
//! feature `[CLS] question [SEP] span [SEP]`, zero-padded, its `unique_id` counting from
//! 1,000,000,000.

use std::sync::Arc;

use crate::dataset::SquadDataset;
use crate::tokenize::BertTokenizer;

const FIRST_UNIQUE_ID: u64 = 1_000_000_000;

/// A paragraph's words, their word pieces, and each piece's word.
type ParagraphPieces = (Arc<[String]>, Vec<u32>, Vec<u32>);

/// squad_QSL.py's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureSettings {
    pub max_seq_length: usize,
    pub doc_stride: usize,
    pub max_query_length: usize,
}

impl Default for FeatureSettings {
    fn default() -> Self {
        FeatureSettings {
            max_seq_length: 384,
            doc_stride: 128,
            max_query_length: 64,
        }
    }
}

/// One feature, kept small (the real set has 10,833): token ids only, every token being a
/// vocabulary entry, so the strings come back through the vocabulary.
#[derive(Debug, Clone, PartialEq)]
pub struct Feature {
    pub unique_id: u64,
    pub example_index: usize,
    pub doc_span_index: usize,
    /// `[CLS] question [SEP] span [SEP]`, unpadded.
    pub token_ids: Vec<u32>,
    /// The tokens of segment 0: `[CLS] question [SEP]`.
    pub query_len: usize,
    /// For each span token (feature position `query_len + k`), its word in the paragraph
    /// (`token_to_orig_map`).
    pub token_to_orig: Vec<u32>,
    /// For each span token, whether this span is its max-context one
    /// (`token_is_max_context`).
    pub max_context: Vec<bool>,
}

impl Feature {
    /// `token_to_orig_map[position]`: the paragraph word of a span position.
    pub fn orig_word(&self, position: usize) -> Option<usize> {
        let k = position.checked_sub(self.query_len)?;
        self.token_to_orig.get(k).map(|&w| w as usize)
    }

    /// `token_is_max_context.get(position, False)`.
    pub fn is_max_context(&self, position: usize) -> bool {
        position
            .checked_sub(self.query_len)
            .and_then(|k| self.max_context.get(k).copied())
            .unwrap_or(false)
    }

    /// input_ids, input_mask and segment_ids, each `max_seq_length` long, one after the
    /// other into `out` (int64 `[3, max_seq_length]`).
    pub fn write_inputs(&self, settings: &FeatureSettings, out: &mut [i64]) {
        let width = settings.max_seq_length;
        out[..3 * width].fill(0);
        let (ids, rest) = out.split_at_mut(width);
        let (mask, segments) = rest.split_at_mut(width);
        for (k, &id) in self.token_ids.iter().enumerate().take(width) {
            ids[k] = i64::from(id);
            mask[k] = 1;
            segments[k] = i64::from(k >= self.query_len);
        }
    }
}

/// Every feature of `dataset`, in order.
pub fn convert(
    dataset: &SquadDataset,
    tokenizer: &BertTokenizer,
    settings: &FeatureSettings,
) -> Vec<Feature> {
    let vocab = tokenizer.vocab();
    let mut features = Vec::new();
    let mut unique_id = FIRST_UNIQUE_ID;
    // Questions of one paragraph share its words: their pieces are made once.
    let mut cached: Option<ParagraphPieces> = None;
    for (example_index, example) in dataset.examples.iter().enumerate() {
        let mut query = tokenizer.tokenize(&example.question_text);
        query.truncate(settings.max_query_length);
        let words = &example.doc_tokens;
        if cached
            .as_ref()
            .is_none_or(|(at, _, _)| !Arc::ptr_eq(at, words))
        {
            let mut pieces = Vec::new();
            let mut piece_word = Vec::new();
            for (i, word) in words.iter().enumerate() {
                tokenizer.tokenize_into(word, &mut pieces);
                piece_word.resize(pieces.len(), i as u32);
            }
            cached = Some((Arc::clone(words), pieces, piece_word));
        }
        let (_, pieces, piece_word) = cached.as_ref().expect("made above");
        let spans = doc_spans(
            pieces.len(),
            settings.max_seq_length.saturating_sub(query.len() + 3),
            settings.doc_stride,
        );
        for (doc_span_index, &(start, length)) in spans.iter().enumerate() {
            let mut token_ids = Vec::with_capacity(query.len() + length + 3);
            token_ids.push(vocab.cls());
            token_ids.extend(&query);
            token_ids.push(vocab.sep());
            let query_len = token_ids.len();
            token_ids.extend(&pieces[start..start + length]);
            token_ids.push(vocab.sep());
            features.push(Feature {
                unique_id,
                example_index,
                doc_span_index,
                token_ids,
                query_len,
                token_to_orig: piece_word[start..start + length].to_vec(),
                max_context: (start..start + length)
                    .map(|position| is_max_context(&spans, doc_span_index, position))
                    .collect(),
            });
            unique_id += 1;
        }
    }
    features
}

/// The spans `(start, length)` over `tokens` word pieces: none when there are none.
fn doc_spans(tokens: usize, max_tokens_for_doc: usize, doc_stride: usize) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    while start < tokens {
        let length = (tokens - start).min(max_tokens_for_doc);
        spans.push((start, length));
        if start + length == tokens || length == 0 {
            break;
        }
        start += length.min(doc_stride);
    }
    spans
}

/// `_check_is_max_context`: whether span `current` is where `position` has the most context
/// (min of left and right context, plus 0.01 per span token; the first best wins).
fn is_max_context(spans: &[(usize, usize)], current: usize, position: usize) -> bool {
    let mut best: Option<(f64, usize)> = None;
    for (index, &(start, length)) in spans.iter().enumerate() {
        let end = start + length - 1;
        if position < start || position > end {
            continue;
        }
        let left = position - start;
        let right = end - position;
        let score = left.min(right) as f64 + 0.01 * length as f64;
        if best.is_none_or(|(best_score, _)| score > best_score) {
            best = Some((score, index));
        }
    }
    best.map(|(_, index)| index) == Some(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vectors;

    /// _check_is_max_context on 150 span layouts (random lengths, window and stride).
    #[test]
    fn max_context_is_the_references() {
        let entries = vectors::load("max_context");
        let mut wrong = Vec::new();
        for entry in &entries {
            let spans: Vec<(usize, usize)> = entry["spans"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    (
                        s[0].as_u64().unwrap() as usize,
                        s[1].as_u64().unwrap() as usize,
                    )
                })
                .collect();
            let positions = vectors::numbers(entry, "positions");
            let best = vectors::numbers(entry, "max_span");
            for (&position, &best) in positions.iter().zip(&best) {
                let got: Vec<usize> = (0..spans.len())
                    .filter(|&span| is_max_context(&spans, span, position as usize))
                    .collect();
                if got != [best as usize] {
                    wrong.push(format!(
                        "{spans:?} at {position}: {got:?}, reference {best}"
                    ));
                }
            }
        }
        vectors::assert_none_wrong("max context", entries.len(), &wrong);
    }

    #[test]
    fn spans_slide_by_the_stride_and_end_at_the_last_piece() {
        assert_eq!(doc_spans(0, 317, 128), []);
        assert_eq!(doc_spans(317, 317, 128), [(0, 317)]);
        assert_eq!(doc_spans(500, 317, 128), [(0, 317), (128, 317), (256, 244)]);
        assert_eq!(doc_spans(10, 4, 8), [(0, 4), (4, 4), (8, 2)]);
    }
}
