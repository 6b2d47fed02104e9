//! Argument conversions of the official (pybind11) module, where PyO3's differ: a harness
//! that sets `settings.use_token_latencies = 1` or gets a `TypeError` for a negative count
//! must behave the same here.

use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes};
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

/// An integer as pybind11 converts one: an int or anything with `__index__`; a value out of
/// the type's range is a `TypeError` (PyO3 would raise `OverflowError`).
#[derive(Debug, Clone, Copy)]
pub struct Integer<T>(pub T);

/// An unsigned 64-bit count (`uint64_t`, `size_t`, `uintptr_t` fields and arguments).
pub(crate) type Count = Integer<u64>;

macro_rules! integer_conversions {
    ($($int:ty: $what:literal),*) => {$(
        impl<'a, 'py> FromPyObject<'a, 'py> for Integer<$int> {
            type Error = PyErr;

            fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
                obj.extract::<$int>().map(Integer).map_err(|err| {
                    if err.is_instance_of::<PyOverflowError>(obj.py()) {
                        PyTypeError::new_err(format!(
                            concat!("an integer that fits ", $what, " is required, got {}"),
                            describe(&obj)
                        ))
                    } else {
                        err
                    }
                })
            }
        }

        impl From<Integer<$int>> for $int {
            fn from(integer: Integer<$int>) -> $int {
                integer.0
            }
        }
    )*};
}

integer_conversions!(u64: "an unsigned 64-bit integer", i64: "a signed 64-bit integer",
    i32: "a signed 32-bit integer", usize: "an unsigned size");

/// A string as pybind11 converts one to `std::string`: a `str`, or `bytes` holding UTF-8.
#[derive(Debug, Clone)]
pub(crate) struct Text(pub String);

impl<'a, 'py> FromPyObject<'a, 'py> for Text {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(text) = obj.extract::<String>() {
            return Ok(Text(text));
        }
        if let Ok(bytes) = obj.cast::<PyBytes>() {
            return String::from_utf8(bytes.as_bytes().to_vec())
                .map(Text)
                .map_err(|_| PyTypeError::new_err("bytes that are not UTF-8 cannot be a string"));
        }
        Err(type_error("str", &obj))
    }
}

/// A callback argument: anything callable, or `None` (a callback never called).
pub(crate) fn callback(name: &str, obj: Py<PyAny>, py: Python<'_>) -> PyResult<Py<PyAny>> {
    let bound = obj.bind(py);
    if bound.is_callable() || bound.is_none() {
        Ok(obj)
    } else {
        Err(PyTypeError::new_err(format!(
            "{name} must be callable, got {}",
            describe(&bound.as_borrowed())
        )))
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
