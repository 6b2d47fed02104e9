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

/// A small deterministic generator (splitmix64) for the seeded mutation tests of input
/// parsers: the same seed, the same inputs, on every machine.
pub struct MutationRng(pub u64);

impl MutationRng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`; the modulo bias does not matter here).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn pick<'a, T: ?Sized>(&mut self, items: &[&'a T]) -> &'a T {
        items[self.below(items.len())]
    }

    /// True once in `one_in`.
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}
