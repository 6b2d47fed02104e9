//! Backends loaded at run time through the plugin ABI (`plugin-api/include/mlperf_plugin.h`):
//! finding and loading the library, checking it before anything runs, and driving it as the
//! engine's system under test.

mod batching;
mod completer_slot;
mod data_format;
mod devices;
mod error;
mod host_api;
mod instance;
pub mod isolated;
mod loader;
pub mod power;
mod resolve;
mod run;
mod sample_memory;
mod spread;
mod sut;
mod timed;
mod window;

pub use batching::{HostBatching, REFUSE_THREAD_ENV};
pub use data_format::DataFormat;
pub use devices::{DeviceInfo, DeviceSelection, DeviceSelectionError, RunDevice};
pub use error::PluginError;
pub(crate) use host_api::{FailureReports, TokenReports};
pub use instance::{Destroyed, Instance, PluginBackend};
pub use loader::{Plugin, PluginInfo};
pub use resolve::{built_beside, list, resolve, search_dirs, Manifest};
pub use run::RunDescription;
pub use spread::{DeviceShare, DeviceSpread};
pub use sut::PluginSut;

/// Finds the plugin `spec` names (a path or a name), loads and checks it, and creates an
/// instance configured by `config` (TOML text) for the test `run` describes (None: for no
/// test).
pub fn open_sut(
    spec: &str,
    config: &str,
    run: Option<&RunDescription>,
) -> Result<PluginSut, PluginError> {
    let plugin = Plugin::open(&resolve(spec)?)?;
    tracing::info!(
        path = %plugin.info.path.display(),
        name = %plugin.info.name,
        abi = %plugin.info.abi,
        sha256 = %plugin.info.sha256,
        "plugin loaded"
    );
    PluginSut::create(&plugin, config, run)
}
