//! The built-in null SUT of `mlperf-host run` when no `--plugin` is given.
//!
//! Each response is the sample index as 4 little-endian bytes. With a latency of 0 every query
//! completes inside `issue_query`; otherwise one worker thread completes each query `latency`
//! after it was issued, from a deadline queue, so that latencies hold whatever the load (a
//! Server run at high QPS keeps many queries in flight). A token run reports the first token
//! (at half the latency) and then completes with `2 + index % 7` tokens.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mlperf_host::loadgen::{
    Completer, QuerySample, QuerySampleIndex, QuerySampleResponse, SystemUnderTest,
};

pub use mlperf_host::bench::NullQsl;

/// Responses are completed in batches of at most this many.
const BATCH: usize = 4096;

/// The worker sleeps until this long before a deadline, then spins (timer wake-ups are late by
/// tens of microseconds).
const SPIN: Duration = Duration::from_micros(100);

/// The token count a token run reports for a sample.
pub fn tokens_of(index: QuerySampleIndex) -> i64 {
    2 + (index % 7) as i64
}

/// Completes (or, with `first_token`, reports the first token of) `samples`.
fn answer(completer: &Completer, samples: &[QuerySample], tokens: bool, first_token: bool) {
    for chunk in samples.chunks(BATCH) {
        let data: Vec<[u8; 4]> = chunk
            .iter()
            .map(|s| (s.index as u32).to_le_bytes())
            .collect();
        let responses: Vec<QuerySampleResponse<'_>> = chunk
            .iter()
            .zip(&data)
            .map(|(s, bytes)| {
                if tokens {
                    QuerySampleResponse::with_tokens(s.id, bytes, tokens_of(s.index))
                } else {
                    QuerySampleResponse::new(s.id, bytes)
                }
            })
            .collect();
        if first_token {
            completer.first_token_complete(&responses);
        } else {
            completer.query_samples_complete(&responses);
        }
    }
}

/// A query waiting for its deadline. It holds its own completer so that none outlives the
/// queries of its test.
struct Pending {
    deadline: Instant,
    samples: Vec<QuerySample>,
    completer: Completer,
}

/// Queries waiting for their deadline. Deadlines are taken under the lock, so each queue is
/// sorted.
#[derive(Default)]
struct Queues {
    first_tokens: VecDeque<Pending>,
    completions: VecDeque<Pending>,
    stop: bool,
}

impl Queues {
    fn next_deadline(&self) -> Option<Instant> {
        let first = self.first_tokens.front().map(|p| p.deadline);
        let done = self.completions.front().map(|p| p.deadline);
        match (first, done) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn take_due(queue: &mut VecDeque<Pending>, now: Instant) -> Vec<Pending> {
        let mut due = Vec::new();
        while queue.front().is_some_and(|p| p.deadline <= now) {
            due.extend(queue.pop_front());
        }
        due
    }
}

type Shared = Arc<(Mutex<Queues>, Condvar)>;

fn lock(queues: &Mutex<Queues>) -> MutexGuard<'_, Queues> {
    queues
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

struct Worker {
    shared: Shared,
    handle: Mutex<Option<JoinHandle<()>>>,
}

/// The null system under test.
pub struct NullSut {
    latency: Duration,
    tokens: bool,
    worker: Option<Worker>,
}

impl NullSut {
    /// A null SUT answering after `latency` (0: inline), with tokens if `tokens`.
    pub fn new(latency: Duration, tokens: bool) -> std::io::Result<NullSut> {
        let worker = if latency.is_zero() {
            None
        } else {
            let shared: Shared = Arc::default();
            let worker_shared = Arc::clone(&shared);
            let handle = std::thread::Builder::new()
                .name("null-sut-worker".into())
                .spawn(move || work(&worker_shared, tokens))?;
            Some(Worker {
                shared,
                handle: Mutex::new(Some(handle)),
            })
        };
        Ok(NullSut {
            latency,
            tokens,
            worker,
        })
    }

