//! `TestScenario`, `TestMode` and `LoggingMode` as the official module's pybind11 enums behave:
//! `repr` `<TestScenario.Server: 2>`, `.name`, `.value`, `int()`, `TestScenario(2)`,
//! `__members__`, hashing by value, pickling, and no equality with plain ints.

use mlperf_loadgen as loadgen;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};

macro_rules! python_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $value:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[pyclass(eq, module = "mlperf_host.loadgen", from_py_object)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $($variant = $value),+
        }

        impl $name {
            const MEMBERS: &'static [($name, &'static str)] = &[$(($name::$variant, stringify!($variant))),+];

            fn label(self) -> &'static str {
                match self {
                    $($name::$variant => stringify!($variant)),+
                }
            }
        }

        #[pymethods]
        impl $name {
            #[new]
            fn from_value(value: isize) -> PyResult<Self> {
                Self::MEMBERS
                    .iter()
                    .find(|(member, _)| *member as isize == value)
                    .map(|(member, _)| *member)
                    .ok_or_else(|| {
                        PyValueError::new_err(format!("{value} is not a valid {}", stringify!($name)))
                    })
            }

            #[getter]
            fn name(&self) -> &'static str {
                self.label()
            }

            #[getter]
            fn value(&self) -> isize {
                *self as isize
            }

            fn __int__(&self) -> isize {
                *self as isize
            }

            fn __index__(&self) -> isize {
                *self as isize
            }

            fn __hash__(&self) -> u64 {
                *self as u64
            }

            fn __repr__(&self) -> String {
                format!("<{}.{}: {}>", stringify!($name), self.label(), *self as isize)
            }

            fn __str__(&self) -> String {
                format!("{}.{}", stringify!($name), self.label())
            }

            fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyType>, Bound<'py, PyTuple>)> {
                let value = *slf.borrow() as isize;
                Ok((slf.as_any().get_type(), PyTuple::new(slf.py(), [value])?))
            }
        }
    };
}

python_enum! {
    /// The four MLPerf scenarios.
    TestScenario { SingleStream = 0, MultiStream = 1, Server = 2, Offline = 3 }
}

python_enum! {
    /// What a test measures.
    TestMode { SubmissionRun = 0, AccuracyOnly = 1, PerformanceOnly = 2, FindPeakPerformance = 3 }
}

python_enum! {
    /// Accepted for compatibility; the official LoadGen ignores it too.
    LoggingMode { AsyncPoll = 0, EndOfTestOnly = 1, Synchronous = 2 }
}

/// Gives each enum type its `__members__` mapping (name to member), as pybind11 enums have.
pub(crate) fn add_members(module: &Bound<'_, PyModule>) -> PyResult<()> {
    fn add<T>(module: &Bound<'_, PyModule>, name: &str, members: &[(T, &str)]) -> PyResult<()>
    where
        T: Copy + for<'py> IntoPyObject<'py>,
    {
        let py = module.py();
        let mapping = PyDict::new(py);
        for (member, label) in members {
            mapping.set_item(*label, *member)?;
        }
        module.getattr(name)?.setattr("__members__", mapping)
    }
    add(module, "TestScenario", TestScenario::MEMBERS)?;
    add(module, "TestMode", TestMode::MEMBERS)?;
    add(module, "LoggingMode", LoggingMode::MEMBERS)
}

impl From<TestScenario> for loadgen::TestScenario {
    fn from(scenario: TestScenario) -> Self {
        match scenario {
            TestScenario::SingleStream => loadgen::TestScenario::SingleStream,
            TestScenario::MultiStream => loadgen::TestScenario::MultiStream,
            TestScenario::Server => loadgen::TestScenario::Server,
            TestScenario::Offline => loadgen::TestScenario::Offline,
        }
    }
}

impl From<loadgen::TestScenario> for TestScenario {
    fn from(scenario: loadgen::TestScenario) -> Self {
        match scenario {
            loadgen::TestScenario::SingleStream => TestScenario::SingleStream,
            loadgen::TestScenario::MultiStream => TestScenario::MultiStream,
            loadgen::TestScenario::Server => TestScenario::Server,
            loadgen::TestScenario::Offline => TestScenario::Offline,
        }
    }
}

impl From<TestMode> for loadgen::TestMode {
    fn from(mode: TestMode) -> Self {
        match mode {
            TestMode::SubmissionRun => loadgen::TestMode::SubmissionRun,
            TestMode::AccuracyOnly => loadgen::TestMode::AccuracyOnly,
            TestMode::PerformanceOnly => loadgen::TestMode::PerformanceOnly,
            TestMode::FindPeakPerformance => loadgen::TestMode::FindPeakPerformance,
        }
    }
}

impl From<loadgen::TestMode> for TestMode {
    fn from(mode: loadgen::TestMode) -> Self {
        match mode {
            loadgen::TestMode::SubmissionRun => TestMode::SubmissionRun,
            loadgen::TestMode::AccuracyOnly => TestMode::AccuracyOnly,
            loadgen::TestMode::PerformanceOnly => TestMode::PerformanceOnly,
            loadgen::TestMode::FindPeakPerformance => TestMode::FindPeakPerformance,
        }
    }
}
