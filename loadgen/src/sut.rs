//! The two interfaces a benchmark implements: the system under test and its sample library.

use super::completion::Completer;
use super::types::{QuerySample, QuerySampleIndex};

/// Error a sample library reports when it cannot load or unload samples.
pub type QslError = Box<dyn std::error::Error + Send + Sync>;

/// The system under test. `issue_query` may answer inline (through `completer`) or later from any
/// thread; it may be called from several issue threads at once, hence `Sync`.
pub trait SystemUnderTest: Send + Sync {
    fn name(&self) -> &str;
    fn issue_query(&self, samples: &[QuerySample], completer: &Completer);
    /// The next query's samples, ahead of its turn and outside any timed window; the same
    /// samples then reach `issue_query`. A SUT can convert or stage them here.
    fn prepare_query(&self, _samples: &[QuerySample]) {}
    /// Called once after the last `issue_query` of every series of queries.
    fn flush_queries(&self) {}
    /// The thread that calls `issue_query` is about to wait (for the next query's time, for
    /// completions, for the end of the series) or to stop. A SUT that keeps something across
    /// back-to-back `issue_query` calls lets it go here, on that thread: a Python binding
    /// keeps the interpreter lock while queries are due.
    fn issuer_idle(&self) {}
    /// As [`issuer_idle`](Self::issuer_idle), for a wait that ends at `deadline`, when the
    /// next query is due: a SUT that polls for completions meanwhile stops by then, so the
    /// query goes out on time.
    fn issuer_idle_until(&self, _deadline: std::time::Instant) {
        self.issuer_idle()
    }
}

/// The query sample library: the data set the engine samples from.
pub trait QuerySampleLibrary: Send {
    fn name(&self) -> &str;
    fn total_sample_count(&self) -> usize;
    fn performance_sample_count(&self) -> usize;
    /// Called with exactly the loadable set (MultiStream: padded, so indices may repeat).
    fn load_samples_to_ram(&mut self, indices: &[QuerySampleIndex]) -> Result<(), QslError>;
    fn unload_samples_from_ram(&mut self, indices: &[QuerySampleIndex]) -> Result<(), QslError>;
}
