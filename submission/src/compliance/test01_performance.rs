//! TEST01's performance check (`compliance/TEST01/verify_performance.py`): both detail logs
//! VALID, the same scenario (and Server target latency), and the compliance run's result within
//! 10 % of the reference's (20 % for fast SingleStream and MultiStream runs).

use std::path::Path;

use super::detail_log::{DetailLog, LogFields};
use super::python_number::python_float_repr;
use super::{ComplianceError, Verification};

/// The detail-log key of each scenario's result, as the script reads it.
fn result_field(scenario: &str) -> Option<&'static str> {
    match scenario {
        "Offline" => Some("result_samples_per_second"),
        "SingleStream" => Some("early_stopping_latency_ss"),
        "MultiStream" => Some("early_stopping_latency_ms"),
        "Server" => Some("result_completed_samples_per_sec"),
        _ => None,
    }
}

/// Compares the compliance run's detail log with the performance run's; the text is
/// `verify_performance.txt`.
pub fn verify_test01_performance(
    performance_run_detail: &Path,
    compliance_detail: &Path,
) -> Result<Verification, ComplianceError> {
    let reference = DetailLog::read(performance_run_detail)?;
    let test = DetailLog::read(compliance_detail)?;
    compare(&reference, &test)
}

/// What the script takes from one log.
struct LoggedResult {
    scenario: String,
    score: f64,
    target_latency: Option<serde_json::Value>,
}

/// `parse_result_log`: the result, or the line the script exits with when the run is INVALID.
fn parse_result(
    log: &DetailLog,
    lines: &mut Vec<String>,
) -> Result<Result<LoggedResult, String>, ComplianceError> {
    let scenario = log.text("effective_scenario")?;
    let field = result_field(&scenario).ok_or_else(|| {
        ComplianceError::invalid(
            log.path(),
            format!("effective_scenario {scenario:?} is not a scenario TEST01 verifies"),
        )
    })?;
    let score = log.number(field, " (TEST01 needs performance runs' detail logs)")?;
    if log.get("result_validity").and_then(|v| v.as_str()) != Some("VALID") {
        return Ok(Err(format!(
            "TEST FAIL: Invalid results in {}",
            log.path().display()
        )));
    }
    // The official script means to warn here (it fails with a NameError instead).
    if log.num_errors() != 0 {
        lines.push(format!(
            "WARNING: {} ERROR reported in {}",
            log.num_errors(),
            log.path().display()
        ));
    }
    let target_latency = (scenario == "Server")
        .then(|| log.get("effective_target_latency_ns").cloned())
        .flatten();
    Ok(Ok(LoggedResult {
        scenario,
        score,
        target_latency,
    }))
}

fn compare(reference: &DetailLog, test: &DetailLog) -> Result<Verification, ComplianceError> {
    let mut lines = vec!["Verifying performance.".to_string()];
    let fail = |mut lines: Vec<String>, last: String| {
        lines.push(last);
        Ok(Verification::from_lines(&lines, false))
    };
    let reference = match parse_result(reference, &mut lines)? {
        Ok(result) => result,
        Err(line) => return fail(lines, line),
    };
    let test = match parse_result(test, &mut lines)? {
        Ok(result) => result,
        Err(line) => return fail(lines, line),
    };
    if test.scenario != reference.scenario {
        return fail(
            lines,
            "TEST FAIL: Test and reference scenarios do not match!".into(),
        );
    }
    if reference.scenario == "Server" && test.target_latency != reference.target_latency {
        return fail(lines, "TEST FAIL: Server target latency mismatch".into());
    }
    lines.push(format!(
        "Reference score = {}",
        python_float_repr(reference.score)
    ));
    lines.push(format!("Test score = {}", python_float_repr(test.score)));
    let threshold = threshold(&reference.scenario, reference.score);
    let passed = reference.score * (1.0 - threshold) <= test.score
        && test.score <= reference.score * (1.0 + threshold);
    lines.push(
        if passed {
            "TEST PASS"
        } else {
            "TEST FAIL: Test score invalid"
        }
        .into(),
    );
    Ok(Verification::from_lines(&lines, passed))
}

