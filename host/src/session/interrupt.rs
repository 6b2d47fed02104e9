//! SIGINT, SIGTERM and SIGHUP during a run. The first aborts the running test (as the
//! official `AbortTest`): its logs are written whole, the run INVALID with the signal named
//! (`Test aborted: interrupted by SIGTERM.`), and the command exits 128 + the signal's number.
//! A second signal ends the process at once.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// The first signal received; 0 for none.
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// An official-engine test is running (its abort is called only then).
static OFFICIAL_RUNNING: AtomicBool = AtomicBool::new(false);

/// Starts listening for the signals on a thread of its own. Call once, before the run.
pub fn install() -> std::io::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("mlperf-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if RECEIVED
                    .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
                    .is_err()
                {
                    eprintln!("error: {}: exiting at once", name(signal));
                    mlperf_official_loadgen::exit_immediately(128 + signal);
                }
                eprintln!(
                    "{}: ending the test, writing its logs (again to exit at once)",
                    name(signal)
                );
                let reason = format!("interrupted by {}", name(signal));
                mlperf_loadgen::abort_test_because(&reason);
                if OFFICIAL_RUNNING.load(Ordering::SeqCst) {
                    mlperf_official_loadgen::abort_test();
                }
            }
        })?;
    Ok(())
}

/// The signal that interrupted the run, if one did: its number and name.
pub fn received() -> Option<(i32, &'static str)> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        signal => Some((signal, name(signal))),
    }
}

/// Marks an official-engine test as running while `run` runs.
pub(super) fn official_test<T>(run: impl FnOnce() -> T) -> T {
    OFFICIAL_RUNNING.store(true, Ordering::SeqCst);
    let result = run();
    OFFICIAL_RUNNING.store(false, Ordering::SeqCst);
    result
}

fn name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}
