//! Errors and warnings the engine raises during a test. The official LoadGen writes each as a
//! detail-log entry flagged `is_error` / `is_warning` and counts them in the summary footer.

use std::sync::Mutex;

use serde::Serialize;

use super::logging::LogSender;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

/// One message with the official detail-log key (`error_runtime`, `generic_message`, …).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub key: &'static str,
    pub message: String,
}

impl Diagnostic {
    pub fn info(key: &'static str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Info,
            key,
            message: message.into(),
        }
    }

    pub fn warning(key: &'static str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            key,
            message: message.into(),
        }
    }

    pub fn error(key: &'static str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            key,
            message: message.into(),
        }
    }
}

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
