//! `QuerySample`, `QuerySampleResponse` and their list types, as the official module has them.
//! Both classes keep a free list, and their objects are not tracked by the cyclic garbage
//! collector (they hold no references): a run creates and drops one of each per sample, and
//! a million tracked objects alive at once make the collector rescan them again and again.

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use pyo3::{ffi, PyClass};

use crate::convert::{Count, Integer};

/// A new `value` object that the cyclic garbage collector does not track.
pub(crate) fn untracked<T: PyClass + Into<PyClassInitializer<T>>>(
    py: Python<'_>,
    value: T,
) -> PyResult<Bound<'_, T>> {
    let object = Bound::new(py, value)?;
    // SAFETY: a live object of a GC type; it holds no Python references, so no cycle can
    // pass through it and the collector has no reason to see it.
    unsafe { ffi::PyObject_GC_UnTrack(object.as_ptr().cast()) };
    Ok(object)
}

/// The `list[QuerySample]` an issue callback receives.
pub(crate) fn sample_list<'py>(
    py: Python<'py>,
    samples: &[mlperf_loadgen::QuerySample],
) -> PyResult<Bound<'py, PyList>> {
    // SAFETY: a new list of `samples.len()` empty slots, each filled once below; a list
    // dropped half-filled releases only the slots that hold an object.
    let list = unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::PyList_New(samples.len() as ffi::Py_ssize_t))?
            .cast_into_unchecked::<PyList>()
    };
    for (slot, sample) in samples.iter().enumerate() {
        let object = untracked(
            py,
            QuerySample {
                id: sample.id.0,
                index: sample.index as u64,
            },
        )?;
        // SAFETY: `slot` is in range and empty; the list takes over the reference.
        unsafe { ffi::PyList_SET_ITEM(list.as_ptr(), slot as ffi::Py_ssize_t, object.into_ptr()) };
    }
    Ok(list)
}

/// One sample of an issued query: `id` to complete it with, `index` into the sample library.
#[pyclass(module = "mlperf_host.loadgen", freelist = 1024)]
#[derive(Debug, Clone, Copy, Default)]
pub struct QuerySample {
    #[pyo3(get)]
    pub id: u64,
    #[pyo3(get)]
    pub index: u64,
}

#[pymethods]
impl QuerySample {
    /// `QuerySample()` or `QuerySample(id, index)`.
    #[new]
    #[pyo3(signature = (*args))]
    fn new<'py>(args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, Self>> {
        let sample = match args.len() {
            0 => QuerySample::default(),
            2 => QuerySample {
                id: args.get_item(0)?.extract::<Count>()?.0,
                index: args.get_item(1)?.extract::<Count>()?.0,
            },
            n => {
                return Err(PyTypeError::new_err(format!(
                    "QuerySample() takes no arguments or (id, index), got {n} arguments"
                )))
            }
        };
        untracked(args.py(), sample)
    }

    #[setter]
    fn set_id(&mut self, id: Count) {
        self.id = id.0;
    }

    #[setter]
    fn set_index(&mut self, index: Count) {
        self.index = index.0;
    }

    fn __getstate__(&self) -> (u64, u64) {
        (self.id, self.index)
    }

    fn __setstate__(&mut self, state: (Count, Count)) {
        self.id = state.0 .0;
        self.index = state.1 .0;
    }

    fn __repr__(&self) -> String {
        format!("QuerySample(id={}, index={})", self.id, self.index)
    }
}

/// The answer to one sample: `size` bytes at address `data` (for example
/// `array.buffer_info()[0]` or `ndarray.ctypes.data`), which must stay readable until
/// `QuerySamplesComplete` returns; `n_tokens` for token runs.
#[pyclass(module = "mlperf_host.loadgen", freelist = 1024)]
#[derive(Debug, Clone, Copy, Default)]
pub struct QuerySampleResponse {
    #[pyo3(get)]
    pub id: u64,
    #[pyo3(get)]
    pub data: u64,
    #[pyo3(get)]
    pub size: u64,
    #[pyo3(get)]
    pub n_tokens: i64,
}

#[pymethods]
impl QuerySampleResponse {
    /// `QuerySampleResponse()`, `(id, data, size)` or `(id, data, size, n_tokens)`.
    #[new]
    #[pyo3(signature = (*args))]
    fn new<'py>(args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, Self>> {
        untracked(args.py(), Self::from_args(args)?)
    }

    #[setter]
    fn set_id(&mut self, id: Count) {
        self.id = id.0;
    }

    #[setter]
    fn set_data(&mut self, data: Count) {
        self.data = data.0;
    }

    #[setter]
    fn set_size(&mut self, size: Count) {
        self.size = size.0;
    }

    #[setter]
    fn set_n_tokens(&mut self, n_tokens: Integer<i64>) {
        self.n_tokens = n_tokens.0;
    }

    fn __getstate__(&self) -> (u64, u64, u64, i64) {
        (self.id, self.data, self.size, self.n_tokens)
    }

    fn __setstate__(&mut self, state: &Bound<'_, PyTuple>) -> PyResult<()> {
        if state.len() < 3 {
            return Err(PyRuntimeError::new_err(
                "Invalid state for QuerySampleResponse",
            ));
        }
        *self = Self::from_args(state)?;
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!(
            "QuerySampleResponse(id={}, data={}, size={}, n_tokens={})",
            self.id, self.data, self.size, self.n_tokens
        )
    }
}

impl QuerySampleResponse {
    fn from_args(args: &Bound<'_, PyTuple>) -> PyResult<Self> {
        match args.len() {
            0 => Ok(QuerySampleResponse::default()),
            3 | 4 => Ok(QuerySampleResponse {

                id: args.get_item(0)?.extract::<Count>()?.0,
                data: args.get_item(1)?.extract::<Count>()?.0,
                size: args.get_item(2)?.extract::<Count>()?.0,
                n_tokens: match args.len() {
                    4 => args.get_item(3)?.extract::<Integer<i64>>()?.0,
                    _ => 0,
                },
            }),
            n => Err(PyTypeError::new_err(format!(
                "QuerySampleResponse() takes no arguments, (id, data, size) or (id, data, size, n_tokens), got {n} arguments"
            ))),
        }
    }
}

/// `VectorQuerySample` and `VectorQuerySampleResponse`: lists, as the official module's
/// bound vectors behave like lists.
pub(crate) fn add_vector_types(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    let make_type = py.import("builtins")?.getattr("type")?;
    for name in ["VectorQuerySample", "VectorQuerySampleResponse"] {
        let namespace = PyDict::new(py);
        namespace.set_item("__module__", "mlperf_host.loadgen")?;
        let bases = PyTuple::new(py, [py.get_type::<PyList>()])?;
        module.add(name, make_type.call1((name, bases, namespace))?)?;
    }
    Ok(())
}
