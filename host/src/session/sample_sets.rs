//! The sample library as the engine sees it in a session: each set LoadGen loads is also
//! handed to the plugin (`load_samples`, ABI 1.3) once its data is in memory, and released
//! to it (`unload_samples`) before the library lets it go. A failed load ends the test (its
//! queries would find nothing staged); a failed release is logged and kept, and the results
//! stand: the test is over by then, and its logs must not be lost to it.

use mlperf_loadgen::{QslError, QuerySampleIndex, QuerySampleLibrary};

use crate::plugin::Instance;

/// How many sets the plugin was handed and released in one test.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SampleSetCalls {
    pub loads: u64,
    pub unloads: u64,
    /// The first `unload_samples` that failed: its message.
    pub unload_failure: Option<String>,
}

/// `library` with the plugin told of every load and unload.
pub(super) struct PluginSampleSets<'a> {
    pub(super) library: &'a mut dyn QuerySampleLibrary,
    pub(super) sut: &'a Instance,
    pub(super) calls: SampleSetCalls,
}

impl QuerySampleLibrary for PluginSampleSets<'_> {
    fn name(&self) -> &str {
        self.library.name()
    }

    fn total_sample_count(&self) -> usize {
        self.library.total_sample_count()
    }

    fn performance_sample_count(&self) -> usize {
        self.library.performance_sample_count()
    }

    fn load_samples_to_ram(&mut self, indices: &[QuerySampleIndex]) -> Result<(), QslError> {
        self.library.load_samples_to_ram(indices)?;
        self.calls.loads += 1;
        self.sut
            .backend()
            .load_samples(indices)
            .map_err(|e| QslError::from(e.to_string()))
    }

    fn unload_samples_from_ram(&mut self, indices: &[QuerySampleIndex]) -> Result<(), QslError> {
        // The plugin lets go first: its staged copies may point into the library's memory.
        self.calls.unloads += 1;
        if let Err(failure) = self.sut.backend().unload_samples(indices) {
            tracing::error!("{failure}");
            self.calls.unload_failure.get_or_insert(failure.to_string());
        }
        self.library.unload_samples_from_ram(indices)
    }
}
