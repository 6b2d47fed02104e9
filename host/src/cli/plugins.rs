//! `--plugin` for `run`, and `mlperf-host plugins list|inspect`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use mlperf_host::plugin::{self, Plugin, PluginSut};

/// Loads, checks and creates the plugin named by `spec` (a path or a name), configured by the
/// TOML of `config_file` with `sets` applied on top.
pub fn open_sut(
    spec: &str,
    config_file: Option<&Path>,
    sets: &[(String, String)],
) -> anyhow::Result<PluginSut> {
    let config = plugin_config(toml::Table::new(), config_file, sets)?;
    open_sut_with(spec, &config)
}

/// As [`open_sut`], with the configuration text ready.
pub fn open_sut_with(spec: &str, config: &str) -> anyhow::Result<PluginSut> {
    Ok(plugin::open_sut(spec, config)?)
}

/// `base` with the `--plugin-config` file's keys over it and each `--plugin-set key=value`
/// applied (dotted keys reach into tables; a value that is not TOML is taken as a string).
pub fn plugin_config(
    base: toml::Table,
    file: Option<&Path>,
    sets: &[(String, String)],
) -> anyhow::Result<String> {
    let mut table = base;
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the plugin config {}", path.display()))?;
        let from_file = text
            .parse::<toml::Table>()
            .with_context(|| format!("{}: invalid TOML", path.display()))?;
        table.extend(from_file);
    }
    for (key, value) in sets {
        let value = format!("value = {value}")
            .parse::<toml::Table>()
            .ok()
            .and_then(|mut t| t.remove("value"))
            .unwrap_or_else(|| toml::Value::String(value.clone()));
        let mut parts: Vec<&str> = key.split('.').collect();
        let last = parts
            .pop()
            .filter(|k| !k.is_empty())
            .with_context(|| format!("--plugin-set {key}=…: the key is empty"))?;
        let mut node = &mut table;
        for part in parts {
            node = node
                .entry(part)
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .with_context(|| format!("--plugin-set {key}: `{part}` is not a table"))?;
        }
        node.insert(last.to_string(), value);
    }
    Ok(toml::to_string(&table)?)
}

/// `key=value` for `--plugin-set`.
pub fn parse_plugin_set(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| format!("expected key=value, got {text:?}"))
}

#[derive(clap::Subcommand)]
pub enum PluginsCommand {
    /// The plugins found through MLPERF_HOST_PLUGIN_PATH and the standard directories.
    List,
    /// Load a plugin and show its ABI version, kind, capabilities, attributes and sha256.
    Inspect {
        /// A plugin library path or name.
        plugin: String,
        /// Configuration to create an instance with (to read its attributes).
        #[arg(long, value_name = "FILE.toml")]
        plugin_config: Option<PathBuf>,
    },
}

pub fn main(command: &PluginsCommand) -> ExitCode {
    super::init_logging(0, false);
    let result = match command {
        PluginsCommand::List => list(),
        PluginsCommand::Inspect {
            plugin,
            plugin_config,
        } => inspect(plugin, plugin_config.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => super::report_error(&error),
    }
}

fn list() -> anyhow::Result<()> {
    let dirs = plugin::search_dirs();
    println!(
        "searched: {}",
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for manifest in plugin::list() {
        match manifest {
            Ok(m) => println!(
                "{:<16} {:<6} abi {:<5} {}  {}",
                m.name,
                m.kind,
                m.abi,
                m.library_path().display(),
                m.description
            ),
            Err(error) => println!("(unreadable) {error}"),
        }
    }
    Ok(())
}

fn inspect(spec: &str, config: Option<&Path>) -> anyhow::Result<()> {
    let path = plugin::resolve(spec)?;
    let plugin = Plugin::open(&path)?;
    let info = &plugin.info;
    println!("path          : {}", info.path.display());
    println!("sha256        : {}", info.sha256);
    println!("name          : {}", info.name);
    println!("version       : {}", info.version);
    println!("kind          : {}", info.kind);
    println!("abi           : {}", info.abi);
    println!("capabilities  : {}", info.capabilities.join(", "));
    println!(
        "layout check  : {}",
        if info.layout_checked {
            "passed (built with the Rust SDK)"
        } else {
            "none (struct sizes and version checked)"
        }
    );
    if info.kind == "sut" {
        let config = plugin_config(toml::Table::new(), config, &[])?;
        let sut = PluginSut::create(&plugin, &config)?;
        for (key, value) in sut.attributes() {
            println!("attribute     : {key} = {value}");
        }
    }
    Ok(())
}
