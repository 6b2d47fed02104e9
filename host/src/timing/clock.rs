//! The clock samples are timed on: `CLOCK_MONOTONIC`, the engine's own and the same in every
//! process of the machine (an isolated plugin's times need no conversion).

/// Now, in ns of `CLOCK_MONOTONIC`.
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec to write, and CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}
