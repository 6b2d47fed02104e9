//! Worker threads that complete samples after issue_query has returned.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Instant;

use mlperf_plugin_api::sdk::{Completer, PluginError};

use crate::answer::{answer, Item};
use crate::config::Config;

struct Job {
    items: Vec<Item>,
    issued: Instant,
}

/// N threads, each with its own queue; a query is split across them round robin.
pub(crate) struct Workers {
    queues: Vec<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
    next: AtomicUsize,
}

impl Workers {
    pub(crate) fn start(
        count: usize,
        config: Arc<Config>,
        completer: Completer,
    ) -> Result<Workers, PluginError> {
        let mut workers = Workers {
            queues: Vec::with_capacity(count),
            threads: Vec::with_capacity(count),
            next: AtomicUsize::new(0),
        };
        for n in 0..count {
            let (queue, jobs) = channel::<Job>();
            let config = Arc::clone(&config);
            let thread = thread::Builder::new()
                .name(format!("null-plugin-{n}"))
                .spawn(move || {
                    for mut job in jobs {
                        answer(&config, &mut job.items, job.issued, &completer);
                    }
                })
                .map_err(|e| {
                    PluginError::new(
                        mlperf_plugin_api::ffi::ERROR_RESOURCE_EXHAUSTED,
                        format!("null plugin: cannot start worker thread: {e}"),
                    )
                })?; // `workers` drops here, joining those already started.
            workers.queues.push(queue);
            workers.threads.push(thread);
        }
        Ok(workers)
    }

    pub(crate) fn submit(&self, items: Vec<Item>, issued: Instant) {
        let n = self.queues.len();
        let chunk = items.len().div_ceil(n).max(1);
        let first = self.next.fetch_add(1, Ordering::Relaxed);
        if items.len() <= chunk {
            self.send(first, Job { items, issued });
            return;
        }
        for (k, part) in items.chunks(chunk).enumerate() {
            let job = Job {
                items: part.to_vec(),
                issued,
            };
            self.send(first + k, job);
        }
    }

    fn send(&self, worker: usize, job: Job) {
        // A worker only stops when its queue is dropped, in Drop, so this cannot fail.
        let _ = self.queues[worker % self.queues.len()].send(job);
    }
}

impl Drop for Workers {
    /// Closes the queues and joins the threads (after they answer what is queued), so that no
    /// completion follows the plugin's destroy.
    fn drop(&mut self) {
        self.queues.clear();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}
