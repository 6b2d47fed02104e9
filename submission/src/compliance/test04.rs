//! TEST04's performance check (`compliance/TEST04/verify_performance.py`), read from the two
//! summary files: the compliance run, which issues the same sample in every query, may not be
//! faster than the submission's performance run by 10 % or more (20 % for fast
//! SingleStream/MultiStream). Its line matching is reproduced as the script does it, quirks
//! included: SingleStream and MultiStream scores are 1e9 / the early-stopping latency estimate,
//! a percentile other than the ones it names leaves the score 0, and its Server target-latency
//! comparison never matches a line.

use std::fmt;
use std::path::Path;

use super::python_number::python_float_repr;
use super::test01_performance::threshold;
use super::{ComplianceError, Verification};

/// Compares the compliance run's summary with the performance run's; the text is
/// `verify_performance.txt`.
pub fn verify_test04_performance(
    performance_run_summary: &Path,
    compliance_summary: &Path,
) -> Result<Verification, ComplianceError> {
    let read =
        |path: &Path| std::fs::read_to_string(path).map_err(|e| ComplianceError::file(path, e));
    let reference_text = read(performance_run_summary)?;
    let test_text = read(compliance_summary)?;
    compare(
        (performance_run_summary, &reference_text),
        (compliance_summary, &test_text),
    )
}

/// A score as the script holds it: 0 until found, the summary's text for Server and Offline,
/// a computed float for SingleStream and MultiStream. Printed as Python prints each.
#[derive(Debug, Clone, PartialEq)]
enum Score {
    Unset,
    Text(String),
    Computed(f64),
}

impl Score {
    /// Python's `float(score)`.
    fn value(&self, path: &Path) -> Result<f64, ComplianceError> {
        match self {
            Score::Unset => Ok(0.0),
            Score::Computed(value) => Ok(*value),
            Score::Text(text) => text.parse().map_err(|_| {
                ComplianceError::invalid(path, format!("score {text:?} is not a number"))
            }),
        }
    }
}

impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Score::Unset => f.write_str("0"),
            Score::Text(text) => f.write_str(text),
            Score::Computed(value) => f.write_str(&python_float_repr(*value)),
        }
    }
}

/// Which summary is read: the words of its lines differ.
#[derive(Clone, Copy)]
enum Role {
    Reference,
    Test,
}

/// What the script took from one summary, or the line it exits with.
struct Parsed {
    scenario: String,
    score: Score,
}

/// The value after the first `": "` of a line, stripped (`line.split(": ", 1)[1].strip()`).
fn value_after_colon<'a>(path: &Path, line: &'a str) -> Result<&'a str, ComplianceError> {
    line.split_once(": ")
        .map(|(_, value)| value.trim())
        .ok_or_else(|| ComplianceError::invalid(path, format!("no ': ' in the line {line:?}")))
}

/// `.*Early stopping (<percentiles>) percentile estimate` anywhere in the line (`.` being any
/// character, as in the script's regular expression).
fn has_estimate(line: &str, percentiles: &[&str]) -> bool {
    percentiles.iter().any(|percentile| {
        let pattern = format!("Early stopping {percentile} percentile estimate");
        (0..line.len()).any(|start| {
            line.get(start..start + pattern.len())
                .is_some_and(|window| matches_with_wildcard_dot(window, &pattern))
        })
    })
}

/// `text == pattern` where a `.` in the pattern matches any character.
fn matches_with_wildcard_dot(text: &str, pattern: &str) -> bool {
    text.len() == pattern.len()
        && text
            .bytes()
            .zip(pattern.bytes())
            .all(|(t, p)| p == b'.' || t == p)
}

