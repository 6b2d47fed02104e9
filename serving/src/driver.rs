//! One point: requests started on a dedicated thread as the load mode says, with precise
//! timing (sleep, then spin the last stretch; no async runtime), then a drain.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mlperf_loadgen::{monotonic_ns, AbortWatch};

use crate::arrivals::{ArrivalClock, LoadError, LoadMode};
use crate::gaps::TokenGap;
use crate::records::{RequestRecord, RequestRecords};
use crate::saturation::{self, SaturationRule};

/// What serves the requests: an endpoint, a plugin, a simulation.
pub trait Target: Sync {
    /// Starts request `id` on sample `sample`, without waiting for it. The target reports its
    /// first token (if it streams) and its end to `records`, from any thread, or inline.
    fn send(&self, id: usize, sample: usize, records: &Arc<RequestRecords>);

    /// The target failed as a whole (not one request): the point stops issuing, rather than
    /// sending every remaining request into the same failure.
    fn failed(&self) -> bool {
        false
    }
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
    /// Ends the point early when the server is over-saturated (none: never).
    pub saturation: Option<SaturationRule>,
    /// A replay's request times, ns after the point's start, in order (request k on sample
    /// k); issuing ends after the last.
    pub schedule: Option<Arc<[i64]>>,
}

/// What a point did.
#[derive(Debug, Clone)]
pub struct PointRun {
    pub records: Vec<RequestRecord>,
    /// The gaps between streamed pieces of the answers (for targets that report them).
    pub token_gaps: Vec<TokenGap>,
    /// When issuing started, and when it stopped: the end of the duration, or earlier when
    /// the request cap was reached or the point was stopped as over-saturated.
    pub start_ns: i64,
    pub issue_end_ns: i64,
    /// Requests still in flight when the drain timed out.
    pub abandoned: usize,
    /// Why the point was ended early as over-saturated.
    pub saturated: Option<String>,
    /// Issuing ended because `max_requests` were sent (not at the duration's end, a trace's
    /// end or an over-saturation stop).
    pub request_count_reached: bool,
    /// The engine's abort (a signal) ended the point early: why.
    pub aborted: Option<String>,
    /// Issuing stopped because [`FAILED_IN_A_ROW_STOP`] requests in a row failed: a server
    /// failing every request would otherwise be sent one as fast as it can fail it.
    pub failing: Option<String>,
}

/// Requests failed one after another, none answered between them, that end a point.
pub const FAILED_IN_A_ROW_STOP: usize = 100;

/// How long the requests in flight may take to end once an abort cut a point short (as the
/// engine bounds a test's drain after its abort).
const DRAIN_AFTER_ABORT: Duration = Duration::from_secs(2);

/// How often the point looks for an abort while it issues.
const ABORT_POLL: Duration = Duration::from_millis(20);

/// Spinning, not sleeping, for the last stretch before a request is due.
const SPIN_NS: i64 = 100_000;

