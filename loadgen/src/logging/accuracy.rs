//! `mlperf_log_accuracy.json` in the official byte layout: `[`, then each entry on its own
//! line as `{ "seq_id" : N, "qsl_idx" : N, "data" : "HEX" }` (token runs add `token_data` and
//! `token_count`), and `\n]\n`. The compliance scripts read it line by line.

use std::io::{self, Write};

use crate::types::AccuracyRecord;

pub struct AccuracyFileWriter<W: Write> {
    out: W,
    entries: u64,
}

impl<W: Write> AccuracyFileWriter<W> {
    pub fn new(mut out: W) -> io::Result<Self> {
        out.write_all(b"[")?;
        Ok(AccuracyFileWriter { out, entries: 0 })
    }

    pub fn write(&mut self, record: &AccuracyRecord) -> io::Result<()> {
        let mut line = String::with_capacity(64 + 2 * record.data.len());
        line.push_str(if self.entries == 0 { "\n{ " } else { ",\n{ " });
        line.push_str(&format!(
            "\"seq_id\" : {}, \"qsl_idx\" : {}, \"data\" : \"",
            record.seq_id, record.qsl_idx
        ));
        push_hex(&mut line, &record.data);
        line.push('"');
        if let Some(count) = record.token_count {
            if let Some(first_token) = &record.token_data {
                line.push_str(", \"token_data\" : \"");
                push_hex(&mut line, first_token);
                line.push('"');
            }
            line.push_str(&format!(", \"token_count\" : {count}"));
        }
        line.push_str(" }");
        self.out.write_all(line.as_bytes())?;
        self.entries += 1;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Closes the list: `\n]\n` (an empty log is the 4 bytes `[\n]\n`).
    pub fn finish(mut self) -> io::Result<()> {
        self.out.write_all(b"\n]\n")?;
        self.out.flush()
    }
}

fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    for &byte in bytes {
        out.push(DIGITS[usize::from(byte >> 4)] as char);
        out.push(DIGITS[usize::from(byte & 0xf)] as char);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(seq_id: u64, qsl_idx: usize, data: &[u8]) -> AccuracyRecord {
        AccuracyRecord {
            seq_id,
            qsl_idx,
            data: data.to_vec(),
            token_data: None,
            token_count: None,
        }
    }

    #[test]
    fn empty_log_is_four_bytes() {
        let mut out = Vec::new();
        AccuracyFileWriter::new(&mut out).unwrap().finish().unwrap();
        assert_eq!(out, b"[\n]\n");
    }

    #[test]
    fn entries_use_the_official_framing() {
        let mut out = Vec::new();
        let mut writer = AccuracyFileWriter::new(&mut out).unwrap();
        writer.write(&record(0, 3, &[3, 0, 0, 0])).unwrap();
        let mut token = record(1, 10, &[0xab, 0x01]);
        token.token_data = Some(vec![0xab]);
        token.token_count = Some(5);
        writer.write(&token).unwrap();
        let mut offline = record(2, 11, &[]);
        offline.token_count = Some(2);
        writer.write(&offline).unwrap();
        writer.finish().unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "[\n{ \"seq_id\" : 0, \"qsl_idx\" : 3, \"data\" : \"03000000\" },\n\
             { \"seq_id\" : 1, \"qsl_idx\" : 10, \"data\" : \"AB01\", \"token_data\" : \"AB\", \"token_count\" : 5 },\n\
             { \"seq_id\" : 2, \"qsl_idx\" : 11, \"data\" : \"\", \"token_count\" : 2 }\n]\n"
        );
    }
}
