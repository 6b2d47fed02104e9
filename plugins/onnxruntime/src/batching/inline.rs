//! workers = 0: each query runs inside issue_query on the host's thread, split into batches
//! of at most max_batch (SingleStream: one sample; MultiStream: the query as one batch).

use std::sync::{Mutex, MutexGuard};

use mlperf_plugin_api::sdk::{Completer, Logger, PluginError, Sample};

use super::arena_order::arena_order;
use super::item::{check, check_all, ranges, Item};
use super::{report, Failure};
use crate::session::engine::Engine;
use crate::session::model::InputSpec;

pub(crate) struct Inline {
    /// One session; concurrent issuers take turns.
    engine: Mutex<Engine>,
    max_batch: usize,
    logger: Logger,
}

impl Inline {
    pub(crate) fn new(engine: Engine, max_batch: usize, logger: Logger) -> Inline {
        Inline {
            engine: Mutex::new(engine),
            max_batch,
            logger,
        }
    }

    fn engine(&self) -> MutexGuard<'_, Engine> {
        // A panic while running leaves the session as usable as any failed run does.
        self.engine.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn issue(
        &self,
        samples: &[Sample<'_>],
        input: &InputSpec,
        completer: &Completer,
        failure: &Failure,
    ) -> Result<(), PluginError> {
        if let [sample] = samples {
            let shape = check(sample, input).map_err(PluginError::invalid_argument)?;
            return self
                .engine()
                .infer(&[Item::of(sample)], &shape, completer, completer.now_ns())
                .map_err(PluginError::device);
        }
        // Every sample is checked before any runs: an error refuses the whole query.
        let runs = check_all(samples, input).map_err(PluginError::invalid_argument)?;
        let mut engine = self.engine();
        let mut batch = Vec::with_capacity(self.max_batch.min(samples.len()));
        let mut completed_any = false;
        for (range, shape) in ranges(&runs, samples.len()) {
            let run = &samples[range];
            // A run longer than a batch goes in arena order, its batches read in place.
            let mut rounds = match run.len() > self.max_batch {
                true => arena_order(run),
                false => None,
            };
            let mut chunks = run.chunks(self.max_batch);
            loop {
                batch.clear();
                match &mut rounds {
                    Some(rounds) => rounds.take(self.max_batch, &mut batch),
                    None => batch.extend(chunks.next().into_iter().flatten().map(Item::of)),
                }
                if batch.is_empty() {
                    break;
                }
                // Inline, a batch leaves the query when the one before it is done.
                let dequeued_ns = completer.now_ns();
                if let Err(message) = engine.infer(&batch, shape, completer, dequeued_ns) {
                    if !completed_any {
                        // Nothing of this query was completed: refuse all of it.
                        return Err(PluginError::device(message));
                    }
                    // Part of the query was answered: an error now would have the host
                    // account for those samples twice, so the rest stay open and later calls
                    // report it.
                    failure.record(message);
                    return Ok(());
                }
                completed_any = true;
            }
        }
        Ok(())
    }
}

impl Drop for Inline {
    fn drop(&mut self) {
        report(&self.logger, self.engine().stats());
    }
}
