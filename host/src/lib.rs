//! mlperf-host: an MLPerf Inference benchmark host.
//!
//! [`loadgen`] is the model-agnostic LoadGen engine: scenarios, modes, settings, sample
//! selection and results, bit-exact with the official LoadGen 6.0.17. [`engine_bench`] measures
//! the engine's own overhead with null systems under test; [`logs`] names a run folder's files
//! and reads the detail log back. [`plugin`] loads backends through the
//! plugin ABI; [`samples`] reads data sets into the memory those backends read;
//! [`benchmark`] defines real benchmarks and scores their accuracy.

pub use mlperf_loadgen as loadgen;

pub mod benchmark;
pub mod campaign;
pub mod compliance;
pub mod conformance;
pub mod engine_bench;
pub mod logs;
pub mod official;
pub mod plugin;
pub mod power;
pub mod report;
pub mod samples;
pub mod session;
pub mod submission;
pub use mlperf_loadgen::suggest;
pub mod tune;

/// An error and its causes on one line, each after a colon.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
