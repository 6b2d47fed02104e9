//! What a test runs with beside its settings: objects of the program that runs it.

use std::path::PathBuf;
use std::sync::Arc;

use crate::diagnostics::Diagnostic;
use crate::progress::ProgressHandle;

/// What [`start_test_with`](super::start_test_with) takes beside the official API's settings:
/// the caller's objects, none of them a setting of the official LoadGen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TestContext {
    /// Watch the test while it runs (a progress bar).
    pub progress: Option<ProgressHandle>,
    /// Where the SUT came from (plugin path, sha256, ABI version, attributes): written to the
    /// detail log after the SUT's name and to result.json.
    pub provenance: Vec<(String, String)>,
    /// Problems found before the test (for example in config files read for it): written to
    /// the detail log at its start and counted in its errors, as the official LoadGen does
    /// with what was logged before `StartTest`.
    pub earlier_diagnostics: Vec<Diagnostic>,
    /// Path of an audit.config to apply (model `*`); `None` applies none.
    pub audit_config: Option<PathBuf>,
    /// Called with the result of a test given up because a call into the SUT outlasted
    /// `LogSettings::sut_call_timeout`, once every log is written. A program that cannot wait
    /// for that call ends its process here; otherwise the test returns the result once the
    /// call returns, which it may never do.
    pub on_abandoned: Option<AbandonHook>,
    /// Run the issue loop, and so every call into the SUT and the QSL, on the thread that
    /// started the test, as the official LoadGen does (a Python harness depends on it), and
    /// watch it from a thread of the engine's. By default the issue loop has a thread of its
    /// own and the caller's thread watches.
    pub issue_on_calling_thread: bool,
    /// Told each series' samples and their times once it has drained, and asked what to add
    /// to their trace events: a caller that learns more of each sample than the engine does.
    pub series_observer: Option<super::sample_times::SeriesObserverHook>,
}

/// See [`TestContext::on_abandoned`].
#[derive(Clone)]
pub struct AbandonHook(pub Arc<dyn Fn(&crate::TestResult) + Send + Sync>);

impl std::fmt::Debug for AbandonHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AbandonHook")
    }
}

impl PartialEq for AbandonHook {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
