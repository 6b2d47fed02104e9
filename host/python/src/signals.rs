//! Ctrl-C during a test. The test runs on the thread that called `StartTest` (as the official
//! LoadGen), with the GIL released, so Python runs its signal handlers only when a callback
//! runs: an Offline test waiting for its one query would not see Ctrl-C until the end. While
//! a test runs, SIGINT and SIGTERM, where Python handles them, go first to a handler of ours
//! that notes the signal and then calls Python's, and a watching thread aborts the test when
//! one arrives; `StartTest` then lets Python run its handler (KeyboardInterrupt by default).

use std::sync::atomic::{AtomicI32, Ordering};

/// The signals relayed: those a program stops on.
const RELAYED: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

/// The last relayed signal received while a test ran, 0 for none.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// The handlers ours replaced, one per signal of [`RELAYED`] (null where none was replaced).
static PREVIOUS: [std::sync::atomic::AtomicPtr<libc::sigaction>; 2] = [
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
];

extern "C" fn relay(signal: libc::c_int) {
    RECEIVED.store(signal, Ordering::SeqCst);
    let Some(slot) = RELAYED.iter().position(|&s| s == signal) else {
        return;
    };
    let previous = PREVIOUS[slot].load(Ordering::SeqCst);
    if previous.is_null() {
        return;
    }
    // SAFETY: `previous` is the sigaction saved by `Relay::install`, alive until `Drop`
    // restores it (after which this handler is no longer installed). Only async-signal-safe
    // work happens here: Python's own handler only sets flags and writes its wakeup fd.
    unsafe {
        let previous = &*previous;
        if previous.sa_flags & libc::SA_SIGINFO != 0 {
            let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(previous.sa_sigaction);
            handler(signal, std::ptr::null_mut(), std::ptr::null_mut());
        } else {
            let handler: extern "C" fn(libc::c_int) = std::mem::transmute(previous.sa_sigaction);
            handler(signal);
        }
    }
}

/// Our handler in front of Python's for the length of a test.
pub(crate) struct Relay {
    installed: Vec<usize>,
}

impl Relay {
    /// Installs the relay for each signal of [`RELAYED`] whose handler is a function
    /// (Python's); one ignored or left to the default is left so.
    pub(crate) fn install() -> Relay {
        RECEIVED.store(0, Ordering::SeqCst);
        let mut installed = Vec::new();
        for (slot, &signal) in RELAYED.iter().enumerate() {
            // SAFETY: plain sigaction calls on zeroed structs; the saved action is leaked into
            // PREVIOUS.
            unsafe {
                let mut current: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, std::ptr::null(), &mut current) != 0
                    || current.sa_sigaction == libc::SIG_DFL
                    || current.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                PREVIOUS[slot].store(Box::into_raw(Box::new(current)), Ordering::SeqCst);
                let mut ours: libc::sigaction = std::mem::zeroed();
                ours.sa_sigaction = relay as extern "C" fn(libc::c_int) as libc::sighandler_t;
                ours.sa_flags = libc::SA_ONSTACK;
                libc::sigemptyset(&mut ours.sa_mask);
                if libc::sigaction(signal, &ours, std::ptr::null_mut()) == 0 {
                    installed.push(slot);
                } else {
                    drop(Box::from_raw(
                        PREVIOUS[slot].swap(std::ptr::null_mut(), Ordering::SeqCst),
                    ));
                }
            }
        }
        Relay { installed }
    }

    /// The signal received since `install`, if any.
    pub(crate) fn received() -> Option<libc::c_int> {
        Some(RECEIVED.load(Ordering::SeqCst)).filter(|&signal| signal != 0)
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        for &slot in &self.installed {
            let signal = RELAYED[slot];
            // SAFETY: restores the action saved by `install`, unless a callback installed
            // another handler since (then that one stays). The saved copy is left allocated
            // (a few hundred bytes a test): a relay running on another thread may still read it.
            unsafe {
                let mut current: libc::sigaction = std::mem::zeroed();
                let ours = relay as extern "C" fn(libc::c_int) as libc::sighandler_t;
                let previous = PREVIOUS[slot].load(Ordering::SeqCst);
                if libc::sigaction(signal, std::ptr::null(), &mut current) == 0
                    && current.sa_sigaction == ours
                {
                    libc::sigaction(signal, previous, std::ptr::null_mut());
                }
                PREVIOUS[slot].store(std::ptr::null_mut(), Ordering::SeqCst);
            }
        }
    }
}
