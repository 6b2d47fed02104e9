//! Plugin flags that `run`, `plugins test` and `sysinfo` share.

use clap::ValueEnum;

/// `key=value` for `--plugin-set`.
pub(crate) fn parse_plugin_set(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| format!("expected key=value, got {text:?}"))
}

/// Where the plugin runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum IsolateArg {
    /// In the host's process (fastest; a crash of the plugin ends the host).
    #[default]
    None,
    /// In a child process: its crash, exit or hang ends the run INVALID with every log
    /// written.
    Process,
}
