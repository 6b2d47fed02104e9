//! The query sample library over a [`SampleSource`]: `load_samples_to_ram` reads the
//! loadable set into the [`SampleArena`], untimed, before the series issues.

use std::sync::Arc;

use super::arena::{LoadedSamples, SampleArena, SampleLayout};
use super::preprocess::Preprocessing;
use super::source::{SampleSource, SourceError};
use crate::error_chain;
use crate::loadgen::{QslError, QuerySampleIndex, QuerySampleLibrary};

pub struct DatasetLibrary {
    name: String,
    source: Box<dyn SampleSource>,
    performance_count: usize,
    arena: Arc<SampleArena>,
    buffer: Vec<u8>,
    /// Untimed preprocessing applied at load (timed preprocessing is the SUT's).
    preprocessing: Option<Arc<Preprocessing>>,
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
            preprocessing: None,
        }
    }

    /// Runs `preprocessing` over the samples: at load when it is untimed; when timed the arena
    /// keeps the raw samples for the SUT to preprocess as it issues them. Checks that the data
    /// set's samples are what the module takes.
    pub fn preprocess_with(
        &mut self,
        preprocessing: Arc<Preprocessing>,
    ) -> Result<(), wasm_preprocess::PreprocessError> {
        if !self.source.is_empty() {
            let layout = self
                .source
                .read(0, &mut self.buffer)
                .map_err(|e| wasm_preprocess::PreprocessError::Runtime(e.to_string()))?;
            preprocessing.check_input(&layout)?;
        }
        if !preprocessing.is_timed() {
            self.preprocessing = Some(preprocessing);
        }
        Ok(())
    }

    /// The first sample's layout and size in bytes (every sample of a data set file has the
    /// same).
    pub fn first_sample(&mut self) -> Result<(SampleLayout, usize), SourceError> {
        let layout = self.source.read(0, &mut self.buffer)?;
        Ok((layout, self.buffer.len()))
    }

    /// The arena the system under test reads loaded samples from.
    pub fn arena(&self) -> Arc<SampleArena> {
        Arc::clone(&self.arena)
    }
}

impl DatasetLibrary {
    /// The samples at `unique` (sorted, each once), as the data set holds them.
    fn read_samples(&mut self, unique: &[usize]) -> Result<LoadedSamples, QslError> {
        let mut loaded = LoadedSamples::new(self.source.len());
        for (position, &index) in unique.iter().enumerate() {
            let layout = self.source.read(index, &mut self.buffer)?;
            if position == 0 {
                // Samples of a data set file share a size: one allocation for the whole set.
                loaded
                    .reserve_samples(unique.len(), self.buffer.len())
                    .map_err(|error| format!("{}: {}", self.name, error_chain(&error)))?;
            }
            loaded
                .insert(index, &layout, &self.buffer)
                .map_err(|error| format!("{}: {error}", self.name))?;
        }
        Ok(loaded)
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
        let started = std::time::Instant::now();
        let mut unique = indices.to_vec();
        unique.sort_unstable();
        unique.dedup();
        let loaded = match &self.preprocessing {
            // Read and preprocessed a sample at a time, on every core: the raw set is never
            // held whole (ImageNet's JPEGs decode to several times the crops' bytes).
            Some(preprocessing) => {
                let total = self.source.len();
                let mut forks: Vec<Box<dyn SampleSource>> = (1..preprocessing.threads())
                    .map_while(|_| self.source.fork())
                    .collect();
                let mut readers: Vec<&mut dyn SampleSource> = vec![&mut *self.source];
                readers.extend(
                    forks
                        .iter_mut()
                        .map(|fork| &mut **fork as &mut dyn SampleSource),
                );
                preprocessing
                    .run_streamed(readers, &unique, total)
                    .map_err(|error| format!("{}: {}", self.name, error_chain(&error)))?
            }
            None => self.read_samples(&unique)?,
        };
        tracing::info!(
            samples = unique.len(),
            bytes = loaded.data_bytes(),
            load_ms = started.elapsed().as_secs_f64() * 1e3,
            preprocessed = self.preprocessing.is_some(),
            "loaded samples into the arena"
        );
        self.arena.replace(loaded);
        Ok(())
    }

    /// Keeps the memory: a SUT may still read samples it has not completed. The next load
    /// replaces it.
    fn unload_samples_from_ram(&mut self, _indices: &[QuerySampleIndex]) -> Result<(), QslError> {
        Ok(())
    }
}
