//! Turning issued samples into batches: inline on the host's thread, or through a queue that
//! worker threads drain.

pub mod inline;
pub mod item;
pub mod workers;

use std::sync::OnceLock;

use mlperf_plugin_api::sdk::{Level, Logger, PluginError};

/// The first batch that failed after its samples were accepted (their completions cannot
/// come): logged at once, and returned by every later issue_query and flush_queries so the
/// host ends the run with the reason instead of waiting for those samples.
pub struct Failure {
    first: OnceLock<String>,
    logger: Logger,
}

impl Failure {
    pub fn new(logger: Logger) -> Failure {
        Failure {
            first: OnceLock::new(),
            logger,
        }
    }

    pub fn record(&self, message: String) {
        self.logger.log(Level::Error, &message);
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
