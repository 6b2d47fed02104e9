//! Why a plugin could not be used.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("{path}: cannot load the plugin library")]
    Load {
        path: PathBuf,
        source: libloading::Error,
    },
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
    #[error("{path}: cannot read")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A FIFO or a device would block or never end; a directory is not a library.
    #[error("{path}: not a regular file{why}")]
    NotAFile { path: PathBuf, why: &'static str },
    #[error("plugin `{name}` not found; looked in: {searched}")]
    NotFound { name: String, searched: String },
    #[error("{path}: bad plugin manifest")]
    Manifest {
        path: PathBuf,
        source: Box<toml::de::Error>,
    },
    #[error("plugin {plugin} failed in {function} (error {code}): {message}")]
    Call {
        plugin: String,
        function: &'static str,
        code: i32,
        message: String,
    },
    #[error("plugin {plugin} {function} of {samples} samples failed (error {code}): {message}")]
    SampleSet {
        plugin: String,
        function: &'static str,
        samples: usize,
        code: i32,
        message: String,
    },
    /// The instance of one device of several failed to open.
    #[error("device {device}")]
    Device {
        device: String,
        source: Box<PluginError>,
    },
    /// Starting the plugin in a process of its own failed (or the plugin did, there).
    #[error("{message}")]
    Isolated { message: String },
}
