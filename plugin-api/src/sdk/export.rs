//! [`export_plugin!`](crate::export_plugin).

/// Exports a [`SutPlugin`](crate::sdk::SutPlugin) type from a `cdylib`:
///
/// ```no_run
/// use mlperf_plugin_api::sdk::{Completer, Host, PluginError, Response, Sample, SutPlugin};
///
/// struct Echo;
///
/// impl SutPlugin for Echo {
///     fn create(_config: &str, _host: &Host) -> Result<Self, PluginError> {
///         Ok(Echo)
///     }
///
///     fn issue_query(&self, samples: &[Sample<'_>], done: &Completer) -> Result<(), PluginError> {
///         let answers: Vec<_> = samples.iter().map(|s| Response::new(s.id(), s.data())).collect();
///         done.complete(&answers);
///         Ok(())
///     }
/// }
///
/// mlperf_plugin_api::export_plugin!(
///     Echo,
///     name = "echo",
///     version = env!("CARGO_PKG_VERSION"),
///     capabilities = mlperf_plugin_api::ffi::CAP_CONCURRENT_ISSUE,
/// );
/// ```
///
/// It writes the static `mlperf_plugin_api` table, the entry symbol `mlperf_plugin_entry`
/// (NULL for a host of another ABI major) and `mlperf_plugin_layout`, the abi_stable layout
/// descriptor of this plugin's copy of the ABI that the host checks at load. `capabilities`
/// (`CAP_*` bits, default 0) are fixed per library, as the table is read before `create`.
/// Use it once per library.
#[macro_export]
macro_rules! export_plugin {
    (
        $plugin:ty,
        name = $name:expr,
        version = $version:expr
        $(, capabilities = $capabilities:expr)?
        $(,)?
    ) => {
        const _: () = {
            static MLPERF_PLUGIN_TABLE: $crate::ffi::mlperf_plugin_api =
                $crate::sdk::__private::sut_table::<$plugin>(
                    $crate::sdk::__private::c_str(::core::concat!($name, "\0")),
                    $crate::sdk::__private::c_str(::core::concat!($version, "\0")),
                    $crate::export_plugin!(@capabilities $($capabilities)?),
                );

            /// The plugin's one ABI entry point.
            #[unsafe(no_mangle)]
            pub extern "C" fn mlperf_plugin_entry(
                host_abi_major: u32,
                host_abi_minor: u32,
            ) -> *const $crate::ffi::mlperf_plugin_api {
                $crate::sdk::__private::entry(&MLPERF_PLUGIN_TABLE, host_abi_major, host_abi_minor)
            }

            /// The layout of the ABI as this plugin was compiled, for the host's check.
            #[unsafe(no_mangle)]
            pub extern "C" fn mlperf_plugin_layout(
            ) -> &'static $crate::sdk::__private::TypeLayout {
                $crate::layout::expected()
            }
        };
    };
    (@capabilities) => {
        0
    };
    (@capabilities $capabilities:expr) => {
        $capabilities
    };
}
