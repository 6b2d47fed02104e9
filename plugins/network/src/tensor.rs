//! KServe v2 tensor datatypes and element encodings: the sample arena's dtypes as v2
//! datatype names, elements as JSON numbers and back, and gRPC's typed contents as bytes.
//! Bytes are little-endian, as the host's samples and the protocol's raw contents are.

use mlperf_plugin_api::sdk::DType;
use serde_json::Value;

use crate::kserve::InferTensorContents;

/// A fixed-size v2 datatype (BYTES, whose elements vary in length, is not one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Datatype {
    Bool,
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F16,
    BF16,
    F32,
    F64,
}

impl Datatype {
    /// The protocol's name ("FP32", ...) parsed; `None` for BYTES and names it does not have.
    pub(crate) fn parse(name: &str) -> Option<Datatype> {
        use Datatype::*;
        Some(match name {
            "BOOL" => Bool,
            "UINT8" => U8,
            "UINT16" => U16,
            "UINT32" => U32,
            "UINT64" => U64,
            "INT8" => I8,
            "INT16" => I16,
            "INT32" => I32,
            "INT64" => I64,
            "FP16" => F16,
            "BF16" => BF16,
            "FP32" => F32,
            "FP64" => F64,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        use Datatype::*;
        match self {
            Bool => "BOOL",
            U8 => "UINT8",
            U16 => "UINT16",
            U32 => "UINT32",
            U64 => "UINT64",
            I8 => "INT8",
            I16 => "INT16",
            I32 => "INT32",
            I64 => "INT64",
            F16 => "FP16",
            BF16 => "BF16",
            F32 => "FP32",
            F64 => "FP64",
        }
    }

    /// The datatype of samples of this dtype; `None` for dtypes v2 has no fixed-size name for.
    pub(crate) fn of(dtype: DType) -> Option<Datatype> {
        use Datatype::*;
        Some(match dtype {
            DType::Bool => Bool,
            DType::U8 => U8,
            DType::U16 => U16,
            DType::U32 => U32,
            DType::U64 => U64,
            DType::I8 => I8,
            DType::I16 => I16,
            DType::I32 => I32,
            DType::I64 => I64,
            DType::F16 => F16,
            DType::BF16 => BF16,
            DType::F32 => F32,
            DType::F64 => F64,
            _ => return None,
        })
    }

    pub(crate) fn size(self) -> usize {
        use Datatype::*;
        match self {
            Bool | U8 | I8 => 1,
            U16 | I16 | F16 | BF16 => 2,
            U32 | I32 | F32 => 4,
            U64 | I64 | F64 => 8,
        }
    }

    /// JSON has no 16-bit floats: those go as raw bytes (binary HTTP or gRPC).
    pub(crate) fn has_json_form(self) -> bool {
        !matches!(self, Datatype::F16 | Datatype::BF16)
    }
}

fn array<const N: usize>(chunk: &[u8]) -> [u8; N] {
    chunk.try_into().expect("chunks_exact gives N bytes")
}

/// Writes `bytes`' elements as a comma-separated JSON number list (no brackets). Floats are
/// written in their shortest form that reads back to the same value.
pub(crate) fn write_json_elements(out: &mut Vec<u8>, datatype: Datatype, bytes: &[u8]) {
    use std::io::Write;
    let size = datatype.size();
    for (i, chunk) in bytes.chunks_exact(size).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Writing into a Vec cannot fail.
        let _ = match datatype {
            Datatype::Bool => write!(out, "{}", chunk[0] != 0),
            Datatype::U8 => write!(out, "{}", chunk[0]),
            Datatype::I8 => write!(out, "{}", chunk[0] as i8),
            Datatype::U16 => write!(out, "{}", u16::from_le_bytes(array(chunk))),
            Datatype::I16 => write!(out, "{}", i16::from_le_bytes(array(chunk))),
            Datatype::U32 => write!(out, "{}", u32::from_le_bytes(array(chunk))),
            Datatype::I32 => write!(out, "{}", i32::from_le_bytes(array(chunk))),
            Datatype::U64 => write!(out, "{}", u64::from_le_bytes(array(chunk))),
            Datatype::I64 => write!(out, "{}", i64::from_le_bytes(array(chunk))),
            Datatype::F32 => write_float(out, f64::from(f32::from_le_bytes(array(chunk))), |v| {
                format!("{}", v as f32)
            }),
            Datatype::F64 => write_float(out, f64::from_le_bytes(array(chunk)), |v| format!("{v}")),
            Datatype::F16 | Datatype::BF16 => unreachable!("checked by has_json_form"),
        };
    }
}

/// JSON has no NaN or infinity; they are written as null, which servers refuse with a
/// message naming the tensor. Whole numbers keep a ".0" so that strict parsers see floats.
fn write_float(
    out: &mut Vec<u8>,
    value: f64,
    shortest: impl Fn(f64) -> String,
) -> std::io::Result<()> {
    if !value.is_finite() {
        out.extend_from_slice(b"null");
        return Ok(());
    }
    let text = shortest(value);
    out.extend_from_slice(text.as_bytes());
    if !text.contains(['.', 'e', 'E']) {
        out.extend_from_slice(b".0");
    }
    Ok(())
}

/// The elements of a JSON `data` array (flat, or nested row-major) as little-endian bytes.
pub(crate) fn json_elements_to_bytes(datatype: Datatype, data: &Value) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    append_json(&mut out, datatype, data)?;
    Ok(out)
}

