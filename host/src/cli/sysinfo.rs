//! `mlperf-host sysinfo`: drafts `systems/<system>.json` from this machine, the names given
//! and the backend's software stack, then lists the fields left for the submitter to fill in.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use mlperf_host::loadgen::TestScenario;
use mlperf_host::plugin::{PluginBackend, PluginSut};
use mlperf_host::submission::system::nameplate;
use mlperf_host::submission::system::{
    draft_system, fields_to_fill_in, to_pretty_json, verify_system, Backend, DraftRequest,
    MachineFacts, SoftwareStack, FILL_IN,
};

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Values the draft cannot know start with \"FILL IN: \" followed by what to \
write; `mlperf-host check` reports each one left."
)]
pub(crate) struct Args {
    /// The system description's name: the file is systems/<NAME>.json.
    #[arg(long, value_name = "NAME", required_unless_present = "verify")]
    pub system: Option<String>,
    /// The `system_name` field, the vendor's name for the system.
    /// [default: the firmware's vendor and product name, else to fill in]
    #[arg(long, value_name = "TEXT")]
    pub system_name: Option<String>,
    /// The submitting organisation, as in the submission tree.
    #[arg(long, value_name = "NAME", required_unless_present = "verify")]
    pub submitter: Option<String>,
    /// The submission's division.
    #[arg(long, default_value = "closed", value_parser = ["closed", "open", "network"])]
    pub division: String,
    /// The category the results are submitted in. [default: to fill in]
    #[arg(long, value_name = "TYPE", value_parser = ["datacenter", "edge", "datacenter,edge", "edge,datacenter"])]
    pub system_type: Option<String>,
    /// Whether the system can be bought now, soon, or is research, development or internal.
    /// [default: to fill in]
    #[arg(long, value_parser = ["available", "preview", "rdi"])]
    pub status: Option<String>,
    /// Add the fields of a submission with power results.
    #[arg(long)]
    pub power: bool,
    /// Add the fields of a system under test reached over the network (implied by
    /// --division network).
    #[arg(long)]
    pub network: bool,
    /// A benchmark (a name in configs/benchmarks/, or a .toml path): its plugin, configured as
    /// the benchmark says, names the framework.
    #[arg(long, value_name = "NAME|FILE")]
    pub benchmark: Option<String>,
    /// The backend plugin (a library path, or a name): its name, version and attributes name
    /// the framework and the software stack.
    #[arg(long, value_name = "PATH|NAME")]
    pub plugin: Option<String>,
    /// The plugin's configuration (TOML), over the benchmark's.
    #[arg(long, value_name = "FILE")]
    pub plugin_config: Option<PathBuf>,
    /// Set one plugin configuration key (dotted keys reach into tables). Repeatable.
    #[arg(long = "plugin-set", value_name = "KEY=VALUE", value_parser = super::plugin_flags::parse_plugin_set)]
    pub plugin_set: Vec<(String, String)>,
    /// Where to write the description. [default: systems/<NAME>.json]
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Replace an existing file.
    #[arg(long)]
    pub force: bool,
    /// Instead of drafting, compare a description with this machine, field by field (what
    /// the machine states: processors, memory, accelerators, software with --plugin or
    /// --benchmark). Exit status 3 when a field differs or is missing.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["system", "submitter", "out", "force"])]
    pub verify: Option<PathBuf>,
}

pub(crate) fn main(args: &Args) -> ExitCode {
    super::init_logging(0, false);
    match &args.verify {
        Some(file) => match verify(args, file) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(super::EXIT_INVALID),
            Err(error) => super::report_error(&error),
        },
        None => super::exit_with(sysinfo(args)),
    }
}

/// `--verify FILE`: true when every field the machine states matches the description.
fn verify(args: &Args, file: &Path) -> anyhow::Result<bool> {
    let text = mlperf_submission::input_file::read_to_string(file)
        .with_context(|| format!("cannot read {}", file.display()))?;
    let described: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", file.display()))?;
    let Some(described) = described.as_object() else {
        bail!("{}: not a JSON object", file.display());
    };
    let field = |key: &str| {
        described
            .get(key)
            .and_then(|v| v.as_str())
            .map(String::from)
    };
    let backend = open_backend(args)?;
    let machine = this_machine();
    for problem in &machine.problems {
        eprintln!("warning: {problem}");
    }
    let is_network = described
        .get("is_network")
        .is_some_and(|v| v == true || v.as_str().is_some_and(|s| s.eq_ignore_ascii_case("true")));
    let request = DraftRequest {
        system_name: field("system_name"),
        submitter: field("submitter").unwrap_or_default(),
        // Only the machine's facts are verified: a division the file misspells drafts as closed.
        division: field("division")
            .and_then(|d| d.parse().ok())
            .unwrap_or_default(),
        system_type: field("system_type"),
        status: field("status"),
        power: mlperf_host::submission::system::fields::POWER_FIELDS
            .iter()
            .any(|k| described.contains_key(*k)),
        network: is_network,
    };
    let draft = draft_system(&request, &machine, &SoftwareStack::with_backend(backend));
    let checks = verify_system(described, &draft);
    let width = checks.iter().map(|c| c.field.len()).max().unwrap_or(0);
    for check in &checks {
        let (verdict, detail) = match &check.described {
            _ if check.matches() => ("ok  ", check.measured.clone()),
            Some(described) => (
                "DIFF",
                format!("described {described:?}, this machine {:?}", check.measured),
            ),
            None => (
                "MISS",
                format!("not in the description; this machine {:?}", check.measured),
            ),
        };
        println!("{verdict} {:<width$}  {detail}", check.field);
    }
    let failed = checks.iter().filter(|c| !c.matches()).count();
    println!(
        "{}: {} field{} compared, {failed} differ{}",
        file.display(),
        checks.len(),
        if checks.len() == 1 { "" } else { "s" },
        if failed == 1 { "s" } else { "" }
    );
    Ok(failed == 0)
}