/// Runs one point against `target` and returns each request's record.
pub fn run_point(target: &dyn Target, plan: &PointPlan) -> Result<PointRun, LoadError> {
    plan.mode.check()?;
    let mut clock = match plan.mode {
        LoadMode::Rate { arrivals, .. } => Some(ArrivalClock::new(arrivals, plan.seed)?),
        LoadMode::Concurrency(_) => None,
        LoadMode::Replay { .. } if plan.schedule.is_none() => return Err(LoadError::NoSchedule),
        LoadMode::Replay { .. } => None,
    };
    let abort = AbortWatch::from_now();
    let records = Arc::new(RequestRecords::default());
    let samples = plan.samples.max(1);
    let (done, stop) = (AtomicBool::new(false), AtomicBool::new(false));
    let capped = matches!(
        plan.mode,
        LoadMode::Rate {
            max_concurrency: Some(_),
            ..
        } | LoadMode::Replay {
            max_concurrency: Some(_)
        }
    );
    let ((start_ns, issue_end_ns, failing), saturated) = std::thread::scope(|scope| {
        let issuer = std::thread::Builder::new()
            .name("serving-issue".into())
            .spawn_scoped(scope, || {
                let ends = issue(target, plan, clock.as_mut(), samples, &records, &stop);
                done.store(true, Ordering::Relaxed);
                ends
            })
            .expect("spawn the issue thread");
        // An abort stops issuing as over-saturation does, through `stop`.
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                if abort.aborted() {
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
                std::thread::park_timeout(ABORT_POLL);
            }
        });
        // A closed loop cannot pile requests up: its load is fixed.
        let watched = plan
            .saturation
            .filter(|_| !matches!(plan.mode, LoadMode::Concurrency(_)))
            .map(|rule| saturation::watch(&records, &rule, capped, &done, &stop));
        (
            issuer.join().expect("the issue thread does not panic"),
            watched.flatten(),
        )
    });
    let mut drain_end = monotonic_ns() + plan.drain_timeout.as_nanos() as i64;
    let mut drain_cut = false;
    while records.in_flight() > 0 && monotonic_ns() < drain_end {
        if !drain_cut && abort.aborted() {
            drain_end = drain_end.min(monotonic_ns() + DRAIN_AFTER_ABORT.as_nanos() as i64);
            drain_cut = true;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let request_count_reached = saturated.is_none()
        && plan
            .max_requests
            .is_some_and(|cap| records.started() >= cap);
    Ok(PointRun {
        records: records.snapshot(),
        token_gaps: records.token_gaps(),
        start_ns,
        issue_end_ns,
        abandoned: records.in_flight(),
        saturated,
        request_count_reached,
        aborted: abort.reason(),
        failing: failing.then(|| {
            format!("{FAILED_IN_A_ROW_STOP} requests in a row failed: the point was stopped")
        }),
    })
}

/// The issue loop: (its start, when it stopped issuing, whether failures in a row stopped it).
fn issue(
    target: &dyn Target,
    plan: &PointPlan,
    mut clock: Option<&mut ArrivalClock>,
    samples: usize,
    records: &Arc<RequestRecords>,
    stop: &AtomicBool,
) -> (i64, i64, bool) {
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
        }
        | LoadMode::Replay { max_concurrency } => max_concurrency,
    };
    let schedule = plan.schedule.as_deref().filter(|_| clock.is_none());
    let most = schedule.map_or(most, |times| most.min(times.len()));
    // Due times accumulate in f64 seconds from the start, as gaps are drawn.
    let mut due_s = 0.0;
    for id in 0..most {
        if stop.load(Ordering::Relaxed)
            || target.failed()
            || records.failed_in_a_row() >= FAILED_IN_A_ROW_STOP
        {
            break;
        }
        let scheduled_ns = match clock.as_deref_mut() {
            Some(clock) => {
                if id > 0 {
                    due_s += clock.next_gap();
                }
                let due = start_ns + (due_s * 1e9) as i64;
                if due >= end_ns {
                    break;
                }
                if !wait_until(due, stop) {
                    break;
                }
                due
            }
            None => match schedule {
                Some(times) => {
                    let due = start_ns + times[id];
                    if due >= end_ns {
                        break;
                    }
                    if !wait_until(due, stop) {
                        break;
                    }
                    due
                }
                None => 0,
            },
        };
        if let Some(limit) = limit {
            if !records.wait_for_room(limit, end_ns, stop) {
                break;
            }
        }
        let sent_ns = monotonic_ns();
        if sent_ns >= end_ns {
            break;
        }
        let scheduled_ns = if clock.is_some() || schedule.is_some() {
            scheduled_ns
        } else {
            sent_ns
        };
        let started = records.start(scheduled_ns, sent_ns);
        debug_assert_eq!(started, id);
        target.send(id, id % samples, records);
    }
    let capped = records.started() >= most;
    let failing = records.failed_in_a_row() >= FAILED_IN_A_ROW_STOP;
    if capped || failing || stop.load(Ordering::Relaxed) || target.failed() {
        (start_ns, monotonic_ns().min(end_ns), failing)
    } else {
        (start_ns, end_ns, failing)
    }
}

/// Sleeps until shortly before `due_ns`, then spins to it; false if `stop` was set on the way
/// (a long gap is slept in pieces, so that an abort does not wait for the next request).
fn wait_until(due_ns: i64, stop: &AtomicBool) -> bool {
    const MOST_SLEPT_NS: i64 = 50_000_000;
    loop {
        let left = due_ns - monotonic_ns() - SPIN_NS;
        if left <= 0 {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep(Duration::from_nanos(left.min(MOST_SLEPT_NS) as u64));
    }
    while monotonic_ns() < due_ns {
        std::hint::spin_loop();
    }
    true
}
