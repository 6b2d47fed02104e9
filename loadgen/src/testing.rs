//! Stand-ins for tests and benchmarks of the engine.

use std::sync::Mutex;

use crate::{
    Completer, QslError, QuerySample, QuerySampleIndex, QuerySampleLibrary, QuerySampleResponse,
    SystemUnderTest,
};

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

/// Answers every sample inline with its index as 4 little-endian bytes, recording each query.
#[derive(Default)]
pub struct RecordingSut {
    pub queries: Mutex<Vec<Vec<QuerySampleIndex>>>,
    pub flushes: Mutex<u32>,
}

impl SystemUnderTest for RecordingSut {
    fn name(&self) -> &str {
        "RecordingSut"
    }

    fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
        self.queries
            .lock()
            .unwrap()
            .push(samples.iter().map(|s| s.index).collect());
        for sample in samples {
            let bytes = (sample.index as u32).to_le_bytes();
            completer.query_samples_complete(&[QuerySampleResponse::new(sample.id, &bytes)]);
        }
    }

    fn flush_queries(&self) {
        *self.flushes.lock().unwrap() += 1;
    }
}

/// A QSL of `total` samples that records every load and unload.
pub struct RecordingQsl {
    pub total: usize,
    pub performance: usize,
    pub loads: Vec<Vec<QuerySampleIndex>>,
    pub unloads: Vec<Vec<QuerySampleIndex>>,
}

impl RecordingQsl {
    pub fn new(total: usize, performance: usize) -> Self {
        RecordingQsl {
            total,
            performance,
            loads: Vec::new(),
            unloads: Vec::new(),
        }
    }
}

impl QuerySampleLibrary for RecordingQsl {
    fn name(&self) -> &str {
        "RecordingQsl"
    }
    fn total_sample_count(&self) -> usize {
        self.total
    }
    fn performance_sample_count(&self) -> usize {
        self.performance
    }
    fn load_samples_to_ram(&mut self, indices: &[QuerySampleIndex]) -> Result<(), QslError> {
        self.loads.push(indices.to_vec());
        Ok(())
    }
    fn unload_samples_from_ram(&mut self, indices: &[QuerySampleIndex]) -> Result<(), QslError> {
        self.unloads.push(indices.to_vec());
        Ok(())
    }
}
