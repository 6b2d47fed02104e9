//! The floor of a query that crosses cores: two threads handing one word back and forth, each
//! on a cache line of its own. An isolated SingleStream query makes one such round trip
//! (issue to the plugin's process, completion back), so its rate cannot pass this one; on a
//! virtual machine it changes with where the hypervisor places the two vCPUs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::{BenchReport, Completion};

#[repr(align(128))]
struct Line(AtomicU64);

/// `rounds` round trips between this thread and another; their rate in `throughput_per_s`.
pub fn cross_core_round_trip(rounds: u64) -> BenchReport {
    let (ping, pong) = (Line(AtomicU64::new(0)), Line(AtomicU64::new(0)));
    let started = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for round in 1..=rounds {
                while ping.0.load(Ordering::Acquire) != round {}
                pong.0.store(round, Ordering::Release);
            }
        });
        for round in 1..=rounds {
            ping.0.store(round, Ordering::Release);
            while pong.0.load(Ordering::Acquire) != round {}
        }
    });
    let seconds = started.elapsed().as_secs_f64();
    BenchReport {
        case: "round-trip".into(),
        engine: "none".into(),
        completion: Completion::Inline,
        valid: true,
        queries: rounds,
        samples: rounds,
        throughput_per_s: rounds as f64 / seconds,
        startup_ms: 0.0,
        end_of_run_ms: 0.0,
        total_ms: seconds * 1e3,
        peak_rss_bytes: 0,
        bytes_per_sample: 0.0,
        process_bytes_per_sample: 0.0,
        p99_latency_ns: None,
    }
}
