//! Entering Python from the engine's threads. Taking the GIL on a thread without a Python
//! thread state creates one and destroys it again on release, which costs microseconds per
//! query; each engine thread therefore keeps its thread state until it exits.

use std::cell::RefCell;

use pyo3::ffi;
use pyo3::prelude::*;

/// A thread state this thread created and keeps, with the GIL released.
struct KeptThreadState(*mut ffi::PyThreadState);

impl Drop for KeptThreadState {
    fn drop(&mut self) {
        // SAFETY: `self.0` is this thread's state, saved by `keep_thread_state` and not
        // deleted since; engine threads end inside `StartTest`, so the interpreter is alive.
        // Releasing the last `PyGILState_Ensure` deletes the thread state and the GIL with it.
        unsafe {
            if ffi::Py_IsInitialized() != 0 {
                ffi::PyEval_RestoreThread(self.0);
                ffi::PyGILState_Release(ffi::PyGILState_STATE::PyGILState_UNLOCKED);
            }
        }
    }
}

thread_local! {
    static KEPT: RefCell<Option<KeptThreadState>> = const { RefCell::new(None) };
}

fn keep_thread_state() {
    // SAFETY: asks only whether this thread already has a thread state; Python threads and
    // the thread that called `StartTest` do, and keep theirs as they are.
    if unsafe { !ffi::PyGILState_GetThisThreadState().is_null() } {
        return;
    }
    KEPT.with(|kept| {
        // SAFETY: this thread has no thread state and so does not hold the GIL: `Ensure`
        // creates a state and takes the GIL, `SaveThread` gives the GIL back and keeps the
        // state, which `PyGILState_Ensure` (inside `Python::attach`) then finds and reuses.
        let state = unsafe {
            ffi::PyGILState_Ensure();
            ffi::PyEval_SaveThread()
        };
        *kept.borrow_mut() = Some(KeptThreadState(state));
    });
}

/// Runs `f` holding the GIL, from any thread.
pub fn with_python<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> R {
    keep_thread_state();
    Python::attach(f)
}
