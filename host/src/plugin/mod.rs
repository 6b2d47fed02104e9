//! Backends loaded at run time through the plugin ABI (`plugin-api/include/mlperf_plugin.h`):
//! finding and loading the library, checking it before anything runs, and driving it as the
//! engine's system under test.

mod error;
mod host_api;
mod loader;
pub mod power;
mod resolve;
mod sut;
mod timed;

pub use error::PluginError;
pub use loader::{Plugin, PluginInfo};
pub use resolve::{list, resolve, search_dirs, Manifest};
pub use sut::PluginSut;
