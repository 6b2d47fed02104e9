//! SIGINT, SIGTERM and SIGHUP during a run. The first aborts the running test (as the
//! official `AbortTest`): its logs are written whole, the run INVALID with the signal named
//! (`Test aborted: interrupted by SIGTERM.`), and the command exits 128 + the signal's number.
//! A second signal ends the process at once, and so does the first before any test has
//! begun (nothing is measured or logged yet, and the command may be blocked in a plugin's
//! create or a server's connect that no abort reaches).

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Mutex;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// How long a plugin's destroy may take once a signal ended its test.
pub const DESTROY_AFTER_SIGNAL: std::time::Duration = std::time::Duration::from_secs(2);

/// The first signal received; 0 for none.
static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// An official-engine test is running (its abort is called only then).
static OFFICIAL_RUNNING: AtomicBool = AtomicBool::new(false);
/// A test has begun in this process: from then on the first signal aborts it (or the next
/// one, which the session then refuses to start), leaving every log whole. Locked while the
/// first signal is handled, so that no test begins while the process is exiting.
static TEST_BEGUN: Mutex<bool> = Mutex::new(false);

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
                let begun = TEST_BEGUN.lock().unwrap_or_else(|p| p.into_inner());
                if !*begun {
                    eprintln!(
                        "error: {} before the test began: exiting (nothing was measured)",
                        name(signal)
                    );
                    mlperf_official_loadgen::exit_immediately(128 + signal);
                }
                drop(begun);
                if OFFICIAL_RUNNING.load(Ordering::SeqCst) {
                    // Its AbortTest stops only its logging, leaving the test waiting forever;
                    // the watchdog flushes the logs and ends the process instead.
                    eprintln!(
                        "{}: the official LoadGen cannot be cut short: ending the process with \
                         its logs as far as written (again to exit at once)",
                        name(signal)
                    );
                } else {
                    eprintln!(
                        "{}: ending the test, writing its logs (again to exit at once)",
                        name(signal)
                    );
                    let reason = format!("interrupted by {}", name(signal));
                    mlperf_loadgen::abort_test_because(&reason);
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

/// A test is about to begin: a signal from now on aborts it instead of ending the process.
pub(crate) fn test_begins() {
    *TEST_BEGUN.lock().unwrap_or_else(|p| p.into_inner()) = true;
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