/// One summary, line by line as the script reads it.
fn parse(
    path: &Path,
    text: &str,
    role: Role,
    lines: &mut Vec<String>,
) -> Result<Result<Parsed, String>, ComplianceError> {
    let mut scenario = String::new();
    let mut score = Score::Unset;
    for line in text.split_inclusive('\n') {
        if line.starts_with("Scenario") {
            scenario = value_after_colon(path, line)?.to_string();
            continue;
        }
        let estimate = match scenario.as_str() {
            "SingleStream" => has_estimate(line, &["90th", "90.0th", "99.9th"]),
            "MultiStream" => has_estimate(line, &["99th", "99.0th"]),
            _ => false,
        };
        if estimate {
            let latency = value_after_colon(path, line)?;
            let latency: f64 = latency.parse().map_err(|_| {
                ComplianceError::invalid(
                    path,
                    format!("latency estimate {latency:?} is not a number"),
                )
            })?;
            if latency == 0.0 {
                return Err(ComplianceError::invalid(path, "a latency estimate of 0"));
            }
            score = Score::Computed(1e9 / latency);
            continue;
        }
        let score_line = match scenario.as_str() {
            "Server" => line.starts_with("Completed samples per second"),
            "Offline" => line.starts_with("Samples per second"),
            _ => false,
        };
        if score_line {
            score = Score::Text(value_after_colon(path, line)?.to_string());
            continue;
        }
        if line.starts_with("Result is") && value_after_colon(path, line)? == "INVALID" {
            return Ok(Err(match role {
                Role::Reference => "TEST FAIL: Reference results are invalid",
                Role::Test => "TEST FAIL: Test results are invalid",
            }
            .into()));
        }
        if let Some(count) = leading_error_count(line) {
            let which = match role {
                Role::Reference => "reference",
                Role::Test => "test",
            };
            lines.push(format!(
                "WARNING: {count} ERROR reported in {which} results"
            ));
        }
    }
    Ok(Ok(Parsed { scenario, score }))
}

/// The digits of a line matching `\d+ ERROR` at its start (`1 ERROR encountered…`,
/// `3 ERRORS encountered…`).
fn leading_error_count(line: &str) -> Option<&str> {
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    (digits > 0 && line[digits..].starts_with(" ERROR")).then(|| &line[..digits])
}

