//! Sandboxed WebAssembly sample preprocessing for mlperf-host.
//!
//! A preprocessing module is a WebAssembly core module with no imports that speaks the guest
//! ABI of this crate's README: the host copies a sample in, calls `mlperf_preprocess`, and reads
//! the output in place. [`PreprocessModule::load`] compiles and checks a module once per run;
//! each thread then keeps its own [`Worker`] (a long-lived instance) for every sample. Memory,
//! time and stack are capped by the [`Sandbox`].

mod cache;
mod error;
mod instance;
mod metadata;
mod module;
pub mod reference;
mod sandbox;
mod worker;

pub use error::{error_code_meaning, PreprocessError, SampleFailure};
pub use instance::ABI_VERSION;
pub use metadata::{Dim, ElementType, Metadata, ModuleIdentity, ShapeSpec, TensorSpec};
pub use module::PreprocessModule;
pub use sandbox::{default_cache_dir, Sandbox, TICK};
pub use worker::{Preprocessed, Shape, Worker, MAX_RANK};
