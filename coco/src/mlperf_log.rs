//! Reading loadgen's `mlperf_log_accuracy.json`: a list of
//! `{seq_id, qsl_idx, data}` with `data` the response bytes in hex.

use std::path::Path;

use serde::Deserialize;

use crate::error::Error;

/// One loadgen accuracy record, in log order.
#[derive(Debug, Clone, Deserialize)]
pub struct LogEntry {
    #[serde(default)]
    pub seq_id: u64,
    pub qsl_idx: i64,
    pub data: String,
}

pub fn read_log(path: &Path) -> Result<Vec<LogEntry>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::json(path, e))
}

fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// `bytes.fromhex`: pairs of hex digits, either case, ASCII whitespace
/// allowed between pairs (loadgen writes uppercase without spaces).
pub fn decode_hex(s: &str, seq_id: u64) -> Result<Vec<u8>, Error> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 2);
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let hi = nibble(b[i]);
        let lo = b.get(i + 1).copied().and_then(nibble);
        match (hi, lo) {
            (Some(h), Some(l)) => out.push(h << 4 | l),
            _ => {
                return Err(Error::BadHex {
                    seq_id,
                    reason: format!("non-hex or unpaired digit at position {i}"),
                })
            }
        }
        i += 2;
    }
    Ok(out)
}

/// `np.frombuffer(bytes, np.float32)`: native (little-endian) float32s.
pub fn as_f32(bytes: &[u8], seq_id: u64) -> Result<Vec<f32>, Error> {
    if !bytes.len().is_multiple_of(4) {
        return Err(Error::PayloadNotF32 {
            seq_id,
            len: bytes.len(),
        });
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex() {
        assert_eq!(decode_hex("0000803F", 0).unwrap(), vec![0, 0, 0x80, 0x3f]);
        assert_eq!(decode_hex("00 0a", 0).unwrap(), vec![0, 10]);
        assert!(decode_hex("0", 0).is_err());
        assert_eq!(as_f32(&[0, 0, 0x80, 0x3f], 0).unwrap(), vec![1.0]);
        assert!(as_f32(&[0, 0, 0x80], 0).is_err());
    }
}
