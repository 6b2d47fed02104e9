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
///
/// `power_meter = Type` (a [`PowerMeter`](crate::sdk::PowerMeter)) also offers a power meter
/// from the same library: a second table, of kind power, behind `mlperf_power_plugin_entry`,
/// with the same name and version. A library that is only a meter uses
/// [`export_power_meter!`](crate::export_power_meter) instead. Use one of the two, once per
/// library.
#[macro_export]
macro_rules! export_plugin {
    (
        $plugin:ty,
        name = $name:expr,
        version = $version:expr
        $(, capabilities = $capabilities:expr)?
        $(, power_meter = $meter:ty)?
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

            $(
                static MLPERF_POWER_TABLE: $crate::ffi::mlperf_plugin_api =
                    $crate::sdk::__private::power_table::<$meter>(
                        $crate::sdk::__private::c_str(::core::concat!($name, "\0")),
                        $crate::sdk::__private::c_str(::core::concat!($version, "\0")),
                    );

                /// The entry of the power meter this library offers beside its SUT.
                #[unsafe(no_mangle)]
                pub extern "C" fn mlperf_power_plugin_entry(
                    host_abi_major: u32,
                    host_abi_minor: u32,
                ) -> *const $crate::ffi::mlperf_plugin_api {
                    $crate::sdk::__private::entry(&MLPERF_POWER_TABLE, host_abi_major, host_abi_minor)
                }
            )?
        };
    };
    (@capabilities) => {
        0
    };
    (@capabilities $capabilities:expr) => {
        $capabilities
    };
}

/// Exports a [`PowerMeter`](crate::sdk::PowerMeter) type as a library that is only a power
/// meter:
///
/// ```no_run
/// use std::time::Duration;
///
/// use mlperf_plugin_api::sdk::{Host, PluginError, PowerInfo, PowerMeter, PowerReading};
///
/// struct Board;
///
/// impl PowerMeter for Board {
///     fn create(_config: &str, _host: &Host) -> Result<Self, PluginError> {
///         Ok(Board)
///     }
///
///     fn info(&self) -> PowerInfo {
///         PowerInfo::component("board power", Duration::from_millis(100))
///     }
///
///     fn read(&mut self) -> Result<PowerReading, PluginError> {
///         Ok(PowerReading::watts(42.0))
///     }
/// }
///
/// mlperf_plugin_api::export_power_meter!(Board, name = "board", version = "1.0.0");
/// ```
///
/// It writes the table (kind power), `mlperf_plugin_entry` and `mlperf_plugin_layout`, as
/// [`export_plugin!`](crate::export_plugin) does for a SUT. Use it once per library, and not
/// together with `export_plugin!` (which takes `power_meter = Type` for a library with both).
#[macro_export]
macro_rules! export_power_meter {
    (
        $meter:ty,
        name = $name:expr,
        version = $version:expr
        $(,)?
    ) => {
        const _: () = {
            static MLPERF_PLUGIN_TABLE: $crate::ffi::mlperf_plugin_api =
                $crate::sdk::__private::power_table::<$meter>(
                    $crate::sdk::__private::c_str(::core::concat!($name, "\0")),
                    $crate::sdk::__private::c_str(::core::concat!($version, "\0")),
                );

            /// The plugin's ABI entry point: a power meter.
            #[unsafe(no_mangle)]
            pub extern "C" fn mlperf_plugin_entry(
                host_abi_major: u32,
                host_abi_minor: u32,
            ) -> *const $crate::ffi::mlperf_plugin_api {
                $crate::sdk::__private::entry(&MLPERF_PLUGIN_TABLE, host_abi_major, host_abi_minor)
            }

            /// The layout of the ABI as this plugin was compiled, for the host's check.
            #[unsafe(no_mangle)]
            pub extern "C" fn mlperf_plugin_layout() -> &'static $crate::sdk::__private::TypeLayout
            {
                $crate::layout::expected()
            }
        };
    };
}
