//! The engine's integration tests, one binary: the official wheel's goldens and example logs,
//! the early-stopping reference, behaviour, result.json against its schema.

mod abort;
mod config_mutations;
mod early_stopping_reference;
mod engine_behaviour;
mod extreme_settings;
mod golden_rng;
mod golden_scenarios;
mod issuer_idle;
mod log_files;
mod result_schema;
mod stalled_sut;
mod support;
