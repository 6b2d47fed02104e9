//! Write a plugin in safe Rust: implement [`SutPlugin`] and call
//! [`export_plugin!`](crate::export_plugin). The macro writes the entry symbol, the static
//! function table and `extern "C"` shims that turn errors and panics into `mlperf_error`s, plus
//! the `mlperf_plugin_layout` descriptor the host checks at load.

mod error;
mod export;
mod host;
mod plugin;
mod sample;
mod shim;

pub use error::PluginError;
pub use host::{Completer, Host, Level, Logger, Response};
pub use plugin::SutPlugin;
pub use sample::{DType, Sample};

/// What [`export_plugin!`](crate::export_plugin) expands to; not an API.
#[doc(hidden)]
pub mod __private {
    pub use super::shim::{c_str, entry, sut_table};
    pub use abi_stable::type_layout::TypeLayout;
}
