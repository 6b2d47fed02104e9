//! Argument conversions of the official (pybind11) module, where PyO3's differ: a harness
//! that sets `settings.use_token_latencies = 1` or gets a `TypeError` for a negative count
//! must behave the same here.

use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyBool;
use pyo3::{ffi, Borrowed};

/// A bool as pybind11 converts one: `True`/`False`, `None` (false), or any object whose type
/// defines truth as a number (`1`, `0.0`, `numpy.bool_`); a `str` is refused.
#[derive(Debug, Clone, Copy)]
pub struct Flag(pub bool);

impl<'a, 'py> FromPyObject<'a, 'py> for Flag {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(value) = obj.cast::<PyBool>() {
            return Ok(Flag(value.is_true()));
        }
        if obj.is_none() {
            return Ok(Flag(false));
        }
        // SAFETY: `obj` is a live object, so its type object and number table are too.
        let numeric_truth = unsafe {
            let numbers = (*ffi::Py_TYPE(obj.as_ptr())).tp_as_number;
            !numbers.is_null() && (*numbers).nb_bool.is_some()
        };
        if numeric_truth {
            return obj.is_truthy().map(Flag);
        }
        Err(type_error("bool", &obj))
    }
}

impl From<Flag> for bool {
    fn from(flag: Flag) -> bool {
        flag.0
    }
}

/// An unsigned 64-bit count as pybind11 converts one: an int or anything with `__index__`;
/// a negative or too large value is a `TypeError` (PyO3 would raise `OverflowError`).
#[derive(Debug, Clone, Copy)]
pub struct Count(pub u64);

impl<'a, 'py> FromPyObject<'a, 'py> for Count {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        obj.extract::<u64>().map(Count).map_err(|err| {
            if err.is_instance_of::<PyOverflowError>(obj.py()) {
                PyTypeError::new_err(format!(
                    "an unsigned 64-bit integer is required, got {}",
                    describe(&obj)
                ))
            } else {
                err
            }
        })
    }
}

impl From<Count> for u64 {
    fn from(count: Count) -> u64 {
        count.0
    }
}

fn type_error(expected: &str, obj: &Borrowed<'_, '_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!("a {expected} is required, got {}", describe(obj)))
}

/// `'text' (str)`: the value and its type, for error messages.
fn describe(obj: &Borrowed<'_, '_, PyAny>) -> String {
    let value = obj
        .repr()
        .map_or_else(|_| "?".to_string(), |r| r.to_string());
    let type_name = obj
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string());
    format!("{value} ({type_name})")
}
