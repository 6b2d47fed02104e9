//! TEST01's accuracy check (`verify_accuracy.py`, its default JSON mode): the responses the
//! compliance run logged must equal the accuracy run's for the same samples, comparing only the
//! first element of each response decoded with the dtype.

use std::collections::HashMap;
use std::path::Path;

use super::accuracy_log::{read_accuracy_log, AccuracyLogEntry, Dtype, Element};
use super::{ComplianceError, Verification};

/// Compares the compliance run's accuracy log with the accuracy run's; the text is
/// `verify_accuracy.txt`.
pub fn verify_test01_accuracy(
    accuracy_run_log: &Path,
    compliance_log: &Path,
    dtype: Dtype,
) -> Result<Verification, ComplianceError> {
    let reference = read_accuracy_log(accuracy_run_log)?;
    let compliance = read_accuracy_log(compliance_log)?;
    let counts = count(&reference, &compliance, dtype).map_err(|failure| {
        let path = match failure.log {
            Log::AccuracyRun => accuracy_run_log,
            Log::Compliance => compliance_log,
        };
        ComplianceError::Record {
            path: path.to_path_buf(),
            record: failure.record,
            qsl_idx: failure.qsl_idx,
            message: format!("{} (--dtype {dtype})", failure.message),
        }
    })?;
    Ok(Verification::new(counts.report(), counts.passed()))
}

/// The counters the official script prints.
#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    acc_log_entries: usize,
    acc_log_duplicate_keys: usize,
    acc_log_data_mismatch: usize,
    perf_log_entries: usize,
    perf_log_qsl_idx_match: usize,
    perf_log_data_mismatch: usize,
    missing_qsl_idxs: usize,
}

impl Counts {
    /// PASS iff at least one sample was compared and none differed.
    fn passed(&self) -> bool {
        self.perf_log_data_mismatch == 0 && self.perf_log_qsl_idx_match > 0
    }

    fn report(&self) -> String {
        let verdict = if self.passed() {
            "TEST PASS"
        } else {
            "TEST FAIL"
        };
        // `print("TEST PASS\n")` ends the file with an empty line.
        format!(
            "Verifying accuracy. This might take a while...\n\
             Reading accuracy mode results...\n\
             Reading performance mode results...\n\
             num_acc_log_entries = {}\n\
             num_acc_log_duplicate_keys = {}\n\
             num_acc_log_data_mismatch = {}\n\
             num_perf_log_entries = {}\n\
             num_perf_log_qsl_idx_match = {}\n\
             num_perf_log_data_mismatch = {}\n\
             num_missing_qsl_idxs = {}\n\
             {verdict}\n\n",
            self.acc_log_entries,
            self.acc_log_duplicate_keys,
            self.acc_log_data_mismatch,
            self.perf_log_entries,
            self.perf_log_qsl_idx_match,
            self.perf_log_data_mismatch,
            self.missing_qsl_idxs,
        )
    }
}

enum Log {
    AccuracyRun,
    Compliance,
}

/// A record whose data cannot be decoded (the official script stops with numpy's error).
struct DecodeFailure {
    log: Log,
    record: usize,
    qsl_idx: u64,
    message: String,
}

/// The official algorithm, step for step.
fn count(
    reference: &[AccuracyLogEntry],
    compliance: &[AccuracyLogEntry],
    dtype: Dtype,
) -> Result<Counts, DecodeFailure> {
    let mut counts = Counts {
        acc_log_entries: reference.len(),
        perf_log_entries: compliance.len(),
        ..Counts::default()
    };
    // qsl_idx -> (the hex it maps to, which log and record it came from).
    let mut responses: HashMap<u64, (&str, Log, usize)> = HashMap::new();
    for (record, sample) in reference.iter().enumerate() {
        match responses.get(&sample.qsl_idx) {
            Some((data, _, _)) => {
                counts.acc_log_duplicate_keys += 1;
                // Compared as text, as the script does for the accuracy log.
                if *data != sample.data {
                    counts.acc_log_data_mismatch += 1;
                }
            }
            None => {
                responses.insert(sample.qsl_idx, (&sample.data, Log::AccuracyRun, record));
            }
        }
    }
    for (record, sample) in compliance.iter().enumerate() {
        let failure = |log, record, message| DecodeFailure {
            log,
            record,
            qsl_idx: sample.qsl_idx,
            message,
        };
        let test = dtype
            .decode_hex(&sample.data)
            .map_err(|message| failure(Log::Compliance, record, message))?;
        if let Some((data, log, origin)) = responses.remove(&sample.qsl_idx) {
            counts.perf_log_qsl_idx_match += 1;
            let expected = dtype
                .decode_hex(data)
                .map_err(|message| failure(log, origin, message))?;
            if differs(&test, &expected) {
                counts.perf_log_data_mismatch += 1;
            }
        } else {
            counts.missing_qsl_idxs += 1;
        }
        // The script then maps the sample to this response: a later compliance record of the
        // same sample is compared with this one.
        responses.insert(sample.qsl_idx, (&sample.data, Log::Compliance, record));
    }
    Ok(counts)
}

