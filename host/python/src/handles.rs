//! `Construct*` / `Destroy*`: the objects behind the integer handles the official API passes
//! around. A handle is a key here, not an address, so a wrong or destroyed one is a
//! `ValueError` instead of a crash.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::convert::{callback, Count};
use crate::sut::{IssueCallback, QslCallbacks, SutCallbacks, SutName};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SutKind {
    Sut,
    FastSut,
    Qdl,
}

impl SutKind {
    fn constructor(self) -> &'static str {
        match self {
            SutKind::Sut => "ConstructSUT",
            SutKind::FastSut => "ConstructFastSUT",
            SutKind::Qdl => "ConstructQDL",
        }
    }
}

#[derive(Default)]
struct Registry {
    last_handle: u64,
    suts: HashMap<u64, (SutKind, Arc<SutCallbacks>)>,
    qsls: HashMap<u64, Arc<QslCallbacks>>,
}

impl Registry {
    fn next_handle(&mut self) -> u64 {
        self.last_handle += 1;
        self.last_handle
    }
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn with_registry<R>(f: impl FnOnce(&mut Registry) -> R) -> R {
    let mut registry = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
    f(registry.get_or_insert_with(Registry::default))
}

fn add_sut(kind: SutKind, callbacks: SutCallbacks) -> u64 {
    with_registry(|registry| {
        let handle = registry.next_handle();
        registry.suts.insert(handle, (kind, Arc::new(callbacks)));
        handle
    })
}

fn remove_sut(kind: SutKind, handle: u64) -> PyResult<()> {
    // Dropped after the lock: releasing Python callbacks may run Python code.
    let removed = with_registry(|registry| match registry.suts.get(&handle) {
        Some((found, _)) if *found == kind => Ok(registry.suts.remove(&handle)),
        _ => Err(PyValueError::new_err(format!(
            "{handle} is not a handle {} returned (or it was destroyed)",
            kind.constructor()
        ))),
    })?;
    drop(removed);
    Ok(())
}

/// The SUT, fast SUT or QDL behind `handle`.
pub(crate) fn sut(handle: u64) -> PyResult<Arc<SutCallbacks>> {
    with_registry(|registry| registry.suts.get(&handle).map(|(_, sut)| Arc::clone(sut)))
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "sut {handle} is not a handle ConstructSUT, ConstructFastSUT or ConstructQDL returned (or it was destroyed)"
            ))
        })
}

/// The QSL behind `handle`.
pub(crate) fn qsl(handle: u64) -> PyResult<Arc<QslCallbacks>> {
    with_registry(|registry| registry.qsls.get(&handle).map(Arc::clone)).ok_or_else(|| {
        PyValueError::new_err(format!(
            "qsl {handle} is not a handle ConstructQSL returned (or it was destroyed)"
        ))
    })
}

/// `ConstructSUT(issue_cb(list[QuerySample]), flush_cb())`: a SUT named "PySUT".
#[pyfunction(name = "ConstructSUT")]
pub(crate) fn construct_sut(
    py: Python<'_>,
    issue_cb: Py<PyAny>,
    flush_cb: Py<PyAny>,
) -> PyResult<u64> {
    let callbacks = SutCallbacks {
        issue: IssueCallback::Samples(callback("issue_cb", issue_cb, py)?),
        flush: callback("flush_cb", flush_cb, py)?,
        name: SutName::Fixed("PySUT"),
    };
    Ok(add_sut(SutKind::Sut, callbacks))
}

/// `ConstructFastSUT(issue_cb(list[int] ids, list[int] indices), flush_cb())`: "PyFastSUT".
#[pyfunction(name = "ConstructFastSUT")]
pub(crate) fn construct_fast_sut(
    py: Python<'_>,
    issue_cb: Py<PyAny>,
    flush_cb: Py<PyAny>,
) -> PyResult<u64> {
    let callbacks = SutCallbacks {
        issue: IssueCallback::Fast(callback("issue_cb", issue_cb, py)?),
        flush: callback("flush_cb", flush_cb, py)?,
        name: SutName::Fixed("PyFastSUT"),
    };
    Ok(add_sut(SutKind::FastSut, callbacks))
}

/// `ConstructQDL(issue_cb(list[QuerySample]), flush_cb(), name_cb() -> str)`: a query
/// dispatch library, passed to `StartTest` as its SUT.
#[pyfunction(name = "ConstructQDL")]
pub(crate) fn construct_qdl(
    py: Python<'_>,
    issue_cb: Py<PyAny>,
    flush_cb: Py<PyAny>,
    name_cb: Py<PyAny>,
) -> PyResult<u64> {
    let callbacks = SutCallbacks {
        issue: IssueCallback::Samples(callback("issue_cb", issue_cb, py)?),
        flush: callback("flush_cb", flush_cb, py)?,
        name: SutName::Callback(callback("name_cb", name_cb, py)?),
    };
    Ok(add_sut(SutKind::Qdl, callbacks))
}

/// `ConstructQSL(total_sample_count, performance_sample_count, load_cb(list[int]),
/// unload_cb(list[int]))`: a QSL named "PyQSL".
#[pyfunction(name = "ConstructQSL")]
pub(crate) fn construct_qsl(
    py: Python<'_>,
    total_sample_count: Count,
    performance_sample_count: Count,
    load_cb: Py<PyAny>,
    unload_cb: Py<PyAny>,
) -> PyResult<u64> {
    let count = |count: Count| usize::try_from(count.0).unwrap_or(usize::MAX);
    let callbacks = QslCallbacks {
        total_sample_count: count(total_sample_count),
        performance_sample_count: count(performance_sample_count),
        load: callback("load_cb", load_cb, py)?,
        unload: callback("unload_cb", unload_cb, py)?,
    };
    Ok(with_registry(|registry| {
        let handle = registry.next_handle();
        registry.qsls.insert(handle, Arc::new(callbacks));
        handle
    }))
}

#[pyfunction(name = "DestroySUT")]
pub(crate) fn destroy_sut(sut: u64) -> PyResult<()> {
    remove_sut(SutKind::Sut, sut)
}

#[pyfunction(name = "DestroyFastSUT")]
pub(crate) fn destroy_fast_sut(sut: u64) -> PyResult<()> {
    remove_sut(SutKind::FastSut, sut)
}

#[pyfunction(name = "DestroyQDL")]
pub(crate) fn destroy_qdl(qdl: u64) -> PyResult<()> {
    remove_sut(SutKind::Qdl, qdl)
}

#[pyfunction(name = "DestroyQSL")]
pub(crate) fn destroy_qsl(qsl: u64) -> PyResult<()> {
    let removed = with_registry(|registry| registry.qsls.remove(&qsl));
    match removed {
        Some(_) => Ok(()),
        None => Err(PyValueError::new_err(format!(
            "{qsl} is not a handle ConstructQSL returned (or it was destroyed)"
        ))),
    }
}
