//! `abort_test`: ends every running test from any thread, as the official `AbortTest`. The
//! engine notices a new abort generation; the logs say why when the caller did.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

static ABORT_GENERATION: AtomicU64 = AtomicU64::new(0);
/// Why the last abort was asked for, when its caller said.
static ABORT_REASON: Mutex<Option<String>> = Mutex::new(None);

/// Ends every running test: issuing stops, outstanding samples drain, results are reported
/// (INVALID). Callable from any thread, like the official `AbortTest`.
pub fn abort_test() {
    set_abort_reason(None);
    ABORT_GENERATION.fetch_add(1, Ordering::SeqCst);
}

/// As [`abort_test`], the logs saying why (`Test aborted: <reason>.`).
pub fn abort_test_because(reason: &str) {
    set_abort_reason(Some(reason.to_string()));
    ABORT_GENERATION.fetch_add(1, Ordering::SeqCst);
}

fn set_abort_reason(reason: Option<String>) {
    *ABORT_REASON.lock().unwrap_or_else(|p| p.into_inner()) = reason;
}

/// The reason given with the last abort.
pub(crate) fn abort_reason() -> Option<String> {
    ABORT_REASON
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

/// Changes with every abort: a test compares it with the value it started with.
pub(crate) fn generation() -> u64 {
    ABORT_GENERATION.load(Ordering::SeqCst)
}
