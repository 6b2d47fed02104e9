//! workers = N: N threads, each with its own session, take batches from one shared queue. A
//! worker takes up to max_batch samples of one shape; when fewer are queued it waits for more
//! until the oldest has waited max_wait_us (Server: dynamic batching under a latency budget),
//! unless the host flushed. A big Offline query is drained by all workers in batches of
//! neighbouring samples (see `arena_order`).

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mlperf_plugin_api::ffi::ERROR_RESOURCE_EXHAUSTED;
use mlperf_plugin_api::sdk::{Completer, Level, Logger, PluginError, Sample};

use super::arena_order::{arena_order, Rounds};
use super::item::{ranges, Item, Run, SampleShape};
use super::{report, Failure};
use crate::session::engine::{BatchStats, Engine};

/// The most samples `submit` queues at once.
const SUBMIT_CHUNK: usize = 16_384;

/// A query longer than a batch is put in arena order but for its first 1/ISSUED_FIRST, which
/// keeps the workers busy meanwhile (ordering fmnist's Offline query took 2-6 % as long as
/// running it).
const ISSUED_FIRST: usize = 16;

/// Samples of one shape issued together (a query, or a run of one shape within it).
struct Segment {
    shape: SampleShape,
    arrived: Instant,
    items: Items,
}

enum Items {
    /// In the order issued, from `next` on.
    Issued { items: Vec<Item>, next: usize },
    /// In arena order, round by round: a batch takes from one round alone.
    Rounds(Rounds),
}

#[derive(Default)]
struct Queue {
    segments: VecDeque<Segment>,
    /// Items not yet taken, over all segments.
    pending: usize,
    /// Samples that arrived by then run without waiting for more (flush_queries).
    flushed_at: Option<Instant>,
    /// Destroy: run what is queued, then stop.
    stopping: bool,
}

impl Queue {
    /// Up to `max` items of the front segment's shape, from the front, into `batch`.
    fn take(&mut self, max: usize, batch: &mut Vec<Item>) -> Option<SampleShape> {
        let shape = self.segments.front()?.shape;
        batch.clear();
        while batch.len() < max {
            let Some(segment) = self.segments.front_mut() else {
                break;
            };
            if segment.shape != shape {
                break;
            }
            let done = match &mut segment.items {
                Items::Issued { items, next } => {
                    let take = (max - batch.len()).min(items.len() - *next);
                    batch.extend_from_slice(&items[*next..*next + take]);
                    *next += take;
                    *next == items.len()
                }
                Items::Rounds(rounds) => {
                    if !batch.is_empty() {
                        break;
                    }
                    rounds.take(max, batch);
                    if rounds.len() > 0 {
                        break;
                    }
                    true
                }
            };
            if done {
                self.segments.pop_front();
            }
        }
        self.pending -= batch.len();
        Some(shape)
    }
}