/// Empty responses differ only from non-empty ones; others by their first element alone.
fn differs(test: &[Element], expected: &[Element]) -> bool {
    match (test.first(), expected.first()) {
        (Some(a), Some(b)) => a != b,
        (a, b) => a.is_some() != b.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(qsl_idx: u64, data: &str) -> AccuracyLogEntry {
        AccuracyLogEntry {
            qsl_idx,
            data: data.into(),
            token_data: None,
            token_count: None,
        }
    }

    #[test]
    fn equal_first_elements_pass_with_the_official_lines() {
        let reference = [record(0, "0A000000"), record(1, "0B000000")];
        let compliance = [record(1, "0B000000"), record(0, "0A000000")];
        let counts = count(&reference, &compliance, Dtype::Int32).unwrap_or_else(|_| panic!());
        assert_eq!(
            counts.report(),
            "Verifying accuracy. This might take a while...\n\
             Reading accuracy mode results...\n\
             Reading performance mode results...\n\
             num_acc_log_entries = 2\n\
             num_acc_log_duplicate_keys = 0\n\
             num_acc_log_data_mismatch = 0\n\
             num_perf_log_entries = 2\n\
             num_perf_log_qsl_idx_match = 2\n\
             num_perf_log_data_mismatch = 0\n\
             num_missing_qsl_idxs = 0\n\
             TEST PASS\n\n"
        );
        assert!(counts.passed());
    }

    #[test]
    fn only_the_first_element_is_compared() {
        // Same first int32, different second: the official check passes it.
        let reference = [record(3, "0100000002000000")];
        let compliance = [record(3, "0100000009000000")];
        let counts = count(&reference, &compliance, Dtype::Int32).unwrap_or_else(|_| panic!());
        assert!(counts.passed());
        // With byte, the first byte; with int64, the whole 8 bytes.
        let compliance = [record(3, "0100000009000000")];
        let counts = count(&reference, &compliance, Dtype::Int64).unwrap_or_else(|_| panic!());
        assert_eq!(counts.perf_log_data_mismatch, 1);
        assert!(counts.report().ends_with("TEST FAIL\n\n"));
    }

    #[test]
    fn a_different_first_element_fails() {
        let reference = [record(0, "0A000000"), record(1, "0B000000")];
        let compliance = [record(0, "0A000000"), record(1, "0C000000")];
        let counts = count(&reference, &compliance, Dtype::Byte).unwrap_or_else(|_| panic!());
        assert_eq!(counts.perf_log_qsl_idx_match, 2);
        assert_eq!(counts.perf_log_data_mismatch, 1);
        assert!(!counts.passed());
    }

    #[test]
    fn nothing_compared_fails_and_missing_samples_are_counted() {
        let reference = [record(0, "0A")];
        let compliance = [record(5, "0A"), record(5, "0A")];
        let counts = count(&reference, &compliance, Dtype::Byte).unwrap_or_else(|_| panic!());
        // The second record of sample 5 is compared with the first (the script's map update).
        assert_eq!(counts.missing_qsl_idxs, 1);
        assert_eq!(counts.perf_log_qsl_idx_match, 1);
        assert!(counts.passed());
        let counts = count(&reference, &compliance[..1], Dtype::Byte).unwrap_or_else(|_| panic!());
        assert_eq!(counts.perf_log_qsl_idx_match, 0);
        assert!(!counts.passed());
        assert!(counts
            .report()
            .contains("num_missing_qsl_idxs = 1\nTEST FAIL\n"));
    }

    #[test]
    fn duplicates_in_the_accuracy_log_are_counted_and_the_first_kept() {
        let reference = [record(0, "01"), record(0, "02"), record(0, "01")];
        let compliance = [record(0, "01")];
        let counts = count(&reference, &compliance, Dtype::Byte).unwrap_or_else(|_| panic!());
        assert_eq!(counts.acc_log_duplicate_keys, 2);
        assert_eq!(counts.acc_log_data_mismatch, 1);
        assert!(counts.passed());
    }

    #[test]
    fn empty_responses_match_only_empty_ones_and_nan_never_matches() {
        let counts =
            count(&[record(0, "")], &[record(0, "")], Dtype::Float32).unwrap_or_else(|_| panic!());
        assert!(counts.passed());
        let counts = count(&[record(0, "")], &[record(0, "0000C07F")], Dtype::Float32)
            .unwrap_or_else(|_| panic!());
        assert_eq!(counts.perf_log_data_mismatch, 1);
        // 0x7FC00000 is NaN: unequal to itself, as numpy compares.
        let counts = count(
            &[record(0, "0000C07F")],
            &[record(0, "0000C07F")],
            Dtype::Float32,
        )
        .unwrap_or_else(|_| panic!());
        assert!(!counts.passed());
    }

    #[test]
    fn undecodable_data_names_its_file_and_record() {
        let dir = std::env::temp_dir().join(format!("test01-accuracy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let accuracy = dir.join("accuracy.json");
        let compliance = dir.join("compliance.json");
        std::fs::write(&accuracy, r#"[{"qsl_idx": 4, "data": "010203"}]"#).unwrap();
        std::fs::write(&compliance, r#"[{"qsl_idx": 4, "data": "01000000"}]"#).unwrap();
        let error = verify_test01_accuracy(&accuracy, &compliance, Dtype::Int32)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("accuracy.json: record 0 (qsl_idx 4): 3 bytes")
                && error.contains("(--dtype int32)"),
            "{error}"
        );
        let passed = verify_test01_accuracy(&accuracy, &compliance, Dtype::Byte).unwrap();
        assert!(passed.passed && passed.text.contains("TEST PASS"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
