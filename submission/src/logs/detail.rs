//! A LoadGen detail log: every `:::MLLOG` line is JSON and the first line must carry the
//! marker. A key logged more than once (a submission run logs its accuracy series, then its
//! performance series) has a first and a last value: [`DetailLog::get`] and the typed readers
//! give the first, as the official submission checker reads it; [`DetailLog::last`] the last,
//! which is what the run ended with.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

const MARKER: &str = ":::MLLOG";

#[derive(Debug, thiserror::Error)]
pub enum DetailLogError {
    #[error("{}: {message}", path.display())]
    Read { path: PathBuf, message: String },
    #[error("{}:{line}: {message}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// The parsed log: each key's first and last value, and the text of every entry marked as an
/// error.
#[derive(Debug, Clone, Default)]
pub struct DetailLog {
    path: PathBuf,
    values: HashMap<String, Value>,
    /// The last value of each key logged more than once.
    last_values: HashMap<String, Value>,
    pub errors: Vec<String>,
    /// Every entry marked as an error or a warning, and every `generic_message`, in order.
    pub messages: Vec<LoggedMessage>,
}

/// An entry of the log that is a message rather than a figure.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LoggedMessage {
    /// `Error`, `Warning` or `Info`, as the native engine's diagnostics say.
    pub severity: &'static str,
    pub key: String,
    pub message: String,
}

