//! Replaying a trace: a JSONL file of requests, one object per line, each with its arrival
//! time and its prompt (a length, or the text), and optionally its answer's length. The
//! sweep sends request k at its time on sample k, written here as the data set.
//!
//! ```text
//! {"timestamp": 0, "input_length": 512, "output_length": 128}
//! {"timestamp": 27.5, "text": "Summarise the following ...", "output_length": 64}
//! ```
//!
//! `timestamp` is milliseconds (Mooncake's traces, and AIPerf's reading of them, use the same
//! keys), taken from the earliest request, which is sent at once: a trace of absolute (epoch)
//! times replays as one that starts at 0, with a note. Lines need not be in time order (they
//! are sorted).
//! `input_length` prompts are synthetic, exact in tokens with a tokenizer (token ids without
//! one); `text` (or `prompt`) is sent as it is. `output_length`, on every line or none, asks
//! for that many tokens (the network plugin's `max_tokens` input, with `exact_output`).
//! Other keys (`hash_ids`, ...) are ignored.

use std::path::Path;

use mlperf_loadgen::rng::Mt19937;
use mlperf_tokenizer::Tokenizer;
use serde::Deserialize;

use super::synthetic::{random_token_ids, text_of_length};

/// One line of a trace.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Line {
    timestamp: f64,
    input_length: Option<usize>,
    #[serde(alias = "prompt")]
    text: Option<String>,
    output_length: Option<usize>,
}

/// A request's prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum TracePrompt {
    Tokens(usize),
    Text(String),
}

/// A trace, in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// ns from the start.
    pub times: Vec<i64>,
    pub prompts: Vec<TracePrompt>,
    /// Each request's answer length, when the trace gives them.
    pub outputs: Option<Vec<usize>>,
    /// What the reading changed that the user should hear of (times shifted to the first
    /// request).
    pub note: Option<String>,
}

/// The longest span a trace may cover: its times are i64 ns from the first request.
const MAX_SPAN_MS: f64 = i64::MAX as f64 / 1e6;
/// A first request this far from 0 (ms) is no offset anyone meant: said when shifted.
const NOTED_SHIFT_MS: f64 = 60_000.0;

