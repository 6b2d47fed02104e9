//! The query sample library over a [`SampleSource`]: `load_samples_to_ram` reads the
//! loadable set into the [`SampleArena`], untimed, before the series issues.

use std::sync::Arc;

use super::arena::{LoadedSamples, SampleArena};
use super::source::SampleSource;
use crate::loadgen::{QslError, QuerySampleIndex, QuerySampleLibrary};

pub struct DatasetLibrary {
    name: String,
    source: Box<dyn SampleSource>,
    performance_count: usize,
    arena: Arc<SampleArena>,
    buffer: Vec<u8>,
}

impl DatasetLibrary {
    /// A library over `source` whose performance runs load `performance_count` samples
    /// (at most the source's length).
    pub fn new(source: Box<dyn SampleSource>, performance_count: usize) -> DatasetLibrary {
        DatasetLibrary {
            name: source.describe(),
            performance_count: performance_count.min(source.len()),
            source,
            arena: Arc::new(SampleArena::new()),
            buffer: Vec::new(),
        }
    }

    /// The arena the system under test reads loaded samples from.
    pub fn arena(&self) -> Arc<SampleArena> {
        Arc::clone(&self.arena)
    }
}

impl QuerySampleLibrary for DatasetLibrary {
    fn name(&self) -> &str {
        &self.name
    }

    fn total_sample_count(&self) -> usize {
        self.source.len()
    }

    fn performance_sample_count(&self) -> usize {
        self.performance_count
    }

    fn load_samples_to_ram(&mut self, indices: &[QuerySampleIndex]) -> Result<(), QslError> {
        let mut unique = indices.to_vec();
        unique.sort_unstable();
        unique.dedup();
        let mut loaded = LoadedSamples::new(self.source.len());
        for index in unique {
            let layout = self.source.read(index, &mut self.buffer)?;
            loaded
                .insert(index, &layout, &self.buffer)
                .map_err(|message| format!("{}: {message}", self.name))?;
        }
        self.arena.replace(loaded);
        Ok(())
    }

    /// Keeps the memory: a SUT may still read samples it has not completed. The next load
    /// replaces it.
    fn unload_samples_from_ram(&mut self, _indices: &[QuerySampleIndex]) -> Result<(), QslError> {
        Ok(())
    }
}
