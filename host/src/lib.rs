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
pub mod compliance;
pub mod engine_bench;
pub mod logs;
pub mod official;
pub mod plugin;
pub mod power;
pub mod samples;
pub mod session;
pub mod submission;
