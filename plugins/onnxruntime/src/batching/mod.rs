//! Turning issued samples into batches: inline on the host's thread, or through a queue that
//! worker threads drain.

pub(crate) mod arena_order;
pub(crate) mod inline;
pub(crate) mod item;
pub(crate) mod pinning;
pub(crate) mod workers;

use std::sync::OnceLock;

use mlperf_plugin_api::sdk::{Completer, Level, Logger, PluginError};

use crate::session::engine::BatchStats;

/// The first batch that failed after its samples were accepted (their completions cannot
/// come): reported to the host at once through its fail callback (so an Offline run, whose one
/// query is already issued, ends without waiting out the drain timeout; an older host without
/// it gets an error log line), and returned by every later issue_query and flush_queries.
pub(crate) struct Failure {
    first: OnceLock<String>,
    completer: Completer,
}

impl Failure {
    pub(crate) fn new(completer: Completer) -> Failure {
        Failure {
            first: OnceLock::new(),
            completer,
        }
    }

    pub(crate) fn record(&self, message: String) {
        self.completer.fail(&message);
        let _ = self.first.set(message);
    }

    pub(crate) fn check(&self) -> Result<(), PluginError> {
        match self.first.get() {
            None => Ok(()),
            Some(message) => Err(PluginError::device(format!(
                "an earlier batch failed and its samples were not completed: {message}"
            ))),
        }
    }
}

/// Says at destroy how the batches of several samples were fed to the model: how many were
/// read in place (neighbouring samples, see `arena_order`) and how many were gathered.
pub(crate) fn report(logger: &Logger, stats: BatchStats) {
    if stats.batches == 0 {
        return;
    }
    logger.log(
        Level::Info,
        &format!(
            "onnxruntime plugin: {} batch(es) of several samples ran, {} read in place from the \
             host's sample memory, {} gathered (copied) first",
            stats.batches,
            stats.read_in_place,
            stats.batches - stats.read_in_place
        ),
    );
}
