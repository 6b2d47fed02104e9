//! Every run a submission needs, in order, from the round's rules: per benchmark the tuning
//! (when asked), then per scenario the accuracy run, the performance run and the compliance
//! tests the model requires. Each run is the command line of `run`, `audit` or `tune` it is,
//! so that what the campaign runs is what a submitter could type, and its inputs can be
//! hashed.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::file::{BenchmarkEntry, CampaignFile, PowerChoice};
use super::CampaignError;
use crate::benchmark::Benchmark;
use crate::compliance::{find_audit_config, ComplianceTest};
use crate::submission::round::Round;
use crate::submission::rules::Rules;
use crate::submission::system::{check_system, SystemExpectations};
use crate::submission::{Division, Scenario};

/// Settings that shorten a run below the round's rules: a campaign takes them only for a test
/// submission (`--allow-short`).
const RUN_LENGTH_KEYS: [&str; 5] = [
    "min_duration_ms",
    "max_duration_ms",
    "min_query_count",
    "max_query_count",
    "performance_sample_count_override",
];

/// The round fixes these.
const SEED_KEYS: [&str; 3] = ["qsl_rng_seed", "sample_index_rng_seed", "schedule_rng_seed"];

/// What a planned run is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunKind {
    /// Trial runs that write the benchmark's user.conf.
    Tune,
    Accuracy,
    Performance,
    Compliance(String),
}

impl RunKind {
    pub fn name(&self) -> &str {
        match self {
            RunKind::Tune => "tune",
            RunKind::Accuracy => "accuracy",
            RunKind::Performance => "performance",
            RunKind::Compliance(test) => test,
        }
    }
}

/// One run of the plan.
#[derive(Debug, Clone)]
pub struct Entry {
    /// `fmnist/SingleStream/accuracy`: unique, and the run's folder under `runs/`.
    pub id: String,
    pub benchmark: String,
    pub scenario: Scenario,
    pub kind: RunKind,
    /// The run's folder (created by the run; moved aside when the run is redone).
    pub folder: PathBuf,
    /// `mlperf-host`'s arguments for the run (`run …`, `audit …`, `tune …`).
    pub command: Vec<String>,
    /// Power-dev: the client command that runs `command` (twice: ranging, testing).
    pub power_dev_client: Option<String>,
    /// Runs whose results this one reads.
    pub depends: Vec<String>,
    /// Files whose contents are this run's inputs (the data set, model, plugin, configs).
    pub inputs: Vec<PathBuf>,
    /// A file an earlier run of the plan writes and this one reads (the tuned user.conf).
    pub produced_input: Option<PathBuf>,
}

impl Entry {
    /// The folder `submit` files: the power client's session for a power-dev run.
    pub fn loadgen_dir(&self) -> PathBuf {
        match self.power_dev_client {
            Some(_) => self.folder.join("loadgen"),
            None => self.folder.clone(),
        }
    }
}

/// One benchmark as planned.
#[derive(Debug, Clone)]
pub struct PlannedBenchmark {
    pub name: String,
    pub definition: Benchmark,
    pub rules: Rules,
    pub scenarios: Vec<Scenario>,
    /// The user.conf the runs read: the tuned one, the given one, or none.
    pub user_conf: Option<PathBuf>,
}

/// How a plan may bend the rules (test submissions only).
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanOptions {
    /// Run-length settings (`min_duration_ms`, …) may be set.
    pub allow_short: bool,
    /// The native engine may make closed-division results.
    pub allow_native: bool,
}

/// The whole campaign, planned.
#[derive(Debug, Clone)]
pub struct Plan {
    pub file: CampaignFile,
    pub round: Round,
    pub system_type: String,
    pub division: Division,
    pub engine: String,
    pub benchmarks: Vec<PlannedBenchmark>,
    pub entries: Vec<Entry>,
}

