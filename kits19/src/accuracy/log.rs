//! LoadGen's `mlperf_log_accuracy.json`: a JSON list of
//! `{"seq_id", "qsl_idx", "data"}` where `data` is the response bytes in hex
//! (for 3d-unet: the uint8 prediction volume in C order).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use flate2::read::MultiGzDecoder;

use super::error::AccuracyError;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEntry {
    pub seq_id: Option<i64>,
    pub qsl_idx: i64,
    pub data: Vec<u8>,
}

/// Reads a log file; a gzip-compressed one (magic bytes) is unpacked first,
/// which lets test fixtures store the multi-megabyte hex compactly.
pub fn read_accuracy_log(path: impl AsRef<Path>) -> Result<Vec<LogEntry>, AccuracyError> {
    let path = path.as_ref();
    let io = |source| AccuracyError::Io {
        path: path.to_path_buf(),
        source,
    };
    let raw = std::fs::read(path).map_err(io)?;
    let text = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut s = String::new();
        MultiGzDecoder::new(&raw[..])
            .read_to_string(&mut s)
            .map_err(io)?;
        s
    } else {
        String::from_utf8(raw)
            .map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?
    };
    parse_accuracy_log(&text, path)
}

pub fn parse_accuracy_log(text: &str, path: &Path) -> Result<Vec<LogEntry>, AccuracyError> {
    let doc =
        serde_json::from_str::<serde_json::Value>(text).map_err(|source| AccuracyError::Json {
            path: path.to_path_buf(),
            source,
        })?;
    let bad = |entry, why: String| AccuracyError::Entry {
        path: path.to_path_buf(),
        entry,
        why,
    };
    let items = doc
        .as_array()
        .ok_or_else(|| bad(0, "the document is not a JSON list".into()))?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let qsl_idx = item
                .get("qsl_idx")
                .and_then(serde_json::Value::as_i64)
                .ok_or_else(|| bad(i, "no integer \"qsl_idx\"".into()))?;
            let hex = item
                .get("data")
                .and_then(serde_json::Value::as_str)
                .ok_or_else(|| bad(i, "no string \"data\"".into()))?;
            let data = decode_hex(hex).map_err(|why| bad(i, format!("\"data\": {why}")))?;
            let seq_id = item.get("seq_id").and_then(serde_json::Value::as_i64);
            Ok(LogEntry {
                seq_id,
                qsl_idx,
                data,
            })
        })
        .collect()
}

/// Like Python's `bytes.fromhex`: either letter case, ASCII whitespace
/// allowed between byte pairs (LoadGen writes none).
pub fn decode_hex(s: &str) -> Result<Vec<u8>, String> {
    fn nibble(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        }
    }
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
            _ => return Err(format!("non-hexadecimal number found at position {i}")),
        }
        i += 2;
    }
    Ok(out)
}

/// Puts the entries in case order, checking what `load_loadgen_log` checks
/// and in the same order: the entry count, each qsl_idx, each data length,
/// then that no qsl_idx repeats. `shapes[i]` is case i's volume shape.
pub fn assign_entries(
    entries: Vec<LogEntry>,
    cases: &[String],
    shapes: &[Vec<usize>],
    path: &Path,
) -> Result<Vec<Vec<u8>>, AccuracyError> {
    let path_buf = || path.to_path_buf();
    if entries.len() != cases.len() {
        return Err(AccuracyError::CountMismatch {
            path: path_buf(),
            entries: entries.len(),
            cases: cases.len(),
        });
    }
    let n = entries.len();
    let mut by_case: BTreeMap<usize, Vec<u8>> = BTreeMap::new();
    let mut repeated = Vec::new();
    for (entry, e) in entries.into_iter().enumerate() {
        let idx = usize::try_from(e.qsl_idx)
            .ok()
            .filter(|&i| i < cases.len())
            .ok_or(AccuracyError::QslIdx {
                path: path_buf(),
                entry,
                qsl_idx: e.qsl_idx,
                cases: cases.len(),
            })?;
        let want: usize = shapes[idx].iter().product();
        if e.data.len() != want {
            return Err(AccuracyError::Length {
                path: path_buf(),
                entry,
                qsl_idx: e.qsl_idx,
                case: cases[idx].clone(),
                shape: shapes[idx].clone(),
                got: e.data.len(),
                want,
            });
        }
        // the reference keeps the last entry for a repeated qsl_idx, then
        // fails on the count; the error below is raised in its place
        if by_case.insert(idx, e.data).is_some() {
            repeated.push(e.qsl_idx);
        }
    }
    if by_case.len() != n {
        let missing = (0..cases.len())
            .filter(|i| !by_case.contains_key(i))
            .map(|i| cases[i].clone())
            .collect();
        return Err(AccuracyError::Missing {
            path: path_buf(),
            repeated,
            missing,
        });
    }
    Ok(by_case.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_like_fromhex() {
        assert_eq!(decode_hex("00ff0A"), Ok(vec![0, 255, 10]));
        assert_eq!(decode_hex("00 ff\n0a"), Ok(vec![0, 255, 10]));
        assert!(decode_hex("0").is_err());
        assert!(decode_hex("0g").is_err());
    }

    #[test]
    fn entry_checks_follow_the_reference_order() {
        let cases = vec!["a".to_string(), "b".to_string()];
        let shapes = vec![vec![2], vec![1]];
        let e = |q, d: &[u8]| LogEntry {
            seq_id: None,
            qsl_idx: q,
            data: d.to_vec(),
        };
        let p = Path::new("log.json");
        let ok = assign_entries(vec![e(1, &[2]), e(0, &[0, 1])], &cases, &shapes, p).unwrap();
        assert_eq!(ok, vec![vec![0, 1], vec![2]]);
        let err = |v| assign_entries(v, &cases, &shapes, p).unwrap_err();
        assert!(matches!(
            err(vec![e(0, &[0, 1])]),
            AccuracyError::CountMismatch { .. }
        ));
        assert!(matches!(
            err(vec![e(0, &[0, 1]), e(-1, &[0])]),
            AccuracyError::QslIdx { .. }
        ));
        assert!(matches!(
            err(vec![e(0, &[0]), e(1, &[0])]),
            AccuracyError::Length { .. }
        ));
        match err(vec![e(0, &[0, 1]), e(0, &[1, 1])]) {
            AccuracyError::Missing {
                repeated, missing, ..
            } => {
                assert_eq!((repeated, missing), (vec![0], vec!["b".to_string()]));
            }
            other => panic!("{other}"),
        }
    }
}
