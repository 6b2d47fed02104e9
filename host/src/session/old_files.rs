//! What an earlier run left in a reused directory is removed before anything runs: a run that
//! dies half-way must not leave the previous run's VALID summary (or result.json, power
//! result, accuracy score) beside its own truncated detail log.

use std::path::Path;

use super::SessionError;
use crate::logs::{
    ABORTED_FILE, ACCURACY_LOG, ACCURACY_TXT, DETAIL_LOG, PROVENANCE_FILE, REPORT_HTML,
    RESULT_JSON, SUMMARY_LOG, TRACE_LOG,
};

/// The files a run may write into its log directory, besides the power traces.
pub const RUN_FILES: [&str; 9] = [
    SUMMARY_LOG,
    DETAIL_LOG,
    ACCURACY_LOG,
    TRACE_LOG,
    RESULT_JSON,
    ACCURACY_TXT,
    ABORTED_FILE,
    PROVENANCE_FILE,
    REPORT_HTML,
];

/// Removes from `dir` every file a run writes; a missing directory holds none.
pub(super) fn clear_old_files(dir: &Path) -> Result<(), SessionError> {
    for name in RUN_FILES {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Ok(()) => tracing::debug!(file = %path.display(), "removed an earlier run's file"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(SessionError::Remove { path, source }),
        }
    }
    crate::power::clear_old_outputs(dir)?;
    Ok(())
}
