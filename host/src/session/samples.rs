//! The sample library of `mlperf-host run`: a data set file (`--dataset`) read into the sample
//! arena at load time, or, without one, a library of samples that carry no data.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use mlperf_host::benchmark::{Benchmark, PreprocessLimits};
use mlperf_host::loadgen::testing::NullQsl;
use mlperf_host::loadgen::QuerySampleLibrary;
use mlperf_host::plugin::PluginSut;
use mlperf_host::samples::{DatasetLibrary, NpySource, Preprocessing, SampleSource};
use wasm_preprocess::Sandbox;

use super::run_args::RunArgs;

/// Samples in the library when there is no data set and no `--total-samples`.
const DEFAULT_TOTAL_SAMPLES: usize = 1024;

pub enum Library {
    /// Indices only.
    Null(NullQsl),
    Dataset {
        library: DatasetLibrary,
        preprocessing: Option<Arc<Preprocessing>>,
    },
}

impl Library {
    /// The library `args` ask for; a data set is opened (and its header checked) here.
    pub fn open(args: &RunArgs, benchmark: Option<&Benchmark>) -> anyhow::Result<Library> {
        let path = args.dataset.as_ref().or(benchmark.map(|b| &b.inputs));
        let preprocess = preprocess_module(args, benchmark);
        if args.preprocess_timed && preprocess.is_none() {
            bail!(
                "--preprocess-timed needs a module (--preprocess, or a benchmark's [preprocess])"
            );
        }
        let Some(path) = path else {
            if let Some((module, _, _)) = preprocess {
                bail!(
                    "--preprocess {}: there is no data set to preprocess (give --dataset)",
                    module.display()
                );
            }
            let total = args.total_samples.unwrap_or(DEFAULT_TOTAL_SAMPLES);
            if total == 0 {
                bail!("--total-samples must be at least 1");
            }
            let performance =
                performance_count(args.performance_samples, total, "--total-samples")?;
            return Ok(Library::Null(NullQsl { total, performance }));
        };
        if args.total_samples.is_some() {
            bail!("--total-samples does not apply with --dataset (the data set's length is the total)");
        }
        let source = open_source(path)?;
        let total = source.len();
        if total == 0 {
            bail!("--dataset {}: the data set has no samples", path.display());
        }
        let asked = args
            .performance_samples
            .or(benchmark.and_then(|b| b.performance_sample_count));
        let performance = performance_count(asked, total, "the data set's length")?;
        let mut library = DatasetLibrary::new(source, performance);
        let preprocessing = match preprocess {
            None => None,
            Some((module, timed, limits)) => {
                let preprocessing = Arc::new(
                    Preprocessing::load_in(&module, timed, sandbox(limits))
                        .with_context(|| format!("--preprocess {}", module.display()))?,
                );
                library
                    .preprocess_with(Arc::clone(&preprocessing))
                    .with_context(|| format!("--dataset {}", path.display()))?;
                Some(preprocessing)
            }
        };
        Ok(Library::Dataset {
            library,
            preprocessing,
        })
    }

    /// Hands `sut` the loaded samples' memory, when there is data, and the preprocessing it
    /// runs on issued samples, when that is timed.
    pub fn attach(&self, sut: &mut PluginSut) {
        if let Library::Dataset {
            library,
            preprocessing,
        } = self
        {
            sut.read_samples_from(library.arena());
            if let Some(timed) = preprocessing.as_ref().filter(|p| p.is_timed()) {
                sut.preprocess_timed(Arc::clone(timed));
            }
        }
    }

    /// What preprocessed the samples, for the logs.
    pub fn provenance(&self) -> Vec<(String, String)> {
        match self {
            Library::Dataset {
                preprocessing: Some(preprocessing),
                ..
            } => preprocessing.provenance(),
            _ => Vec::new(),
        }
    }

    pub fn as_qsl(&mut self) -> &mut dyn QuerySampleLibrary {
        match self {
            Library::Null(qsl) => qsl,
            Library::Dataset { library, .. } => library,
        }
    }
}

/// The module to preprocess with, whether it is timed, and its sandbox limits: --preprocess,
/// else the benchmark's.
fn preprocess_module(
    args: &RunArgs,
    benchmark: Option<&Benchmark>,
) -> Option<(PathBuf, bool, PreprocessLimits)> {
    let module = match &args.preprocess {
        Some(path) if path.as_os_str() == "none" => return None,
        Some(path) => Some((path.clone(), false, PreprocessLimits::default())),
        None => benchmark
            .and_then(|b| b.preprocess.as_ref())
            .map(|p| (p.module.clone(), p.timed, p.limits)),
    };
    module.map(|(path, timed, limits)| (path, timed || args.preprocess_timed, limits))
}

/// The default sandbox with a benchmark's limits applied.
fn sandbox(limits: PreprocessLimits) -> Sandbox {
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

fn performance_count(asked: Option<usize>, total: usize, what: &str) -> anyhow::Result<usize> {
    let performance = asked.unwrap_or(total);
    if performance == 0 || performance > total {
        bail!("--performance-samples {performance} must be between 1 and {what} ({total})");
    }
    Ok(performance)
}

fn open_source(path: &Path) -> anyhow::Result<Box<NpySource>> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("npy") => Ok(Box::new(
            NpySource::open(path).with_context(|| "--dataset".to_string())?,
        )),
        _ => bail!(
            "--dataset {}: unknown data set format (expected a .npy file)",
            path.display()
        ),
    }
}
