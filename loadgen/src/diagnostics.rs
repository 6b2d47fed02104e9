//! Errors and warnings the engine raises during a test. The official LoadGen writes each as a
//! detail-log entry flagged `is_error` / `is_warning` and counts them in the summary footer.

use serde::Serialize;

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
