//! Sample preprocessing by a sandboxed WebAssembly module (the wasm-preprocess crate).
//!
//! Untimed (MLPerf's sample-independent preprocessing), it runs at load, over all cores, each
//! thread with its own long-lived module instance writing straight into the sample arena. Timed,
//! the system under test runs it for each issued sample (see `plugin::timed`).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use mlperf_plugin_api::sdk::DType;
use wasm_preprocess::{
    ElementType, PreprocessError, PreprocessModule, SampleFailure, Sandbox, Worker,
};

use super::arena::{LoadedSamples, SampleLayout};
use super::source::{SampleSource, SourceError};
use mlperf_submission::benchmark::PreprocessLimits;

/// A loaded module and how it runs.
pub struct Preprocessing {
    module: PreprocessModule,
    timed: bool,
    threads: usize,
    /// Instances kept between loads, one per thread.
    workers: Mutex<Vec<Worker>>,
}

impl Preprocessing {
    /// Loads the module at `path` (compiled once, or read from the cache) into the default
    /// sandbox.
    pub fn load(path: &Path, timed: bool) -> Result<Preprocessing, PreprocessError> {
        Self::load_in(path, timed, Sandbox::default())
    }

    /// Loads the module at `path` into `sandbox`.
    pub fn load_in(
        path: &Path,
        timed: bool,
        sandbox: Sandbox,
    ) -> Result<Preprocessing, PreprocessError> {
        let module = PreprocessModule::load(path, sandbox)?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(Preprocessing {
            module,
            timed,
            threads,
            workers: Mutex::new(Vec::new()),
        })
    }

    /// The threads an untimed load preprocesses on (one per core).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Preprocessing per issued sample, inside the timed path.
    pub fn is_timed(&self) -> bool {
        self.timed
    }

    /// What ran, for the detail log and result.json: path, sha256, name, version, timing.
    pub fn provenance(&self) -> Vec<(String, String)> {
        let identity = self.module.identity();
        vec![
            (
                "preprocess_module".into(),
                identity.path.display().to_string(),
            ),
            ("preprocess_sha256".into(), identity.sha256.clone()),
            ("preprocess_name".into(), identity.metadata.name.clone()),
            (
                "preprocess_version".into(),
                identity.metadata.version.clone(),
            ),
            ("preprocess_timed".into(), self.timed.to_string()),
        ]
    }

    /// Checks that samples laid out as `layout` are what the module takes.
    pub fn check_input(&self, layout: &SampleLayout) -> Result<(), PreprocessError> {
        let shape: Vec<u64> = layout.shape.iter().map(|&d| d.max(0) as u64).collect();
        let dtype = element_type(layout.dtype).ok_or_else(|| PreprocessError::Input {
            module: self.module.identity().label(),
            sha256: self.module.identity().sha256.clone(),
            what: format!("samples of element type {:?}", layout.dtype),
            message: "no WebAssembly preprocessing element type matches it".into(),
        })?;
        self.module.check_input(dtype, &shape)
    }

    /// A worker from the pool, or a new one.
    pub fn take_worker(&self) -> Result<Worker, PreprocessError> {
        let pooled = self.workers.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match pooled {
            Some(worker) => Ok(worker),
            None => self.module.worker(),
        }
    }

    pub fn return_worker(&self, worker: Worker) {
        self.workers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(worker);
    }

