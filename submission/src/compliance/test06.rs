//! TEST06 (`compliance/TEST06/run_verification.py`): in a token run's accuracy log, the first
//! token reported must begin the output (not checked in Offline, which reports none), an output
//! may end with at most one EOS token, and each token count must equal the output's length.

use std::path::Path;

use super::accuracy_log::{read_accuracy_log, AccuracyLogEntry, Dtype};
use super::{ComplianceError, Verification};
use mlperf_loadgen::TestScenario;

/// The script's default `--eos_token_id`.
pub const DEFAULT_EOS_TOKEN_ID: i64 = 2;

/// Checks the compliance run's accuracy log; the text is `verify_accuracy.txt`.
pub fn verify_test06(
    compliance_log: &Path,
    scenario: TestScenario,
    dtype: Dtype,
    eos_token_id: i64,
) -> Result<Verification, ComplianceError> {
    let records = read_accuracy_log(compliance_log)?;
    check(compliance_log, &records, scenario, dtype, eos_token_id)
}

fn check(
    path: &Path,
    records: &[AccuracyLogEntry],
    scenario: TestScenario,
    dtype: Dtype,
    eos_token_id: i64,
) -> Result<Verification, ComplianceError> {
    let mut console_notes = Vec::new();
    // The script turns an exception in these two checks into a failed check and a console note.
    let eos_pass = eos_check(records, dtype, eos_token_id).unwrap_or_else(|why| {
        console_notes.push(format!(
            "Unexpected error occured while doing the EOS check ({why})"
        ));
        false
    });
    let first_token_needed = scenario != TestScenario::Offline;
    let first_token_pass = !first_token_needed
        || first_token_check(records, dtype).unwrap_or_else(|why| {
            console_notes.push(format!(
                "Unexpected error occured while doing the first token check ({why})"
            ));
            false
        });
    // The length check's exceptions stop the script: here an error naming the record.
    let length_pass = sample_length_check(path, records, dtype)?;
    let first_token_line = if first_token_needed {
        python_bool(first_token_pass)
    } else {
        "Skipped"
    };
    let passed = eos_pass && first_token_pass && length_pass;
    let text = format!(
        "First token check pass: {first_token_line}\n\
         EOS check pass: {}\n\
         Sample length check pass: {}\n\
         {}\n",
        python_bool(eos_pass),
        python_bool(length_pass),
        if passed {
            "TEST06 verification complete"
        } else {
            "TEST06 verification failed"
        }
    );
    Ok(Verification {
        text,
        passed,
        console_notes,
    })
}

fn python_bool(value: bool) -> &'static str {
    if value {
        "True"
    } else {
        "False"
    }
}