impl Plan {
    /// Plans `file`; every problem found is refused at once, each naming its benchmark and key.
    pub fn new(file: CampaignFile, options: PlanOptions) -> Result<Plan, CampaignError> {
        let mut problems = Vec::new();
        let round = Round::find(file.round.as_deref()).map_err(|e| CampaignError::Plan {
            path: file.path.clone(),
            problems: vec![format!("round: {e}")],
        })?;
        let system = read_system(&file.system).map_err(|message| CampaignError::Plan {
            path: file.path.clone(),
            problems: vec![format!("system {}: {message}", file.system.display())],
        })?;
        let text = |key: &str| system.get(key).and_then(Value::as_str).unwrap_or("");
        let division = match file.division.as_deref().unwrap_or(text("division")).parse() {
            Ok(division) => division,
            Err(error) => {
                let from = match file.division {
                    Some(_) => "division".to_string(),
                    None => format!("system {}: division", file.system.display()),
                };
                problems.push(format!("{from}: {error}"));
                Division::Closed
            }
        };
        let system_type = text("system_type").to_string();
        let expectations = SystemExpectations {
            division,
            submitter: text("submitter").to_string(),
            power: file.power != PowerChoice::None,
            network: division == Division::Network,
            skip_meaningful_fields_emptiness_check: false,
        };
        for finding in check_system(&system, &file.system, &expectations).errors() {
            problems.push(format!(
                "system {}: {}",
                file.system.display(),
                finding.message
            ));
        }
        let engine = match file.engine.as_deref() {
            Some(engine @ ("official" | "native")) => engine.to_string(),
            Some(other) => {
                problems.push(format!("engine {other:?}: official or native"));
                "official".to_string()
            }
            None if division.is_open() => "native".to_string(),
            None => "official".to_string(),
        };
        if engine == "native" && !division.is_open() && !options.allow_native {
            problems.push(format!(
                "engine native: {division} results must come from the official LoadGen (engine = \"official\")"
            ));
        }
        let mut benchmarks = Vec::new();
        let mut entries = Vec::new();
        for entry in &file.benchmarks {
            let mut bench_problems = Vec::new();
            let planned = plan_benchmark(
                entry,
                &round,
                &system_type,
                division,
                options,
                &mut bench_problems,
            );
            problems.extend(
                bench_problems
                    .into_iter()
                    .map(|p| format!("benchmark {}: {p}", entry.name)),
            );
            if let Some(mut planned) = planned {
                let context = Context {
                    file: &file,
                    round_arg: file.round.as_deref(),
                    engine: &engine,
                    division,
                };
                entries.extend(context.entries(entry, &mut planned));
                benchmarks.push(planned);
            }
        }
        if !problems.is_empty() {
            return Err(CampaignError::Plan {
                path: file.path.clone(),
                problems,
            });
        }
        Ok(Plan {
            file,
            round,
            system_type,
            division,
            engine,
            benchmarks,
            entries,
        })
    }

    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id == id)
    }

    pub fn runs_dir(&self) -> PathBuf {
        self.file.dir.join("runs")
    }

    pub fn submission_dir(&self) -> PathBuf {
        self.file.dir.join("submission")
    }
}

fn read_system(path: &Path) -> Result<Value, String> {
    let text = mlperf_submission::input_file::read_to_string(path).map_err(|e| {
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        match (e.kind(), name) {
            (std::io::ErrorKind::NotFound, Some(name)) => format!(
                "{e}: `mlperf-host sysinfo --system {name} --submitter ORG` drafts it (in \
                 systems/ of the working directory; move it here or point `system` at it), \
                 then fill in its \"FILL IN\" values"
            ),
            _ => e.to_string(),
        }
    })?;
    serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))
}

