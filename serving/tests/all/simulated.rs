//! A simulated server: each request's first token after a fixed time and its end after
//! another (both on one timer thread), or served one at a time, or never. A stub is what this
//! needs: the property tested is the load, not the server.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use mlperf_loadgen::monotonic_ns;
use mlperf_serving::{RequestRecords, Target};

enum Event {
    FirstToken,
    End,
}

struct Timer {
    /// (due, id, first token or end): the earliest first.
    due: Mutex<BinaryHeap<Reverse<(i64, usize, u8)>>>,
    changed: Condvar,
}

pub(crate) struct SimulatedServer {
    ttft_ns: i64,
    service_ns: i64,
    tokens: u64,
    /// Serial: the time the one worker is free again.
    serial_free_ns: Option<Mutex<i64>>,
    never: bool,
    timer: Arc<Timer>,
    records: Mutex<Option<Arc<RequestRecords>>>,
    samples: Vec<AtomicUsize>,
}

impl SimulatedServer {
    /// Requests served side by side: first token after `ttft`, end after `service`.
    pub(crate) fn new(ttft: Duration, service: Duration, tokens: u64) -> Arc<SimulatedServer> {
        SimulatedServer::build(ttft, service, tokens, false, false)
    }

    /// Requests served one at a time, `service` each (first token when it starts).
    pub(crate) fn serial(service: Duration, tokens: u64) -> Arc<SimulatedServer> {
        SimulatedServer::build(Duration::ZERO, service, tokens, true, false)
    }

    /// A server that never answers.
    pub(crate) fn never() -> Arc<SimulatedServer> {
        SimulatedServer::build(Duration::ZERO, Duration::ZERO, 0, false, true)
    }

    fn build(
        ttft: Duration,
        service: Duration,
        tokens: u64,
        serial: bool,
        never: bool,
    ) -> Arc<SimulatedServer> {
        let server = Arc::new(SimulatedServer {
            ttft_ns: ttft.as_nanos() as i64,
            service_ns: service.as_nanos() as i64,
            tokens,
            serial_free_ns: serial.then(|| Mutex::new(0)),
            never,
            timer: Arc::new(Timer {
                due: Mutex::new(BinaryHeap::new()),
                changed: Condvar::new(),
            }),
            records: Mutex::new(None),
            samples: (0..64).map(|_| AtomicUsize::new(0)).collect(),
        });
        let weak = Arc::downgrade(&server);
        std::thread::spawn(move || run_timer(weak));
        server
    }

    pub(crate) fn samples_seen(&self) -> Vec<usize> {
        self.samples[..10]
            .iter()
            .map(|n| n.load(Ordering::Relaxed))
            .collect()
    }

    fn schedule(&self, at: i64, id: usize, event: Event) {
        let kind = match event {
            Event::FirstToken => 0,
            Event::End => 1,
        };
        self.timer.due.lock().unwrap().push(Reverse((at, id, kind)));
        self.timer.changed.notify_one();
    }
}

impl Target for SimulatedServer {
    fn send(&self, id: usize, sample: usize, records: &Arc<RequestRecords>) {
        self.samples[sample % 64].fetch_add(1, Ordering::Relaxed);
        if self.records.lock().unwrap().is_none() || id == 0 {
            *self.records.lock().unwrap() = Some(Arc::clone(records));
        }
        if self.never {
            return;
        }
        let now = monotonic_ns();
        let start = match &self.serial_free_ns {
            Some(free) => {
                let mut free = free.lock().unwrap();
                let start = (*free).max(now);
                *free = start + self.service_ns;
                start
            }
            None => now,
        };
        self.schedule(start + self.ttft_ns, id, Event::FirstToken);
        self.schedule(start + self.service_ns, id, Event::End);
    }
}

/// Fires due events until the server is dropped.
fn run_timer(server: std::sync::Weak<SimulatedServer>) {
    loop {
        let Some(server) = server.upgrade() else {
            return;
        };
        let timer = Arc::clone(&server.timer);
        let mut due = timer.due.lock().unwrap();
        let now = monotonic_ns();
        match due.peek() {
            Some(Reverse((at, _, _))) if *at <= now => {
                let Reverse((at, id, kind)) = due.pop().unwrap();
                drop(due);
                let records = server.records.lock().unwrap().clone();
                if let Some(records) = records {
                    match kind {
                        0 => records.first_token(id, at.max(1)),
                        _ => records.complete(id, monotonic_ns(), server.tokens, false),
                    }
                }
            }
            Some(Reverse((at, _, _))) => {
                let wait = Duration::from_nanos((*at - now) as u64);
                drop(server);
                let _ = timer.changed.wait_timeout(due, wait).unwrap();
            }
            None => {
                drop(server);
                let _ = timer
                    .changed
                    .wait_timeout(due, Duration::from_millis(20))
                    .unwrap();
            }
        }
    }
}
