//! `mlperf_log_detail.txt` entries: one `:::MLLOG {json}` line per key, formatted as the
//! official LoadGen formats them — except that every line is strict JSON (strings escaped, no
//! `inf`/`nan` tokens), where the official output can break.

use std::fmt::Write as _;
use std::panic::Location;

use super::number::format_g6;

/// A detail-log value, typed as the official log types it.
#[derive(Debug, Clone, PartialEq)]
pub enum DetailValue {
    Str(String),
    Int(i64),
    UInt(u64),
    /// Printed like a C++ `double` through a default ostream (6 significant digits).
    Float(f64),
    Bool(bool),
    List(Vec<u64>),
    /// Sorted keys, printed without spaces.
    Map(Vec<(String, String)>),
}

impl From<&str> for DetailValue {
    fn from(v: &str) -> Self {
        DetailValue::Str(v.to_string())
    }
}

impl From<String> for DetailValue {
    fn from(v: String) -> Self {
        DetailValue::Str(v)
    }
}

impl From<i64> for DetailValue {
    fn from(v: i64) -> Self {
        DetailValue::Int(v)
    }
}

impl From<u64> for DetailValue {
    fn from(v: u64) -> Self {
        DetailValue::UInt(v)
    }
}

impl From<usize> for DetailValue {
    fn from(v: usize) -> Self {
        DetailValue::UInt(v as u64)
    }
}

impl From<i32> for DetailValue {
    fn from(v: i32) -> Self {
        DetailValue::Int(i64::from(v))
    }
}

impl From<f64> for DetailValue {
    fn from(v: f64) -> Self {
        DetailValue::Float(v)
    }
}

impl From<bool> for DetailValue {
    fn from(v: bool) -> Self {
        DetailValue::Bool(v)
    }
}

impl DetailValue {
    fn write_json(&self, out: &mut String) {
        match self {
            DetailValue::Str(s) => write_json_string(out, s),
            DetailValue::Int(v) => {
                let _ = write!(out, "{v}");
            }
            DetailValue::UInt(v) => {
                let _ = write!(out, "{v}");
            }
            DetailValue::Float(v) if v.is_finite() => out.push_str(&format_g6(*v)),
            // The official log prints `inf`/`nan`, which no JSON parser accepts.
            DetailValue::Float(_) => out.push_str("null"),
            DetailValue::Bool(v) => out.push_str(if *v { "true" } else { "false" }),
            DetailValue::List(values) => {
                out.push('[');
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{v}");
                }
                out.push(']');
            }
            DetailValue::Map(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_json_string(out, k);
                    out.push(':');
                    write_json_string(out, v);
                }
                out.push('}');
            }
        }
    }
}

fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// One detail-log entry.
#[derive(Debug, Clone, PartialEq)]
pub struct DetailEntry {
    pub key: String,
    pub value: DetailValue,
    pub is_error: bool,
    pub is_warning: bool,
    /// Where the entry was raised (our source file's name) and its line.
    pub file: &'static str,
    pub line: u32,
    /// Nanoseconds since the log's origin when the entry was raised.
    pub time_ns: i64,
    pub tid: u64,
}

impl DetailEntry {
    #[track_caller]
    pub fn new(key: impl Into<String>, value: impl Into<DetailValue>, time_ns: i64) -> Self {
        let caller = Location::caller();
        let file = caller.file();
        let file = file.rsplit(['/', '\\']).next().unwrap_or(file);
        DetailEntry {
            key: key.into(),
            value: value.into(),
            is_error: false,
            is_warning: false,
            file,
            line: caller.line(),
            time_ns,
            tid: thread_id(),
        }
    }

    /// The `:::MLLOG` line, without the newline.
    pub fn to_line(&self, pid: u32) -> String {
        let mut line = String::with_capacity(256);
        line.push_str(":::MLLOG {\"key\": ");
        write_json_string(&mut line, &self.key);
        line.push_str(", \"value\": ");
        self.value.write_json(&mut line);
        let time = self.time_ns.max(0);
        let _ = write!(
            line,
            ", \"time_ms\": {}.{:06}, \"namespace\": \"mlperf::logging\", \"event_type\": \"POINT_IN_TIME\", \"metadata\": {{\"is_error\": {}, \"is_warning\": {}, \"file\": ",
            time / 1_000_000,
            time % 1_000_000,
            self.is_error,
            self.is_warning
        );
        write_json_string(&mut line, self.file);
        let _ = write!(
            line,
            ", \"line_no\": {}, \"pid\": {pid}, \"tid\": {}}}}}",
            self.line, self.tid
        );
        line
    }
}

/// The kernel's id of the calling thread, as the official metadata carries.
pub fn thread_id() -> u64 {
    thread_local! {
        static TID: u64 = current_tid();
    }
    TID.with(|tid| *tid)
}

#[cfg(target_os = "linux")]
fn current_tid() -> u64 {
    extern "C" {
        fn gettid() -> i32;
    }
    // SAFETY: gettid has no preconditions and cannot fail.
    u64::from(unsafe { gettid() } as u32)
}

#[cfg(not(target_os = "linux"))]
fn current_tid() -> u64 {
    u64::from(std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_strict_json_even_for_awkward_values() {
        let mut entry = DetailEntry::new("sut_name", "a \"quoted\"\nname\\", 1_234_567);
        entry.tid = 7;
        let line = entry.to_line(42);
        let json: serde_json::Value = serde_json::from_str(&line[":::MLLOG ".len()..]).unwrap();
        assert_eq!(json["value"], "a \"quoted\"\nname\\");
        assert_eq!(json["metadata"]["file"], "detail.rs");
        assert_eq!(json["metadata"]["pid"], 42);
        assert!(line.contains("\"time_ms\": 1.234567,"));
        let inf = DetailEntry::new("result_samples_per_second", f64::INFINITY, 0).to_line(1);
        assert!(
            serde_json::from_str::<serde_json::Value>(&inf[9..]).is_ok(),
            "{inf}"
        );
    }

    #[test]
    fn lists_and_maps_print_compactly() {
        let mut line = String::new();
        DetailValue::List(vec![3, 1, 2]).write_json(&mut line);
        assert_eq!(line, "[3,1,2]");
        line.clear();
        DetailValue::List(vec![]).write_json(&mut line);
        assert_eq!(line, "[]");
        line.clear();
        DetailValue::Map(vec![("/a".into(), "1".into()), ("/b".into(), "2".into())])
            .write_json(&mut line);
        assert_eq!(line, r#"{"/a":"1","/b":"2"}"#);
    }
}
