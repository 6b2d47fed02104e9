//! Where a sample's prompt lies, and what else a request takes from it: the whole sample and
//! the configured `max_tokens`, or, when the run names inputs (a sweep's synthetic requests),
//! the input `prompt`, each sample's own `max_tokens`, and for a turn of a multi-turn
//! conversation its `session` and `turn` (each one int32 or int64).

use mlperf_plugin_api::sdk::{DType, Input};

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PromptLayout {
    /// The prompt's bytes and type within a sample; None: the whole sample.
    prompt: Option<(usize, usize, DType)>,
    /// Where a sample's own max_tokens lies, and its type.
    max_tokens: Option<(usize, DType)>,
    /// Where a turn's session and its place in the session lie.
    session: Option<((usize, DType), (usize, DType))>,
}

/// The input that holds each request's output length.
pub(crate) const MAX_TOKENS_INPUT: &str = "max_tokens";
const PROMPT_INPUT: &str = "prompt";
const SESSION_INPUT: &str = "session";
const TURN_INPUT: &str = "turn";
/// Inputs that hold one number each, not the prompt.
const NUMBERS: [&str; 3] = [MAX_TOKENS_INPUT, SESSION_INPUT, TURN_INPUT];

/// Where the one int32 or int64 of input `name` lies, if the run has it.
fn number(inputs: &[Input], name: &str) -> Result<Option<(usize, DType)>, String> {
    match inputs.iter().find(|i| i.name == name) {
        None => Ok(None),
        Some(input) => match (input.dtype, input.length) {
            (DType::I32, 4) | (DType::I64, 8) => Ok(Some((input.offset, input.dtype))),
            _ => Err(format!(
                "input {name:?} must be one int32 or int64 per sample, not {:?} of {} bytes",
                input.dtype, input.length
            )),
        },
    }
}

/// The number at `at` in `sample`.
fn read_number(sample: &[u8], (offset, dtype): (usize, DType)) -> Option<i64> {
    Some(match dtype {
        DType::I32 => i64::from(i32::from_le_bytes(
            sample.get(offset..offset + 4)?.try_into().ok()?,
        )),
        _ => i64::from_le_bytes(sample.get(offset..offset + 8)?.try_into().ok()?),
    })
}

impl PromptLayout {
    /// The layout of the run's named inputs (none: each sample is a prompt).
    pub(crate) fn of(inputs: &[Input]) -> Result<PromptLayout, String> {
        let max_tokens = number(inputs, MAX_TOKENS_INPUT)?;
        let session = match (number(inputs, SESSION_INPUT)?, number(inputs, TURN_INPUT)?) {
            (Some(session), Some(turn)) => Some((session, turn)),
            (None, None) => None,
            _ => {
                return Err(format!(
                    "inputs {SESSION_INPUT:?} and {TURN_INPUT:?} go together"
                ))
            }
        };
        let others: Vec<&Input> = inputs
            .iter()
            .filter(|i| !NUMBERS.contains(&i.name.as_str()))
            .collect();
        let prompt = match (others.iter().find(|i| i.name == PROMPT_INPUT), &others[..]) {
            (Some(input), _) | (None, [input]) => Some((input.offset, input.length, input.dtype)),
            (None, []) if inputs.is_empty() => None,
            (None, []) => return Err(format!("no input holds the prompt beside {NUMBERS:?}")),
            (None, several) => {
                let names: Vec<&str> = several.iter().map(|i| i.name.as_str()).collect();
                return Err(format!(
                    "inputs {names:?}: name the prompt's input {PROMPT_INPUT:?}"
                ));
            }
        };
        Ok(PromptLayout {
            prompt,
            max_tokens,
            session,
        })
    }

    /// The prompt's bytes in `sample` (empty when the sample is too short).
    pub(crate) fn prompt<'a>(&self, sample: &'a [u8]) -> &'a [u8] {
        match self.prompt {
            None => sample,
            Some((offset, length, _)) => sample
                .get(offset..offset.saturating_add(length))
                .unwrap_or(&[]),
        }
    }

    /// The prompt's element type, given the sample's own.
    pub(crate) fn prompt_dtype(&self, sample: DType) -> DType {
        self.prompt.map_or(sample, |(_, _, dtype)| dtype)
    }

    /// The sample's own output length, where it has one (at least 1).
    pub(crate) fn max_tokens(&self, sample: &[u8]) -> Option<u32> {
        let value = read_number(sample, self.max_tokens?)?;
        Some(value.clamp(1, i64::from(u32::MAX)) as u32)
    }

    /// The runs' samples are turns of conversations.
    pub(crate) fn has_sessions(&self) -> bool {
        self.session.is_some()
    }

    /// The sample's session and its turn in it (from 0), for a turn of a conversation.
    pub(crate) fn session(&self, sample: &[u8]) -> Option<(u64, u32)> {
        let (session, turn) = self.session?;
        let session = read_number(sample, session)?;
        let turn = read_number(sample, turn)?;
        Some((session as u64, turn.clamp(0, i64::from(u32::MAX)) as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(name: &str, dtype: DType, offset: usize, length: usize) -> Input {
        Input {
            name: name.into(),
            dtype,
            shape: vec![length as i64],
            offset,
            length,
        }
    }

    #[test]
    fn a_prompt_and_its_own_output_length_are_read_from_their_inputs() {
        let layout = PromptLayout::of(&[
            input("prompt", DType::U8, 0, 6),
            input("max_tokens", DType::I32, 8, 4),
        ])
        .unwrap();
        let mut sample = b"Hello\0\0\0".to_vec();
        sample.extend(17i32.to_le_bytes());
        assert_eq!(layout.prompt(&sample), b"Hello\0");
        assert_eq!(layout.max_tokens(&sample), Some(17));
        assert_eq!(layout.prompt_dtype(DType::Bytes), DType::U8);
        // A plain sample is its prompt.
        let plain = PromptLayout::of(&[]).unwrap();
        assert_eq!(plain.prompt(b"Hi"), b"Hi");
        assert_eq!(plain.max_tokens(b"Hi"), None);
        assert_eq!(plain.session(b"Hi"), None);
        // A turn of a conversation: its session and place.
        let turns = PromptLayout::of(&[
            input("prompt", DType::U8, 0, 4),
            input("session", DType::I64, 8, 8),
            input("turn", DType::I32, 4, 4),
        ])
        .unwrap();
        let mut sample = b"Why?".to_vec();
        sample.extend(2i32.to_le_bytes());
        sample.extend(7i64.to_le_bytes());
        assert!(turns.has_sessions());
        assert_eq!(turns.session(&sample), Some((7, 2)));
        assert_eq!(turns.prompt(&sample), b"Why?");
    }

    #[test]
    fn unusable_inputs_are_refused_by_name() {
        let error = PromptLayout::of(&[input("max_tokens", DType::F32, 0, 4)]).unwrap_err();
        assert!(
            error.contains("\"max_tokens\" must be one int32"),
            "{error}"
        );
        let error = PromptLayout::of(&[
            input("prompt", DType::U8, 0, 4),
            input("session", DType::I32, 4, 4),
        ])
        .unwrap_err();
        assert!(error.contains("go together"), "{error}");
        let error = PromptLayout::of(&[
            input("a", DType::U8, 0, 4),
            input("b", DType::U8, 4, 4),
            input("max_tokens", DType::I64, 8, 8),
        ])
        .unwrap_err();
        assert!(error.contains("[\"a\", \"b\"]"), "{error}");
    }
}
