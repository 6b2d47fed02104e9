//! Native pieces of the MLPerf bert benchmark (SQuAD v1.1), written so that their results
//! equal the Python reference's (mlcommons/inference `language/bert`, b66003e1, with
//! transformers 4.57's slow `BertTokenizer`):
//!
//! * [`dataset`]: `dev-v1.1.json` read as `read_squad_examples` reads it (its own whitespace
//!   rule, which adds U+202F to the four ASCII ones).
//! * [`vocab`] and [`tokenize`]: the WordPiece vocabulary and the slow tokenizer (special
//!   tokens kept whole, per-character lowercasing, BasicTokenizer's cleaning, CJK spacing, NFC,
//!   accent stripping and punctuation split, greedy longest-match WordPiece).
//! * [`features`]: `convert_examples_to_features` at max_seq_length 384, doc_stride 128,
//!   max_query_length 64, with each span's max-context positions.
//! * [`predict`]: `accuracy-squad.py`'s `write_predictions`: the n-best spans of each question
//!   over its features and `get_final_text`'s projection back to the context.
//! * [`evaluate`]: `evaluate_v1.1.py`'s normalisation, exact match and F1, and its line.
//! * [`log`]: a logged response's logits as the script decodes them.
//!
//! Unicode facts (categories, normalisation) come from the `unicode-general-category` and
//! `unicode-normalization` crates, whose Unicode version is newer than Python 3.11's (14.0):
//! characters assigned since then may be classed differently; none is in SQuAD's dev set.

pub mod dataset;
mod error;
pub mod evaluate;
pub mod features;
mod final_text;
pub mod log;
pub mod predict;
mod pyjson;
pub mod pystr;
pub mod tokenize;
#[cfg(test)]
mod vectors;
pub mod vocab;

pub use error::SquadError;
