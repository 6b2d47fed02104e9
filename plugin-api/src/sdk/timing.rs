//! Where a sample's time went inside the plugin (ABI 1.4): reported through
//! [`Completer::report_timing`](super::Completer::report_timing), on the host's clock
//! ([`Completer::now_ns`](super::Completer::now_ns)).

use crate::ffi::mlperf_sample_timing;

/// When the plugin's own work on one sample began and ended, in the host's clock's ns; 0 for
/// a time not known.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleTiming {
    raw: mlperf_sample_timing,
}

impl SampleTiming {
    /// The sample `id` (as issued) computed from `compute_start_ns` to `compute_end_ns`.
    pub fn new(id: u64, compute_start_ns: u64, compute_end_ns: u64) -> Self {
        SampleTiming {
            raw: mlperf_sample_timing {
                struct_size: size_of::<mlperf_sample_timing>(),
                id,
                dequeued_ns: 0,
                compute_start_ns,
                compute_end_ns,
            },
        }
    }

    /// When it left the plugin's queue (before any batching or copying in).
    pub fn dequeued_at(mut self, dequeued_ns: u64) -> Self {
        self.raw.dequeued_ns = dequeued_ns;
        self
    }

    pub fn id(&self) -> u64 {
        self.raw.id
    }

    pub fn dequeued_ns(&self) -> u64 {
        self.raw.dequeued_ns
    }

    pub fn compute_start_ns(&self) -> u64 {
        self.raw.compute_start_ns
    }

    pub fn compute_end_ns(&self) -> u64 {
        self.raw.compute_end_ns
    }
}