fn compare(
    (reference_path, reference_text): (&Path, &str),
    (test_path, test_text): (&Path, &str),
) -> Result<Verification, ComplianceError> {
    let mut lines = vec!["Verifying performance.".to_string()];
    let fail = |mut lines: Vec<String>, last: String| {
        lines.push(last);
        Ok(Verification::from_lines(&lines, false))
    };
    let reference = match parse(reference_path, reference_text, Role::Reference, &mut lines)? {
        Ok(parsed) => parsed,
        Err(line) => return fail(lines, line),
    };
    let test = match parse(test_path, test_text, Role::Test, &mut lines)? {
        Ok(parsed) => parsed,
        Err(line) => return fail(lines, line),
    };
    if test.scenario != reference.scenario {
        return fail(lines, "Test and reference scenarios do not match!".into());
    }
    lines.push(format!("reference score = {}", reference.score));
    lines.push(format!("test score = {}", test.score));
    let reference_score = reference.score.value(reference_path)?;
    let test_score = test.score.value(test_path)?;
    // The script's own test, applied to its score (for SingleStream and MultiStream, 1e9 over
    // the latency): the same fast-run rule as TEST01's.
    let threshold = threshold(&reference.scenario, reference_score);
    let passed = test_score < reference_score * (1.0 + threshold);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(scenario: &str, result: &str, validity: &str, errors: &str) -> String {
        format!(
            "================================================\n\
             MLPerf Results Summary\n\
             ================================================\n\
             SUT name : null\n\
             Scenario : {scenario}\n\
             Mode     : PerformanceOnly\n\
             {result}\n\
             Result is : {validity}\n\
             \n\
             {errors}\n"
        )
    }

    fn offline(samples_per_second: &str) -> String {
        summary(
            "Offline",
            &format!("Samples per second: {samples_per_second}"),
            "VALID",
            "No errors encountered during test.",
        )
    }

    fn single_stream(estimate_ns: &str) -> String {
        summary(
            "SingleStream",
            &format!(
                "90.0th percentile latency (ns) : 1\nEarly Stopping Result:\n * Early stopping 90.0th percentile estimate: {estimate_ns}\n * Early stopping 99.0th percentile estimate: 1"
            ),
            "VALID",
            "No errors encountered during test.",
        )
    }

    fn run(reference: &str, test: &str) -> Verification {
        compare((Path::new("ref"), reference), (Path::new("test"), test)).unwrap()
    }

    #[test]
    fn offline_passes_unless_the_test_is_ten_percent_faster() {
        let verification = run(&offline("18.5856"), &offline("17.4257"));
        assert_eq!(
            verification.text,
            "Verifying performance.\nreference score = 18.5856\ntest score = 17.4257\nTEST PASS\n"
        );
        assert!(verification.passed);
        assert!(run(&offline("1000"), &offline("1099.9")).passed);
        let faster = run(&offline("1000"), &offline("1100"));
        assert!(!faster.passed);
        assert!(faster
            .text
            .ends_with("test score = 1100\nTEST FAIL: Test score invalid\n"));
        // One-sided: much slower still passes.
        assert!(run(&offline("1000"), &offline("10")).passed);
    }

    #[test]
    fn single_stream_scores_are_inverse_latencies_with_twenty_percent() {
        // 1e9 / 70 ns = 14285714.29 > 200000, so 10 %.
        let verification = run(&single_stream("70"), &single_stream("70"));
        assert!(verification
            .text
            .contains("reference score = 14285714.285714285\n"));
        assert!(verification.passed);
        // A 1 ms estimate scores 1000.0 (<= 200000): 20 %.
        let verification = run(&single_stream("1000000"), &single_stream("850000"));
        assert!(verification.text.contains("reference score = 1000.0\n"));
        assert!(verification.passed, "{}", verification.text);
        assert!(!run(&single_stream("1000000"), &single_stream("830000")).passed);
        // The 99.0th estimate line is not the one read.
        assert!(run(&single_stream("1000000"), &single_stream("1000000"))
            .text
            .contains("test score = 1000.0\n"));
    }

    #[test]
    fn invalid_runs_and_scenario_mismatches_fail_with_the_official_lines() {
        let invalid = summary("Offline", "Samples per second: 5", "INVALID", "");
        assert_eq!(
            run(&invalid, &offline("5")).text,
            "Verifying performance.\nTEST FAIL: Reference results are invalid\n"
        );
        assert!(run(&offline("5"), &invalid)
            .text
            .ends_with("TEST FAIL: Test results are invalid\n"));
        let mismatch = run(&offline("5"), &single_stream("1000"));
        assert!(mismatch
            .text
            .ends_with("Test and reference scenarios do not match!\n"));
        assert!(!mismatch.passed);
    }

    #[test]
    fn error_counts_are_warned_about() {
        let with_errors = summary(
            "Offline",
            "Samples per second: 5",
            "VALID",
            "3 ERRORS encountered. See detailed log.",
        );
        let verification = run(&with_errors, &with_errors);
        assert!(verification.text.contains(
            "WARNING: 3 ERROR reported in reference results\nWARNING: 3 ERROR reported in test results\n"
        ));
        assert_eq!(leading_error_count("1 ERROR encountered."), Some("1"));
        assert_eq!(leading_error_count("No errors encountered"), None);
        assert_eq!(leading_error_count("12 warnings"), None);
    }

    #[test]
    fn a_missing_score_is_zero_as_in_the_script() {
        let no_estimate = summary("SingleStream", " * Only processed 3 queries.", "VALID", "");
        let verification = run(&no_estimate, &no_estimate);
        assert!(verification
            .text
            .contains("reference score = 0\ntest score = 0\n"));
        assert!(!verification.passed, "0 < 0 is false");
    }

    #[test]
    fn server_reads_completed_samples_per_second() {
        let server = |qps: &str| {
            summary(
                "Server",
                &format!("Completed samples per second    : {qps}"),
                "VALID",
                "",
            )
        };
        let verification = run(&server("100.00"), &server("105.00"));
        assert!(verification
            .text
            .contains("reference score = 100.00\ntest score = 105.00\nTEST PASS\n"));
    }
}