fn append_json(out: &mut Vec<u8>, datatype: Datatype, value: &Value) -> Result<(), String> {
    let bad = || format!("{value} is not a {} element", datatype.name());
    match value {
        Value::Array(items) => {
            for item in items {
                append_json(out, datatype, item)?;
            }
        }
        Value::Bool(b) if datatype == Datatype::Bool => out.push(u8::from(*b)),
        Value::Number(n) => match datatype {
            Datatype::Bool => out.push(u8::from(n.as_u64().ok_or_else(bad)? != 0)),
            Datatype::U8 => out.push(u8::try_from(n.as_u64().ok_or_else(bad)?).map_err(|_| bad())?),
            Datatype::I8 => out.extend(
                i8::try_from(n.as_i64().ok_or_else(bad)?)
                    .map_err(|_| bad())?
                    .to_le_bytes(),
            ),
            Datatype::U16 => out.extend(
                u16::try_from(n.as_u64().ok_or_else(bad)?)
                    .map_err(|_| bad())?
                    .to_le_bytes(),
            ),
            Datatype::I16 => out.extend(
                i16::try_from(n.as_i64().ok_or_else(bad)?)
                    .map_err(|_| bad())?
                    .to_le_bytes(),
            ),
            Datatype::U32 => out.extend(
                u32::try_from(n.as_u64().ok_or_else(bad)?)
                    .map_err(|_| bad())?
                    .to_le_bytes(),
            ),
            Datatype::I32 => out.extend(
                i32::try_from(n.as_i64().ok_or_else(bad)?)
                    .map_err(|_| bad())?
                    .to_le_bytes(),
            ),
            Datatype::U64 => out.extend(n.as_u64().ok_or_else(bad)?.to_le_bytes()),
            Datatype::I64 => out.extend(n.as_i64().ok_or_else(bad)?.to_le_bytes()),
            Datatype::F32 => out.extend((n.as_f64().ok_or_else(bad)? as f32).to_le_bytes()),
            Datatype::F64 => out.extend(n.as_f64().ok_or_else(bad)?.to_le_bytes()),
            Datatype::F16 | Datatype::BF16 => return Err(bad()),
        },
        _ => return Err(bad()),
    }
    Ok(())
}

