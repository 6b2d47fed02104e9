//! Write a plugin in safe Rust: implement [`SutPlugin`] and call
//! [`export_plugin!`](crate::export_plugin). The macro writes the entry symbol, the static
//! function table and `extern "C"` shims that turn errors and panics into `mlperf_error`s, plus
//! the `mlperf_plugin_layout` descriptor the host checks at load. A power meter implements
//! [`PowerMeter`] and is exported by [`export_power_meter!`](crate::export_power_meter), or
//! beside a SUT by `export_plugin!(…, power_meter = Type)`.

mod device;
mod error;
mod export;
mod failure;
mod host;
mod plugin;
mod power;
mod power_shim;
mod run;
mod sample;
mod shim;
mod timing;

pub use device::{Device, DeviceKind};
pub use error::{config_error_text, PluginError};
pub use failure::FailureKind;
pub use host::{Completer, Host, Level, Logger, NamedResponse, Output, Response};
pub use plugin::SutPlugin;
pub use power::{PowerInfo, PowerMeter, PowerReading, PowerScope};
pub use run::{Input, RunDescription, Scenario, TestMode};
pub use sample::{DType, Sample};
pub use timing::SampleTiming;

/// What [`export_plugin!`](crate::export_plugin) expands to; not an API.
#[doc(hidden)]
pub mod __private {
    pub use super::power_shim::power_table;
    pub use super::shim::{c_str, entry, sut_table};
    pub use abi_stable::type_layout::TypeLayout;
}
