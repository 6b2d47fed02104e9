//! Where sample data comes from: a data set file read sample by sample at load time.

use super::arena::SampleLayout;

/// A data set, readable by sample index.
pub trait SampleSource: Send {
    /// What the source reads (a path), for messages.
    fn describe(&self) -> String;
    /// Number of samples.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Sample `index`'s bytes into `out` (replacing its contents), and their layout.
    fn read(&mut self, index: usize, out: &mut Vec<u8>) -> Result<SampleLayout, SourceError>;
    /// Another reader of the same samples, for a thread of its own; None where the source
    /// cannot be read from two threads (then one thread reads it all).
    fn fork(&self) -> Option<Box<dyn SampleSource>> {
        None
    }
}

pub use mlperf_submission::npy::SourceError;
