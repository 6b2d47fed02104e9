//! A test on the official LoadGen, the C++ library compiled from the official sources (the
//! only logs a submission may carry): its verdict read back from its logs, the provenance it
//! cannot log written beside them, and the watchdog's last words when it ends a run.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use mlperf_loadgen::{QuerySampleLibrary, TestContext};

use super::plan::LogOptions;
use super::SessionError;
use crate::logs::{ABORTED_FILE, PROVENANCE_FILE};
use crate::official::engine::{LogOutput, TestSettings};
use crate::official::result::OfficialResult;
use crate::official::AbortReport;
use crate::official::Watch;

/// One test on the official LoadGen into `out`; the verdict is read back from its logs.
pub(super) fn run(
    sut: &dyn mlperf_loadgen::SystemUnderTest,
    qsl: &mut dyn QuerySampleLibrary,
    settings: &TestSettings,
    options: &LogOptions,
    audit_config: Option<&Path>,
    context: &TestContext,
    out: &Path,
) -> Result<OfficialResult, SessionError> {
    let mut log = LogOutput::in_dir(out);
    log.enable_trace = options.trace;
    let provenance = &context.provenance;
    set_abort_target(out, provenance);
    let watch = Watch {
        drain_timeout: options.drain_timeout,
        stall_timeout: Some(options.stall_timeout),
        sut_name: sut.name().to_string(),
        on_abort,
        interrupted: super::interrupt::received,
        progress: context.progress.clone(),
    };
    let counts = super::interrupt::official_test(|| {
        crate::official::run_test(sut, qsl, settings, &log, audit_config, &watch)
    })
    .map_err(|error| SessionError::Official(Box::new(error)))?;
    let aborted =
        super::interrupt::received().map(|(_, signal)| format!("interrupted by {signal}"));
    Ok(OfficialResult::read(out, counts, aborted, provenance)?)
}

/// Whether an official run is VALID, from its result: a performance run that logged VALID with
/// every sample completed, or an accuracy run that logged no error (as for the native engine).
pub(super) fn is_valid(result: &OfficialResult) -> bool {
    if result.aborted.is_some() {
        return false;
    }
    match &result.performance {
        Some(performance) => {
            performance.validity.valid && performance.validity.all_samples_completed
        }
        None => {
            let errors = result
                .diagnostics
                .iter()
                .filter(|d| d.severity == "Error")
                .count();
            result.effective.get("test_mode").and_then(|m| m.as_str()) == Some("AccuracyOnly")
                && errors == 0
                && result.samples.completed == result.samples.issued
        }
    }
}

/// The requirements an INVALID official performance run missed, as its log states them.
pub(super) fn invalid_reasons(result: &OfficialResult) -> Option<String> {
    if let Some(reason) = &result.aborted {
        return Some(format!("the official LoadGen was aborted: {reason}"));
    }
    let performance = result.performance.as_ref()?;
    let validity = &performance.validity;
    let mut reasons = Vec::new();
    if let Some(logged) = performance.logged.get("result_invalid_reason") {
        reasons.extend(logged.as_str().filter(|r| !r.is_empty()));
    }
    if validity.perf_constraints_met == Some(false) {
        reasons.push("performance constraints not met");
    }
    if !validity.min_duration_met {
        reasons.push("min_duration not met");
    }
    if !validity.min_queries_met {
        reasons.push("min_query_count not met");
    }
    if !validity.early_stopping_met {
        reasons.push("early stopping not met");
    }
    if !validity.all_samples_completed {
        reasons.push("not every issued sample was completed");
    }
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

/// What the native engine logs of the run's provenance (as `sut_<key>`), which the official
/// library cannot log, beside its logs.
pub(super) fn write_provenance(
    dir: &Path,
    provenance: &[(String, String)],
) -> Result<(), SessionError> {
    let object: serde_json::Map<String, serde_json::Value> = provenance
        .iter()
        .map(|(key, value)| (format!("sut_{key}"), value.clone().into()))
        .collect();
    let path = dir.join(PROVENANCE_FILE);
    let mut text = serde_json::to_string_pretty(&object).expect("a JSON map always serializes");
    text.push('\n');
    std::fs::write(&path, text).map_err(|source| SessionError::Write { path, source })
}

/// The log directory and provenance of the test the watchdog may end.
#[derive(Clone)]
struct AbortTarget {
    dir: PathBuf,
    provenance: Vec<(String, String)>,
}

static ABORT_TARGET: Mutex<Option<AbortTarget>> = Mutex::new(None);

/// Names the log directory and provenance of the test about to run, for [`on_abort`].
fn set_abort_target(out: &Path, provenance: &[(String, String)]) {
    *ABORT_TARGET.lock().unwrap_or_else(|p| p.into_inner()) = Some(AbortTarget {
        dir: out.to_path_buf(),
        provenance: provenance.to_vec(),
    });
}

/// The watchdog's last words: the verdict in the log directory (mlperf_host_aborted.txt and
/// result.json) and on stderr.
fn on_abort(report: &AbortReport) {
    let message = format!(
        "the official LoadGen was aborted: {} ({} samples issued, {} completed); the run is INVALID",
        report.reason, report.counts.issued, report.counts.completed
    );
    let target = ABORT_TARGET
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    if let Some(AbortTarget { dir, provenance }) = target {
        let _ = std::fs::write(dir.join(ABORTED_FILE), format!("{message}\n"));
        match OfficialResult::read(
            &dir,
            report.counts,
            Some(report.reason.clone()),
            &provenance,
        ) {
            Ok(result) => {
                if let Err(e) = result.write() {
                    eprintln!(
                        "error: cannot write {}: {e}",
                        result.log_files.result.display()
                    );
                }
            }
            Err(e) => eprintln!("error: no result.json: {e}"),
        }
        eprintln!(
            "error: {message} (logs as far as written in {})",
            dir.display()
        );
    } else {
        eprintln!("error: {message}");
    }
}
