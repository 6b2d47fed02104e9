//! A logged response's logits as `accuracy-squad.py` decodes them (`--output_dtype`):
//! little-endian values of the dtype, `[N, 2]` (start, end per position) or, transposed,
//! `[2, N]`; returned as the interleaved pairs, each value as the script holds it (float64,
//! here exact in f64 for every dtype but int64, which float64 rounds as numpy does).

use crate::SquadError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogitDtype {
    Int8,
    Int16,
    Int32,
    Int64,
    Float16,
    Float32,
    Float64,
}

impl LogitDtype {
    /// The script's name for it.
    pub fn parse(name: &str) -> Option<LogitDtype> {
        Some(match name {
            "int8" => LogitDtype::Int8,
            "int16" => LogitDtype::Int16,
            "int32" => LogitDtype::Int32,
            "int64" => LogitDtype::Int64,
            "float16" => LogitDtype::Float16,
            "float32" => LogitDtype::Float32,
            "float64" => LogitDtype::Float64,
            _ => return None,
        })
    }

    pub fn size(self) -> usize {
        match self {
            LogitDtype::Int8 => 1,
            LogitDtype::Int16 | LogitDtype::Float16 => 2,
            LogitDtype::Int32 | LogitDtype::Float32 => 4,
            LogitDtype::Int64 | LogitDtype::Float64 => 8,
        }
    }
}

/// The interleaved (start, end) logits of `bytes`.
pub fn decode_logits(
    bytes: &[u8],
    dtype: LogitDtype,
    transposed: bool,
) -> Result<Vec<f64>, SquadError> {
    let size = dtype.size();
    if !bytes.len().is_multiple_of(2 * size) {
        return Err(SquadError::Invalid(format!(
            "{} bytes are no whole number of (start, end) pairs of {dtype:?} ({} bytes each)",
            bytes.len(),
            2 * size
        )));
    }
    let values: Vec<f64> = bytes
        .chunks_exact(size)
        .map(|c| match dtype {
            LogitDtype::Int8 => f64::from(c[0] as i8),
            LogitDtype::Int16 => f64::from(i16::from_le_bytes([c[0], c[1]])),
            LogitDtype::Int32 => f64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            LogitDtype::Int64 => i64::from_le_bytes(c.try_into().expect("8 bytes")) as f64,
            LogitDtype::Float16 => f16_to_f64(u16::from_le_bytes([c[0], c[1]])),
            LogitDtype::Float32 => f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            LogitDtype::Float64 => f64::from_le_bytes(c.try_into().expect("8 bytes")),
        })
        .collect();
    if !transposed {
        return Ok(values);
    }
    let n = values.len() / 2;
    Ok((0..n).flat_map(|k| [values[k], values[n + k]]).collect())
}

/// IEEE half precision, exactly.
fn f16_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((bits >> 10) & 0x1f);
    let fraction = f64::from(bits & 0x3ff);
    sign * match exponent {
        0 => fraction * 2f64.powi(-24),
        31 if fraction == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + fraction / 1024.0) * 2f64.powi(exponent - 15),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_decodes_and_transposed_pairs_interleave() {
        let halves: Vec<u8> = [0x3c00u16, 0xc000, 0x0001, 0x7bff]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            decode_logits(&halves, LogitDtype::Float16, false).unwrap(),
            [1.0, -2.0, 2f64.powi(-24), 65504.0]
        );
        let ints: Vec<u8> = [1i32, 2, 3, 4]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            decode_logits(&ints, LogitDtype::Int32, true).unwrap(),
            [1.0, 3.0, 2.0, 4.0]
        );
        assert!(decode_logits(&[0; 6], LogitDtype::Float32, false).is_err());
    }
}
