//! One point: requests started on a dedicated thread as the load mode says, with precise
//! timing (sleep, then spin the last stretch; no async runtime), then a drain.

use std::sync::Arc;
use std::time::Duration;

use mlperf_loadgen::monotonic_ns;

use crate::arrivals::{ArrivalClock, LoadError, LoadMode};
use crate::records::{RequestRecord, RequestRecords};

/// What serves the requests: an endpoint, a plugin, a simulation.
pub trait Target: Sync {
    /// Starts request `id` on sample `sample`, without waiting for it. The target reports its
    /// first token (if it streams) and its end to `records`, from any thread, or inline.
    fn send(&self, id: usize, sample: usize, records: &Arc<RequestRecords>);
}

/// One point of load.
#[derive(Debug, Clone)]
pub struct PointPlan {
    pub mode: LoadMode,
    /// Requests are started for this long...
    pub duration: Duration,
    /// ...or until this many have started, whichever comes first.
    pub max_requests: Option<usize>,
    /// Request `id` is sent on sample `id % samples`.
    pub samples: usize,
    /// The arrival clock's seed.
    pub seed: u64,
    /// How long the requests in flight at the end may take to end.
    pub drain_timeout: Duration,
}

/// What a point did.
#[derive(Debug, Clone)]
pub struct PointRun {
    pub records: Vec<RequestRecord>,
    /// When the first request was due, and when the last one was started.
    pub start_ns: i64,
    pub issue_end_ns: i64,
    /// Requests still in flight when the drain timed out.
    pub abandoned: usize,
}

/// Spinning, not sleeping, for the last stretch before a request is due.
const SPIN_NS: i64 = 100_000;

/// Runs one point against `target` and returns each request's record.
pub fn run_point(target: &dyn Target, plan: &PointPlan) -> Result<PointRun, LoadError> {
    plan.mode.check()?;
    let mut clock = match plan.mode {
        LoadMode::Rate { arrivals, .. } => Some(ArrivalClock::new(arrivals, plan.seed)?),
        LoadMode::Concurrency(_) => None,
    };
    let records = Arc::new(RequestRecords::default());
    let samples = plan.samples.max(1);
    let (start_ns, issue_end_ns) = std::thread::scope(|scope| {
        let issuer = std::thread::Builder::new()
            .name("serving-issue".into())
            .spawn_scoped(scope, || {
                issue(target, plan, clock.as_mut(), samples, &records)
            })
            .expect("spawn the issue thread");
        issuer.join().expect("the issue thread does not panic")
    });
    let drain_end = monotonic_ns() + plan.drain_timeout.as_nanos() as i64;
    while records.in_flight() > 0 && monotonic_ns() < drain_end {
        std::thread::sleep(Duration::from_micros(200));
    }
    Ok(PointRun {
        records: records.snapshot(),
        start_ns,
        issue_end_ns,
        abandoned: records.in_flight(),
    })
}

/// The issue loop: (first due time, last start time).
fn issue(
    target: &dyn Target,
    plan: &PointPlan,
    mut clock: Option<&mut ArrivalClock>,
    samples: usize,
    records: &Arc<RequestRecords>,
) -> (i64, i64) {
    let start_ns = monotonic_ns();
    let end_ns = start_ns + plan.duration.as_nanos() as i64;
    let most = plan
        .max_requests
        .unwrap_or(usize::MAX)
        .min(records.capacity());
    let limit = match plan.mode {
        LoadMode::Concurrency(n) => Some(n),
        LoadMode::Rate {
            max_concurrency, ..
        } => max_concurrency,
    };
    // Due times accumulate in f64 seconds from the start, as gaps are drawn.
    let mut due_s = 0.0;
    let mut last_ns = start_ns;
    for id in 0..most {
        let scheduled_ns = match clock.as_deref_mut() {
            Some(clock) => {
                if id > 0 {
                    due_s += clock.next_gap();
                }
                let due = start_ns + (due_s * 1e9) as i64;
                if due >= end_ns {
                    break;
                }
                wait_until(due);
                due
            }
            None => 0,
        };
        if limit.is_some_and(|limit| !records.wait_for_room(limit, end_ns)) {
            break;
        }
        let sent_ns = monotonic_ns();
        if sent_ns >= end_ns {
            break;
        }
        let scheduled_ns = if clock.is_some() {
            scheduled_ns
        } else {
            sent_ns
        };
        let started = records.start(scheduled_ns, sent_ns);
        debug_assert_eq!(started, id);
        target.send(id, id % samples, records);
        last_ns = sent_ns;
    }
    (start_ns, last_ns)
}

/// Sleeps until shortly before `due_ns`, then spins to it.
fn wait_until(due_ns: i64) {
    let now = monotonic_ns();
    if due_ns - now > SPIN_NS {
        std::thread::sleep(Duration::from_nanos((due_ns - now - SPIN_NS) as u64));
    }
    while monotonic_ns() < due_ns {
        std::hint::spin_loop();
    }
}
