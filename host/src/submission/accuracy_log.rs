//! Shrinking an accuracy log for the tree as MLPerf's truncate tool does: its sha256 goes into
//! accuracy.txt as `hash=…`, and the log keeps its first and last 4096 bytes.

use std::io;
use std::path::Path;

use sha2::{Digest, Sha256};

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
    fn keeps_both_ends_of_a_long_log() {
        let log: Vec<u8> = (0..10_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let cut = truncated(&log);
        assert_eq!(cut.len(), 4096 * 2 + 7);
        assert_eq!(&cut[..4096], &log[..4096]);
        assert_eq!(&cut[4096..4103], b"\n\n...\n\n");
        assert_eq!(&cut[4103..], &log[10_000 - 4096..]);
        assert_eq!(truncated(b"[]"), b"[]");
    }
}
