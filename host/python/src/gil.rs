//! Entering Python from the engine's threads.
//!
//! Taking the GIL on a thread without a Python thread state creates one and destroys it again
//! on release, which costs microseconds per query; each engine thread therefore keeps its
//! thread state until it exits. An issuing thread also keeps the GIL from one `issue_query`
//! to the next while queries are due, and gives it up when the engine says it will wait
//! ([`release_held`]): handing the GIL back and forth once per query would let every other
//! Python thread (a SUT's completion worker) cut in for a whole switch interval each time.

use std::cell::RefCell;

use pyo3::ffi;
use pyo3::prelude::*;

/// What an engine thread keeps of Python between calls.
#[derive(Default)]
struct EngineThread {
    /// The thread state this thread created, saved with the GIL released.
    kept: Option<*mut ffi::PyThreadState>,
    /// Whether this thread holds the GIL between `issue_query` calls.
    held: bool,
}

impl EngineThread {
    fn release_held(&mut self) {
        if self.held {
            self.held = false;
            // SAFETY: pairs the `PyGILState_Ensure` of `hold`, on the same thread.
            unsafe { ffi::PyGILState_Release(ffi::PyGILState_STATE::PyGILState_UNLOCKED) };
        }
    }
}

impl Drop for EngineThread {
    fn drop(&mut self) {
        self.release_held();
        if let Some(state) = self.kept.take() {
            // SAFETY: `state` is this thread's state, saved by `keep_thread_state` and not
            // deleted since; engine threads end inside `StartTest`, so the interpreter is
            // alive. Releasing the last `PyGILState_Ensure` deletes the thread state.
            unsafe {
                if ffi::Py_IsInitialized() != 0 {
                    ffi::PyEval_RestoreThread(state);
                    ffi::PyGILState_Release(ffi::PyGILState_STATE::PyGILState_UNLOCKED);
                }
            }
        }
    }
}

thread_local! {
    static ENGINE_THREAD: RefCell<EngineThread> = RefCell::new(EngineThread::default());
}

/// Gives this thread a lasting thread state unless it has one (Python threads, the thread
/// that called `StartTest`).
fn keep_thread_state(thread: &mut EngineThread) {
    // SAFETY: only asks whether this thread has a thread state.
    if unsafe { !ffi::PyGILState_GetThisThreadState().is_null() } {
        return;
    }
    // SAFETY: this thread has no thread state and so does not hold the GIL: `Ensure` creates
    // a state and takes the GIL, `SaveThread` gives the GIL back and keeps the state, which
    // later `PyGILState_Ensure` calls (inside `Python::attach`) find and reuse.
    thread.kept = Some(unsafe {
        ffi::PyGILState_Ensure();
        ffi::PyEval_SaveThread()
    });
}

/// Runs `f` holding the GIL, from any thread.
pub(crate) fn with_python<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> R {
    ENGINE_THREAD.with_borrow_mut(keep_thread_state);
    Python::attach(f)
}

/// Runs `f` holding the GIL and keeps holding it afterwards, until [`release_held`] on this
/// thread (or its end).
pub(crate) fn with_python_held<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> R {
    ENGINE_THREAD.with_borrow_mut(|thread| {
        if !thread.held {
            keep_thread_state(thread);
            // SAFETY: this thread does not hold the GIL (it holds it only while `held`, or
            // inside `Python::attach`, which has returned); `release_held` pairs this.
            unsafe { ffi::PyGILState_Ensure() };
            thread.held = true;
        }
    });
    Python::attach(f)
}

/// Gives up the GIL that [`with_python_held`] kept on this thread, if any.
pub(crate) fn release_held() {
    ENGINE_THREAD.with_borrow_mut(EngineThread::release_held);
}
