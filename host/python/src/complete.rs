//! `QuerySamplesComplete` and `FirstTokenComplete`: module-level in the official API, so the
//! running test's completer is published here when its first query is issued.
//!
//! Completing holds the GIL: the engine's completion path takes no lock and never waits for
//! Python, so releasing and re-taking the GIL would only add a hand-off per call.

use std::cell::Cell;
use std::sync::RwLock;

use mlperf_loadgen::{AsSampleResponse, Completer, QuerySampleResponse, ResponseId};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::samples;

static CURRENT: RwLock<Option<Completer>> = RwLock::new(None);

/// Makes `completer` the one completions go to.
pub(crate) fn publish(completer: Completer) {
    *CURRENT.write().unwrap_or_else(|p| p.into_inner()) = Some(completer);
}

/// The test has ended: later completions are ignored.
pub(crate) fn withdraw() {
    *CURRENT.write().unwrap_or_else(|p| p.into_inner()) = None;
}

fn current() -> Option<Completer> {
    CURRENT.read().unwrap_or_else(|p| p.into_inner()).clone()
}

/// A response as Python gave it: an address and a size.
#[derive(Debug, Clone, Copy)]
struct RawResponse {
    id: u64,
    data: u64,
    size: u64,
    n_tokens: i64,
}

impl AsSampleResponse for RawResponse {
    fn as_response(&self) -> QuerySampleResponse<'_> {
        let data = if self.data == 0 || self.size == 0 {
            &[][..]
        } else {
            // SAFETY: the API's contract, as the official module's: `data` is the address of
            // `size` readable bytes that stay valid until `QuerySamplesComplete` returns.
            unsafe { std::slice::from_raw_parts(self.data as *const u8, self.size as usize) }
        };
        QuerySampleResponse::with_tokens(ResponseId(self.id), data, self.n_tokens)
    }
}

thread_local! {
    /// Reused between calls; taken out while in use, so a nested call gets a fresh one.
    static BUFFER: Cell<Vec<RawResponse>> = const { Cell::new(Vec::new()) };
}

/// Reads `responses` (a list, tuple or any iterable of `QuerySampleResponse`) and runs `f`
/// on them.
fn with_responses<R>(
    responses: &Bound<'_, PyAny>,
    f: impl FnOnce(&[RawResponse]) -> PyResult<R>,
) -> PyResult<R> {
    let mut buffer = BUFFER.take();
    buffer.clear();
    let read = read_responses(responses, &mut buffer);
    let result = read.and_then(|()| f(&buffer));
    BUFFER.set(buffer);
    result
}

fn read_responses(responses: &Bound<'_, PyAny>, into: &mut Vec<RawResponse>) -> PyResult<()> {
    if let Ok(list) = responses.cast::<PyList>() {
        into.reserve(list.len());
        for item in list.iter() {
            into.push(read_response(&item)?);
        }
    } else if let Ok(tuple) = responses.cast::<PyTuple>() {
        into.reserve(tuple.len());
        for item in tuple.iter() {
            into.push(read_response(&item)?);
        }
    } else {
        for item in responses.try_iter()? {
            into.push(read_response(&item?)?);
        }
    }
    Ok(())
}

#[inline]
fn read_response(item: &Bound<'_, PyAny>) -> PyResult<RawResponse> {
    let response = item.cast::<samples::QuerySampleResponse>().map_err(|_| {
        PyTypeError::new_err(format!(
            "responses must be QuerySampleResponse objects, got {}",
            item.get_type()
                .name()
                .map_or_else(|_| "?".to_string(), |n| n.to_string())
        ))
    })?;
    let response = response.borrow();
    Ok(RawResponse {
        id: response.id,
        data: response.data,
        size: response.size,
        n_tokens: response.n_tokens,
    })
}

/// Completes samples, from any thread. `response_cb` is called with each response the
/// accuracy log will keep, before its bytes are copied. Without a running test it does
/// nothing.
#[pyfunction(name = "QuerySamplesComplete", signature = (responses, response_cb = None))]
pub(crate) fn query_samples_complete(
    responses: &Bound<'_, PyAny>,
    response_cb: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    with_responses(responses, |raw| {
        let Some(completer) = current() else {
            return Ok(());
        };
        let Some(response_cb) = response_cb.filter(|cb| !cb.is_none()) else {
            completer.complete_in_place(raw);
            return Ok(());
        };
        let mut raised = None;
        completer.query_samples_complete_with(raw, |logged| {
            if raised.is_some() {
                return;
            }
            let response = samples::QuerySampleResponse {
                id: logged.id.0,
                data: if logged.data.is_empty() {
                    0
                } else {
                    logged.data.as_ptr() as u64
                },
                size: logged.data.len() as u64,
                n_tokens: logged.n_tokens,
            };
            let called = samples::untracked(response_cb.py(), response)
                .and_then(|response| response_cb.call1((response,)));
            if let Err(err) = called {
                raised = Some(err);
            }
        });
        raised.map_or(Ok(()), Err)
    })
}

/// Reports the first token of samples of a token run, from any thread. `response_cb` is
/// accepted for the official signature and, as there, not called.
#[pyfunction(name = "FirstTokenComplete", signature = (responses, response_cb = None))]
pub(crate) fn first_token_complete(
    responses: &Bound<'_, PyAny>,
    response_cb: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let _ = response_cb;
    with_responses(responses, |raw| {
        let Some(completer) = current() else {
            return Ok(());
        };
        let responses: Vec<QuerySampleResponse<'_>> =
            raw.iter().map(AsSampleResponse::as_response).collect();
        completer.first_token_complete(&responses);
        Ok(())
    })
}
