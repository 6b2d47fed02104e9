//! Compliance tests (TEST01, TEST04, TEST06, TEST07, TEST08, TEST09): their official audit.config files and the
//! verification of a compliance run against the submission's own runs, written in the official
//! scripts' wording.
//!
//! Each verification reads files and returns a [`Verification`]: the text of the file the
//! official script writes (`verify_accuracy.txt` or `verify_performance.txt`) and whether it
//! passed. Where the official scripts crash on bad input, these return an error naming the file.

mod accuracy_fallback;
mod accuracy_log;
mod audit_config;
mod detail_log;
mod error;
mod python_number;
mod test01_accuracy;
mod test01_performance;
mod test04;
mod test06;
mod test07_09;
mod test08;

pub use accuracy_fallback::headline;
pub use accuracy_fallback::{
    score_accuracy_fallback, write_baseline_log, AccuracyFallback, ACCURACY_FILE,
    BASELINE_ACCURACY_FILE, COMPLIANCE_ACCURACY_FILE,
};
pub use accuracy_log::{read_accuracy_log, AccuracyLogEntry, Dtype, Element};
pub use audit_config::{audit_configs_dir, find_audit_config, resolve_audit_config, AUDIT_CONFIG};
pub use detail_log::{DetailLog, LogFields};
pub use error::ComplianceError;
pub use python_number::python_float_repr;
pub use test01_accuracy::verify_test01_accuracy;
pub use test01_performance::verify_test01_performance;
pub use test04::verify_test04_performance;
pub use test06::{verify_test06, DEFAULT_EOS_TOKEN_ID};
pub use test07_09::{
    audit_config_number, verify_test07, verify_test09, TEST07_THRESHOLD, TEST09_MAX_OUTPUT_TOKENS,
    TEST09_MIN_OUTPUT_TOKENS,
};
pub use test08::{verify_test08, TEST08_NE_TOLERANCE};

use std::fmt;
use std::str::FromStr;

/// The compliance tests this crate runs and verifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComplianceTest {
    /// Accuracy in performance mode: sampled responses equal the accuracy run's, and
    /// performance within 10 % of the submission's.
    Test01,
    /// Results not cached: every query issues the same sample, and may not run faster.
    Test04,
    /// LLM output consistency: first token, trailing EOS tokens, token counts.
    Test06,
    /// Accuracy in performance mode over every sample: the benchmark's score reaches the
    /// audit.config's threshold.
    Test07,
    /// dlrm-v3's accuracy in performance mode: sampled responses, matched to the accuracy
    /// run's by the (timestamp, query) pair they carry, keep its normalized entropy.
    Test08,
    /// Output length in performance mode: the mean response length in tokens within the
    /// audit.config's bounds.
    Test09,
}

impl ComplianceTest {
    pub const ALL: [ComplianceTest; 6] = [
        ComplianceTest::Test01,
        ComplianceTest::Test04,
        ComplianceTest::Test06,
        ComplianceTest::Test07,
        ComplianceTest::Test08,
        ComplianceTest::Test09,
    ];

    /// The official name, which is also its folder: `TEST01`.
    pub fn name(self) -> &'static str {
        match self {
            ComplianceTest::Test01 => "TEST01",
            ComplianceTest::Test04 => "TEST04",
            ComplianceTest::Test06 => "TEST06",
            ComplianceTest::Test07 => "TEST07",
            ComplianceTest::Test08 => "TEST08",
            ComplianceTest::Test09 => "TEST09",
        }
    }
}

impl fmt::Display for ComplianceTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ComplianceTest {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        ComplianceTest::ALL
            .into_iter()
            .find(|test| test.name().eq_ignore_ascii_case(text))
            .ok_or_else(|| {
                format!(
                    "unknown compliance test {text:?} (TEST01, TEST04, TEST06, TEST07, TEST08 or TEST09)"
                )
            })
    }
}

/// The file names the official scripts write into a compliance test's folder.
pub const VERIFY_ACCURACY_FILE: &str = "verify_accuracy.txt";
pub const VERIFY_PERFORMANCE_FILE: &str = "verify_performance.txt";
pub const VERIFY_OUTPUT_LEN_FILE: &str = "verify_output_len.txt";

/// The outcome of one verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// The verification file's text, line for line as the official script writes it.
    pub text: String,
    pub passed: bool,
    /// What the official script prints to the console only (not into the file).
    pub console_notes: Vec<String>,
}

impl Verification {
    fn new(text: String, passed: bool) -> Self {
        Verification {
            text,
            passed,
            console_notes: Vec::new(),
        }
    }

    /// A file of `lines`, each ending in a newline.
    fn from_lines(lines: &[String], passed: bool) -> Self {
        Verification::new(
            lines.iter().map(|line| format!("{line}\n")).collect(),
            passed,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::ComplianceTest;

    #[test]
    fn tests_are_named_as_their_folders() {
        assert_eq!(ComplianceTest::Test04.to_string(), "TEST04");
        assert_eq!("test01".parse(), Ok(ComplianceTest::Test01));
        let error = "TEST05".parse::<ComplianceTest>().unwrap_err();
        assert!(error.contains("TEST05"), "{error}");
    }
}
