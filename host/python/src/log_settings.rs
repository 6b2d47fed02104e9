//! `LogOutputSettings` and `LogSettings` with the official defaults (`outdir` '.', the trace
//! on). `LogSettings.log_output` returns the settings object itself, not a copy, so
//! `log_settings.log_output.outdir = d` changes `log_settings`, as harnesses expect.

use std::path::PathBuf;
use std::time::Duration;

use mlperf_loadgen as loadgen;
use pyo3::prelude::*;

use crate::convert::{Count, Flag, Text};
use crate::enums::LoggingMode;

#[pyclass(module = "mlperf_host.loadgen", get_all)]
#[derive(Debug, Clone)]
pub struct LogOutputSettings {
    outdir: String,
    prefix: String,
    suffix: String,
    prefix_with_datetime: bool,
    copy_detail_to_stdout: bool,
    copy_summary_to_stdout: bool,
}

impl Default for LogOutputSettings {
    fn default() -> Self {
        let engine = loadgen::LogOutputSettings::default();
        LogOutputSettings {
            outdir: ".".to_string(),
            prefix: engine.prefix,
            suffix: engine.suffix,
            prefix_with_datetime: engine.prefix_with_datetime,
            copy_detail_to_stdout: engine.copy_detail_to_stdout,
            copy_summary_to_stdout: engine.copy_summary_to_stdout,
        }
    }
}

#[pymethods]
impl LogOutputSettings {
    #[new]
    fn new() -> Self {
        LogOutputSettings::default()
    }

    /// A str, UTF-8 bytes or any path-like object; read back as a str.
    #[setter]
    fn set_outdir(&mut self, outdir: &Bound<'_, PyAny>) -> PyResult<()> {
        let path = match outdir.extract::<Text>() {
            Ok(text) => text,
            Err(_) => outdir
                .py()
                .import("os")?
                .call_method1("fspath", (outdir,))?
                .extract::<Text>()?,
        };
        self.outdir = path.0;
        Ok(())
    }

    #[setter]
    fn set_prefix(&mut self, prefix: Text) {
        self.prefix = prefix.0;
    }

    #[setter]
    fn set_suffix(&mut self, suffix: Text) {
        self.suffix = suffix.0;
    }

    #[setter]
    fn set_prefix_with_datetime(&mut self, value: Flag) {
        self.prefix_with_datetime = value.0;
    }

    #[setter]
    fn set_copy_detail_to_stdout(&mut self, value: Flag) {
        self.copy_detail_to_stdout = value.0;
    }

    #[setter]
    fn set_copy_summary_to_stdout(&mut self, value: Flag) {
        self.copy_summary_to_stdout = value.0;
    }
}

impl LogOutputSettings {
    /// The engine's settings: files go to `outdir`.
    pub fn to_engine(&self) -> loadgen::LogOutputSettings {
        loadgen::LogOutputSettings {
            outdir: Some(PathBuf::from(&self.outdir)),
            prefix: self.prefix.clone(),
            suffix: self.suffix.clone(),
            prefix_with_datetime: self.prefix_with_datetime,
            copy_detail_to_stdout: self.copy_detail_to_stdout,
            copy_summary_to_stdout: self.copy_summary_to_stdout,
        }
    }
}

#[pyclass(module = "mlperf_host.loadgen")]
#[derive(Debug)]
pub struct LogSettings {
    log_output: Py<LogOutputSettings>,
    #[pyo3(get, set)]
    log_mode: LoggingMode,
    #[pyo3(get)]
    log_mode_async_poll_interval_ms: u64,
    #[pyo3(get)]
    enable_trace: bool,
    /// Ours: give up on samples the SUT has not completed after this many seconds without a
    /// completion, the test INVALID. None (the default), as the official: wait.
    #[pyo3(get)]
    drain_timeout_s: Option<f64>,
    /// Ours: also write `result.json` (every setting, metric and reason, for programs) beside
    /// the logs, named with the log files' prefix and suffix. The official writes no such file.
    #[pyo3(get, set)]
    write_result_json: bool,
}

#[pymethods]
impl LogSettings {
    #[new]
    pub fn new(py: Python<'_>) -> PyResult<Self> {
        Ok(LogSettings {
            log_output: Py::new(py, LogOutputSettings::default())?,
            log_mode: LoggingMode::AsyncPoll,
            log_mode_async_poll_interval_ms: 1000,
            enable_trace: true,
            drain_timeout_s: None,
            write_result_json: false,
        })
    }

    /// The settings object itself: changing it changes these log settings.
    #[getter]
    fn log_output(&self, py: Python<'_>) -> Py<LogOutputSettings> {
        self.log_output.clone_ref(py)
    }

    /// Copies `value` into these log settings' own object (which references taken before
    /// keep showing): later changes to `value` do not reach them.
    #[setter]
    fn set_log_output(&mut self, py: Python<'_>, value: PyRef<'_, LogOutputSettings>) {
        let copy = value.clone();
        // Released first: `ls.log_output = ls.log_output` borrows the same object.
        drop(value);
        *self.log_output.borrow_mut(py) = copy;
    }

    #[setter]
    fn set_log_mode_async_poll_interval_ms(&mut self, value: Count) {
        self.log_mode_async_poll_interval_ms = value.0;
    }

    #[setter]
    fn set_enable_trace(&mut self, value: Flag) {
        self.enable_trace = value.0;
    }

    #[setter]
    fn set_drain_timeout_s(&mut self, value: Option<f64>) -> PyResult<()> {
        if value.is_some_and(|seconds| !(seconds.is_finite() && seconds > 0.0)) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "drain_timeout_s must be a positive number of seconds or None, not {}",
                value.unwrap_or_default()
            )));
        }
        self.drain_timeout_s = value;
        Ok(())
    }
}

impl LogSettings {
    /// The engine's log settings (its own defaults for what the official API lacks).
    pub fn to_engine(&self, py: Python<'_>) -> loadgen::LogSettings {
        loadgen::LogSettings {
            log_output: self.log_output.borrow(py).to_engine(),
            enable_trace: self.enable_trace,
            drain_timeout: self.drain_timeout_s.map_or(Duration::MAX, |seconds| {
                Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX)
            }),
            write_result_json: self.write_result_json,
            ..loadgen::LogSettings::default()
        }
    }

    /// `(copy_detail_to_stdout, copy_summary_to_stdout)`.
    pub fn copies_to_stdout(&self, py: Python<'_>) -> (bool, bool) {
        let output = self.log_output.borrow(py);
        (output.copy_detail_to_stdout, output.copy_summary_to_stdout)
    }
}
