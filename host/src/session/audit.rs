//! A compliance test (TEST01, TEST04, TEST06, TEST07, TEST08, TEST09): the compliance run with its audit.config, then
//! the verifications against the submission's runs, laid out as the submission checker reads
//! them: the run's logs in `OUT/performance/run_1/`, `verify_accuracy.txt` and
//! `verify_performance.txt` in `OUT`, the compliance run's responses in `OUT/accuracy/`.

use std::path::{Path, PathBuf};

use mlperf_loadgen::TestScenario;

use super::{RunPlan, Session, SessionError};
use crate::benchmark::{accuracy, Accuracy};
use crate::compliance::{
    audit_config_number, headline, score_accuracy_fallback, verify_test01_accuracy,
    verify_test01_performance, verify_test04_performance, verify_test06, verify_test07,
    verify_test08, verify_test09, ComplianceTest, Dtype, Verification, ACCURACY_FILE,
    BASELINE_ACCURACY_FILE, COMPLIANCE_ACCURACY_FILE, TEST07_THRESHOLD, TEST08_NE_TOLERANCE,
    TEST09_MAX_OUTPUT_TOKENS, TEST09_MIN_OUTPUT_TOKENS, VERIFY_ACCURACY_FILE,
    VERIFY_OUTPUT_LEN_FILE, VERIFY_PERFORMANCE_FILE,
};
use crate::logs::{ACCURACY_LOG, DETAIL_LOG, RESULT_JSON, SUMMARY_LOG};

/// One compliance test, settled before anything runs.
pub struct AuditPlan {
    pub test: ComplianceTest,
    /// The test's folder.
    pub out: PathBuf,
    /// The submission's files the verifications read.
    pub references: References,
    /// How responses are decoded.
    pub dtype: Dtype,
    /// TEST06's end-of-sequence token.
    pub eos_token_id: i64,
    /// The compliance run: its logs in `out/performance/run_1`, its result.json in `out`, the
    /// test's audit.config.
    pub run: RunPlan,
}

/// The submission's files a verification reads.
pub struct References {
    pub accuracy_log: Option<PathBuf>,
    pub performance_detail: Option<PathBuf>,
    pub performance_summary: Option<PathBuf>,
}

/// What the verifications found.
pub struct AuditOutcome {
    /// Each check as the official scripts print it (`Accuracy check pass`, …) and whether it
    /// passed; TEST06's verdict is the last line of its file instead.
    pub checks: Vec<(&'static str, bool)>,
    pub passed: bool,
    /// As [`super::RunOutcome::destroy_stalled`], for the compliance run.
    pub destroy_stalled: bool,
}

impl Session<'_> {
    /// Runs the compliance test and verifies it.
    pub fn audit(&mut self, plan: &AuditPlan) -> Result<AuditOutcome, SessionError> {
        check_out_dir(plan)?;
        clear_old_outputs(&plan.out)?;
        self.observer.compliance_starting(plan);
        let outcome = self.run(&plan.run)?;
        if let Some(message) = outcome.result.failure() {
            return Err(SessionError::ComplianceRunFailed {
                message,
                logs: plan.run.out.clone(),
            });
        }
        // A run a signal cut short is INVALID: nothing of it is verified.
        if super::interrupt::received().is_some() {
            return Ok(AuditOutcome {
                checks: Vec::new(),
                passed: false,
                destroy_stalled: outcome.destroy_stalled,
            });
        }
        let mut verified = self.verify(plan, outcome.scenario)?;
        verified.destroy_stalled = outcome.destroy_stalled;
        Ok(verified)
    }

    /// Writes the verification files of the test, as the official `run_verification.py`
    /// scripts do.
    fn verify(
        &mut self,
        plan: &AuditPlan,
        scenario: TestScenario,
    ) -> Result<AuditOutcome, SessionError> {
        let out = &plan.out;
        let run_dir = &plan.run.out;
        let compliance_log = run_dir.join(ACCURACY_LOG);
        let mut checks = Vec::new();
        let test01_reference = plan
            .references
            .accuracy_log
            .as_ref()
            .filter(|_| plan.test == ComplianceTest::Test01);
        if let Some(accuracy_log) = test01_reference {
            let verification = verify_test01_accuracy(accuracy_log, &compliance_log, plan.dtype)?;
            self.write_verification(out, VERIFY_ACCURACY_FILE, &verification)?;
            copy_compliance_log(out, &compliance_log)?;
            if !verification.passed {
                self.accuracy_fallback(plan, accuracy_log, &compliance_log)?;
            }
            checks.push(("Accuracy check pass", verification.passed));
        }
        let performance = match (
            &plan.references.performance_detail,
            &plan.references.performance_summary,
        ) {
            (Some(detail), _) => Some(verify_test01_performance(
                detail,
                &run_dir.join(DETAIL_LOG),
            )?),
            (None, Some(summary)) => Some(verify_test04_performance(
                summary,
                &run_dir.join(SUMMARY_LOG),
            )?),
            (None, None) => None,
        };
        if let Some(verification) = performance {
            self.write_verification(out, VERIFY_PERFORMANCE_FILE, &verification)?;
            checks.push(("Performance check pass", verification.passed));
        }
        if let Some(verification) = self.verify_alone(plan, &compliance_log)? {
            return Ok(AuditOutcome {
                checks: Vec::new(),
                passed: verification,
                destroy_stalled: false,
            });
        }
        if plan.test == ComplianceTest::Test06 {
            let verification =
                verify_test06(&compliance_log, scenario, plan.dtype, plan.eos_token_id)?;
            self.write_verification(out, VERIFY_ACCURACY_FILE, &verification)?;
            copy_compliance_log(out, &compliance_log)?;
            return Ok(AuditOutcome {
                checks: Vec::new(),
                passed: verification.passed,
                destroy_stalled: false,
            });
        }
        let passed = checks.iter().all(|(_, passed)| *passed);
        Ok(AuditOutcome {
            checks,
            passed,
            destroy_stalled: false,
        })
    }

