//! A single sample's failure (ABI 1.5), reported through
//! [`Completer::fail_sample`](super::Completer::fail_sample).

use crate::ffi;

/// What went wrong with one sample's request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    Other,
    /// The server answered with an error status (the failure's `status`).
    Status,
    /// No answer in time.
    Timeout,
    /// No connection, or it was lost before an answer began.
    Connection,
    /// The answer broke off, stalled, or could not be read.
    Stream,
}

impl FailureKind {
    pub fn as_raw(self) -> i32 {
        match self {
            FailureKind::Other => ffi::FAILURE_OTHER,
            FailureKind::Status => ffi::FAILURE_STATUS,
            FailureKind::Timeout => ffi::FAILURE_TIMEOUT,
            FailureKind::Connection => ffi::FAILURE_CONNECTION,
            FailureKind::Stream => ffi::FAILURE_STREAM,
        }
    }

    /// Unknown codes (from a later minor) read as `Other`.
    pub fn from_raw(raw: i32) -> FailureKind {
        match raw {
            ffi::FAILURE_STATUS => FailureKind::Status,
            ffi::FAILURE_TIMEOUT => FailureKind::Timeout,
            ffi::FAILURE_CONNECTION => FailureKind::Connection,
            ffi::FAILURE_STREAM => FailureKind::Stream,
            _ => FailureKind::Other,
        }
    }

    /// A word for reports: `status`, `timeout`, `connection`, `stream`, `other`.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Other => "other",
            FailureKind::Status => "status",
            FailureKind::Timeout => "timeout",
            FailureKind::Connection => "connection",
            FailureKind::Stream => "stream",
        }
    }
}
