//! `StartTest`, `StartTestWithLogSettings` and `AbortTest`.
//!
//! The test runs with the GIL released, on a thread of its own, while the calling thread
//! waits and checks for signals: Ctrl-C aborts the test (its logs are still written) and is
//! raised as `KeyboardInterrupt` once it has ended.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use mlperf_loadgen::logging::summary::render_summary;
use mlperf_loadgen::{self as loadgen, TestResult};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::complete;
use crate::handles;
use crate::log_settings::LogSettings;
use crate::sut::{PythonQsl, PythonSut};
use crate::test_settings::{take_earlier_diagnostics, TestSettings};

/// How often the waiting thread looks for signals.
const SIGNAL_CHECK_INTERVAL: Duration = Duration::from_millis(50);

static RUNNING: AtomicBool = AtomicBool::new(false);

/// One test at a time in a process, as in the official LoadGen.
struct RunningTest;

impl RunningTest {
    fn begin() -> PyResult<Self> {
        if RUNNING.swap(true, Ordering::SeqCst) {
            return Err(PyRuntimeError::new_err(
                "StartTest: a test is already running in this process",
            ));
        }
        Ok(RunningTest)
    }
}

impl Drop for RunningTest {
    fn drop(&mut self) {
        RUNNING.store(false, Ordering::SeqCst);
    }
}

/// Runs a test with the default `LogSettings` (logs in the current directory).
#[pyfunction(name = "StartTest", signature = (sut, qsl, test_settings, audit_config_filename = PathBuf::from("audit.config")))]
pub fn start_test(
    py: Python<'_>,
    sut: u64,
    qsl: u64,
    test_settings: PyRef<'_, TestSettings>,
    audit_config_filename: PathBuf,
) -> PyResult<()> {
    let log_settings = LogSettings::new(py)?;
    run(
        py,
        sut,
        qsl,
        &test_settings,
        &log_settings,
        audit_config_filename,
    )
}

/// Runs a test. An `audit_config_filename` that exists overrides the settings, as upstream.
#[pyfunction(name = "StartTestWithLogSettings", signature = (sut, qsl, test_settings, log_settings, audit_config_filename = PathBuf::from("audit.config")))]
pub fn start_test_with_log_settings(
    py: Python<'_>,
    sut: u64,
    qsl: u64,
    test_settings: PyRef<'_, TestSettings>,
    log_settings: PyRef<'_, LogSettings>,
    audit_config_filename: PathBuf,
) -> PyResult<()> {
    run(
        py,
        sut,
        qsl,
        &test_settings,
        &log_settings,
        audit_config_filename,
    )
}

/// Ends the running test: issuing stops, what is outstanding drains and the results are
/// reported INVALID. Callable from any thread (not in the official Python module).
#[pyfunction(name = "AbortTest")]
pub fn abort_test() {
    loadgen::abort_test();
}

fn run(
    py: Python<'_>,
    sut: u64,
    qsl: u64,
    test_settings: &TestSettings,
    log_settings: &LogSettings,
    audit_config: PathBuf,
) -> PyResult<()> {
    let running = RunningTest::begin()?;
    let python_sut = PythonSut::new(py, handles::sut(sut)?)?;
    let mut python_qsl = PythonQsl::new(handles::qsl(qsl)?);
    let settings = test_settings.inner.clone();
    let log = log_settings.to_engine(py);
    let context = loadgen::TestContext {
        audit_config: Some(audit_config),
        // Taken only by a test that runs: a refused call leaves them for the next one.
        earlier_diagnostics: take_earlier_diagnostics(),
        ..loadgen::TestContext::default()
    };

    let (sut_ref, qsl_ref, settings_ref, log_ref) = (&python_sut, &mut python_qsl, &settings, &log);
    let context_ref = &context;
    let (outcome, interrupted) = py.detach(|| {
        std::thread::scope(|scope| {
            let (done, finished) = mpsc::channel();
            let test = std::thread::Builder::new()
                .name("mlperf-start-test".to_string())
                .spawn_scoped(scope, move || {
                    let outcome = loadgen::start_test_with(
                        sut_ref,
                        qsl_ref,
                        settings_ref,
                        log_ref,
                        context_ref,
                    );
                    complete::withdraw();
                    let _ = done.send(());
                    outcome
                })
                .map_err(|err| {
                    PyRuntimeError::new_err(format!(
                        "StartTest: cannot start the test thread: {err}"
                    ))
                })?;
            let mut interrupted = None;
            while finished.recv_timeout(SIGNAL_CHECK_INTERVAL).is_err() && !test.is_finished() {
                if interrupted.is_none() {
                    if let Err(signal) = Python::attach(|py| py.check_signals()) {
                        loadgen::abort_test();
                        interrupted = Some(signal);
                    }
                }
            }
            let outcome = test
                .join()
                .map_err(|_| PyRuntimeError::new_err("StartTest: the test thread panicked"))?;
            Ok::<_, PyErr>((outcome, interrupted))
        })
    })?;
    drop(running);

    let result = outcome.map_err(|err| PyRuntimeError::new_err(format!("StartTest: {err}")));
    if let Ok(result) = &result {
        copy_to_stdout(py, result, log_settings)?;
    }
    if let Some(err) = interrupted
        .or_else(|| python_sut.error.take())
        .or_else(|| python_qsl.error.take())
    {
        return Err(err);
    }
    result.map(drop)
}

/// `copy_summary_to_stdout` / `copy_detail_to_stdout`: the written logs, once the test ends.
fn copy_to_stdout(py: Python<'_>, result: &TestResult, log_settings: &LogSettings) -> PyResult<()> {
    let (detail, summary) = log_settings.copies_to_stdout(py);
    if !detail && !summary {
        return Ok(());
    }
    let mut text = String::new();
    if detail {
        if let Some(files) = &result.log_files {
            text.push_str(&std::fs::read_to_string(&files.detail).unwrap_or_default());
        }
    }
    if summary {
        text.push_str(&render_summary(result));
    }
    // Python's own stdout may be buffered ahead of what is written here.
    py.import("sys")?.getattr("stdout")?.call_method0("flush")?;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|err| PyRuntimeError::new_err(format!("StartTest: cannot write to stdout: {err}")))
}
