//! A fault-injection SUT plugin for mlperf-host's tests.
//!
//! The plugin itself is `src/faulty_plugin.c`: it completes every sample inline until the sample
//! its config names, and there crashes, exits, hangs, holds samples back, fails, answers with
//! garbage or leaks (README.md lists the keys). This crate's build script compiles it into
//! `libmlperf_faulty.so` (also copied to `target/<profile>/`, where the host's tests find it);
//! [`PLUGIN_PATH`] is where the build put it.

/// Absolute path of the built `libmlperf_faulty.so`.
pub const PLUGIN_PATH: &str = env!("MLPERF_FAULTY_PLUGIN");