impl DetailLog {
    pub fn read(path: &Path) -> Result<DetailLog, DetailLogError> {
        let text = std::fs::read_to_string(path).map_err(|e| DetailLogError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        DetailLog::parse_from(path, &text)
    }

    /// Parses `text`, read from `path` (named in errors and kept for messages).
    pub fn parse_from(path: &Path, text: &str) -> Result<DetailLog, DetailLogError> {
        let mut log = DetailLog::parse(text).map_err(|(line, message)| DetailLogError::Line {
            path: path.to_path_buf(),
            line,
            message,
        })?;
        log.path = path.to_path_buf();
        Ok(log)
    }

    /// The file it was read from (empty when parsed from text).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The samples an accuracy run issues: `effective_accuracy_sample_count`, or the QSL's
    /// total in logs of LoadGens that do not write it.
    pub fn accuracy_sample_count(&self) -> Option<u64> {
        self.u64("effective_accuracy_sample_count")
            .or_else(|| self.u64("qsl_reported_total_count"))
    }

    /// The official parser's `num_errors()`: the logged `num_errors` when there is one, else
    /// the entries marked as errors.
    pub fn num_errors(&self) -> u64 {
        self.u64("num_errors").unwrap_or(self.errors.len() as u64)
    }

    /// Parses the text; an error carries the 1-based line number.
    pub fn parse(text: &str) -> Result<DetailLog, (usize, String)> {
        if text.trim().is_empty() {
            // Said once, rather than as every field the log lacks.
            return Err((
                1,
                "the log is empty: the run wrote nothing (it ended before its test began?)"
                    .to_string(),
            ));
        }
        let mut log = DetailLog::default();
        for (index, line) in text.lines().enumerate() {
            let Some(json) = line.strip_prefix(MARKER) else {
                if index == 0 {
                    return Err((1, format!("the first line does not start with {MARKER}")));
                }
                continue;
            };
            let entry: Value = serde_json::from_str(json)
                .map_err(|e| (index + 1, format!("not a JSON log entry: {e}")))?;
            let Some(key) = entry.get("key").and_then(Value::as_str) else {
                return Err((index + 1, "a log entry without a key".to_string()));
            };
            let value = entry.get("value").cloned().unwrap_or(Value::Null);
            let is_error = entry
                .pointer("/metadata/is_error")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let is_warning = entry
                .pointer("/metadata/is_warning")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let text = || match &value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            if is_error {
                log.errors.push(text());
            }
            let severity = match (is_error, is_warning, key) {
                (true, _, _) => Some("Error"),
                (false, true, _) => Some("Warning"),
                (false, false, "generic_message") => Some("Info"),
                _ => None,
            };
            if let Some(severity) = severity {
                log.messages.push(LoggedMessage {
                    severity,
                    key: key.to_string(),
                    message: text(),
                });
            }
            match log.values.entry(key.to_string()) {
                Entry::Vacant(first) => {
                    first.insert(value);
                }
                Entry::Occupied(_) => {
                    log.last_values.insert(key.to_string(), value);
                }
            }
        }
        Ok(log)
    }

    /// Adds the entries of a [`PROVENANCE_FILE`] the log itself lacks; none when there is no
    /// such file. The log's own entries win.
    pub fn add_provenance_from(&mut self, path: &Path) -> Result<(), DetailLogError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(DetailLogError::Read {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                })
            }
        };
        let entries: serde_json::Map<String, Value> =
            serde_json::from_str(&text).map_err(|e| DetailLogError::Line {
                path: path.to_path_buf(),
                line: e.line(),
                message: format!("not a JSON object: {e}"),
            })?;
        for (key, value) in entries {
            self.values.entry(key).or_insert(value);
        }
        Ok(())
    }

    /// The key's first value, as the official checker reads it.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.values.get(key)
    }

    /// The key's last value: what the run ended with.
    pub fn last(&self, key: &str) -> Option<&Value> {
        self.last_values.get(key).or_else(|| self.values.get(key))
    }

    /// Every key the log holds (its first values), in no particular order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }

    /// A number, whether logged as a JSON number or as text (LoadGen logs some as strings).
    pub fn f64(&self, key: &str) -> Option<f64> {
        match self.get(key)? {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse().ok(),
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }

    /// An integer; u64 seeds keep every digit.
    pub fn u64(&self, key: &str) -> Option<u64> {
        match self.get(key)? {
            Value::Number(n) => n.as_u64().or_else(|| n.as_f64().map(|f| f as u64)),
            Value::String(s) => s.trim().parse().ok(),
            Value::Bool(b) => Some(u64::from(*b)),
            _ => None,
        }
    }

    pub fn bool(&self, key: &str) -> Option<bool> {
        match self.get(key)? {
            Value::Bool(b) => Some(*b),
            Value::Number(n) => n.as_u64().map(|v| v != 0),
            Value::String(s) => match s.as_str() {
                "true" | "1" => Some(true),
                "false" | "0" => Some(false),
                _ => None,
            },
            _ => None,
        }
    }

    /// The entries whose key starts with `prefix`, sorted by key.
    pub fn with_prefix<'a>(&'a self, prefix: &'a str) -> Vec<(&'a str, &'a Value)> {
        let mut entries: Vec<_> = self
            .values
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        entries.sort_by_key(|(k, _)| *k);
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_occurrence_wins_and_errors_are_collected() {
        let text = r#":::MLLOG {"key": "a", "value": 1, "metadata": {"is_error": false}}
:::MLLOG {"key": "a", "value": 2, "metadata": {"is_error": false}}
not a log line
:::MLLOG {"key": "error_invalid_config", "value": "Multiple conf files are used.", "metadata": {"is_error": true}}
:::MLLOG {"key": "seed", "value": 16159082839903944936, "metadata": {"is_error": false}}
"#;
        let log = DetailLog::parse(text).unwrap();
        assert_eq!(log.u64("a"), Some(1));
        assert_eq!(log.last("a"), Some(&Value::from(2)));
        assert_eq!(log.last("seed"), log.get("seed"));
        assert_eq!(log.errors, vec!["Multiple conf files are used."]);
        assert_eq!(log.messages.len(), 1);
        assert_eq!(log.messages[0].severity, "Error");
        assert_eq!(log.messages[0].key, "error_invalid_config");
        assert_eq!(log.u64("seed"), Some(16159082839903944936));
    }

    #[test]
    fn a_first_line_without_the_marker_or_a_bad_entry_is_refused() {
        assert_eq!(DetailLog::parse("hello\n").unwrap_err().0, 1);
        let bad = ":::MLLOG {\"key\": \"a\", \"value\": 1}\n:::MLLOG {oops\n";
        assert_eq!(DetailLog::parse(bad).unwrap_err().0, 2);
        for empty in ["", "\n \n"] {
            let (line, message) = DetailLog::parse(empty).unwrap_err();
            assert_eq!(line, 1);
            assert!(message.contains("the log is empty"), "{message}");
        }
    }
}