struct Shared {
    queue: Mutex<Queue>,
    changed: Condvar,
    max_batch: usize,
    max_wait: Duration,
    completer: Completer,
    failure: Arc<Failure>,
    /// The workers' engines', added as each stops.
    stats: Mutex<BatchStats>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Nothing panics while holding the lock; if something did, the queue is still whole.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub(crate) struct Workers {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    logger: Logger,
}

impl Workers {
    /// One thread per engine; with `cores`, each kept to them.
    pub(crate) fn start(
        engines: Vec<Engine>,
        max_batch: usize,
        max_wait: Duration,
        completer: Completer,
        failure: Arc<Failure>,
        logger: Logger,
        cores: Option<Vec<usize>>,
    ) -> Result<Workers, PluginError> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            changed: Condvar::new(),
            max_batch,
            max_wait,
            completer,
            failure,
            stats: Mutex::default(),
        });
        let mut workers = Workers {
            shared: Arc::clone(&shared),
            threads: Vec::with_capacity(engines.len()),
            logger,
        };
        for (n, engine) in engines.into_iter().enumerate() {
            let shared = Arc::clone(&shared);
            let cores = cores.clone();
            let logger = workers.logger;
            let thread = thread::Builder::new()
                .name(format!("ort-worker-{n}"))
                .spawn(move || {
                    if let Some(cores) = cores {
                        if let Err(why) = super::pinning::pin_current_thread(&cores) {
                            logger.log(
                                Level::Warn,
                                &format!("onnxruntime plugin: worker {n} not pinned to cores {cores:?}: {why}"),
                            );
                        }
                    }
                    work(&shared, engine)
                })
                .map_err(|e| {
                    PluginError::new(
                        ERROR_RESOURCE_EXHAUSTED,
                        format!("onnxruntime plugin: cannot start worker thread {n}: {e}"),
                    )
                })?; // `workers` drops here, stopping and joining those already started.
            workers.threads.push(thread);
        }
        Ok(workers)
    }

    /// Queues a query's checked samples (`runs` from `check_all`). A run longer than a batch
    /// goes in arena order, so that its batches can be read in place.
    pub(crate) fn submit(&self, samples: &[Sample<'_>], runs: &[Run]) {
        let arrived = Instant::now();
        for (range, shape) in ranges(runs, samples.len()) {
            let mut run = &samples[range];
            if run.len() > self.shared.max_batch {
                // The workers start on the first part as issued while the rest is ordered.
                let (first, rest) = run.split_at(run.len() / ISSUED_FIRST);
                self.queue_issued(shape, arrived, first);
                if let Some(rounds) = arena_order(rest) {
                    self.queue(shape, arrived, Items::Rounds(rounds));
                    continue;
                }
                run = rest;
            }
            self.queue_issued(shape, arrived, run);
        }
    }

    /// Queues `samples` in the order issued, a chunk at a time, so that the workers start on
    /// the first while the rest is copied in.
    fn queue_issued(&self, shape: &SampleShape, arrived: Instant, samples: &[Sample<'_>]) {
        for chunk in samples.chunks(SUBMIT_CHUNK) {
            let items = chunk.iter().map(Item::of).collect();
            self.queue(shape, arrived, Items::Issued { items, next: 0 });
        }
    }

    fn queue(&self, shape: &SampleShape, arrived: Instant, items: Items) {
        let count = match &items {
            Items::Issued { items, .. } => items.len(),
            Items::Rounds(rounds) => rounds.len(),
        };
        let segment = Segment {
            shape: *shape,
            arrived,
            items,
        };
        let mut queue = self.shared.lock();
        queue.segments.push_back(segment);
        queue.pending += count;
        drop(queue);
        if count >= self.shared.max_batch {
            self.shared.changed.notify_all();
        } else {
            self.shared.changed.notify_one();
        }
    }

    /// No more queries in this series: what is queued runs without waiting for more.
    pub(crate) fn flush(&self) {
        self.shared.lock().flushed_at = Some(Instant::now());
        self.shared.changed.notify_all();
    }
}

impl Drop for Workers {
    /// Runs what is queued, then stops and joins the threads, so no completion follows the
    /// plugin's destroy.
    fn drop(&mut self) {
        self.shared.lock().stopping = true;
        self.shared.changed.notify_all();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        let stats = *self.shared.stats.lock().unwrap_or_else(|e| e.into_inner());
        report(&self.logger, stats);
    }
}

/// One worker: takes batches until the queue is empty and the plugin is being destroyed.
fn work(shared: &Shared, mut engine: Engine) {
    let mut batch = Vec::with_capacity(shared.max_batch);
    let mut queue = shared.lock();
    loop {
        let Some(oldest) = queue.segments.front().map(|s| s.arrived) else {
            if queue.stopping {
                let mut stats = shared.stats.lock().unwrap_or_else(|e| e.into_inner());
                stats.add(engine.stats());
                return;
            }
            queue = shared
                .changed
                .wait(queue)
                .unwrap_or_else(|e| e.into_inner());
            continue;
        };
        let may_wait = !shared.max_wait.is_zero()
            && queue.pending < shared.max_batch
            && !queue.stopping
            && queue.flushed_at.is_none_or(|at| oldest > at);
        if may_wait {
            let due = oldest + shared.max_wait;
            let now = Instant::now();
            if now < due {
                queue = shared
                    .changed
                    .wait_timeout(queue, due - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                continue;
            }
        }
        let Some(shape) = queue.take(shared.max_batch, &mut batch) else {
            continue;
        };
        if queue.pending > 0 {
            shared.changed.notify_one();
        }
        drop(queue);
        let dequeued_ns = shared.completer.now_ns();
        run(shared, &mut engine, &batch, &shape, dequeued_ns);
        queue = shared.lock();
    }
}

fn run(
    shared: &Shared,
    engine: &mut Engine,
    batch: &[Item],
    shape: &SampleShape,
    dequeued_ns: u64,
) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        engine.infer(batch, shape, &shared.completer, dequeued_ns)
    }));
    let message = match outcome {
        Ok(Ok(())) => return,
        Ok(Err(message)) => message,
        Err(_) => format!(
            "onnxruntime plugin: a worker panicked running a batch of {} sample(s)",
            batch.len()
        ),
    };
    shared.failure.record(message);
}