    /// Ends the worker thread; queries still waiting are dropped.
    pub fn shut_down(&self) {
        if let Some(worker) = &self.worker {
            let (queues, wake) = &*worker.shared;
            lock(queues).stop = true;
            wake.notify_all();
            let handle = worker
                .handle
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .take();
            if let Some(handle) = handle {
                let _ = handle.join();
            }
        }
    }
}

impl Drop for NullSut {
    fn drop(&mut self) {
        self.shut_down();
    }
}

impl SystemUnderTest for NullSut {
    fn name(&self) -> &str {
        "NullSUT"
    }

    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        let Some(worker) = &self.worker else {
            if self.tokens {
                answer(completer, samples, true, true);
            }
            answer(completer, samples, self.tokens, false);
            return;
        };
        let (queues, wake) = &*worker.shared;
        let mut q = lock(queues);
        let now = Instant::now();
        let was_idle = q.next_deadline().is_none();
        if self.tokens {
            q.first_tokens.push_back(Pending {
                deadline: now + self.latency / 2,
                samples: samples.to_vec(),
                completer: completer.clone(),
            });
        }
        q.completions.push_back(Pending {
            deadline: now + self.latency,
            samples: samples.to_vec(),
            completer: completer.clone(),
        });
        drop(q);
        // A busy worker already waits for an earlier deadline than this one (or will see it
        // when it wakes), except for a first token due before a pending completion.
        if was_idle || self.tokens {
            wake.notify_one();
        }
    }
}

/// The worker: sleeps until the earliest deadline, then answers everything due.
fn work(shared: &Shared, tokens: bool) {
    let (queues, wake) = &**shared;
    let mut q = lock(queues);
    loop {
        if q.stop {
            return;
        }
        let Some(deadline) = q.next_deadline() else {
            q = wake
                .wait(q)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            continue;
        };
        let now = Instant::now();
        if deadline > now {
            let wait = deadline - now;
            if wait > SPIN {
                q = wake
                    .wait_timeout(q, wait - SPIN)
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .0;
            } else {
                drop(q);
                while Instant::now() < deadline {
                    std::hint::spin_loop();
                }
                q = lock(queues);
            }
            continue;
        }
        let first_tokens = Queues::take_due(&mut q.first_tokens, now);
        let completions = Queues::take_due(&mut q.completions, now);
        drop(q);
        for p in &first_tokens {
            answer(&p.completer, &p.samples, tokens, true);
        }
        for p in &completions {
            answer(&p.completer, &p.samples, tokens, false);
        }
        // The completers go before the lock is taken again.
        drop((first_tokens, completions));
        q = lock(queues);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_are_at_least_two() {
        assert_eq!(tokens_of(0), 2);
        assert_eq!(tokens_of(6), 8);
        assert_eq!(tokens_of(7), 2);
    }

    /// Each query keeps its own latency: a worker that slept per query would fall ever further
    /// behind at 2000 queries/s of 1 ms each.
    #[test]
    fn server_latency_holds_under_load() {
        use mlperf_host::loadgen::{start_test, LogSettings, TestScenario, TestSettings};
        let sut = NullSut::new(Duration::from_millis(1), false).unwrap();
        let mut qsl = NullQsl {
            total: 64,
            performance: 64,
        };
        let settings = TestSettings {
            scenario: TestScenario::Server,
            server_target_qps: 2000.0,
            min_duration_ms: 0,
            min_query_count: 400,
            ..TestSettings::default()
        };
        let result = start_test(&sut, &mut qsl, &settings, &LogSettings::default()).unwrap();
        sut.shut_down();
        let latency = result
            .performance
            .and_then(|p| p.sample_latency)
            .expect("latencies");
        assert!(latency.min_ns >= 1_000_000, "{latency:?}");
        assert!(latency.mean_ns < 10_000_000, "{latency:?}");
    }

    #[test]
    fn an_idle_worker_shuts_down() {
        let sut = NullSut::new(Duration::from_millis(1), true).unwrap();
        sut.shut_down();
        sut.shut_down();
    }
}
