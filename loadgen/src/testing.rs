//! Stand-ins for tests and benchmarks of the engine.

use crate::{QslError, QuerySampleIndex, QuerySampleLibrary};

/// A QSL with nothing to load.
pub struct NullQsl {
    pub total: usize,
    pub performance: usize,
}

impl NullQsl {
    /// `samples` samples, all of them fitting in memory.
    pub fn holding(samples: usize) -> NullQsl {
        NullQsl {
            total: samples,
            performance: samples,
        }
    }
}

impl QuerySampleLibrary for NullQsl {
    fn name(&self) -> &str {
        "NullQSL"
    }
    fn total_sample_count(&self) -> usize {
        self.total
    }
    fn performance_sample_count(&self) -> usize {
        self.performance
    }
    fn load_samples_to_ram(&mut self, _: &[QuerySampleIndex]) -> Result<(), QslError> {
        Ok(())
    }
    fn unload_samples_from_ram(&mut self, _: &[QuerySampleIndex]) -> Result<(), QslError> {
        Ok(())
    }
}
