//! `mlperf_log_accuracy.json` as the compliance scripts read it: every record in file order
//! (duplicates kept, read by [`crate::logs::accuracy`]), its hex data decoded as numpy's
//! `frombuffer` would with a dtype.

use std::fmt;
use std::str::FromStr;

use crate::logs::accuracy::decode_hex;
pub use crate::logs::accuracy::{read_accuracy_log, AccuracyLogEntry};

/// The element type a response is decoded as (the scripts' `--dtype`; little-endian).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    /// numpy `byte`: a signed 8-bit integer.
    Byte,
    Int16,
    Int32,
    Int64,
    Float32,
}

/// One decoded element: integers compare as integers, float32 as numpy compares them
/// (NaN unequal to itself, -0.0 equal to 0.0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Element {
    Int(i64),
    Float(f32),
}

impl Element {
    /// `element == number`, as numpy compares an element with a Python int.
    pub fn equals_integer(self, number: i64) -> bool {
        match self {
            Element::Int(value) => value == number,
            Element::Float(value) => f64::from(value) == number as f64,
        }
    }
}

impl Dtype {
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Byte => "byte",
            Dtype::Int16 => "int16",
            Dtype::Int32 => "int32",
            Dtype::Int64 => "int64",
            Dtype::Float32 => "float32",
        }
    }

    pub fn size(self) -> usize {
        match self {
            Dtype::Byte => 1,
            Dtype::Int16 => 2,
            Dtype::Int32 | Dtype::Float32 => 4,
            Dtype::Int64 => 8,
        }
    }

    /// All elements of `bytes`; an error, as numpy raises one, when the length is not a
    /// multiple of the element size.
    pub fn decode(self, bytes: &[u8]) -> Result<Vec<Element>, String> {
        let size = self.size();
        if !bytes.len().is_multiple_of(size) {
            return Err(format!(
                "{} bytes is not a whole number of {} elements ({size} bytes each)",
                bytes.len(),
                self.name()
            ));
        }
        Ok(bytes.chunks_exact(size).map(|c| self.element(c)).collect())
    }

    /// The hex text decoded: `decode(decode_hex(text))`.
    pub fn decode_hex(self, text: &str) -> Result<Vec<Element>, String> {
        self.decode(&decode_hex(text)?)
    }

    /// One element from exactly `size()` bytes.
    fn element(self, chunk: &[u8]) -> Element {
        match self {
            Dtype::Byte => Element::Int(i64::from(i8::from_le_bytes(array(chunk)))),
            Dtype::Int16 => Element::Int(i64::from(i16::from_le_bytes(array(chunk)))),
            Dtype::Int32 => Element::Int(i64::from(i32::from_le_bytes(array(chunk)))),
            Dtype::Int64 => Element::Int(i64::from_le_bytes(array(chunk))),
            Dtype::Float32 => Element::Float(f32::from_le_bytes(array(chunk))),
        }
    }
}

/// The first `N` bytes of `chunk` (callers pass exactly `N`).
fn array<const N: usize>(chunk: &[u8]) -> [u8; N] {
    let mut bytes = [0u8; N];
    bytes.copy_from_slice(&chunk[..N]);
    bytes
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dtype {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        [
            Dtype::Byte,
            Dtype::Int16,
            Dtype::Int32,
            Dtype::Int64,
            Dtype::Float32,
        ]
        .into_iter()
        .find(|dtype| dtype.name() == text)
        .ok_or_else(|| format!("unknown dtype {text:?} (byte, int16, int32, int64 or float32)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtypes_decode_little_endian_like_numpy() {
        let bytes = [0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0x00, 0x00, 0x00];
        assert_eq!(
            Dtype::Byte.decode(&bytes[..2]).unwrap(),
            [Element::Int(-1), Element::Int(-1)]
        );
        assert_eq!(
            Dtype::Int32.decode(&bytes).unwrap(),
            [Element::Int(-1), Element::Int(2)]
        );
        assert_eq!(
            Dtype::Int16.decode(&bytes[4..]).unwrap(),
            [Element::Int(2), Element::Int(0)]
        );
        assert_eq!(
            Dtype::Int64.decode(&bytes).unwrap(),
            [Element::Int(0x2_FFFF_FFFF)]
        );
        assert_eq!(
            Dtype::Float32.decode(&1.5f32.to_le_bytes()).unwrap(),
            [Element::Float(1.5)]
        );
        let error = Dtype::Int64.decode(&bytes[..4]).unwrap_err();
        assert!(error.contains("4 bytes"), "{error}");
    }

    #[test]
    fn floats_compare_as_numpy_does() {
        assert_ne!(Element::Float(f32::NAN), Element::Float(f32::NAN));
        assert_eq!(Element::Float(-0.0), Element::Float(0.0));
        assert!(Element::Float(2.0).equals_integer(2));
        assert!(!Element::Int(3).equals_integer(2));
    }
}
