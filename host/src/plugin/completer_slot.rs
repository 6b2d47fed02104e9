//! The completer of the test an instance serves, set at its first issue, and a failure the
//! plugin reported before there was one (from `create`, or from a thread of its own), kept
//! and handed over then. One type for the in-process instance and the isolated one, so both
//! close the same race: a failure stored while the first issue sets the completer.

use std::sync::{Mutex, OnceLock};

use crate::loadgen::Completer;

#[derive(Default)]
pub(crate) struct CompleterSlot {
    completer: OnceLock<Completer>,
    /// The message, and whether the instance is gone (no outstanding sample will complete).
    early_failure: Mutex<Option<(String, bool)>>,
}

impl CompleterSlot {
    /// The completer, once the first issue has set it.
    #[inline]
    pub(crate) fn get(&self) -> Option<&Completer> {
        self.completer.get()
    }

    /// At every issue: the first sets `completer` and hands it a failure reported before.
    /// True when it did: the instance failed before its first query, which it then does not
    /// get.
    #[inline]
    pub(crate) fn arm(&self, completer: &Completer) -> bool {
        if self.completer.get().is_some() {
            return false;
        }
        let set = self.completer.get_or_init(|| completer.clone());
        match self.take_early_failure() {
            Some((message, lost)) => {
                deliver(set, message, lost);
                true
            }
            None => false,
        }
    }

    /// The instance cannot finish samples it accepted (`lost`: it is gone, so none of them
    /// will complete): the engine stops issuing and ends the run INVALID with `message`.
    /// Before the first issue the failure is kept for it; the first failure is the one told.
    pub(crate) fn fail(&self, message: String, lost: bool) {
        if let Some(completer) = self.completer.get() {
            return deliver(completer, message, lost);
        }
        self.early_failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert((message, lost));
        // The first issue may have set the completer, and looked for a failure, meanwhile.
        if let Some(completer) = self.completer.get() {
            if let Some((message, lost)) = self.take_early_failure() {
                deliver(completer, message, lost);
            }
        }
    }

    fn take_early_failure(&self) -> Option<(String, bool)> {
        self.early_failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
}

fn deliver(completer: &Completer, message: String, lost: bool) {
    match lost {
        true => completer.fail_lost(message),
        false => completer.fail(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::{CompletionSink, QuerySampleResponse};
    use std::sync::Arc;

    #[derive(Default)]
    struct Failures(Mutex<Vec<String>>);

    impl CompletionSink for Failures {
        fn complete(&self, _: &[QuerySampleResponse<'_>]) {}
        fn first_token(&self, _: &[QuerySampleResponse<'_>]) {}
        fn fail(&self, message: String) {
            self.0.lock().unwrap().push(message);
        }
    }

    fn completer() -> (Completer, Arc<Failures>) {
        let failures = Arc::new(Failures::default());
        let sink = Arc::clone(&failures) as Arc<dyn CompletionSink>;
        (Completer::forwarding_to(sink), failures)
    }

    #[test]
    fn a_failure_before_the_first_issue_is_handed_over_at_it_once() {
        let slot = CompleterSlot::default();
        slot.fail("create failed".into(), false);
        slot.fail("and again".into(), true);
        assert!(slot.get().is_none());
        let (completer, failures) = completer();
        assert!(slot.arm(&completer), "the first issue is refused");
        assert!(!slot.arm(&completer), "later issues are not");
        assert_eq!(*failures.0.lock().unwrap(), ["create failed"]);
    }

    #[test]
    fn without_an_early_failure_the_first_issue_goes_on_and_later_failures_go_straight_through() {
        let slot = CompleterSlot::default();
        let (completer, failures) = completer();
        assert!(!slot.arm(&completer));
        assert!(slot.get().is_some());
        slot.fail("worker died".into(), true);
        assert_eq!(*failures.0.lock().unwrap(), ["worker died"]);
    }

    #[test]
    fn the_first_completer_set_is_the_one_failures_reach() {
        let slot = CompleterSlot::default();
        let (first, first_failures) = completer();
        let (second, second_failures) = completer();
        assert!(!slot.arm(&first));
        assert!(!slot.arm(&second));
        slot.fail("late".into(), false);
        assert_eq!(*first_failures.0.lock().unwrap(), ["late"]);
        assert!(second_failures.0.lock().unwrap().is_empty());
    }
}
