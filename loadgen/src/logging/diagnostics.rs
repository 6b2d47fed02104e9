//! Diagnostics written to the detail log as they happen.

use std::sync::Mutex;

use super::LogSender;
use crate::diagnostics::{Diagnostic, Severity};

/// Collects diagnostics from any thread and writes each to the detail log as it happens.
/// Only rare events come here, never one per sample.
pub struct DiagnosticSink {
    entries: Mutex<Vec<Diagnostic>>,
    log: LogSender,
}

impl DiagnosticSink {
    pub(crate) fn new(log: LogSender) -> Self {
        DiagnosticSink {
            entries: Mutex::new(Vec::new()),
            log,
        }
    }

    #[track_caller]
    pub fn push(&self, diagnostic: Diagnostic) {
        self.log.diagnostic(&diagnostic);
        match diagnostic.severity {
            Severity::Error => tracing::error!(key = diagnostic.key, "{}", diagnostic.message),
            Severity::Warning => tracing::warn!(key = diagnostic.key, "{}", diagnostic.message),
            Severity::Info => tracing::debug!(key = diagnostic.key, "{}", diagnostic.message),
        }
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(diagnostic);
    }

    pub fn take(&self) -> Vec<Diagnostic> {
        std::mem::take(
            &mut *self
                .entries
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }
}
