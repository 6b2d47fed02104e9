//! Benchmarks: definitions (model, data set, metric, backend configuration, settings) and the
//! accuracy evaluators that score a run's accuracy log.

pub mod accuracy;
mod definition;
mod extends;
pub mod postprocess;

pub(crate) use definition::config_search_paths;
pub use definition::{
    Accuracy, Benchmark, DatasetFormat, DefinitionError, OutputEncoding, PluginSection,
    PreprocessLimits, PreprocessSection,
};
