//! The plugin ABI of mlperf-host. `include/mlperf_plugin.h` is the contract; [`ffi`] mirrors
//! it type for type.

pub mod ffi;
