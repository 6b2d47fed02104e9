//! The engine's `SystemUnderTest` and `QuerySampleLibrary` seen through the official
//! library's interfaces.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use mlperf_official_loadgen as official;

use super::sink::OfficialSink;
use crate::loadgen::{Completer, QuerySample, QuerySampleLibrary, SystemUnderTest};

// An official sample is read in place as an engine sample: the same two words.
const _: () = {
    assert!(std::mem::size_of::<official::QuerySample>() == std::mem::size_of::<QuerySample>());
    assert!(std::mem::align_of::<official::QuerySample>() == std::mem::align_of::<QuerySample>());
    assert!(
        std::mem::offset_of!(official::QuerySample, id) == std::mem::offset_of!(QuerySample, id)
    );
    assert!(
        std::mem::offset_of!(official::QuerySample, index)
            == std::mem::offset_of!(QuerySample, index)
    );
};

pub(crate) struct OfficialSut<'a> {
    inner: &'a dyn SystemUnderTest,
    completer: Completer,
    sink: Arc<OfficialSink>,
}

impl<'a> OfficialSut<'a> {
    pub(crate) fn new(
        inner: &'a dyn SystemUnderTest,
        completer: Completer,
        sink: &Arc<OfficialSink>,
    ) -> Self {
        OfficialSut {
            inner,
            completer,
            sink: Arc::clone(sink),
        }
    }
}

impl official::SystemUnderTest for OfficialSut<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn issue_query(&self, samples: &[official::QuerySample]) {
        // SAFETY: the layouts are asserted equal above; ResponseId is a transparent u64.
        let samples: &[QuerySample] = unsafe {
            std::slice::from_raw_parts(samples.as_ptr() as *const QuerySample, samples.len())
        };
        // Before the SUT sees them: an answer may come back before issue_query returns.
        self.sink.outstanding.issue(samples);
        self.sink.queries.fetch_add(1, Ordering::Relaxed);
        self.sink
            .issued
            .fetch_add(samples.len() as u64, Ordering::Release);
        // A panicking SUT fails the run; it never unwinds into the official library.
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| {
            self.sink
                .sut_calls
                .within(false, || self.inner.issue_query(samples, &self.completer));
            self.inner.issuer_idle();
        })) {
            self.completer.fail(format!(
                "the system under test panicked in issue_query: {}",
                panic_message(&*panic)
            ));
        }
    }

    fn flush_queries(&self) {
        let flush = || {
            self.sink
                .sut_calls
                .within(true, || self.inner.flush_queries())
        };
        if let Err(panic) = catch_unwind(AssertUnwindSafe(flush)) {
            self.completer.fail(format!(
                "the system under test panicked in flush_queries: {}",
                panic_message(&*panic)
            ));
        }
    }
}

pub(crate) struct OfficialQsl<'a> {
    inner: &'a mut dyn QuerySampleLibrary,
    sink: Arc<OfficialSink>,
    name: String,
}

impl<'a> OfficialQsl<'a> {
    pub(crate) fn new(inner: &'a mut dyn QuerySampleLibrary, sink: &Arc<OfficialSink>) -> Self {
        let name = inner.name().to_string();
        OfficialQsl {
            inner,
            sink: Arc::clone(sink),
            name,
        }
    }

    /// A library that cannot load fails the run (the official interface has no error).
    fn failed(&self, what: &str, error: impl std::fmt::Display) {
        use crate::loadgen::CompletionSink;
        self.sink.fail(format!(
            "the sample library {} failed to {what}: {error}",
            self.name
        ));
    }
}

impl official::QuerySampleLibrary for OfficialQsl<'_> {
    fn name(&self) -> &str {
        &self.name
    }

    fn total_sample_count(&self) -> usize {
        self.inner.total_sample_count()
    }

    fn performance_sample_count(&self) -> usize {
        self.inner.performance_sample_count()
    }

    fn load_samples_to_ram(&mut self, indices: &[usize]) {
        match catch_unwind(AssertUnwindSafe(|| self.inner.load_samples_to_ram(indices))) {
            Ok(Ok(())) => {}
            Ok(Err(error)) => self.failed("load samples", error),
            Err(panic) => self.failed("load samples", panic_message(&*panic)),
        }
    }

    fn unload_samples_from_ram(&mut self, indices: &[usize]) {
        match catch_unwind(AssertUnwindSafe(|| {
            self.inner.unload_samples_from_ram(indices)
        })) {
            Ok(Ok(())) => {}
            Ok(Err(error)) => self.failed("unload samples", error),
            Err(panic) => self.failed("unload samples", panic_message(&*panic)),
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}
