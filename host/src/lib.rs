//! mlperf-host: an MLPerf Inference benchmark host.
//!
//! [`loadgen`] is the model-agnostic LoadGen engine: scenarios, modes, settings, sample
//! selection and results, bit-exact with the official LoadGen 6.0.17. [`engine_bench`] measures
//! the engine's own overhead with null systems under test. [`plugin`] loads backends through
//! the plugin ABI; [`samples`] reads data sets into the memory those backends read;
//! [`session`] runs them; [`power`] measures around a run. What reads a run afterwards
//! ([`logs`], [`benchmark`] definitions and accuracy, [`compliance`], [`submission`],
//! [`report`]) is the mlperf-submission crate, re-exported here.

pub use mlperf_loadgen as loadgen;

pub mod campaign;
pub mod conformance;
pub mod engine_bench;
pub mod official;
pub mod plugin;
pub mod power;
pub mod samples;
pub mod session;
pub mod sweep;
pub mod timing;
pub mod tune;

pub use mlperf_loadgen::suggest;
/// What reads a run after it ran, from its own crate: the submission tooling and the logs,
/// benchmark definitions and compliance tests it rests on.
pub use mlperf_submission as submission;
pub use mlperf_submission::{benchmark, compliance, error_chain, logs, report};