impl Trace {
    /// Reads `path`; errors name the file and the line.
    pub fn read(path: &Path) -> Result<Trace, String> {
        let text = mlperf_submission::input_file::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Trace::parse(&text).map_err(|why| format!("{}: {why}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Trace, String> {
        let mut lines = Vec::new();
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = |why: String| format!("line {}: {why}", number + 1);
            let parsed: Line = serde_json::from_str(line).map_err(|e| at(e.to_string()))?;
            if !(parsed.timestamp.is_finite() && parsed.timestamp >= 0.0) {
                return Err(at(format!(
                    "timestamp {} is not a time in ms from the start",
                    parsed.timestamp
                )));
            }
            let prompt = match (parsed.input_length, parsed.text.clone()) {
                (_, Some(text)) => TracePrompt::Text(text),
                (Some(n), None) if n > 0 => TracePrompt::Tokens(n),
                _ => return Err(at("needs input_length (above 0) or text".to_string())),
            };
            if parsed.output_length == Some(0) {
                return Err(at("output_length must be at least 1".to_string()));
            }
            lines.push((parsed.timestamp, prompt, parsed.output_length, number + 1));
        }
        if lines.is_empty() {
            return Err("no requests".to_string());
        }
        let with_output = lines.iter().filter(|l| l.2.is_some()).count();
        if with_output != 0 && with_output != lines.len() {
            let missing = lines.iter().find(|l| l.2.is_none()).map_or(0, |l| l.3);
            return Err(format!(
                "line {missing}: output_length is on {with_output} of {} lines: give it on \
                 every line or none",
                lines.len()
            ));
        }
        // Stable: requests of the same time keep their order.
        lines.sort_by(|a, b| a.0.total_cmp(&b.0));
        let first = lines[0].0;
        let last = &lines[lines.len() - 1];
        if last.0 - first > MAX_SPAN_MS {
            return Err(format!(
                "line {}: timestamp {} ms is more than {:.0} years after the first request \
                 (timestamps are milliseconds)",
                last.3,
                last.0,
                MAX_SPAN_MS / 3.156e10
            ));
        }
        let note = (first > NOTED_SHIFT_MS).then(|| {
            let what = if first > 1e12 {
                "absolute (epoch) milliseconds"
            } else {
                "milliseconds that do not start at 0"
            };
            format!(
                "the trace's timestamps are {what} (the first, on line {}, is {first}): \
                 replayed from its first request, sent at once",
                lines[0].3
            )
        });
        Ok(Trace {
            times: lines
                .iter()
                .map(|l| ((l.0 - first) * 1e6).round() as i64)
                .collect(),
            note,
            outputs: (with_output > 0).then(|| lines.iter().map(|l| l.2.unwrap_or(1)).collect()),
            prompts: lines.into_iter().map(|l| l.1).collect(),
        })
    }

    /// Writes the prompts as the sweep's data set to `path`: text rows (uint8, NUL padded)
    /// with a tokenizer or when any line gives text, else int32 token ids (-1 padded).
    /// Returns whether the prompts are token ids.
    pub fn write_prompts(
        &self,
        path: &Path,
        seed: u64,
        tokenizer: Option<&Tokenizer>,
    ) -> Result<bool, String> {
        let mut rng = Mt19937::new(seed);
        let written = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
        let all_lengths = self
            .prompts
            .iter()
            .all(|p| matches!(p, TracePrompt::Tokens(_)));
        if all_lengths && tokenizer.is_none() {
            let ids: Vec<Vec<u32>> = self
                .prompts
                .iter()
                .map(|p| match p {
                    TracePrompt::Tokens(n) => random_token_ids(&mut rng, *n),
                    TracePrompt::Text(_) => Vec::new(),
                })
                .collect();
            super::synthetic::write_token_id_rows(path, &ids).map_err(written)?;
            return Ok(true);
        }
        let mut texts = Vec::with_capacity(self.prompts.len());
        for (k, prompt) in self.prompts.iter().enumerate() {
            texts.push(match (prompt, tokenizer) {
                (TracePrompt::Text(text), _) => text.replace('\0', " "),
                (TracePrompt::Tokens(n), Some(tokenizer)) => {
                    text_of_length(*n, &mut rng, tokenizer)
                        .map_err(|why| format!("request {} ({n} tokens): {why}", k + 1))?
                }
                (TracePrompt::Tokens(_), None) => {
                    return Err(
                        "a trace that mixes text and input_length needs a tokenizer (--tokenizer) \
                         to write its lengths as text"
                            .to_string(),
                    )
                }
            });
        }
        super::synthetic::write_text_rows(path, &texts).map_err(written)?;
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_is_read_in_time_order_with_its_prompts_and_lengths() {
        let trace = Trace::parse(
            "{\"timestamp\": 27.5, \"text\": \"Hi\", \"output_length\": 4}\n\n\
             {\"timestamp\": 0, \"input_length\": 16, \"output_length\": 8, \"hash_ids\": [1]}\n\
             {\"timestamp\": 27.5, \"prompt\": \"Later\", \"output_length\": 2}\n",
        )
        .unwrap();
        assert_eq!(trace.times, [0, 27_500_000, 27_500_000]);
        assert_eq!(
            trace.prompts,
            [
                TracePrompt::Tokens(16),
                TracePrompt::Text("Hi".into()),
                TracePrompt::Text("Later".into())
            ]
        );
        assert_eq!(trace.outputs, Some(vec![8, 4, 2]));
        assert_eq!(trace.note, None);
    }

    #[test]
    fn times_are_taken_from_the_first_request() {
        // Epoch milliseconds, as a log exported from a serving fleet has them: replayed from
        // 0 with a note, rather than waited for for decades.
        let trace = Trace::parse(
            "{\"timestamp\": 1764806400250, \"input_length\": 3}\n\
             {\"timestamp\": 1764806400000, \"input_length\": 5}\n",
        )
        .unwrap();
        assert_eq!(trace.times, [0, 250_000_000]);
        let note = trace.note.unwrap();
        assert!(note.contains("epoch") && note.contains("line 2"), "{note}");
        let late = Trace::parse("{\"timestamp\": 90000, \"input_length\": 3}").unwrap();
        assert_eq!(late.times, [0]);
        assert!(late.note.unwrap().contains("do not start at 0"));
        let small = Trace::parse("{\"timestamp\": 500, \"input_length\": 3}").unwrap();
        assert_eq!((small.times, small.note), (vec![0], None));
        let error = Trace::parse(
            "{\"timestamp\": 0, \"input_length\": 3}\n{\"timestamp\": 1e300, \"input_length\": 3}",
        )
        .unwrap_err();
        assert!(
            error.contains("line 2") && error.contains("years after"),
            "{error}"
        );
    }

    #[test]
    fn bad_lines_are_named() {
        for (text, expected) in [
            ("{\"timestamp\": 1}", "line 1: needs input_length"),
            ("{\"input_length\": 3}", "line 1: missing field `timestamp`"),
            (
                "{\"timestamp\": -1, \"input_length\": 3}",
                "line 1: timestamp -1",
            ),
            (
                "{\"timestamp\": 0, \"input_length\": 3, \"output_length\": 2}\n\
                 {\"timestamp\": 1, \"input_length\": 3}",
                "line 2: output_length is on 1 of 2 lines",
            ),
            ("\n", "no requests"),
            ("{\"timestamp\": 0, \"input_length\": 3", "line 1: EOF"),
        ] {
            let error = Trace::parse(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }
}
