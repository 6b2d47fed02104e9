//! The plugin ABI of mlperf-host. `include/mlperf_plugin.h` is the contract; [`ffi`] mirrors
//! it type for type, [`layout`] describes and checks a Rust plugin's view of it, and [`sdk`]
//! lets a plugin be written in safe Rust.

pub mod ffi;
pub mod layout;
pub mod sdk;
pub mod testing;

/// This crate's version (it follows the ABI version of `mlperf_plugin.h`).
pub const CRATE_VERSION: &str = env!("CARGO_PKG_VERSION");
