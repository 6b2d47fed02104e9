//! Batching done by the host for a plugin that does not batch itself (no
//! MLPERF_CAP_NATIVE_BATCHING), where LoadGen leaves it to the system under test: a query
//! larger than the batch goes over in several calls (Offline, MultiStream), and Server's
//! one-sample queries are gathered into calls of up to a batch, held at most a set wait.

use std::ffi::c_void;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mlperf_plugin_api::ffi;
use serde::{Deserialize, Serialize};

use super::host_api::take_error;
use crate::loadgen::{Completer, QuerySampleResponse, ResponseId};
use crate::timing::{TimingSink, TimingSinkSlot};

/// How the host batches for a plugin (`--plugin-batch`, `--plugin-batch-wait`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct HostBatching {
    /// The most samples in one issue_query call; 0: every query whole, as issued.
    pub max_samples: usize,
    /// Server: how long the first sample of a call may wait for more.
    pub wait: Duration,
}

impl HostBatching {
    pub fn is_on(&self) -> bool {
        self.max_samples > 0
    }
}

pub(crate) type IssueFn = unsafe extern "C" fn(
    instance: *mut c_void,
    samples: *const ffi::mlperf_sample,
    count: usize,
) -> *mut ffi::mlperf_error;

/// Hands `samples` to the plugin in calls of at most `max` (all at once for 0), stopping at
/// the first call that fails: the plugin's error, and how many samples calls before it took.
///
/// # Safety
/// `instance` and `issue` are the plugin's; the samples stay valid until they complete.
pub(crate) unsafe fn issue_in_calls(
    issue: IssueFn,
    instance: *mut c_void,
    samples: &[ffi::mlperf_sample],
    max: usize,
    timing: Option<&TimingSink>,
) -> (Option<(i32, String)>, usize) {
    let size = if max == 0 { samples.len().max(1) } else { max };
    let mut accepted = 0;
    for call in samples.chunks(size) {
        if let Some(timing) = timing {
            timing.handed(call);
        }
        // SAFETY: the caller's contract.
        let error = unsafe { take_error(issue(instance, call.as_ptr(), call.len())) };
        if error.is_some() {
            return (error, accepted);
        }
        accepted += call.len();
    }
    (None, accepted)
}

/// What the issuing threads leave for the gathering thread.
struct Pending {
    samples: Vec<ffi::mlperf_sample>,
    /// When the oldest pending sample arrived.
    since: Option<Instant>,
    completer: Option<Completer>,
    /// flush_queries asked for the pending samples to go now.
    flush: bool,
    stop: bool,
}

// SAFETY: the samples' pointers name the host's loaded samples and input tables, read-only
// and valid until each sample completes, whichever thread hands them to the plugin.
unsafe impl Send for Pending {}

struct Shared {
    pending: Mutex<Pending>,
    arrived: Condvar,
    /// Signalled when a flush has handed every pending sample over.
    flushed: Condvar,
}

/// The plugin's instance and issue function, for the gathering thread.
struct Target {
    instance: *mut c_void,
    issue: IssueFn,
    timing: TimingSinkSlot,
}

// SAFETY: the plugin's instance is only called through issue_query, by this thread alone (it is
// the run's only issuer while it runs), and the thread is joined before destroy.
unsafe impl Send for Target {}

/// Test hook: `MLPERF_HOST_REFUSE_THREAD=mlperf-batch` fails the batching thread's start, as
/// the OS does when out of threads or memory (the tests' way to reach what follows).
pub const REFUSE_THREAD_ENV: &str = "MLPERF_HOST_REFUSE_THREAD";

