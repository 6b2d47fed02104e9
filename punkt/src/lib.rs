//! NLTK's Punkt sentence splitter, as `nltk.sent_tokenize(text)` runs it in MLPerf's LLM
//! accuracy scripts (llama3.1-8b's and llama2-70b's `evaluation.py`, whose ROUGE-Lsum and
//! `gen_len` depend on where sentences end): the same spans for the same parameters.
//!
//! The parameters are a language's trained Punkt model, read from the `punkt_tab` folder NLTK
//! downloads (`PunktParameters::read_punkt_tab`). The algorithm is NLTK 3.8.1's and 3.9's
//! (identical in both): Python's character classes and `re` choices are reproduced, not
//! approximated with Rust's (`pychar.rs`).

mod params;
mod pychar;
mod sentences;
mod words;

pub use params::{ParamsError, PunktParameters};
pub use sentences::SentenceTokenizer;

/// Whether Python's `str.isspace()` (and so `str.strip()`) takes `c`: the callers of
/// `sent_tokenize` strip their texts first.
pub fn is_python_space(c: char) -> bool {
    pychar::is_space(c)
}
