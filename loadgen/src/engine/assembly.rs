//! A test's result, put together in one place whether the test ran to its end or was given up
//! with a call into the SUT still running, and the log files that close it.

use super::{RunOutput, TestError, TestResult};
use crate::completion::{CompletionAnomalies, Shared};
use crate::diagnostics::Diagnostic;
use crate::effective::EffectiveSettings;
use crate::logging::writer::LogWriter;
use crate::logging::{summary, write_atomically, LogFiles, LogSender};
use crate::settings::{LogSettings, TestSettings};

/// What a test knows of itself before it runs, which every result carries.
#[derive(Clone)]
pub(super) struct Header {
    pub(super) sut_name: String,
    pub(super) qsl_name: String,
    pub(super) qsl_total_sample_count: usize,
    pub(super) qsl_performance_sample_count: usize,
    pub(super) test_datetime: String,
    pub(super) requested: TestSettings,
    pub(super) effective: EffectiveSettings,
    pub(super) log_files: Option<LogFiles>,
    pub(super) provenance: Vec<(String, String)>,
}

impl Header {
    /// The result: this header, what the run produced (nothing when it was abandoned), and
    /// the accuracy log the completions left in `shared`.
    pub(super) fn result(
        self,
        shared: &Shared,
        (series, performance, find_peak): RunOutput,
        diagnostics: Vec<Diagnostic>,
        anomalies: CompletionAnomalies,
        abandoned: Option<String>,
    ) -> TestResult {
        let accuracy_log = std::mem::take(
            &mut *shared
                .accuracy_log
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        TestResult {
            sut_name: self.sut_name,
            qsl_name: self.qsl_name,
            qsl_total_sample_count: self.qsl_total_sample_count,
            qsl_performance_sample_count: self.qsl_performance_sample_count,
            requested: self.requested,
            effective: self.effective,
            series,
            performance,
            find_peak,
            accuracy_log,
            diagnostics,
            anomalies,
            test_datetime: self.test_datetime,
            log_files: self.log_files,
            provenance: self.provenance,
            abandoned,
        }
    }
}

/// Closes the detail log, then writes the summary and (when asked) result.json.
pub(super) fn close_logs(
    writer: Option<LogWriter>,
    result: &TestResult,
    log_settings: &LogSettings,
) -> Result<(), TestError> {
    let (Some(writer), Some(files)) = (writer, &result.log_files) else {
        return Ok(());
    };
    writer.finish().map_err(TestError::LogOutput)?;
    write_atomically(&files.summary, summary::render_summary(result).as_bytes())
        .map_err(TestError::LogOutput)?;
    if log_settings.write_result_json {
        write_atomically(&files.result, &result_json(result)).map_err(TestError::LogOutput)?;
    }
    Ok(())
}

/// Ends the logs of a test abandoned with a call into the SUT running: the reason as an error
/// and the result INVALID in the detail log, the summary and (unless the caller writes it)
/// result.json. Never fails: a file that could not be written is the second value.
pub(super) fn finish_abandoned(
    mut result: TestResult,
    log: &LogSender,
    writer: Option<LogWriter>,
    log_settings: &LogSettings,
) -> (TestResult, Result<(), TestError>) {
    let reason = result.abandoned.clone().unwrap_or_default();
    let diagnostic = Diagnostic::error(
        "error_runtime",
        format!("{reason}: the test was abandoned with the call still running."),
    );
    log.diagnostic(&diagnostic);
    result.diagnostics.push(diagnostic);
    log.details(vec![
        ("result_validity".into(), "INVALID".into()),
        ("result_invalid_reason".into(), reason.into()),
    ]);
    log.detail("num_errors", error_count(&result.diagnostics));
    let written = close_logs(writer, &result, log_settings);
    (result, written)
}

pub(super) fn error_count(diagnostics: &[Diagnostic]) -> u64 {
    diagnostics
        .iter()
        .filter(|d| d.severity == crate::diagnostics::Severity::Error)
        .count() as u64
}

/// `result.json`: the whole result, for programs.
fn result_json(result: &TestResult) -> Vec<u8> {
    let mut json = serde_json::to_vec_pretty(result).unwrap_or_default();
    json.push(b'\n');
    json
}
