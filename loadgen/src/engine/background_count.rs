//! The count of a Poisson schedule made beside its series. The official log names
//! generated_query_count before the first issue; the count is held back meanwhile, so the
//! detail log on disk names it as soon as it is known. The counting thread only takes a core
//! nobody else wants (SCHED_IDLE): on a machine whose cores the issuing thread and the SUT
//! keep busy it barely runs, and when the series ends first, the series' own count (the
//! schedule it issued, and the rest counted then) is logged instead.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::completion::Shared;
use crate::issue::estimated_count;
use crate::logging::keys;
use crate::query_gen::{CountLimit, Remaining, Timeline};

pub(super) struct BackgroundCount {
    /// Set before the series takes `by_counter`: the counting thread logs nothing after it.
    series_ended: AtomicBool,
    /// The count the counting thread logged, if it did.
    by_counter: Mutex<Option<Remaining>>,
    samples_per_query: u64,
}

impl BackgroundCount {
    pub(super) fn new(samples_per_query: u64) -> Self {
        BackgroundCount {
            series_ended: AtomicBool::new(false),
            by_counter: Mutex::new(None),
            samples_per_query,
        }
    }

    /// Counts `timeline` to its end on the calling thread (spawned for it) and logs the
    /// count, unless the series ended first.
    pub(super) fn count(&self, shared: &Shared, mut timeline: Timeline, max_duration_ms: u64) {
        yield_to_everything_else();
        let limit = CountLimit::while_issuing(&self.series_ended, max_duration_ms);
        let total = timeline.count_remaining(&limit);
        let mut by_counter = self.by_counter.lock().unwrap_or_else(|p| p.into_inner());
        if self.series_ended.load(Ordering::Acquire) {
            return;
        }
        if total.estimated {
            shared.diagnostics.push(estimated_count(total.queries));
        }
        self.release(shared, total.queries, total.final_timestamp);
        *by_counter = Some(total);
    }

    /// The series has ended with `own` as its count (queries, final timestamp): logs it
    /// unless the counting thread logged its count first, which is returned (it stands: the
    /// detail log names it).
    pub(super) fn series_ended(
        &self,
        shared: &Shared,
        own: (u64, i64),
        own_estimated: bool,
    ) -> Option<Remaining> {
        self.series_ended.store(true, Ordering::Release);
        let by_counter = self.by_counter.lock().unwrap_or_else(|p| p.into_inner());
        if by_counter.is_some() {
            return *by_counter;
        }
        if own_estimated {
            shared.diagnostics.push(estimated_count(own.0));
        }
        self.release(shared, own.0, own.1);
        None
    }

    fn release(&self, shared: &Shared, queries: u64, final_timestamp: i64) {
        let log = shared.log();
        let keys = keys::generated(queries, self.samples_per_query, final_timestamp);
        log.release(keys.into_iter().map(|(k, v)| log.entry(&k, v)).collect());
    }
}

/// Lets the calling thread run only on a core that would otherwise idle.
fn yield_to_everything_else() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: sets the calling thread's policy (pid 0) from a valid parameter; a refusal
        // leaves it as it was, which only costs the SUT some of a core.
        unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    }
}
