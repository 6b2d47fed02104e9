//! `StartTest`, `StartTestWithLogSettings` and `AbortTest`.
//!
//! The test runs on the calling thread, as in the official LoadGen: `issue_query`,
//! `flush_queries` and the QSL's callbacks run there (threads they start are not daemons,
//! a `threading.local` set before is theirs), with the GIL released between callbacks. Ctrl-C
//! aborts the test (its logs are still written) and is raised as `KeyboardInterrupt` once it
//! has ended ([`crate::signals`]).

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mlperf_loadgen::logging::summary::render_summary;
use mlperf_loadgen::{self as loadgen, TestResult};
use pyo3::exceptions::{PyRuntimeError, PyRuntimeWarning};
use pyo3::prelude::*;

use crate::complete;
use crate::gil;
use crate::handles;
use crate::log_settings::LogSettings;
use crate::signals::Relay;
use crate::sut::{PythonQsl, PythonSut};
use crate::test_settings::{take_earlier_diagnostics, warn, TestSettings};

/// How often the watching thread looks for a relayed signal.
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
pub(crate) fn start_test(
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
pub(crate) fn start_test_with_log_settings(
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
pub(crate) fn abort_test() {
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
        issue_on_calling_thread: true,
        ..loadgen::TestContext::default()
    };

    let relay = Relay::install();
    let done = AtomicBool::new(false);
    let outcome = py.detach(|| {
        std::thread::scope(|scope| {
            // Python runs signal handlers on its main thread only when Python code runs there:
            // the relay's note of a signal is what ends the test.
            let watcher = std::thread::Builder::new()
                .name("mlperf-signals".to_string())
                .spawn_scoped(scope, || {
                    while !done.load(Ordering::Acquire) {
                        if let Some(signal) = Relay::received() {
                            loadgen::abort_test_because(&format!("signal {signal} received"));
                            break;
                        }
                        std::thread::park_timeout(SIGNAL_CHECK_INTERVAL);
                    }
                });
            let outcome =
                loadgen::start_test_with(&python_sut, &mut python_qsl, &settings, &log, &context);
            // The issue loop may have kept the GIL after its last callback.
            gil::release_held();
            complete::withdraw();
            done.store(true, Ordering::Release);
            if let Ok(watcher) = &watcher {
                watcher.thread().unpark();
            }
            outcome
        })
    });
    let interrupted = match Relay::received() {
        // Python's handler runs now, on this thread: KeyboardInterrupt for Ctrl-C.
        Some(_) => py.check_signals().err(),
        None => None,
    };
    drop(relay);
    drop(running);
    if let Ok(result) = &outcome {
        if !log.enable_trace {
            empty_trace_file(py, result)?;
        }
    }

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

/// The official module writes the trace file even with the trace off: empty (a previous run's
/// of the same name is emptied too).
fn empty_trace_file(py: Python<'_>, result: &TestResult) -> PyResult<()> {
    match &result.log_files {
        Some(files) => match std::fs::File::create(&files.trace) {
            Ok(_) => Ok(()),
            Err(err) => warn::<PyRuntimeWarning>(
                py,
                &format!("cannot write {}: {err}", files.trace.display()),
            ),
        },
        None => Ok(()),
    }
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
