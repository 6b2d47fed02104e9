//! TEST07 (`compliance/TEST07/run_verification.py`): a performance-mode run that logs every
//! sample scores at least the audit.config's `test07_accuracy_threshold` with the benchmark's
//! accuracy metric. TEST09 (`compliance/TEST09/run_verification.py`): its responses' mean
//! length in int32 tokens lies within `test09_min_output_tokens` and
//! `test09_max_output_tokens`. The thresholds are audit.config keys LoadGen ignores.

use std::path::Path;

use super::accuracy_log::read_accuracy_log;
use super::{ComplianceError, Verification};
use crate::logs::accuracy::decode_hex;

pub const TEST07_THRESHOLD: &str = "test07_accuracy_threshold";
pub const TEST09_MIN_OUTPUT_TOKENS: &str = "test09_min_output_tokens";
pub const TEST09_MAX_OUTPUT_TOKENS: &str = "test09_max_output_tokens";

/// The value of `model.scenario.KEY = value` in an audit.config, read as the scripts read it
/// (the last such line, the key's last dotted part, an inline `#` comment dropped).
pub fn audit_config_number(path: &Path, key: &str) -> Result<f64, ComplianceError> {
    let text = std::fs::read_to_string(path).map_err(|e| ComplianceError::file(path, e))?;
    let mut found = None;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((name, value)) = line.split_once('=') else {
            continue;
        };
        let parts: Vec<&str> = name.trim().split('.').collect();
        if parts.len() < 3 || parts[parts.len() - 1] != key {
            continue;
        }
        let value = value.split('#').next().unwrap_or("").trim();
        let number: f64 = value.parse().map_err(|_| {
            ComplianceError::invalid(path, format!("{key} = {value:?}: not a number"))
        })?;
        found = Some(number);
    }
    found.ok_or_else(|| {
        ComplianceError::invalid(
            path,
            format!("no {key}: the compliance test's threshold (*.*.{key} = …)"),
        )
    })
}

/// TEST07's `verify_accuracy.txt` from the compliance run's score (`metric` names it).
pub fn verify_test07(metric: &str, score: f64, threshold: f64) -> Verification {
    let passed = score >= threshold;
    let rule = "=".repeat(80);
    let text = format!(
        "{metric}: {score}\n\n{rule}\nTEST07 Verification Summary\n{rule}\n\
         Accuracy score: {score}\nAccuracy threshold: {threshold}\n\
         Accuracy check pass: {}\n{}\n",
        python_bool(passed),
        if passed { "TEST PASS" } else { "TEST FAIL" }
    );
    Verification::new(text, passed)
}

/// TEST09's `verify_output_len.txt` from the compliance run's accuracy log.
pub fn verify_test09(
    compliance_log: &Path,
    min_tokens: f64,
    max_tokens: f64,
) -> Result<Verification, ComplianceError> {
    let records = read_accuracy_log(compliance_log)?;
    if records.is_empty() {
        return Err(ComplianceError::invalid(
            compliance_log,
            "no responses: TEST09 needs every sample logged",
        ));
    }
    // As the script: a record that cannot be decoded counts as 0 tokens.
    let lengths: Vec<usize> = records
        .iter()
        .map(|r| decode_hex(&r.data).map_or(0, |bytes| bytes.len() / 4))
        .collect();
    let count = lengths.len() as f64;
    let mean = lengths.iter().sum::<usize>() as f64 / count;
    let variance = lengths
        .iter()
        .map(|&l| (l as f64 - mean).powi(2))
        .sum::<f64>()
        / count;
    let (min_pass, max_pass) = (mean >= min_tokens, mean <= max_tokens);
    let passed = min_pass && max_pass;
    let rule = "=".repeat(80);
    let text = format!(
        "{rule}\nTEST09: Verify Output Token Length in Performance Mode\n{rule}\n\n\
         Output Token Length Statistics\n{}\n\
         Total samples: {}\nMean output tokens: {mean:.2}\nMin output tokens: {}\n\
         Max output tokens: {}\nStd deviation: {:.2}\n\n{rule}\nVerification Results\n{rule}\n\
         Mean output tokens: {mean:.2}\nMin threshold: {}\nMax threshold: {}\n\
         Min check pass: {}\nMax check pass: {}\n\n{}\n",
        "-".repeat(40),
        lengths.len(),
        lengths.iter().min().expect("records"),
        lengths.iter().max().expect("records"),
        variance.sqrt(),
        super::python_float_repr(min_tokens),
        super::python_float_repr(max_tokens),
        python_bool(min_pass),
        python_bool(max_pass),
        if passed { "TEST PASS" } else { "TEST FAIL" }
    );
    Ok(Verification::new(text, passed))
}

fn python_bool(value: bool) -> &'static str {
    if value {
        "True"
    } else {
        "False"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_and_lengths_are_read_as_the_scripts_read_them() {
        let dir = std::env::temp_dir().join(format!("test07-09-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("audit.config");
        std::fs::write(
            &config,
            "# TEST09\n*.*.mode = 2\n*.*.test09_min_output_tokens = 2.5  # lower\n\
             *.*.test09_max_output_tokens = 3\n*.*.test07_accuracy_threshold = x\n",
        )
        .unwrap();
        assert_eq!(
            audit_config_number(&config, TEST09_MIN_OUTPUT_TOKENS).unwrap(),
            2.5
        );
        let error = audit_config_number(&config, TEST07_THRESHOLD)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("test07_accuracy_threshold = \"x\""),
            "{error}"
        );
        // Two responses of 2 and 4 int32 tokens (the 5th byte of the second is ignored).
        let log = dir.join("mlperf_log_accuracy.json");
        std::fs::write(
            &log,
            r#"[{"seq_id": 0, "qsl_idx": 0, "data": "0100000002000000"},
{"seq_id": 1, "qsl_idx": 1, "data": "01000000020000000300000004000000ff"}]"#,
        )
        .unwrap();
        let passed = verify_test09(&log, 2.5, 3.0).unwrap();
        assert!(passed.passed, "{}", passed.text);
        assert!(passed.text.contains("Mean output tokens: 3.00\n"));
        assert!(passed.text.ends_with("\nTEST PASS\n"), "{}", passed.text);
        let failed = verify_test09(&log, 3.5, 4.0).unwrap();
        assert!(!failed.passed);
        assert!(failed
            .text
            .contains("Min check pass: False\nMax check pass: True\n"));
        let verdict = verify_test07("accuracy", 87.5, 60.698);
        assert!(
            verdict.passed
                && verdict
                    .text
                    .contains("Accuracy check pass: True\nTEST PASS\n")
        );
        assert!(!verify_test07("accuracy", 50.0, 60.698).passed);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