/// Server: gathers one-sample queries into calls of up to `max_samples`, each held at most
/// `wait` after its first sample arrived, on a thread of its own (the only one that then
/// calls the plugin's issue_query).
pub(crate) struct Gatherer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Gatherer {
    pub(crate) fn start(
        batching: HostBatching,
        plugin: String,
        instance: *mut c_void,
        issue: IssueFn,
        timing: TimingSinkSlot,
    ) -> std::io::Result<Gatherer> {
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending {
                samples: Vec::with_capacity(batching.max_samples),
                since: None,
                completer: None,
                flush: false,
                stop: false,
            }),
            arrived: Condvar::new(),
            flushed: Condvar::new(),
        });
        let target = Target {
            instance,
            issue,
            timing,
        };
        if std::env::var_os(REFUSE_THREAD_ENV).is_some_and(|name| name == "mlperf-batch") {
            return Err(std::io::Error::other(format!(
                "refused by {REFUSE_THREAD_ENV}"
            )));
        }
        let thread = std::thread::Builder::new()
            .name("mlperf-batch".into())
            .spawn({
                let shared = Arc::clone(&shared);
                move || gather(&shared, batching, &plugin, &target)
            })?;
        Ok(Gatherer {
            shared,
            thread: Some(thread),
        })
    }

    /// Leaves `samples` for the next call.
    pub(crate) fn push(&self, samples: &[ffi::mlperf_sample], completer: &Completer) {
        let mut pending = lock(&self.shared.pending);
        if pending.completer.is_none() {
            pending.completer = Some(completer.clone());
        }
        if pending.samples.is_empty() {
            pending.since = Some(Instant::now());
        }
        pending.samples.extend_from_slice(samples);
        drop(pending);
        self.shared.arrived.notify_one();
    }

    /// Hands every pending sample over now, and returns once it is.
    pub(crate) fn flush(&self) {
        let mut pending = lock(&self.shared.pending);
        pending.flush = true;
        self.shared.arrived.notify_one();
        while pending.flush && !pending.stop {
            pending = self
                .shared
                .flushed
                .wait(pending)
                .unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for Gatherer {
    fn drop(&mut self) {
        lock(&self.shared.pending).stop = true;
        self.shared.arrived.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// The gathering thread: a call when `max_samples` are pending, when the oldest has waited
/// `wait`, on a flush, and at the end.
fn gather(shared: &Shared, batching: HostBatching, plugin: &str, target: &Target) {
    let mut call: Vec<ffi::mlperf_sample> = Vec::with_capacity(batching.max_samples);
    let mut pending = lock(&shared.pending);
    loop {
        let due = pending.since.map(|since| since + batching.wait);
        let full = pending.samples.len() >= batching.max_samples;
        let now = Instant::now();
        let ready = !pending.samples.is_empty()
            && (full || pending.flush || pending.stop || due.is_some_and(|due| due <= now));
        if !ready {
            if pending.flush {
                pending.flush = false;
                shared.flushed.notify_all();
            }
            if pending.stop {
                return;
            }
            pending = match due {
                Some(due) => {
                    shared
                        .arrived
                        .wait_timeout(pending, due.saturating_duration_since(now))
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                None => shared
                    .arrived
                    .wait(pending)
                    .unwrap_or_else(|p| p.into_inner()),
            };
            continue;
        }
        let take = pending.samples.len().min(batching.max_samples);
        call.clear();
        call.extend(pending.samples.drain(..take));
        if pending.samples.is_empty() {
            pending.since = None;
        }
        let completer = pending.completer.clone();
        drop(pending);
        // SAFETY: the plugin's instance, live until this thread is joined; the samples point
        // into the arena until they complete.
        let (error, accepted) =
            unsafe { issue_in_calls(target.issue, target.instance, &call, 0, target.timing.get()) };
        if let (Some((code, message)), Some(completer)) = (error, &completer) {
            completer.fail(format!(
                "plugin {plugin} issue_query failed (error {code}): {message}"
            ));
            let refused: Vec<QuerySampleResponse<'_>> = call[accepted..]
                .iter()
                .map(|s| QuerySampleResponse::new(ResponseId(s.id), &[]))
                .collect();
            completer.query_samples_complete(&refused);
        }
        pending = lock(&shared.pending);
    }
}
