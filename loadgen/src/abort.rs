//! `abort_test`: ends every running test from any thread, as the official `AbortTest`. The
//! engine notices a new abort generation; the logs say why when the caller did.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread::Thread;

static ABORT_GENERATION: AtomicU64 = AtomicU64::new(0);
/// Why the last abort was asked for, when its caller said.
static ABORT_REASON: Mutex<Option<String>> = Mutex::new(None);
/// The coordinating threads of running tests, parked between looks at the generation.
static COORDINATORS: Mutex<Vec<Thread>> = Mutex::new(Vec::new());

/// Ends every running test: issuing stops, outstanding samples drain, results are reported
/// (INVALID). Callable from any thread, like the official `AbortTest`.
pub fn abort_test() {
    set_abort_reason(None);
    ABORT_GENERATION.fetch_add(1, Ordering::SeqCst);
    wake_coordinators();
}

/// As [`abort_test`], the logs saying why (`Test aborted: <reason>.`).
pub fn abort_test_because(reason: &str) {
    set_abort_reason(Some(reason.to_string()));
    ABORT_GENERATION.fetch_add(1, Ordering::SeqCst);
    wake_coordinators();
}

fn wake_coordinators() {
    for thread in COORDINATORS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
    {
        thread.unpark();
    }
}

/// The calling thread is woken by every abort while this lives: it can park for long
/// stretches instead of polling the generation (a wake-up every few ms on a busy 2-core
/// machine moves the threads that are spinning).
pub(crate) struct WokenByAbort(std::thread::ThreadId);

impl WokenByAbort {
    pub(crate) fn register() -> WokenByAbort {
        let thread = std::thread::current();
        let id = thread.id();
        COORDINATORS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(thread);
        WokenByAbort(id)
    }
}

impl Drop for WokenByAbort {
    fn drop(&mut self) {
        COORDINATORS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|thread| thread.id() != self.0);
    }
}

/// Whether an abort came since it was made: for a loop outside the engine's tests (a serving
/// point) that ends on the same abort as a test does.
#[derive(Debug, Clone, Copy)]
pub struct AbortWatch {
    since: u64,
}

impl AbortWatch {
    /// Watches for aborts from now on.
    pub fn from_now() -> AbortWatch {
        AbortWatch {
            since: generation(),
        }
    }

    /// One atomic load: cheap enough for an issue loop.
    pub fn aborted(&self) -> bool {
        generation() != self.since
    }

    /// Why, once aborted: the reason given, or "aborted" when none was.
    pub fn reason(&self) -> Option<String> {
        self.aborted()
            .then(|| abort_reason().unwrap_or_else(|| "aborted".to_string()))
    }
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