/// The benchmark's definition, rules and scenarios; problems are pushed.
fn plan_benchmark(
    entry: &BenchmarkEntry,
    round: &Round,
    system_type: &str,
    division: Division,
    options: PlanOptions,
    problems: &mut Vec<String>,
) -> Option<PlannedBenchmark> {
    let definition = match Benchmark::find(&entry.benchmark) {
        Ok(definition) => definition,
        Err(error) => {
            problems.push(format!("benchmark = {:?}: {error}", entry.benchmark));
            return None;
        }
    };
    for missing in definition.missing_files() {
        let prepare = definition
            .prepare
            .as_deref()
            .map(|p| format!(" (make it with `{p}`)"))
            .unwrap_or_default();
        problems.push(format!(
            "{} names {}, which does not exist{prepare}",
            definition.file.display(),
            missing.display()
        ));
    }
    let rules = match round.model(&definition.name) {
        Some(rules) => rules.clone(),
        None => match Rules::from_definition(&definition, round) {
            Ok(rules) => rules,
            Err(crate::submission::rules::RulesError::Invalid { message, .. }) => {
                problems.push(message);
                return None;
            }
            Err(error) => {
                problems.push(error.to_string());
                return None;
            }
        },
    };
    let Some(set) = rules.scenario_set(system_type) else {
        problems.push(format!(
            "model {} is not part of round {} for a {system_type:?} system",
            rules.benchmark, round.name
        ));
        return None;
    };
    let mut scenarios = match &entry.scenarios {
        Some(names) => parse_scenarios(names, "scenarios", problems),
        None => set.required.clone(),
    };
    for extra in parse_scenarios(&entry.optional, "optional", problems) {
        if !scenarios.contains(&extra) {
            scenarios.push(extra);
        }
    }
    for scenario in &scenarios {
        if !set.required.contains(scenario) && !set.optional.contains(scenario) {
            problems.push(format!(
                "scenarios: model {} has no {scenario} scenario for a {system_type} system (required: {}; optional: {})",
                rules.benchmark,
                list(&set.required),
                list(&set.optional)
            ));
        }
    }
    for required in &set.required {
        if !scenarios.contains(required) {
            problems.push(format!(
                "scenarios: {required} is required of a {system_type} system for model {} (`check` refuses the tree without it)",
                rules.benchmark
            ));
        }
    }
    for (key, _) in &entry.set {
        if SEED_KEYS.contains(&key.as_str()) {
            problems.push(format!("set.{key}: the round fixes the seeds"));
        } else if RUN_LENGTH_KEYS.contains(&key.as_str()) && !options.allow_short {
            problems.push(format!(
                "set.{key}: shortens the runs below the round's rules (a test campaign only: `--allow-short`)"
            ));
        }
    }
    if !division.is_open() {
        for test in &rules.compliance {
            match test.parse::<ComplianceTest>() {
                Ok(parsed) => {
                    if let Err(error) = find_audit_config(parsed, &definition.name) {
                        problems.push(format!("{test}: {error}"));
                    }
                }
                Err(error) => problems.push(format!("{test}: {error}")),
            }
        }
    }
    if let Some(path) = entry.plugin_config.as_ref().filter(|p| !p.is_file()) {
        problems.push(format!("plugin_config {}: no such file", path.display()));
    }
    if let Some(path) = entry.user_conf.as_ref().filter(|p| !p.is_file()) {
        problems.push(format!("user_conf {}: no such file", path.display()));
    }
    let plugin = entry
        .plugin
        .clone()
        .unwrap_or_else(|| definition.plugin.name.clone());
    match crate::plugin::resolve(&plugin) {
        Ok(path) if path.is_file() => {}
        Ok(path) => problems.push(format!(
            "plugin {plugin:?}: {} does not exist",
            path.display()
        )),
        Err(error) => problems.push(format!("plugin {plugin:?}: {error}")),
    }
    Some(PlannedBenchmark {
        name: entry.name.clone(),
        definition,
        rules,
        scenarios,
        user_conf: entry.user_conf.clone(),
    })
}

