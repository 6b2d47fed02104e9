//! The official log files: `mlperf_log_detail.txt` (appended as the run goes),
//! `mlperf_log_accuracy.json`, `mlperf_log_summary.txt` and our `result.json` (written at the
//! end, atomically). Formatting follows the official LoadGen; writing happens on a thread of
//! its own so it never slows the issue loop.

pub mod accuracy;
pub mod detail;
mod diagnostics;
pub(crate) mod keys;
pub mod number;
pub mod summary;
pub(crate) mod trace;
pub(crate) mod writer;

use std::sync::mpsc;

use self::detail::{DetailEntry, DetailValue};
use self::writer::LogMessage;
use super::diagnostics::{Diagnostic, Severity};
use super::types::{AccuracyRecord, Clock};

pub use self::diagnostics::DiagnosticSink;
pub use self::writer::{write_atomically, LogFiles};

/// The engine's handle on the detail and accuracy logs; cheap to clone, usable from any
/// thread. Without log files it only keeps time.
#[derive(Clone)]
pub(crate) struct LogSender {
    sender: Option<mpsc::Sender<LogMessage>>,
    clock: Clock,
}

impl LogSender {
    pub(crate) fn new(sender: Option<mpsc::Sender<LogMessage>>, clock: Clock) -> Self {
        LogSender { sender, clock }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.sender.is_some()
    }

    fn send(&self, message: LogMessage) {
        if let Some(sender) = &self.sender {
            // A writer that died has reported its error; the run goes on.
            let _ = sender.send(message);
        }
    }

    /// An entry stamped now and at the caller's source location.
    #[track_caller]
    pub(crate) fn entry(&self, key: &str, value: impl Into<DetailValue>) -> DetailEntry {
        DetailEntry::new(key, value, self.clock.now_ns())
    }

    #[track_caller]
    pub(crate) fn detail(&self, key: &str, value: impl Into<DetailValue>) {
        if self.enabled() {
            let entry = self.entry(key, value);
            self.send(LogMessage::Detail(entry));
        }
    }

    /// Several keys sharing one timestamp and call site, as one official log closure does.
    #[track_caller]
    pub(crate) fn details(&self, entries: Vec<(String, DetailValue)>) {
        if !self.enabled() {
            return;
        }
        let stamp = self.entry("", false);
        for (key, value) in entries {
            let mut entry = stamp.clone();
            entry.key = key;
            entry.value = value;
            self.send(LogMessage::Detail(entry));
        }
    }

    #[track_caller]
    pub(crate) fn diagnostic(&self, diagnostic: &Diagnostic) {
        if self.enabled() {
            let mut entry = self.entry(diagnostic.key, diagnostic.message.clone());
            entry.is_error = diagnostic.severity == Severity::Error;
            entry.is_warning = diagnostic.severity == Severity::Warning;
            self.send(LogMessage::Detail(entry));
        }
    }

    pub(crate) fn hold(&self) {
        self.send(LogMessage::Hold);
    }

    pub(crate) fn release(&self, entries: Vec<DetailEntry>) {
        self.send(LogMessage::Release(entries));
    }

    pub(crate) fn accuracy(&self, record: AccuracyRecord) {
        self.send(LogMessage::Accuracy(record));
    }

    pub(crate) fn trace(&self, events: String) {
        self.send(LogMessage::Trace(events));
    }
}
