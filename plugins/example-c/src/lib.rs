//! The plain-C example SUT backend of mlperf-host.
//!
//! The plugin itself is `src/example_plugin.c`, which implements only
//! `plugin-api/include/mlperf_plugin.h`. This crate's build script compiles it into the shared
//! library `libmlperf_example_c.so` (also copied to `target/<profile>/`); [`PLUGIN_PATH`] is
//! where the build put it, for tests and for the host's `--plugin`. `README.md` walks a vendor
//! through building and shipping their own plugin from it.

/// Absolute path of the built `libmlperf_example_c.so`.
pub const PLUGIN_PATH: &str = env!("MLPERF_EXAMPLE_C_PLUGIN");
