//! `mlperf_log_accuracy.json` read back, decoded and truncated: the one reader of the accuracy
//! log for scoring, compliance verification and the submission tree.

use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

#[derive(Debug, thiserror::Error)]
pub enum AccuracyLogError {
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("{}: not an MLPerf accuracy log: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
}

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

/// Reads every entry of an accuracy log, in file order (duplicates kept). A file that is empty
/// or does not begin as a JSON array is refused before the rest of it is read.
pub fn read_accuracy_log(path: &Path) -> Result<Vec<AccuracyLogEntry>, AccuracyLogError> {
    let invalid = |message: String| AccuracyLogError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let read_error = |source| AccuracyLogError::Read {
        path: path.to_path_buf(),
        source,
    };
    // Before it is opened: opening a FIFO waits for a writer.
    crate::input_file::ensure_regular(path).map_err(read_error)?;
    let mut file = std::fs::File::open(path).map_err(read_error)?;
    let mut bytes = vec![0u8; 256];
    let got = io::Read::read(&mut file, &mut bytes).map_err(read_error)?;
    bytes.truncate(got);
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        None if got == 0 => return Err(invalid("the file is empty".into())),
        Some(b'[') => {}
        _ => {
            return Err(invalid(
                "it does not begin with `[` (a JSON array of responses)".into(),
            ))
        }
    }
    io::Read::read_to_end(&mut file, &mut bytes).map_err(read_error)?;
    serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))
}

/// An accuracy log fit to be filed: it parses, holds responses, and covers the `expected`
/// samples of its run (its detail log's accuracy sample count) when that is known. Returns
/// how many distinct samples it covers.
pub fn verify_whole(path: &Path, expected: Option<u64>) -> Result<u64, AccuracyLogError> {
    let entries = read_accuracy_log(path)?;
    let covered = entries
        .iter()
        .map(|entry| entry.qsl_idx)
        .collect::<std::collections::HashSet<_>>()
        .len() as u64;
    let short = match expected {
        _ if covered == 0 => Some("it holds no response".to_string()),
        Some(expected) if covered < expected => Some(format!(
            "it holds responses for {covered} of the {expected} samples the run issued (cut short?)"
        )),
        _ => None,
    };
    match short {
        Some(message) => Err(AccuracyLogError::Invalid {
            path: path.to_path_buf(),
            message,
        }),
        None => Ok(covered),
    }
}

/// Hex text (either case) to bytes.
pub fn decode_hex(text: &str) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err(format!("odd number of hex digits ({})", text.len()));
    }
    text.as_bytes()
        .chunks_exact(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|digits| u8::from_str_radix(digits, 16).ok())
                .ok_or_else(|| format!("not hex: {:?}", String::from_utf8_lossy(pair)))
        })
        .collect()
}

/// Shrinking an accuracy log for the tree as MLPerf's truncate tool does: its sha256 goes into
/// accuracy.txt as `hash=…`, and the log keeps its first and last 4096 bytes.
/// Bytes kept from each end.
const VIEWABLE_BYTES: usize = 4096;

/// Copies the accuracy log `from` to `to_log` truncated, and `accuracy_txt` to `to_txt` with
/// the full log's hash appended.
pub fn file_truncated(
    from: &Path,
    accuracy_txt: &Path,
    to_log: &Path,
    to_txt: &Path,
) -> io::Result<()> {
    let log = std::fs::read(from)?;
    let hash = hex(&Sha256::digest(&log));
    let mut txt = std::fs::read(accuracy_txt)?;
    txt.extend_from_slice(format!("\nhash={hash}\n").as_bytes());
    std::fs::write(to_txt, txt)?;
    std::fs::write(to_log, truncated(&log))
}

/// The first and last 4096 bytes around `\n\n...\n\n`; a log under 4096 bytes stays whole.
pub fn truncated(log: &[u8]) -> Vec<u8> {
    if log.len() < VIEWABLE_BYTES {
        return log.to_vec();
    }
    let mut out = Vec::with_capacity(2 * VIEWABLE_BYTES + 7);
    out.extend_from_slice(&log[..VIEWABLE_BYTES]);
    out.extend_from_slice(b"\n\n...\n\n");
    out.extend_from_slice(&log[log.len() - VIEWABLE_BYTES..]);
    out
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_decodes_or_says_why_not() {
        assert_eq!(decode_hex("00FFa0"), Ok(vec![0, 255, 160]));
        assert!(decode_hex("0G").unwrap_err().contains("not hex"));
        assert!(decode_hex("abc").unwrap_err().contains("odd"));
        assert_eq!(decode_hex(""), Ok(vec![]));
    }

    #[test]
    fn keeps_both_ends_of_a_long_log() {
        let log: Vec<u8> = (0..10_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let cut = truncated(&log);
        assert_eq!(cut.len(), 4096 * 2 + 7);
        assert_eq!(&cut[..4096], &log[..4096]);
        assert_eq!(&cut[4096..4103], b"\n\n...\n\n");
        assert_eq!(&cut[4103..], &log[10_000 - 4096..]);
        assert_eq!(truncated(b"[]"), b"[]");
    }

    #[test]
    fn records_keep_their_order_duplicates_and_token_fields() {
        let dir = std::env::temp_dir().join(format!("accuracy-log-{}", std::process::id()));
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
        assert_eq!(verify_whole(&path, Some(1)).unwrap(), 1);
        let short = verify_whole(&path, Some(2)).unwrap_err().to_string();
        assert!(short.contains("1 of the 2 samples"), "{short}");
        for (text, why) in [
            ("", "the file is empty"),
            (" \n[]\n", "no response"),
            ("{\"a\": 1}", "does not begin with `[`"),
            ("[\n{ \"seq_id\" : 1, \"qsl_idx\" : 7, \"da", "EOF"),
        ] {
            std::fs::write(&path, text).unwrap();
            let error = verify_whole(&path, None).unwrap_err().to_string();
            assert!(error.contains(why), "{text:?}: {error}");
        }
        // A sparse GiB of zeros is refused from its first bytes, not read whole first.
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(1 << 30).unwrap();
        let error = read_accuracy_log(&path).unwrap_err().to_string();
        assert!(error.contains("does not begin with `[`"), "{error}");
        std::fs::write(&path, "[{\"qsl_idx\": \"seven\"}]").unwrap();
        let error = read_accuracy_log(&path).unwrap_err().to_string();
        assert!(error.contains("log.json") && error.contains("not an MLPerf accuracy log"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
