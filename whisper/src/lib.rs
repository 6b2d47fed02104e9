//! Native pieces of the MLPerf whisper benchmark, written so that their results equal the
//! Python reference's (mlcommons/inference `speech2text`, b66003e1, with openai-whisper
//! 20250625's normaliser):
//!
//! * [`manifest`]: `data/dev-all-repack.json` read as `manifest.py`'s `Manifest` reads it
//!   (clips over 30 s and non-text transcripts dropped, transcripts filtered to the labels).
//! * [`wav`]: a clip's 16 kHz WAV as `librosa.load(path, sr=16000)` gives it (float32,
//!   PCM16 / 32768).
//! * [`labels`]: the 42 characters the SUT's answers are logged as (int64 indices), the
//!   reference SUT's mapping of an answer's text to them and the scorer's way back.
//! * [`normalizer`]: `whisper.normalizers.EnglishTextNormalizer` on text of those labels (all
//!   the scorer hands it): contractions, titles, spelled-out numbers, currencies and
//!   percentages, and the British-American spelling map (`english.json`, read from the user's
//!   copy of openai-whisper).
//! * [`wer`]: `compute_wer_with_concatenation` (greedy matching of joined words, then a word
//!   Levenshtein distance) summed over every logged answer, as `accuracy_eval.py` does.

mod error;
pub mod labels;
pub mod manifest;
pub mod normalizer;
pub mod wav;
pub mod wer;

pub use error::WhisperError;
