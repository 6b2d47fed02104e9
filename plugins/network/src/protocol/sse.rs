//! Server-sent events, as OpenAI-compatible servers stream completions: `data:` lines, an
//! event ending at a blank line, `:` comments and other fields ignored (the WHATWG
//! EventSource parsing rules, reduced to what a completion stream uses).

/// Cuts a byte stream into events' data, however the bytes arrive split.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    buffer: Vec<u8>,
    /// Where the next line starts in `buffer`.
    start: usize,
    /// The data lines of the event being read, joined by newlines.
    data: String,
    has_data: bool,
}

impl SseDecoder {
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start == self.buffer.len() {
            self.buffer.clear();
            self.start = 0;
        }
        self.buffer.extend_from_slice(bytes);
    }

    /// The next complete event's data; None until more bytes complete one.
    pub(crate) fn next_event(&mut self) -> Result<Option<String>, String> {
        while let Some(end) = self.buffer[self.start..].iter().position(|&b| b == b'\n') {
            let line = &self.buffer[self.start..self.start + end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let line = std::str::from_utf8(line)
                .map_err(|_| "an event line is not UTF-8".to_string())?
                .to_owned();
            self.start += end + 1;
            if line.is_empty() {
                if self.has_data {
                    self.has_data = false;
                    return Ok(Some(std::mem::take(&mut self.data)));
                }
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line.as_str(), ""),
            };
            if field == "data" {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
        }
        // Keep only the unfinished line.
        self.buffer.drain(..self.start);
        self.start = 0;
        Ok(None)
    }

    /// Bytes received that no complete line has taken yet (a stream that ends mid-event).
    pub(crate) fn has_partial_event(&self) -> bool {
        self.has_data || self.start < self.buffer.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Vec<String> {
        let mut decoder = SseDecoder::default();
        let mut out = Vec::new();
        for chunk in chunks {
            decoder.push(chunk);
            while let Some(event) = decoder.next_event().unwrap() {
                out.push(event);
            }
        }
        out
    }

    #[test]
    fn events_end_at_blank_lines_however_the_bytes_are_split() {
        let stream = b"data: {\"a\":1}\n\n: keep-alive\n\ndata: {\"b\":2}\r\n\r\ndata: [DONE]\n\n";
        let whole = events(&[stream]);
        assert_eq!(whole, ["{\"a\":1}", "{\"b\":2}", "[DONE]"]);
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(events(&bytes), whole);
        let halves: Vec<&[u8]> = stream.chunks(7).collect();
        assert_eq!(events(&halves), whole);
    }

    #[test]
    fn data_lines_join_and_other_fields_are_ignored() {
        let stream = b"event: completion\nid: 3\ndata:first\ndata: second\nretry: 10\n\n";
        assert_eq!(events(&[stream]), ["first\nsecond"]);
    }

    #[test]
    fn an_unfinished_event_is_not_emitted() {
        let mut decoder = SseDecoder::default();
        decoder.push(b"data: {\"a\"");
        assert_eq!(decoder.next_event().unwrap(), None);
        assert!(decoder.has_partial_event());
        decoder.push(b":1}\n");
        assert_eq!(decoder.next_event().unwrap(), None);
        assert!(decoder.has_partial_event());
        decoder.push(b"\n");
        assert_eq!(decoder.next_event().unwrap().as_deref(), Some("{\"a\":1}"));
        assert!(!decoder.has_partial_event());
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error() {
        let mut decoder = SseDecoder::default();
        decoder.push(b"data: \xff\xfe\n\n");
        assert!(decoder.next_event().unwrap_err().contains("not UTF-8"));
    }
}
