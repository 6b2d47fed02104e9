//! `mlperf_log_accuracy.json` as the compliance scripts read it: every record in file order
//! (duplicates kept), its hex data decoded as numpy's `frombuffer` would with a dtype.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::Deserialize;

use super::ComplianceError;

/// One entry of mlperf_log_accuracy.json, as read back (the engine writes `AccuracyRecord`s).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AccuracyLogEntry {
    pub qsl_idx: u64,
    /// The response bytes in hex, as logged (compared as text where the scripts do).
    pub data: String,
    /// The first-token response of a non-Offline token run.
    #[serde(default)]
    pub token_data: Option<String>,
    /// The response's token count, in token runs.
    #[serde(default)]
    pub token_count: Option<i64>,
}

pub use crate::benchmark::accuracy::decode_hex;

/// Reads every record of an accuracy log.
pub fn read_accuracy_log(path: &Path) -> Result<Vec<AccuracyLogEntry>, ComplianceError> {
    let text = std::fs::read_to_string(path).map_err(|e| ComplianceError::file(path, e))?;
    serde_json::from_str(&text)
        .map_err(|e| ComplianceError::invalid(path, format!("not an MLPerf accuracy log: {e}")))
}

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
    fn hex_decodes_in_either_case_or_says_why_not() {
        assert_eq!(decode_hex("00FFa0"), Ok(vec![0, 255, 160]));
        assert!(decode_hex("0G").unwrap_err().contains("not hex"));
        assert!(decode_hex("abc").unwrap_err().contains("odd"));
        assert_eq!(decode_hex(""), Ok(vec![]));
    }

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

    #[test]
    fn records_keep_their_order_duplicates_and_token_fields() {
        let dir = std::env::temp_dir().join(format!("compliance-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("log.json");
        std::fs::write(
            &path,
            "[\n{ \"seq_id\" : 1, \"qsl_idx\" : 7, \"data\" : \"01\" },\n\
             { \"seq_id\" : 0, \"qsl_idx\" : 7, \"data\" : \"02\", \"token_data\" : \"02\", \"token_count\" : 3 }\n]\n",
        )
        .unwrap();
        let records = read_accuracy_log(&path).unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].data, "01");
        assert_eq!(records[1].token_count, Some(3));
        std::fs::write(&path, "[{\"qsl_idx\": \"seven\"}]").unwrap();
        let error = read_accuracy_log(&path).unwrap_err().to_string();
        assert!(error.contains("log.json") && error.contains("not an MLPerf accuracy log"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