fn sysinfo(args: &Args) -> anyhow::Result<()> {
    let (system, submitter) = check_names(args)?;
    let network = args.network || args.division == "network";
    if network && args.division == "closed" {
        bail!("--network: the closed division runs the system under test locally (use --division network or open)");
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("systems").join(format!("{system}.json")));
    // Refused before a plugin is loaded or anything is read.
    if out.exists() && !args.force {
        bail!("{} exists: pass --force to replace it", out.display());
    }
    let yaml = nameplate::yaml_path(&out);
    if args.power && yaml.exists() && !args.force {
        bail!("{} exists: pass --force to replace it", yaml.display());
    }
    let backend = open_backend(args)?;
    let machine = this_machine();
    for problem in &machine.problems {
        eprintln!("warning: {problem}");
    }
    let request = DraftRequest {
        system_name: args.system_name.clone(),
        submitter,
        division: args.division.parse()?,
        system_type: args.system_type.clone(),
        status: args.status.clone(),
        power: args.power,
        network,
    };
    let fields = draft_system(&request, &machine, &SoftwareStack::with_backend(backend));
    write_out(&out, &to_pretty_json(&fields), args.force)?;
    if args.power {
        // The nameplate power, as the rules' YAML; system_power_capacity may replace it.
        let yaml = nameplate::yaml_path(&out);
        write_out(&yaml, &nameplate::draft_yaml(&system), args.force)?;
        println!(
            "wrote {} (the nameplate power: fill it in, or give system_power_capacity and delete it)",
            yaml.display()
        );
    }

    let unfilled = fields_to_fill_in(&fields);
    println!("wrote {} ({} fields)", out.display(), fields.len());
    if unfilled.is_empty() {
        println!("nothing left to fill in");
    } else {
        println!(
            "{} fields to fill in (their values start with {:?}):",
            unfilled.len(),
            FILL_IN
        );
        let width = unfilled.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        for (field, what) in &unfilled {
            println!("  {field:<width$}  {what}");
        }
    }
    Ok(())
}

/// The system's name becomes a file name; the submitter must be there to match the tree.
fn check_names(args: &Args) -> anyhow::Result<(String, String)> {
    let (Some(name), Some(submitter)) = (args.system.clone(), args.submitter.clone()) else {
        bail!("--system and --submitter name the description to draft");
    };
    if name.trim().is_empty() || name == "." || name == ".." || name.contains(['/', '\\']) {
        bail!("--system {name:?}: a file name (systems/<NAME>.json), without slashes");
    }
    if submitter.trim().is_empty() {
        bail!("--submitter is empty: the organisation, as in the submission tree");
    }
    Ok((name, submitter))
}

/// The backend `--plugin` names, else the benchmark's plugin configured as the benchmark says
/// (for SingleStream, as `run` does by default: the framework is the same in every scenario).
fn open_backend(args: &Args) -> anyhow::Result<Option<Backend>> {
    let benchmark = args
        .benchmark
        .as_deref()
        .map(super::benchmark::open)
        .transpose()?;
    let benchmark_plugin = benchmark.as_ref().filter(|b| {
        args.plugin
            .as_deref()
            .is_none_or(|spec| spec == b.plugin.name)
    });
    let sut = if let Some(benchmark) = benchmark_plugin {
        let config = super::plugins::plugin_config(
            benchmark.plugin_config(TestScenario::SingleStream),
            args.plugin_config.as_deref(),
            &args.plugin_set,
        )?;
        super::plugins::open_sut_with(&benchmark.plugin.name, &config)
            .with_context(|| format!("benchmark {}: cannot start its plugin", benchmark.name))?
    } else if let Some(spec) = &args.plugin {
        super::plugins::open_sut(spec, args.plugin_config.as_deref(), &args.plugin_set)
            .with_context(|| format!("cannot start the plugin {spec}"))?
    } else {
        if args.plugin_config.is_some() || !args.plugin_set.is_empty() {
            bail!("--plugin-config and --plugin-set configure a plugin: name it with --plugin or --benchmark");
        }
        return Ok(None);
    };
    Ok(Some(backend_of(&sut)))
}

/// This machine, its NVIDIA GPUs described by NVML when it has a driver.
fn this_machine() -> MachineFacts {
    let nvml = mlperf_power::describe_gpus(None).map_err(|e| e.to_string());
    MachineFacts::read_with_nvml(Path::new("/"), nvml)
}

/// The backend of a created plugin instance, as it describes itself.
fn backend_of(sut: &PluginSut) -> Backend {
    let provenance = sut.provenance();
    let field = |key: &str| {
        provenance
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    Backend {
        name: field("plugin_name"),
        version: field("plugin_version"),
        attributes: sut.attributes().to_vec(),
    }
}

/// Writes `text` to `path` (its directory created), never over an existing file unless
/// `force`: the check above may race another writer.
fn write_out(path: &Path, text: &str, force: bool) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the directory {}", dir.display()))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let mut file = options.open(path).map_err(|error| match error.kind() {
        std::io::ErrorKind::AlreadyExists => {
            anyhow::anyhow!("{} exists: pass --force to replace it", path.display())
        }
        _ => anyhow::Error::new(error).context(format!("cannot write {}", path.display())),
    })?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}
