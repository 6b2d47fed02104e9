//! Which SUT call each issuing thread is inside, so that a call that never returns can end the
//! test (`LogSettings::sut_call_timeout`) instead of hanging it.
//!
//! Each issuing thread owns one word and is its only writer: entering and leaving a call are a
//! plain store each, no read-modify-write on the hot path. The test's coordinating thread
//! reads the words every few milliseconds and times how long one stays inside the same call.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The SUT's calls made from an issuing thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SutCall {
    IssueQuery,
    FlushQueries,
}

impl SutCall {
    pub(crate) fn name(self) -> &'static str {
        match self {
            SutCall::IssueQuery => "issue_query",
            SutCall::FlushQueries => "flush_queries",
        }
    }
}

/// A word layout: `calls << 2 | flush << 1 | inside`. The count makes two calls of the same
/// kind tell apart, so a watcher never mistakes a quick succession for one long call.
const INSIDE: u64 = 1;
const FLUSH: u64 = 2;
const COUNT_SHIFT: u32 = 2;

// Its own cache line: the coordinating thread's reads must not slow the issuing thread's
// neighbouring data.
#[repr(align(64))]
#[derive(Default)]
struct Word(AtomicU64);

/// One word per issuing thread.
pub(crate) struct SutCalls {
    words: Box<[Word]>,
}

impl SutCalls {
    /// Words for `threads` issuing threads (at least one).
    pub(crate) fn new(threads: usize) -> Self {
        SutCalls {
            words: (0..threads.max(1)).map(|_| Word::default()).collect(),
        }
    }

    /// Runs `call` on behalf of issuing thread `thread`, marked as inside the SUT.
    #[inline]
    pub(crate) fn within<R>(&self, thread: usize, kind: SutCall, call: impl FnOnce() -> R) -> R {
        let Some(word) = self.words.get(thread) else {
            return call();
        };
        let before = word.0.load(Ordering::Relaxed);
        let flush = if kind == SutCall::FlushQueries {
            FLUSH
        } else {
            0
        };
        let inside = ((before >> COUNT_SHIFT).wrapping_add(1) << COUNT_SHIFT) | flush | INSIDE;
        word.0.store(inside, Ordering::Relaxed);
        // Marked outside on return and on unwinding (the engine catches a SUT's panic and goes
        // on: a word left inside would read as a stall later).
        let _leave = Leave {
            word,
            value: inside & !INSIDE,
        };
        call()
    }

    fn read(&self, thread: usize) -> u64 {
        self.words[thread].0.load(Ordering::Relaxed)
    }
}

struct Leave<'a> {
    word: &'a Word,
    value: u64,
}

impl Drop for Leave<'_> {
    #[inline]
    fn drop(&mut self) {
        self.word.0.store(self.value, Ordering::Relaxed);
    }
}

/// The coordinating thread's view: since when each word has shown the same call with no
/// sample completed meanwhile. A SUT may legitimately work inside one call for the whole run
/// (an Offline query answered inline), so only a call during which nothing completes stalls.
pub(crate) struct StallWatch {
    timeout: Duration,
    seen: Vec<(u64, Instant)>,
    completed: u64,
}

impl StallWatch {
    pub(crate) fn new(calls: &SutCalls, timeout: Duration) -> Self {
        let now = Instant::now();
        StallWatch {
            timeout,
            seen: (0..calls.words.len()).map(|_| (0, now)).collect(),
            completed: 0,
        }
    }

    /// The call that has been running for at least the timeout without a sample completing,
    /// if one has; `completed` counts the samples completed so far.
    pub(crate) fn check(&mut self, calls: &SutCalls, completed: u64) -> Option<SutCall> {
        let now = Instant::now();
        let progressed = std::mem::replace(&mut self.completed, completed) != completed;
        for (thread, seen) in self.seen.iter_mut().enumerate() {
            let word = calls.read(thread);
            if progressed || word & INSIDE == 0 || word != seen.0 {
                *seen = (word, now);
                continue;
            }
            if now.duration_since(seen.1) >= self.timeout {
                return Some(if word & FLUSH != 0 {
                    SutCall::FlushQueries
                } else {
                    SutCall::IssueQuery
                });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_a_stall_only_once_the_same_call_outlasts_the_timeout() {
        let calls = SutCalls::new(2);
        let mut watch = StallWatch::new(&calls, Duration::from_millis(30));
        // Quick calls, one after another: never a stall.
        for _ in 0..1000 {
            calls.within(0, SutCall::IssueQuery, || ());
        }
        assert_eq!(watch.check(&calls, 0), None);

        let entered = std::sync::Barrier::new(2);
        let release = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                calls.within(1, SutCall::FlushQueries, || {
                    entered.wait();
                    while !release.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                })
            });
            entered.wait();
            assert_eq!(watch.check(&calls, 0), None, "just entered");
            std::thread::sleep(Duration::from_millis(40));
            assert_eq!(watch.check(&calls, 0), Some(SutCall::FlushQueries));
            release.store(true, Ordering::Relaxed);
        });
        assert_eq!(watch.check(&calls, 0), None, "returned");
    }

    #[test]
    fn a_call_that_keeps_completing_samples_is_no_stall() {
        let calls = SutCalls::new(1);
        let mut watch = StallWatch::new(&calls, Duration::from_millis(20));
        calls.within(0, SutCall::IssueQuery, || {
            for completed in 1..=4 {
                std::thread::sleep(Duration::from_millis(10));
                assert_eq!(
                    watch.check(&calls, completed),
                    None,
                    "progress at {completed}"
                );
            }
            std::thread::sleep(Duration::from_millis(30));
            assert_eq!(
                watch.check(&calls, 4),
                Some(SutCall::IssueQuery),
                "no progress"
            );
        });
    }

    #[test]
    fn a_new_call_of_the_same_kind_starts_its_own_time() {
        let calls = SutCalls::new(1);
        let mut watch = StallWatch::new(&calls, Duration::from_millis(20));
        calls.within(0, SutCall::IssueQuery, || {
            assert_eq!(watch.check(&calls, 0), None);
        });
        std::thread::sleep(Duration::from_millis(30));
        calls.within(0, SutCall::IssueQuery, || {
            // The earlier call was seen inside 30 ms ago, but this is another one.
            assert_eq!(watch.check(&calls, 0), None);
        });
    }
}
