//! `--plugin` for `run`, and `mlperf-host plugins list|inspect`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use mlperf_host::plugin::{self, Plugin, PluginBackend, PluginSut};

use super::plugin_flags::{parse_plugin_set, IsolateArg};

/// Loads, checks and creates the plugin named by `spec` (a path or a name), configured by the
/// TOML of `config_file` with `sets` applied on top.
pub(crate) fn open_sut(
    spec: &str,
    config_file: Option<&Path>,
    sets: &[(String, String)],
) -> anyhow::Result<PluginSut> {
    let config = plugin_config(toml::Table::new(), config_file, sets)?;
    open_sut_with(spec, &config)
}

/// As [`open_sut`], with the configuration text ready.
pub(crate) fn open_sut_with(spec: &str, config: &str) -> anyhow::Result<PluginSut> {
    // Made to read what the plugin says of itself: it serves no test.
    Ok(plugin::open_sut(spec, config, None)?)
}

/// `base` with the `--plugin-config` file's keys over it and each `--plugin-set key=value`
/// applied (dotted keys reach into tables; a value that is not TOML is taken as a string).
pub(crate) fn plugin_config(
    base: toml::Table,
    file: Option<&Path>,
    sets: &[(String, String)],
) -> anyhow::Result<String> {
    let mut table = base;
    if let Some(path) = file {
        let text = mlperf_submission::input_file::read_to_string(path)
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

#[derive(clap::Subcommand)]
pub(crate) enum PluginsCommand {
    /// The plugins found through MLPERF_HOST_PLUGIN_PATH and the standard directories, and
    /// those built beside this executable (each usable by name).
    List,
    /// Load a plugin and show its ABI version, kind, capabilities, attributes and sha256.
    Inspect {
        /// A plugin library path or name.
        plugin: String,
        /// Configuration to create an instance with (to read its attributes).
        #[arg(long, value_name = "FILE.toml")]
        plugin_config: Option<PathBuf>,
    },
    /// Conformance suite: load, create and destroy, then a short run of every scenario in
    /// performance and accuracy mode (and with tokens, for a token plugin), each judged by
    /// what the engine saw. One line per check and a verdict; exits 1 on a failed check.
    Test(TestArgs),
    /// Install what a C or C++ plugin is built against under PREFIX: the ABI header, a
    /// pkg-config file (`pkg-config --cflags mlperf-plugin`), a CMake package (target
    /// `mlperf::plugin`) and the C example with a Makefile.
    Sdk {
        /// Where to install (include/, lib/pkgconfig/, lib/cmake/, share/mlperf-host/).
        #[arg(long, value_name = "DIR")]
        prefix: PathBuf,
    },
}

#[derive(clap::Args)]
pub(crate) struct TestArgs {
    /// A plugin library path, plugin folder or name.
    plugin: String,
    /// The plugin's configuration (TOML).
    #[arg(long, value_name = "FILE.toml")]
    plugin_config: Option<PathBuf>,
    /// Set one plugin configuration key. Repeatable.
    #[arg(long = "plugin-set", value_name = "KEY=VALUE", value_parser = parse_plugin_set)]
    plugin_set: Vec<(String, String)>,
    /// Where the plugin runs: in a child process (the default here, so a crash or a hang
    /// fails its check and the suite goes on), or in this process.
    #[arg(long, value_enum, default_value = "process")]
    isolate: IsolateArg,
    /// A `.npy` data set for a plugin that reads sample data (default: index-only samples).
    #[arg(long, value_name = "FILE.npy")]
    dataset: Option<PathBuf>,
    /// Also check a token run (configure the plugin to report tokens, e.g. the null plugin
    /// with --plugin-set tokens=true).
    #[arg(long)]
    tokens: bool,
    /// How long a call into the plugin, a drain or a destroy may take.
    #[arg(long, default_value = "10s", value_parser = super::parse_positive_seconds)]
    timeout: std::time::Duration,
    /// Keep the runs' logs in DIR (default: a temporary folder, removed).
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
}

pub(crate) fn main(command: &PluginsCommand) -> ExitCode {
    super::init_logging(0, false);
    let result = match command {
        PluginsCommand::List => list(),
        PluginsCommand::Inspect {
            plugin,
            plugin_config,
        } => inspect(plugin, plugin_config.as_deref()),
        PluginsCommand::Test(args) => return conformance(args),
        PluginsCommand::Sdk { prefix } => sdk(prefix),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => super::report_error(&error),
    }
}

fn sdk(prefix: &Path) -> anyhow::Result<()> {
    for file in super::plugin_sdk::install(prefix)? {
        println!("installed {}", file.display());
    }
    let pkgconfig = prefix.join("lib").join("pkgconfig");
    // Exported on a line of its own: `VAR=… cc $(pkg-config …)` sets VAR for cc, not for the
    // `$(…)` the shell expands first.
    println!("build a plugin against it:");
    println!(
        "  export PKG_CONFIG_PATH={}",
        super::shell::quote(&pkgconfig.display().to_string())
    );
    println!(
        "  cc -shared -fPIC $(pkg-config --cflags {}) -o libmyplugin.so my_plugin.c",
        super::plugin_sdk::PACKAGE
    );
    Ok(())
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
    for (name, path) in plugin::built_beside() {
        println!(
            "{name:<16} built beside this executable: {}",
            path.display()
        );
    }
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
        let sut = PluginSut::create(&plugin, &config, None)?;
        for (key, value) in sut.attributes() {
            println!("attribute     : {key} = {value}");
        }
    }
    Ok(())
}

fn conformance(args: &TestArgs) -> ExitCode {
    match run_conformance(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => super::report_error(&error),
    }
}

/// Runs the suite, printing a line per check; whether every check passed.
fn run_conformance(args: &TestArgs) -> anyhow::Result<bool> {
    use mlperf_host::conformance::{Suite, Verdict};

    let config = plugin_config(
        toml::Table::new(),
        args.plugin_config.as_deref(),
        &args.plugin_set,
    )?;
    let isolation = match args.isolate {
        IsolateArg::None => None,
        IsolateArg::Process => Some(plugin::isolated::Isolation {
            executable: std::env::current_exe()
                .context("cannot find this executable to start the plugin process")?,
            stall_timeout: args.timeout,
            timed_preprocess: None,
        }),
    };
    // The runs' logs: kept where asked, else in a scratch folder removed at the end.
    let work_dir = match &args.keep {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("mlperf-plugins-test-{}", std::process::id())),
    };
    std::fs::create_dir_all(&work_dir)
        .with_context(|| format!("cannot create {}", work_dir.display()))?;
    let suite = Suite {
        spec: args.plugin.clone(),
        config,
        isolation,
        dataset: args.dataset.clone(),
        timeout: args.timeout,
        tokens: args.tokens,
        work_dir: work_dir.clone(),
    };
    println!("plugins test {}", args.plugin);
    let checks = suite.run(|check| match &check.verdict {
        Verdict::Pass => println!("  ok    {}", check.name),
        Verdict::Fail(why) => println!("  FAIL  {}: {why}", check.name),
        Verdict::Skip(why) => println!("  skip  {} ({why})", check.name),
    });
    let failed = checks
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Fail(_)))
        .count();
    let passed = checks.iter().filter(|c| c.verdict == Verdict::Pass).count();
    let verdict = if failed == 0 {
        "CONFORMS"
    } else {
        "DOES NOT CONFORM"
    };
    println!(
        "{verdict}: {passed} passed, {failed} failed, {} skipped",
        checks.len() - passed - failed
    );
    if args.keep.is_none() {
        let _ = std::fs::remove_dir_all(&work_dir);
    }
    Ok(failed == 0)
}
