//! What the verification scripts take from a detail log (read as the official checker's
//! parser reads it, `submission::detail_log`), failing as they do on a missing key.

pub use crate::logs::DetailLog;

use super::ComplianceError;

/// The fields the scripts read, with their errors.
pub trait LogFields {
    /// The first entry's value as text (strings unquoted), or an error naming the key.
    fn text(&self, key: &str) -> Result<String, ComplianceError>;
    /// The first entry's value as Python's `float()` reads it (numbers, or numeric text).
    fn number(&self, key: &str, hint: &str) -> Result<f64, ComplianceError>;
}

impl LogFields for DetailLog {
    fn text(&self, key: &str) -> Result<String, ComplianceError> {
        match self.get(key) {
            Some(serde_json::Value::String(text)) => Ok(text.clone()),
            Some(other) => Ok(other.to_string()),
            None => Err(missing(self, key, "")),
        }
    }

    fn number(&self, key: &str, hint: &str) -> Result<f64, ComplianceError> {
        let value = self.get(key).ok_or_else(|| missing(self, key, hint))?;
        let number = match value {
            serde_json::Value::Number(number) => number.as_f64(),
            serde_json::Value::String(text) => text.trim().parse().ok(),
            _ => None,
        };
        number.ok_or_else(|| {
            ComplianceError::invalid(self.path(), format!("{key} = {value}: not a number"))
        })
    }
}

fn missing(log: &DetailLog, key: &str, hint: &str) -> ComplianceError {
    ComplianceError::MissingKey {
        path: log.path().to_path_buf(),
        key: key.to_owned(),
        hint: hint.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn line(key: &str, value: &str, is_error: bool) -> String {
        format!(
            ":::MLLOG {{\"key\": \"{key}\", \"value\": {value}, \"time_ms\": 0.000001, \"namespace\": \"mlperf::logging\", \"event_type\": \"POINT_IN_TIME\", \"metadata\": {{\"is_error\": {is_error}, \"is_warning\": false, \"file\": \"x.cc\", \"line_no\": 1, \"pid\": 1, \"tid\": 1}}}}\n"
        )
    }

    #[test]
    fn the_first_entry_of_a_key_wins_and_errors_are_counted() {
        let text = [
            line("effective_scenario", "\"Offline\"", false),
            line("result_samples_per_second", "1.72e+06", false),
            line("result_samples_per_second", "5", false),
            line("error_runtime", "\"oops\"", true),
        ]
        .concat();
        let log = DetailLog::parse_from(Path::new("d.txt"), &text).unwrap();
        assert_eq!(log.text("effective_scenario").unwrap(), "Offline");
        assert_eq!(
            log.number("result_samples_per_second", "").unwrap(),
            1_720_000.0
        );
        assert_eq!(log.num_errors(), 1);
        let with_count = format!("{text}{}", line("num_errors", "0", false));
        let log = DetailLog::parse_from(Path::new("d.txt"), &with_count).unwrap();
        assert_eq!(
            log.num_errors(),
            0,
            "num_errors, when logged, is what counts"
        );
        let error = log.number("result_validity", " (hint)").unwrap_err();
        assert_eq!(error.to_string(), "d.txt: no result_validity entry (hint)");
    }

    #[test]
    fn a_file_that_is_not_a_detail_log_is_named() {
        let error = DetailLog::parse_from(Path::new("x/summary.txt"), "=====\n").unwrap_err();
        assert!(error
            .to_string()
            .starts_with("x/summary.txt:1: the first line"));
        let bad = format!("{}:::MLLOG {{not json\n", line("a", "1", false));
        let error = DetailLog::parse_from(Path::new("d.txt"), &bad)
            .unwrap_err()
            .to_string();
        assert!(error.contains("d.txt:2: not a JSON log entry"), "{error}");
    }
}