    /// The tests whose verdict is one file: TEST07 and TEST09, which log every sample of the
    /// run (the benchmark's score against the audit.config's threshold, the mean output
    /// length against its bounds), and TEST08 (each sampled response's normalized entropy
    /// against the accuracy run's). None for the other tests; else whether it passed.
    fn verify_alone(
        &mut self,
        plan: &AuditPlan,
        compliance_log: &Path,
    ) -> Result<Option<bool>, SessionError> {
        let config = plan
            .run
            .audit_config
            .as_deref()
            .ok_or(SessionError::AuditConfigMissing(plan.test))?;
        let (file, verification) = match plan.test {
            ComplianceTest::Test07 => {
                let threshold = audit_config_number(config, TEST07_THRESHOLD)?;
                let benchmark = plan
                    .run
                    .benchmark
                    .as_ref()
                    .ok_or(SessionError::AuditNeedsBenchmark(plan.test))?;
                let score = accuracy::evaluate(benchmark, compliance_log)?;
                let verification = verify_test07(score.metric_name(), headline(&score), threshold);
                (VERIFY_ACCURACY_FILE, verification)
            }
            ComplianceTest::Test08 => {
                let accuracy_log = plan
                    .references
                    .accuracy_log
                    .as_deref()
                    .ok_or(SessionError::AuditNeedsAccuracyRun(plan.test))?;
                let verification =
                    verify_test08(accuracy_log, compliance_log, TEST08_NE_TOLERANCE)?;
                (VERIFY_ACCURACY_FILE, verification)
            }
            ComplianceTest::Test09 => {
                let min = audit_config_number(config, TEST09_MIN_OUTPUT_TOKENS)?;
                let max = audit_config_number(config, TEST09_MAX_OUTPUT_TOKENS)?;
                (
                    VERIFY_OUTPUT_LEN_FILE,
                    verify_test09(compliance_log, min, max)?,
                )
            }
            _ => return Ok(None),
        };
        self.write_verification(&plan.out, file, &verification)?;
        copy_compliance_log(&plan.out, compliance_log)?;
        Ok(Some(verification.passed))
    }

    /// Writes `out/file` and shows it.
    fn write_verification(
        &mut self,
        out: &Path,
        file: &str,
        verification: &Verification,
    ) -> Result<(), SessionError> {
        let path = out.join(file);
        std::fs::write(&path, &verification.text).map_err(|source| SessionError::Write {
            path: path.clone(),
            source,
        })?;
        self.observer.verification(&path, verification);
        Ok(())
    }

    /// TEST01's accuracy fallback, when the benchmark can score the logs.
    fn accuracy_fallback(
        &mut self,
        plan: &AuditPlan,
        accuracy_log: &Path,
        compliance_log: &Path,
    ) -> Result<(), SessionError> {
        let accuracy_dir = plan.out.join("accuracy");
        let benchmark = plan
            .run
            .benchmark
            .as_ref()
            .filter(|b| !matches!(b.accuracy, Accuracy::Unavailable { .. }));
        let Some(benchmark) = benchmark else {
            self.observer.accuracy_fallback(None, &accuracy_dir);
            return Ok(());
        };
        let result =
            score_accuracy_fallback(benchmark, accuracy_log, compliance_log, &accuracy_dir)
                .map_err(SessionError::AccuracyFallback)?;
        self.observer
            .accuracy_fallback(Some(&result), &accuracy_dir);
        Ok(())
    }
}

/// The compliance run must not overwrite the submission's runs.
fn check_out_dir(plan: &AuditPlan) -> Result<(), SessionError> {
    let references = &plan.references;
    let reference_dirs = [
        &references.accuracy_log,
        &references.performance_detail,
        &references.performance_summary,
    ]
    .into_iter()
    .flatten()
    .filter_map(|file| file.parent());
    for reference in reference_dirs {
        let same = |dir: &Path| {
            dir.canonicalize()
                .ok()
                .zip(reference.canonicalize().ok())
                .is_some_and(|(a, b)| a == b)
        };
        if same(&plan.out) || same(&plan.run.out) {
            return Err(SessionError::OutIsReference {
                out: plan.out.clone(),
                reference: reference.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// Removes what an earlier audit into `out` wrote, so no stale verdict survives a failure.
fn clear_old_outputs(out: &Path) -> Result<(), SessionError> {
    let accuracy = out.join("accuracy");
    let stale = [
        out.join(VERIFY_ACCURACY_FILE),
        out.join(VERIFY_PERFORMANCE_FILE),
        out.join(VERIFY_OUTPUT_LEN_FILE),
        out.join(RESULT_JSON),
        accuracy.join(ACCURACY_LOG),
        accuracy.join(ACCURACY_FILE),
        accuracy.join(BASELINE_ACCURACY_FILE),
        accuracy.join(COMPLIANCE_ACCURACY_FILE),
    ];
    for path in stale.into_iter().filter(|p| p.is_file()) {
        std::fs::remove_file(&path).map_err(|source| SessionError::Remove { path, source })?;
    }
    Ok(())
}

/// The compliance run's responses in `out/accuracy/`, as the official scripts copy them.
fn copy_compliance_log(out: &Path, compliance_log: &Path) -> Result<(), SessionError> {
    let dir = out.join("accuracy");
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::copy(compliance_log, dir.join(ACCURACY_LOG)))
        .map_err(|source| SessionError::Copy {
            from: compliance_log.to_path_buf(),
            into: dir,
            source,
        })?;
    Ok(())
}