/// gRPC's typed `contents` of a tensor as little-endian bytes (servers that do not answer in
/// `raw_output_contents` answer here).
pub(crate) fn contents_to_bytes(
    datatype: Datatype,
    contents: &InferTensorContents,
) -> Result<Vec<u8>, String> {
    fn each<T: Copy, const N: usize>(values: &[T], bytes: impl Fn(T) -> [u8; N]) -> Vec<u8> {
        values.iter().flat_map(|&v| bytes(v)).collect()
    }
    fn narrow<T: Copy, U, const N: usize>(
        values: &[T],
        datatype: Datatype,
        convert: impl Fn(T) -> Option<U>,
        bytes: impl Fn(U) -> [u8; N],
    ) -> Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(values.len() * N);
        for &v in values {
            let v = convert(v)
                .ok_or_else(|| format!("a value does not fit {} elements", datatype.name()))?;
            out.extend(bytes(v));
        }
        Ok(out)
    }
    let c = contents;
    Ok(match datatype {
        Datatype::Bool => c.bool_contents.iter().map(|&b| u8::from(b)).collect(),
        Datatype::U8 => narrow(
            &c.uint_contents,
            datatype,
            |v| u8::try_from(v).ok(),
            |v| [v],
        )?,
        Datatype::U16 => narrow(
            &c.uint_contents,
            datatype,
            |v| u16::try_from(v).ok(),
            u16::to_le_bytes,
        )?,
        Datatype::U32 => each(&c.uint_contents, u32::to_le_bytes),
        Datatype::U64 => each(&c.uint64_contents, u64::to_le_bytes),
        Datatype::I8 => narrow(
            &c.int_contents,
            datatype,
            |v| i8::try_from(v).ok(),
            i8::to_le_bytes,
        )?,
        Datatype::I16 => narrow(
            &c.int_contents,
            datatype,
            |v| i16::try_from(v).ok(),
            i16::to_le_bytes,
        )?,
        Datatype::I32 => each(&c.int_contents, i32::to_le_bytes),
        Datatype::I64 => each(&c.int64_contents, i64::to_le_bytes),
        Datatype::F32 => each(&c.fp32_contents, f32::to_le_bytes),
        Datatype::F64 => each(&c.fp64_contents, f64::to_le_bytes),
        Datatype::F16 | Datatype::BF16 => {
            return Err(format!(
                "{} has no typed contents field; the server must answer in raw_output_contents",
                datatype.name()
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(datatype: Datatype, bytes: &[u8]) -> String {
        let mut out = Vec::new();
        write_json_elements(&mut out, datatype, bytes);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn names_round_trip() {
        for name in [
            "BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64",
            "FP16", "BF16", "FP32", "FP64",
        ] {
            assert_eq!(Datatype::parse(name).unwrap().name(), name);
        }
        assert_eq!(Datatype::parse("BYTES"), None);
        assert_eq!(Datatype::of(DType::F32), Some(Datatype::F32));
        assert_eq!(Datatype::of(DType::Bytes), None);
    }

    #[test]
    fn floats_are_written_shortest_and_read_back_exactly() {
        let values = [0.1f32, 1.0 / 3.0, -2.5e-8, 16.0, f32::MAX];
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let text = json(Datatype::F32, &bytes);
        assert_eq!(text.split(',').next(), Some("0.1"));
        assert!(text.contains(",16.0,"), "{text}");
        let parsed: Value = serde_json::from_str(&format!("[{text}]")).unwrap();
        assert_eq!(
            json_elements_to_bytes(Datatype::F32, &parsed).unwrap(),
            bytes
        );
    }

    #[test]
    fn integers_round_trip_through_json() {
        let values = [i64::MIN, -1, 0, 7, i64::MAX];
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let text = json(Datatype::I64, &bytes);
        assert_eq!(text, format!("{},-1,0,7,{}", i64::MIN, i64::MAX));
        let parsed: Value = serde_json::from_str(&format!("[{text}]")).unwrap();
        assert_eq!(
            json_elements_to_bytes(Datatype::I64, &parsed).unwrap(),
            bytes
        );
        assert_eq!(json(Datatype::U8, &[0, 255]), "0,255");
        assert_eq!(json(Datatype::Bool, &[0, 1]), "false,true");
    }

    #[test]
    fn nested_data_is_read_row_major_and_bad_elements_are_refused() {
        let nested: Value = serde_json::from_str("[[1, 2], [3, 4]]").unwrap();
        assert_eq!(
            json_elements_to_bytes(Datatype::U8, &nested).unwrap(),
            vec![1, 2, 3, 4]
        );
        let too_big: Value = serde_json::from_str("[256]").unwrap();
        assert!(json_elements_to_bytes(Datatype::U8, &too_big)
            .unwrap_err()
            .contains("256 is not a UINT8 element"));
        let text: Value = serde_json::from_str("[\"a\"]").unwrap();
        assert!(json_elements_to_bytes(Datatype::F32, &text).is_err());
    }

    #[test]
    fn typed_contents_become_bytes() {
        let contents = InferTensorContents {
            int64_contents: vec![3, -4],
            uint_contents: vec![1, 300],
            ..Default::default()
        };
        assert_eq!(
            contents_to_bytes(Datatype::I64, &contents).unwrap(),
            [3i64.to_le_bytes(), (-4i64).to_le_bytes()].concat()
        );
        assert!(contents_to_bytes(Datatype::U8, &contents)
            .unwrap_err()
            .contains("UINT8"));
        assert_eq!(
            contents_to_bytes(Datatype::U16, &contents).unwrap(),
            vec![1, 0, 44, 1]
        );
    }
}
