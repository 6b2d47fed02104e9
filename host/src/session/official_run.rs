//! `--engine native|official`: which LoadGen runs the test. The official one is the C++
//! library compiled from the official sources (the only logs a submission may carry); this
//! module configures it like the native one and reads its verdict back from its logs.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{bail, Context};
use mlperf_host::loadgen::TestSettings;
use mlperf_host::logs::{
    ABORTED_FILE, ACCURACY_LOG, DETAIL_LOG, PROVENANCE_FILE, RESULT_JSON, SUMMARY_LOG, TRACE_LOG,
};
use mlperf_host::official::engine as official;
use mlperf_host::official::result::OfficialResult;
use mlperf_host::official::settings::{field_text, official_mode, official_scenario};
use mlperf_host::official::AbortReport;

use super::run_args::RunArgs;

/// The official TestSettings for this run: the official `FromConfig` on the embedded
/// mlperf.conf and `--user-conf`, then what the command line and the benchmark set, with the
/// values `native` holds for them (already read and checked by the native loader).
pub fn official_settings(
    args: &RunArgs,
    model: &str,
    benchmark_keys: &[String],
    native: &TestSettings,
) -> anyhow::Result<official::TestSettings> {
    if args.mlperf_conf.is_some() {
        bail!("--mlperf-conf: the official LoadGen applies the mlperf.conf compiled into it; another rules file needs --engine native");
    }
    let mut settings = official::TestSettings::new()?;
    let scenario = official_scenario(native.scenario);
    settings.set_scenario(scenario);
    match &args.user_conf {
        Some(path) => settings.apply_user_conf(path, model, scenario)?,
        None => settings.apply_mlperf_conf(model, scenario)?,
    }
    let mode_set = args.mode.is_some()
        || benchmark_keys.iter().any(|k| k == "mode")
        || args.set.iter().any(|o| o.key == "mode");
    if mode_set {
        settings.set_mode(official_mode(native.mode));
    }
    let object = match serde_json::to_value(native)? {
        serde_json::Value::Object(object) => object,
        _ => bail!("TestSettings did not serialize as an object"),
    };
    let mut keys: Vec<&str> = benchmark_keys.iter().map(String::as_str).collect();
    keys.extend(args.set.iter().map(|o| o.key.as_str()));
    if args.tokens {
        keys.push("use_token_latencies");
    }
    for key in keys.into_iter().filter(|k| *k != "mode") {
        let value = object.get(key).unwrap_or(&serde_json::Value::Null);
        let text = field_text(key, value)?;
        settings
            .set(key, &text)
            .with_context(|| format!("setting {key}={text} for the official LoadGen"))?;
    }
    Ok(settings)
}

/// Whether an official run is VALID, from its result: a performance run that logged VALID with
/// every sample completed, or an accuracy run that logged no error (as for the native engine).
pub fn official_is_valid(result: &OfficialResult) -> bool {
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
pub fn official_invalid_reasons(result: &OfficialResult) -> Option<String> {
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

/// Files that must not survive from an earlier run in the same directory: a stale summary
/// beside a new detail log would read as this run's.
pub const OFFICIAL_LOGS: [&str; 7] = [
    SUMMARY_LOG,
    DETAIL_LOG,
    ACCURACY_LOG,
    TRACE_LOG,
    RESULT_JSON,
    ABORTED_FILE,
    PROVENANCE_FILE,
];

/// What the native engine logs of the run's provenance (as `sut_<key>`), which the official
/// library cannot log, beside its logs.
pub fn write_provenance(out: &Path, provenance: &[(String, String)]) -> anyhow::Result<()> {
    let object: serde_json::Map<String, serde_json::Value> = provenance
        .iter()
        .map(|(key, value)| (format!("sut_{key}"), value.clone().into()))
        .collect();
    let path = out.join(PROVENANCE_FILE);
    let mut text = serde_json::to_string_pretty(&object)?;
    text.push('\n');
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
}

pub fn clear_old_logs(out: &Path) -> anyhow::Result<()> {
    for name in OFFICIAL_LOGS {
        let path = out.join(name);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot remove {}", path.display())),
        }
    }
    Ok(())
}

/// The log directory and provenance of the test the watchdog may end.
#[derive(Clone)]
struct AbortTarget {
    dir: PathBuf,
    provenance: Vec<(String, String)>,
}

static ABORT_TARGET: Mutex<Option<AbortTarget>> = Mutex::new(None);

/// Names the log directory and provenance of the test about to run, for [`on_abort`].
pub fn set_abort_target(out: &Path, provenance: &[(String, String)]) {
    *ABORT_TARGET.lock().unwrap_or_else(|p| p.into_inner()) = Some(AbortTarget {
        dir: out.to_path_buf(),
        provenance: provenance.to_vec(),
    });
}

/// The watchdog's last words: the verdict in the log directory (mlperf_host_aborted.txt and
/// result.json) and on stderr.
pub fn on_abort(report: &AbortReport) {
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