/// The scenarios `names` names; each name that is none is a problem under `key`.
fn parse_scenarios(names: &[String], key: &str, problems: &mut Vec<String>) -> Vec<Scenario> {
    let mut scenarios = Vec::new();
    for name in names {
        match name.parse() {
            Ok(scenario) => scenarios.push(scenario),
            Err(error) => problems.push(format!("{key}: {error}")),
        }
    }
    scenarios
}

fn list(items: &[Scenario]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What every entry's command shares.
struct Context<'a> {
    file: &'a CampaignFile,
    round_arg: Option<&'a str>,
    engine: &'a str,
    division: Division,
}

impl Context<'_> {
    fn entries(&self, entry: &BenchmarkEntry, planned: &mut PlannedBenchmark) -> Vec<Entry> {
        let runs = self.file.dir.join("runs").join(&entry.name);
        let mut entries = Vec::new();
        let mut inputs = benchmark_inputs(&planned.definition);
        inputs.extend(entry.plugin_config.iter().cloned());
        let plugin = entry
            .plugin
            .clone()
            .unwrap_or_else(|| planned.definition.plugin.name.clone());
        if let Ok(path) = crate::plugin::resolve(&plugin) {
            inputs.push(path);
        }
        // Tuning: one scenario after another, each starting from the user.conf before it.
        let mut user_conf = entry.user_conf.clone();
        let mut produced = None;
        let mut tunes = Vec::new();
        if entry.tune {
            let tune_dir = self.file.dir.join("tune").join(&entry.name);
            for scenario in &planned.scenarios {
                let folder = tune_dir.join(scenario.as_str());
                let write = folder.join("user.conf");
                let mut command = vec!["tune".to_string()];
                command.extend(self.common(entry, *scenario, user_conf.as_deref()));
                command.extend(["--write".into(), path_arg(&write)]);
                command.extend(["--out".into(), path_arg(&folder)]);
                let id = format!("{}/{scenario}/tune", entry.name);
                entries.push(Entry {
                    id: id.clone(),
                    benchmark: entry.name.clone(),
                    scenario: *scenario,
                    kind: RunKind::Tune,
                    folder,
                    command,
                    power_dev_client: None,
                    depends: tunes.clone(),
                    inputs: with(
                        &inputs,
                        entry.user_conf.as_ref().filter(|_| produced.is_none()),
                    ),
                    produced_input: produced.clone(),
                });
                tunes.push(id);
                user_conf = Some(write.clone());
                produced = Some(write);
            }
        }
        planned.user_conf = user_conf.clone();
        let run_inputs = with(
            &inputs,
            entry.user_conf.as_ref().filter(|_| produced.is_none()),
        );
        for scenario in &planned.scenarios {
            let dir = runs.join(scenario.as_str());
            let id = |kind: &str| format!("{}/{scenario}/{kind}", entry.name);
            let mut run = |kind: RunKind,
                           command: Vec<String>,
                           folder: PathBuf,
                           depends: Vec<String>,
                           client: Option<String>,
                           extra_input: Option<PathBuf>| {
                let mut all = tunes.clone();
                all.extend(depends);
                let mut inputs = run_inputs.clone();
                inputs.extend(extra_input);
                entries.push(Entry {
                    id: id(kind.name()),
                    benchmark: entry.name.clone(),
                    scenario: *scenario,
                    kind,
                    folder,
                    command,
                    power_dev_client: client,
                    depends: all,
                    inputs,
                    produced_input: produced.clone(),
                });
            };
            let common = self.common(entry, *scenario, user_conf.as_deref());

            let accuracy_dir = dir.join("accuracy");
            let mut command = vec!["run".to_string()];
            command.extend(common.clone());
            command.extend(["--mode".into(), "AccuracyOnly".into()]);
            command.extend(["--out".into(), path_arg(&accuracy_dir)]);
            run(
                RunKind::Accuracy,
                command,
                accuracy_dir.clone(),
                vec![],
                None,
                None,
            );

            let performance_dir = dir.join("performance");
            let client = match &self.file.power {
                PowerChoice::PowerDev { client } => Some(client.clone()),
                _ => None,
            };
            let loadgen_dir = match client {
                Some(_) => performance_dir.join("loadgen"),
                None => performance_dir.clone(),
            };
            let mut command = vec!["run".to_string()];
            command.extend(common.clone());
            command.extend(["--mode".into(), "PerformanceOnly".into()]);
            if let PowerChoice::Meters(meters) = &self.file.power {
                for meter in meters {
                    command.extend(["--power".into(), meter.clone()]);
                }
            }
            command.extend(["--out".into(), path_arg(&loadgen_dir)]);
            run(
                RunKind::Performance,
                command,
                performance_dir.clone(),
                vec![],
                client,
                None,
            );

            if self.division.is_open() {
                continue;
            }
            for test in &planned.rules.compliance {
                let folder = dir.join(test);
                let mut command = vec!["audit".to_string(), "--test".into(), test.clone()];
                let mut depends = Vec::new();
                if matches!(test.as_str(), "TEST01" | "TEST08") {
                    command.extend(["--accuracy-run".into(), path_arg(&accuracy_dir)]);
                    depends.push(id("accuracy"));
                }
                if matches!(test.as_str(), "TEST01" | "TEST04") {
                    command.extend(["--performance-run".into(), path_arg(&loadgen_dir)]);
                    depends.push(id("performance"));
                }
                command.extend(common.clone());
                command.extend(["--out".into(), path_arg(&folder)]);
                let audit_config = test
                    .parse::<ComplianceTest>()
                    .ok()
                    .and_then(|t| find_audit_config(t, &planned.definition.name).ok());
                run(
                    RunKind::Compliance(test.clone()),
                    command,
                    folder,
                    depends,
                    None,
                    audit_config,
                );
            }
        }
        entries
    }

    /// The flags every run of this benchmark and scenario shares.
    fn common(
        &self,
        entry: &BenchmarkEntry,
        scenario: Scenario,
        user_conf: Option<&Path>,
    ) -> Vec<String> {
        let mut args = vec![
            "--engine".to_string(),
            self.engine.to_string(),
            "--benchmark".into(),
            entry.benchmark.clone(),
            "--scenario".into(),
            scenario.to_string(),
            "--quiet".into(),
        ];
        if let Some(round) = self.round_arg {
            args.extend(["--round".into(), round.to_string()]);
        }
        if let Some(plugin) = &entry.plugin {
            args.extend(["--plugin".into(), plugin.clone()]);
        }
        if entry.isolate {
            args.extend(["--isolate".into(), "process".into()]);
        }
        if let Some(config) = &entry.plugin_config {
            args.extend(["--plugin-config".into(), path_arg(config)]);
        }
        for (key, value) in &entry.plugin_set {
            args.extend(["--plugin-set".into(), format!("{key}={value}")]);
        }
        if let Some(user_conf) = user_conf {
            args.extend(["--user-conf".into(), path_arg(user_conf)]);
        }
        for (key, value) in &entry.set {
            args.extend(["--set".into(), format!("{key}={value}")]);
        }
        args
    }
}

fn with(inputs: &[PathBuf], extra: Option<&PathBuf>) -> Vec<PathBuf> {
    let mut all = inputs.to_vec();
    all.extend(extra.cloned());
    all
}

/// The files a benchmark's runs read: its definition, data set, model, scorer's references
/// and preprocessing module.
fn benchmark_inputs(benchmark: &Benchmark) -> Vec<PathBuf> {
    let mut files = vec![benchmark.file.clone()];
    files.extend(benchmark.files().into_iter().map(Path::to_path_buf));
    files.extend(benchmark.preprocess.as_ref().map(|p| p.module.clone()));
    files.sort();
    files.dedup();
    files
}

fn path_arg(path: &Path) -> String {
    path.display().to_string()
}
