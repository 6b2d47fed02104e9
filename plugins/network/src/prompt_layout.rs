//! Where a sample's prompt lies, and how many tokens to ask for: the whole sample and the
//! configured `max_tokens`, or, when the run names inputs (a sweep's synthetic requests), the
//! input `prompt` and each sample's own int32 or int64 `max_tokens`.

use mlperf_plugin_api::sdk::{DType, Input};

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PromptLayout {
    /// The prompt's bytes and type within a sample; None: the whole sample.
    prompt: Option<(usize, usize, DType)>,
    /// Where a sample's own max_tokens lies, and its type.
    max_tokens: Option<(usize, DType)>,
}

/// The input that holds each request's output length.
pub(crate) const MAX_TOKENS_INPUT: &str = "max_tokens";
const PROMPT_INPUT: &str = "prompt";

impl PromptLayout {
    /// The layout of the run's named inputs (none: each sample is a prompt).
    pub(crate) fn of(inputs: &[Input]) -> Result<PromptLayout, String> {
        let max_tokens = match inputs.iter().find(|i| i.name == MAX_TOKENS_INPUT) {
            None => None,
            Some(input) => match (input.dtype, input.length) {
                (DType::I32, 4) | (DType::I64, 8) => Some((input.offset, input.dtype)),
                _ => {
                    return Err(format!(
                        "input {MAX_TOKENS_INPUT:?} must be one int32 or int64 per sample, not \
                         {:?} of {} bytes",
                        input.dtype, input.length
                    ))
                }
            },
        };
        let others: Vec<&Input> = inputs
            .iter()
            .filter(|i| i.name != MAX_TOKENS_INPUT)
            .collect();
        let prompt = match (others.iter().find(|i| i.name == PROMPT_INPUT), &others[..]) {
            (Some(input), _) | (None, [input]) => Some((input.offset, input.length, input.dtype)),
            (None, []) if inputs.is_empty() => None,
            (None, []) => {
                return Err(format!(
                    "no input holds the prompt beside {MAX_TOKENS_INPUT:?}"
                ))
            }
            (None, several) => {
                let names: Vec<&str> = several.iter().map(|i| i.name.as_str()).collect();
                return Err(format!(
                    "inputs {names:?}: name the prompt's input {PROMPT_INPUT:?}"
                ));
            }
        };
        Ok(PromptLayout { prompt, max_tokens })
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
        let (offset, dtype) = self.max_tokens?;
        let value = match dtype {
            DType::I32 => i64::from(i32::from_le_bytes(
                sample.get(offset..offset + 4)?.try_into().ok()?,
            )),
            _ => i64::from_le_bytes(sample.get(offset..offset + 8)?.try_into().ok()?),
        };
        Some(value.clamp(1, i64::from(u32::MAX)) as u32)
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
    }

    #[test]
    fn unusable_inputs_are_refused_by_name() {
        let error = PromptLayout::of(&[input("max_tokens", DType::F32, 0, 4)]).unwrap_err();
        assert!(
            error.contains("\"max_tokens\" must be one int32"),
            "{error}"
        );
        let error = PromptLayout::of(&[
            input("a", DType::U8, 0, 4),
            input("b", DType::U8, 4, 4),
            input("max_tokens", DType::I64, 8, 8),
        ])
        .unwrap_err();
        assert!(error.contains("[\"a\", \"b\"]"), "{error}");
    }
}
