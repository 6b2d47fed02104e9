//! What a test runs with beside its settings: objects of the program that runs it.

use std::path::PathBuf;

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
}
