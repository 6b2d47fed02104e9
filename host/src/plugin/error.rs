//! Why a plugin could not be used.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("{path}: cannot load the plugin library: {message}")]
    Load { path: PathBuf, message: String },
    #[error(
        "{path}: not an mlperf-host plugin: the entry symbol `mlperf_plugin_entry` is missing"
    )]
    MissingEntry { path: PathBuf },
    #[error("{path}: the plugin refused ABI {major}.{minor} (it returned no function table)")]
    Refused {
        path: PathBuf,
        major: u32,
        minor: u32,
    },
    #[error("{path}: the plugin implements ABI major {found}, this host speaks {expected}")]
    WrongMajor {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    #[error("{path}: {table} is {found} bytes, smaller than the {minimum} of ABI 1.0")]
    TooSmall {
        path: PathBuf,
        table: &'static str,
        found: usize,
        minimum: usize,
    },
    #[error("{path}: the plugin does not provide the required function `{function}`")]
    MissingFunction {
        path: PathBuf,
        function: &'static str,
    },
    #[error("{path}: the plugin is a {kind} plugin, not a system-under-test backend")]
    WrongKind { path: PathBuf, kind: String },
    #[error("{path}: the plugin was built against an incompatible plugin-api (rebuild it against the host's plugin-api {}): {message}", mlperf_plugin_api::CRATE_VERSION)]
    Layout { path: PathBuf, message: String },
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
    #[error("plugin `{name}` not found; looked in: {searched}")]
    NotFound { name: String, searched: String },
    #[error("{path}: bad plugin manifest: {message}")]
    Manifest { path: PathBuf, message: String },
    #[error("plugin {plugin} failed in {function} (error {code}): {message}")]
    Call {
        plugin: String,
        function: &'static str,
        code: i32,
        message: String,
    },
    /// Starting the plugin in a process of its own failed (or the plugin did, there).
    #[error("{message}")]
    Isolated { message: String },
}
