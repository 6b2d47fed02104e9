//! A benchmark's post-processing of responses (`[postprocess]`), as its reference harness
//! does it after the model ran: the host applies it to each response, so that a plugin only
//! runs the model and the accuracy log records what the reference's SUT logs (ResNet-50: the
//! ArgMax class minus one, as float32). Plain data, so that it travels to an isolated
//! plugin's process with the run description.

use serde::{Deserialize, Serialize};

use super::accuracy::ClassDtype;

/// How a response's bytes become the bytes the accuracy log records.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum ResponseTransform {
    /// A class index, as a model's ArgMax output gives it (one little-endian integer of
    /// `input`), plus `offset`, written as one `logged` value: the reference's
    /// `PostProcessCommon(offset)` and `np.array([class], dtype).tobytes()`.
    Class {
        #[serde(default)]
        input: ClassInput,
        #[serde(default)]
        offset: i64,
        /// The element type logged (the accuracy script's `--dtype`).
        logged: ClassDtype,
    },
}

/// The integer type of a model's class output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClassInput {
    /// ONNX ArgMax's type.
    #[default]
    Int64,
    Int32,
}

impl ClassInput {
    fn size(self) -> usize {
        match self {
            ClassInput::Int64 => 8,
            ClassInput::Int32 => 4,
        }
    }
}

impl ResponseTransform {
    /// The longest output of one response, so that a caller can keep it on the stack.
    pub const MAX_OUTPUT: usize = 8;

    /// Writes the logged bytes of the response `bytes` into `out`; returns how many.
    pub fn apply(&self, bytes: &[u8], out: &mut [u8; Self::MAX_OUTPUT]) -> Result<usize, String> {
        match *self {
            ResponseTransform::Class {
                input,
                offset,
                logged,
            } => {
                if bytes.len() != input.size() {
                    return Err(format!(
                        "{} bytes, where the benchmark's post-processing takes one {:?} class (the model's ArgMax output, {} bytes): is the plugin's `output` the class?",
                        bytes.len(),
                        input,
                        input.size()
                    ));
                }
                let class = match input {
                    ClassInput::Int64 => i64::from_le_bytes(bytes.try_into().expect("8 bytes")),
                    ClassInput::Int32 => {
                        i32::from_le_bytes(bytes.try_into().expect("4 bytes")) as i64
                    }
                };
                let value = class.saturating_add(offset);
                Ok(match logged {
                    ClassDtype::Float32 => {
                        out[..4].copy_from_slice(&(value as f32).to_le_bytes());
                        4
                    }
                    ClassDtype::Int32 => {
                        let narrow = i32::try_from(value)
                            .map_err(|_| format!("class {value} does not fit an int32"))?;
                        out[..4].copy_from_slice(&narrow.to_le_bytes());
                        4
                    }
                    ClassDtype::Int64 => {
                        out.copy_from_slice(&value.to_le_bytes());
                        8
                    }
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resnets_argmax_becomes_the_references_float32_class() {
        let transform = ResponseTransform::Class {
            input: ClassInput::Int64,
            offset: -1,
            logged: ClassDtype::Float32,
        };
        let mut out = [0u8; ResponseTransform::MAX_OUTPUT];
        let n = transform.apply(&66i64.to_le_bytes(), &mut out).unwrap();
        assert_eq!(&out[..n], &65f32.to_le_bytes());
        // Class 0 is ResNet-50 v1.5's background: -1 after the offset, as the reference logs it.
        let n = transform.apply(&0i64.to_le_bytes(), &mut out).unwrap();
        assert_eq!(&out[..n], &(-1f32).to_le_bytes());
        let error = transform.apply(&[0; 4004], &mut out).unwrap_err();
        assert!(error.contains("4004 bytes"), "{error}");
        let int32 = ResponseTransform::Class {
            input: ClassInput::Int32,
            offset: 0,
            logged: ClassDtype::Int64,
        };
        let n = int32.apply(&7i32.to_le_bytes(), &mut out).unwrap();
        assert_eq!(&out[..n], &7i64.to_le_bytes());
    }
}