/// Fails when an output ends with two or more EOS tokens. As in the script, the walk back from
/// the end stops before the first token, so a two-token output of two EOS tokens passes.
fn eos_check(records: &[AccuracyLogEntry], dtype: Dtype, eos: i64) -> Result<bool, String> {
    for (record, sample) in records.iter().enumerate() {
        let tokens = dtype
            .decode_hex(&sample.data)
            .map_err(|why| format!("record {record}: {why}"))?;
        let trailing_eos = tokens
            .iter()
            .skip(1)
            .rev()
            .take_while(|token| token.equals_integer(eos))
            .count();
        if trailing_eos >= 2 {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The first-token response must equal the output's start, element by element over the
/// shorter of the two.
fn first_token_check(records: &[AccuracyLogEntry], dtype: Dtype) -> Result<bool, String> {
    for (record, sample) in records.iter().enumerate() {
        let why = |why: String| format!("record {record}: {why}");
        let first = sample
            .token_data
            .as_deref()
            .ok_or_else(|| why("no token_data".into()))?;
        let output = dtype.decode_hex(&sample.data).map_err(why)?;
        let first = dtype.decode_hex(first).map_err(why)?;
        if output.iter().zip(&first).any(|(a, b)| a != b) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Each output's length in tokens must equal its logged token count.
fn sample_length_check(
    path: &Path,
    records: &[AccuracyLogEntry],
    dtype: Dtype,
) -> Result<bool, ComplianceError> {
    for (record, sample) in records.iter().enumerate() {
        let error = |message: String| ComplianceError::Record {
            path: path.to_path_buf(),
            record,
            qsl_idx: sample.qsl_idx,
            message,
        };
        let tokens = dtype
            .decode_hex(&sample.data)
            .map_err(|why| error(format!("{why} (--dtype {dtype})")))?;
        let count = sample.token_count.ok_or_else(|| {
            error(
                "no token_count: TEST06 verifies token runs (use_token_latencies, --tokens)".into(),
            )
        })?;
        if tokens.len() as i64 != count {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record whose output is `tokens` (int32), first token `first` and count `count`.
    fn record(tokens: &[i32], first: Option<&[i32]>, count: Option<i64>) -> AccuracyLogEntry {
        let hex = |tokens: &[i32]| -> String {
            tokens
                .iter()
                .flat_map(|t| t.to_le_bytes())
                .map(|b| format!("{b:02X}"))
                .collect()
        };
        AccuracyLogEntry {
            qsl_idx: 0,
            data: hex(tokens),
            token_data: first.map(hex),
            token_count: count,
        }
    }

    fn verify(records: &[AccuracyLogEntry], scenario: TestScenario) -> Verification {
        check(Path::new("acc.json"), records, scenario, Dtype::Int32, 2).unwrap()
    }

    #[test]
    fn a_consistent_run_passes_with_the_official_lines() {
        let records = [
            record(&[5, 6, 2], Some(&[5]), Some(3)),
            record(&[7], Some(&[7]), Some(1)),
        ];
        let verification = verify(&records, TestScenario::Server);
        assert_eq!(
            verification.text,
            "First token check pass: True\nEOS check pass: True\nSample length check pass: True\nTEST06 verification complete\n"
        );
        assert!(verification.passed);
        let offline = verify(&records, TestScenario::Offline);
        assert!(offline
            .text
            .starts_with("First token check pass: Skipped\n"));
        assert!(offline.passed);
    }

    #[test]
    fn two_trailing_eos_tokens_fail_but_the_first_token_is_never_counted() {
        let two = [record(&[5, 2, 2], Some(&[5]), Some(3))];
        let verification = verify(&two, TestScenario::Offline);
        assert_eq!(
            verification.text,
            "First token check pass: Skipped\nEOS check pass: False\nSample length check pass: True\nTEST06 verification failed\n"
        );
        assert!(!verification.passed);
        // The script's loop stops before index 0: [2, 2] has one counted EOS.
        assert!(
            verify(
                &[record(&[2, 2], Some(&[2]), Some(2))],
                TestScenario::Offline
            )
            .passed
        );
        // A different EOS id.
        let other_eos = check(Path::new("a"), &two, TestScenario::Offline, Dtype::Int32, 9);
        assert!(other_eos.unwrap().passed);
    }

    #[test]
    fn a_first_token_that_differs_from_the_output_fails() {
        let records = [record(&[5, 6], Some(&[4]), Some(2))];
        let verification = verify(&records, TestScenario::SingleStream);
        assert!(verification
            .text
            .starts_with("First token check pass: False\n"));
        assert!(!verification.passed);
        // Not checked in Offline.
        assert!(verify(&records, TestScenario::Offline).passed);
        // A missing token_data fails the check with a console note, as the script's except does.
        let missing = verify(&[record(&[5], None, Some(1))], TestScenario::Server);
        assert!(missing.text.starts_with("First token check pass: False\n"));
        assert!(missing.console_notes[0].contains("first token check"));
    }

    #[test]
    fn a_token_count_other_than_the_length_fails() {
        let verification = verify(
            &[record(&[5, 6], Some(&[5]), Some(3))],
            TestScenario::Server,
        );
        assert!(verification
            .text
            .contains("\nSample length check pass: False\nTEST06 verification failed\n"));
    }

    #[test]
    fn a_log_without_token_counts_is_an_error_naming_it() {
        let error = check(
            Path::new("runs/acc.json"),
            &[record(&[5], Some(&[5]), None)],
            TestScenario::Server,
            Dtype::Int32,
            2,
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with("runs/acc.json: record 0 (qsl_idx 0): no token_count"),
            "{error}"
        );
    }

    #[test]
    fn undecodable_outputs_stop_the_verification_naming_the_record() {
        let mut bad = record(&[5], Some(&[5]), Some(1));
        bad.data.push_str("00");
        let result = check(
            Path::new("a"),
            &[bad],
            TestScenario::Offline,
            Dtype::Int32,
            2,
        );
        // The EOS check fails on it (a console note), then the length check stops on it, as the
        // script would.
        let error = result.unwrap_err().to_string();
        assert!(
            error.starts_with("a: record 0 (qsl_idx 0): 5 bytes"),
            "{error}"
        );
    }
}
