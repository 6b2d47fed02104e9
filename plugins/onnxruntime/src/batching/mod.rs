//! Turning issued samples into batches: inline on the host's thread, or through a queue that
//! worker threads drain.

pub mod inline;
pub mod item;
pub mod workers;

use std::sync::OnceLock;

use mlperf_plugin_api::sdk::{Completer, PluginError};

/// The first batch that failed after its samples were accepted (their completions cannot
/// come): reported to the host at once through its fail callback (so an Offline run, whose one
/// query is already issued, ends without waiting out the drain timeout; an older host without
/// it gets an error log line), and returned by every later issue_query and flush_queries.
pub struct Failure {
    first: OnceLock<String>,
    completer: Completer,
}

impl Failure {
    pub fn new(completer: Completer) -> Failure {
        Failure {
            first: OnceLock::new(),
            completer,
        }
    }

    pub fn record(&self, message: String) {
        self.completer.fail(&message);
        let _ = self.first.set(message);
    }

    pub fn check(&self) -> Result<(), PluginError> {
        match self.first.get() {
            None => Ok(()),
            Some(message) => Err(PluginError::device(format!(
                "an earlier batch failed and its samples were not completed: {message}"
            ))),
        }
    }
}
