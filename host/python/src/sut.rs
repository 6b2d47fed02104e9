//! The Python callbacks of a SUT, QDL or QSL, run by the engine on its own threads.
//!
//! An exception in a callback does not cross into the engine: it is printed, the run ends
//! INVALID (a SUT) or stops (a QSL) with its logs written, and `StartTest` raises it after.

use std::sync::{Arc, Mutex, OnceLock};

use mlperf_loadgen::{
    Completer, QslError, QuerySample, QuerySampleIndex, QuerySampleLibrary, SystemUnderTest,
};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::complete;
use crate::gil::{self, with_python};
use crate::samples;

/// How a SUT takes its queries.
pub(crate) enum IssueCallback {
    /// `issue(list[QuerySample])` (`ConstructSUT`, `ConstructQDL`).
    Samples(Py<PyAny>),
    /// `issue(list[int] ids, list[int] indices)` (`ConstructFastSUT`).
    Fast(Py<PyAny>),
}

/// Where a SUT's name comes from.
pub(crate) enum SutName {
    Fixed(&'static str),
    /// A QDL's `name()` callback, asked once per test.
    Callback(Py<PyAny>),
}

/// What `ConstructSUT`, `ConstructFastSUT` and `ConstructQDL` keep.
pub(crate) struct SutCallbacks {
    pub issue: IssueCallback,
    pub flush: Py<PyAny>,
    pub name: SutName,
}

/// What `ConstructQSL` keeps.
pub(crate) struct QslCallbacks {
    pub total_sample_count: usize,
    pub performance_sample_count: usize,
    pub load: Py<PyAny>,
    pub unload: Py<PyAny>,
}

/// The first exception a test's callbacks raised, to raise again from `StartTest`.
#[derive(Default)]
pub(crate) struct FirstError(Mutex<Option<PyErr>>);

impl FirstError {
    fn keep(&self, py: Python<'_>, err: PyErr) {
        err.print(py);
        let mut first = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if first.is_none() {
            *first = Some(err);
        }
    }

    pub(crate) fn take(&self) -> Option<PyErr> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// A SUT for one test.
pub(crate) struct PythonSut {
    callbacks: Arc<SutCallbacks>,
    name: String,
    /// The test's completer, published to `QuerySamplesComplete` on the first query.
    completer: OnceLock<Completer>,
    pub error: FirstError,
}

impl PythonSut {
    /// Asks a QDL for its name here, on the thread that holds the GIL.
    pub(crate) fn new(py: Python<'_>, callbacks: Arc<SutCallbacks>) -> PyResult<Self> {
        let name = match &callbacks.name {
            SutName::Fixed(name) => name.to_string(),
            SutName::Callback(name) => name.call0(py)?.extract::<String>(py)?,
        };
        Ok(PythonSut {
            callbacks,
            name,
            completer: OnceLock::new(),
            error: FirstError::default(),
        })
    }

    fn issue(&self, py: Python<'_>, samples: &[QuerySample]) -> PyResult<()> {
        match &self.callbacks.issue {
            IssueCallback::Samples(issue) => {
                issue.call1(py, (samples::sample_list(py, samples)?,))?;
            }
            IssueCallback::Fast(issue) => {
                let ids = PyList::new(py, samples.iter().map(|sample| sample.id.0))?;
                let indices = PyList::new(py, samples.iter().map(|sample| sample.index))?;
                issue.call1(py, (ids, indices))?;
            }
        }
        Ok(())
    }

    fn failed(&self, py: Python<'_>, callback: &str, err: PyErr, completer: Option<&Completer>) {
        let message = format!("the SUT's {callback} callback raised {err}");
        self.error.keep(py, err);
        if let Some(completer) = completer {
            completer.fail(message);
        }
    }
}

impl SystemUnderTest for PythonSut {
    fn name(&self) -> &str {
        &self.name
    }

    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        self.completer.get_or_init(|| {
            complete::publish(completer.clone());
            completer.clone()
        });
        gil::with_python_held(|py| {
            if let Err(err) = self.issue(py, samples) {
                self.failed(py, "issue_query", err, Some(completer));
            }
        });
    }

    fn issuer_idle(&self) {
        gil::release_held();
    }

    fn flush_queries(&self) {
        with_python(|py| {
            if let Err(err) = self.callbacks.flush.call0(py) {
                self.failed(py, "flush_queries", err, self.completer.get());
            }
        });
    }
}

/// A QSL for one test.
pub(crate) struct PythonQsl {
    callbacks: Arc<QslCallbacks>,
    pub error: FirstError,
}

impl PythonQsl {
    pub(crate) fn new(callbacks: Arc<QslCallbacks>) -> Self {
        PythonQsl {
            callbacks,
            error: FirstError::default(),
        }
    }

    fn call(
        &self,
        callback: &Py<PyAny>,
        what: &str,
        indices: &[QuerySampleIndex],
    ) -> Result<(), QslError> {
        with_python(|py| {
            let result = PyList::new(py, indices).and_then(|list| callback.call1(py, (list,)));
            result.map(drop).map_err(|err| {
                let message = format!("the QSL's {what} callback raised {err}");
                self.error.keep(py, err);
                message.into()
            })
        })
    }
}

impl QuerySampleLibrary for PythonQsl {
    fn name(&self) -> &str {
        "PyQSL"
    }

    fn total_sample_count(&self) -> usize {
        self.callbacks.total_sample_count
    }

    fn performance_sample_count(&self) -> usize {
        self.callbacks.performance_sample_count
    }

    fn load_samples_to_ram(&mut self, indices: &[QuerySampleIndex]) -> Result<(), QslError> {
        self.call(&self.callbacks.load, "load_samples_to_ram", indices)
    }

    fn unload_samples_from_ram(&mut self, indices: &[QuerySampleIndex]) -> Result<(), QslError> {
        self.call(&self.callbacks.unload, "unload_samples_from_ram", indices)
    }
}