/// 10 %, or 20 % when the reference is a fast SingleStream (at most 200 µs) or MultiStream
/// (at most 1.6 ms) run, whose run-to-run variation is larger.
pub(super) fn threshold(scenario: &str, reference_score: f64) -> f64 {
    let fast = (scenario == "SingleStream" && reference_score <= 200_000.0)
        || (scenario == "MultiStream" && reference_score <= 1_600_000.0);
    if fast {
        0.20
    } else {
        0.10
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(path: &str, entries: &[(&str, &str)]) -> DetailLog {
        let text: String = entries
            .iter()
            .map(|(key, value)| {
                format!(
                    ":::MLLOG {{\"key\": \"{key}\", \"value\": {value}, \"metadata\": {{\"is_error\": false}}}}\n"
                )
            })
            .collect();
        DetailLog::parse_from(Path::new(path), &text).unwrap()
    }

    fn single_stream(path: &str, latency: &str) -> DetailLog {
        log(
            path,
            &[
                ("effective_scenario", "\"SingleStream\""),
                ("result_validity", "\"VALID\""),
                ("early_stopping_latency_ss", latency),
                ("num_errors", "0"),
            ],
        )
    }

    #[test]
    fn within_ten_percent_passes_with_the_official_lines() {
        let reference = single_stream("ref.txt", "1000000");
        let verification = compare(&reference, &single_stream("test.txt", "1090000")).unwrap();
        assert_eq!(
            verification.text,
            "Verifying performance.\nReference score = 1000000.0\nTest score = 1090000.0\nTEST PASS\n"
        );
        assert!(verification.passed);
        let verification = compare(&reference, &single_stream("test.txt", "1110000")).unwrap();
        assert!(!verification.passed);
        assert!(verification
            .text
            .ends_with("TEST FAIL: Test score invalid\n"));
        // The window is two-sided.
        let verification = compare(&reference, &single_stream("test.txt", "890000")).unwrap();
        assert!(!verification.passed);
    }

    #[test]
    fn fast_single_stream_and_multi_stream_get_twenty_percent() {
        let reference = single_stream("ref.txt", "200000");
        assert!(
            compare(&reference, &single_stream("t.txt", "235000"))
                .unwrap()
                .passed
        );
        assert!(
            !compare(&reference, &single_stream("t.txt", "245000"))
                .unwrap()
                .passed
        );
        let slower = single_stream("ref.txt", "200001");
        assert!(
            !compare(&slower, &single_stream("t.txt", "235000"))
                .unwrap()
                .passed
        );
        assert_eq!(threshold("MultiStream", 1_600_000.0), 0.20);
        assert_eq!(threshold("MultiStream", 1_600_001.0), 0.10);
        assert_eq!(threshold("Offline", 10.0), 0.10);
    }

    #[test]
    fn an_invalid_run_fails_naming_its_file() {
        let reference = single_stream("ref.txt", "1000");
        let invalid = log(
            "runs/test.txt",
            &[
                ("effective_scenario", "\"SingleStream\""),
                ("result_validity", "\"INVALID\""),
                ("early_stopping_latency_ss", "1000"),
            ],
        );
        let verification = compare(&reference, &invalid).unwrap();
        assert_eq!(
            verification.text,
            "Verifying performance.\nTEST FAIL: Invalid results in runs/test.txt\n"
        );
        assert!(!verification.passed);
    }

    #[test]
    fn scenarios_and_server_target_latencies_must_match() {
        let server = |path, latency| {
            log(
                path,
                &[
                    ("effective_scenario", "\"Server\""),
                    ("effective_target_latency_ns", latency),
                    ("result_validity", "\"VALID\""),
                    ("result_completed_samples_per_sec", "100.5"),
                ],
            )
        };
        let verification = compare(&server("r", "1000000"), &server("t", "2000000")).unwrap();
        assert!(verification
            .text
            .ends_with("TEST FAIL: Server target latency mismatch\n"));
        let verification = compare(&server("r", "1000000"), &server("t", "1000000")).unwrap();
        assert!(verification.passed, "{}", verification.text);
        assert!(verification.text.contains("Reference score = 100.5\n"));
        let verification = compare(&server("r", "1000000"), &single_stream("t", "1000")).unwrap();
        assert!(verification
            .text
            .ends_with("TEST FAIL: Test and reference scenarios do not match!\n"));
    }

    #[test]
    fn errors_are_warned_about_and_a_missing_result_is_an_error() {
        let with_errors = log(
            "t.txt",
            &[
                ("effective_scenario", "\"Offline\""),
                ("result_validity", "\"VALID\""),
                ("result_samples_per_second", "1000"),
                ("num_errors", "2"),
            ],
        );
        let verification = compare(&with_errors, &with_errors).unwrap();
        assert!(verification
            .text
            .contains("WARNING: 2 ERROR reported in t.txt\n"));
        assert!(verification.passed);
        let accuracy_run = log("acc.txt", &[("effective_scenario", "\"Offline\"")]);
        let error = compare(&accuracy_run, &with_errors)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("acc.txt: no result_samples_per_second entry"),
            "{error}"
        );
    }
}