    /// The arena of the samples at `indices` (sorted, each once) preprocessed, each read by
    /// one of `readers` as its thread comes to it: one thread per reader, up to the cores,
    /// so that no more than a sample per thread is held raw. The first sample's output fixes
    /// the layout; every other output must match it.
    pub fn run_streamed(
        &self,
        mut readers: Vec<&mut dyn SampleSource>,
        indices: &[usize],
        total: usize,
    ) -> Result<LoadedSamples, LoadError> {
        let mut output = LoadedSamples::new(total);
        let (Some(&first), false) = (indices.first(), readers.is_empty()) else {
            return Ok(output);
        };
        let mut worker = self.take_worker()?;
        let mut raw = Vec::new();
        let raw_layout = readers[0].read(first, &mut raw)?;
        let (layout, first_output) = {
            let out = worker.run(first, &raw, &dims(&raw_layout.shape))?;
            (self.output_layout(out.shape.dims())?, out.data.to_vec())
        };
        output
            .reserve_samples(indices.len(), first_output.len())
            .map_err(|error| PreprocessError::Sample {
                module: self.module.identity().label(),
                sha256: self.module.identity().sha256.clone(),
                index: first,
                failure: SampleFailure::BadOutput(format!(
                    "its outputs do not fit: {}",
                    crate::error_chain(&error)
                )),
            })?;
        for &index in indices {
            output
                .allocate(index, &layout, first_output.len())
                .expect("indices within the data set");
        }
        let mut slots = output.slots_mut();
        // Allocated in the order of `indices`: the first slot is the first sample's.
        slots[0].1.copy_from_slice(&first_output);
        let rest = &mut slots[1..];
        if rest.is_empty() {
            self.return_worker(worker);
            drop(slots);
            return Ok(output);
        }
        let threads = self.threads.min(readers.len()).clamp(1, rest.len());
        readers.truncate(threads);
        let per_thread = rest.len().div_ceil(threads);
        let failed = AtomicBool::new(false);
        let mut workers = vec![worker];
        for _ in 1..threads {
            workers.push(self.take_worker()?);
        }
        let results: Vec<(Worker, Result<(), LoadError>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = rest
                .chunks_mut(per_thread)
                .zip(workers)
                .zip(readers)
                .map(|((chunk, mut worker), reader)| {
                    let (failed, layout, module) = (&failed, &layout, &self.module);
                    scope.spawn(move || {
                        let result = fill(module, &mut worker, reader, chunk, layout, failed);
                        if result.is_err() {
                            failed.store(true, Ordering::Relaxed);
                        }
                        (worker, result)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|handle| handle.join().expect("preprocessing thread panicked"))
                .collect()
        });
        let mut first_error = None;
        for (worker, result) in results {
            self.return_worker(worker);
            if let (Err(error), None) = (result, &first_error) {
                first_error = Some(error);
            }
        }
        drop(slots);
        match first_error {
            Some(error) => Err(error),
            None => Ok(output),
        }
    }

    /// The arena layout of an output of `shape`, of the module's declared output type.
    pub fn output_layout(&self, shape: &[u32]) -> Result<SampleLayout, PreprocessError> {
        let output = &self.module.metadata().output;
        Ok(SampleLayout {
            dtype: dtype(output.dtype),
            shape: shape.iter().map(|&d| d as i64).collect(),
        })
    }

    pub fn module(&self) -> &PreprocessModule {
        &self.module
    }
}

/// Reads and preprocesses one thread's share of the samples into their arena slots.
fn fill(
    module: &PreprocessModule,
    worker: &mut Worker,
    reader: &mut dyn SampleSource,
    slots: &mut [(usize, &mut [u8])],
    layout: &SampleLayout,
    failed: &AtomicBool,
) -> Result<(), LoadError> {
    let mut raw = Vec::new();
    for (index, slot) in slots.iter_mut() {
        if failed.load(Ordering::Relaxed) {
            return Ok(());
        }
        let raw_layout = reader.read(*index, &mut raw)?;
        let out = worker.run(*index, &raw, &dims(&raw_layout.shape))?;
        check_same(
            module,
            *index,
            out.shape.dims(),
            out.data.len(),
            layout,
            slot.len(),
        )?;
        slot.copy_from_slice(out.data);
    }
    Ok(())
}

/// Why a set of samples could not be loaded and preprocessed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Preprocess(#[from] PreprocessError),
}

/// Every output of a data set has one layout; a module that answers otherwise fails the sample.
pub(crate) fn check_same(
    module: &PreprocessModule,
    index: usize,
    shape: &[u32],
    length: usize,
    layout: &SampleLayout,
    expected_length: usize,
) -> Result<(), PreprocessError> {
    let same_shape = shape.len() == layout.shape.len()
        && shape
            .iter()
            .zip(&layout.shape)
            .all(|(&a, &b)| a as i64 == b);
    if same_shape && length == expected_length {
        return Ok(());
    }
    Err(PreprocessError::Sample {
        module: module.identity().label(),
        sha256: module.identity().sha256.clone(),
        index,
        failure: SampleFailure::BadOutput(format!(
            "its output of shape {shape:?} ({length} bytes) differs from the first sample's \
             {:?} ({expected_length} bytes); every output must have one layout",
            layout.shape
        )),
    })
}

pub(crate) fn dims(shape: &[i64]) -> Vec<u64> {
    shape.iter().map(|&d| d.max(0) as u64).collect()
}

fn element_type(dtype: DType) -> Option<ElementType> {
    Some(match dtype {
        DType::Bool => ElementType::Bool,
        DType::I8 => ElementType::Int8,
        DType::U8 => ElementType::UInt8,
        DType::I16 => ElementType::Int16,
        DType::U16 => ElementType::UInt16,
        DType::I32 => ElementType::Int32,
        DType::U32 => ElementType::UInt32,
        DType::I64 => ElementType::Int64,
        DType::U64 => ElementType::UInt64,
        DType::F16 => ElementType::Float16,
        DType::BF16 => ElementType::BFloat16,
        DType::F32 => ElementType::Float32,
        DType::F64 => ElementType::Float64,
        _ => return None,
    })
}

fn dtype(element: ElementType) -> DType {
    match element {
        ElementType::Bool => DType::Bool,
        ElementType::Int8 => DType::I8,
        ElementType::UInt8 => DType::U8,
        ElementType::Int16 => DType::I16,
        ElementType::UInt16 => DType::U16,
        ElementType::Int32 => DType::I32,
        ElementType::UInt32 => DType::U32,
        ElementType::Int64 => DType::I64,
        ElementType::UInt64 => DType::U64,
        ElementType::Float16 => DType::F16,
        ElementType::BFloat16 => DType::BF16,
        ElementType::Float32 => DType::F32,
        ElementType::Float64 => DType::F64,
    }
}

/// The default sandbox with a benchmark definition's limits applied.
pub fn sandbox_with(limits: PreprocessLimits) -> Sandbox {
    let mut sandbox = Sandbox::default();
    if let Some(mib) = limits.memory_limit_mib {
        sandbox.memory_limit = mib << 20;
    }
    if let Some(ms) = limits.time_limit_ms {
        sandbox.time_limit = std::time::Duration::from_millis(ms);
    }
    sandbox.fuel = limits.fuel;
    sandbox
}
