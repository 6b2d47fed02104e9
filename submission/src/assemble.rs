//! `submit`: files run directories into the submission tree — the LoadGen logs, the accuracy
//! log truncated with its hash, the compliance folders and the power traces as they are — and
//! writes what each scenario folder also needs (measurements.json, user.conf, README.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::power_dev;
use super::run_folder::{RunFolder, RunFolderError, RunKind};
use super::scenario_files;
use super::system::nameplate;
use super::tree::{
    performance_run, relative, ScenarioDir, SubmitterDir, ACCURACY_LOG, ACCURACY_TXT, LOG_FILES,
    POWER_DEV_FILES,
};
use crate::division::Division;
use crate::logs::accuracy as accuracy_log;
use crate::logs::DATASET_SHA256;
use crate::rules::network_batching;
use crate::scenario::Scenario;

/// What to assemble, and where.
#[derive(Debug, Clone)]
pub struct SubmitOptions {
    /// The tree's root (created when missing; other submitters' and benchmarks' folders in it
    /// are kept).
    pub out: PathBuf,
    /// The system description; its file name (without `.json`) names the system.
    pub system_json: PathBuf,
    /// Overrides of the system description's `division` and `submitter`.
    pub division: Option<Division>,
    pub submitter: Option<String>,
    /// The benchmark the runs belong to, when their logs do not name it.
    pub benchmark: Option<String>,
    /// The user.conf the runs used (else one is written from the performance run's settings).
    pub user_conf: Option<PathBuf>,
    /// Replace scenario folders already in the tree.
    pub force: bool,
    /// Whether the round lets the network division batch queries on the load-generating node.
    pub network_client_batching: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error("{}: {message}", path.display())]
    System { path: PathBuf, message: String },
    #[error(transparent)]
    Run(#[from] RunFolderError),
    #[error("{0}")]
    Refused(String),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What was written.
#[derive(Debug, Clone)]
pub struct Assembled {
    pub submitter: SubmitterDir,
    pub system: String,
    pub scenarios: Vec<ScenarioDir>,
}

pub fn assemble(options: &SubmitOptions, runs: &[PathBuf]) -> Result<Assembled, SubmitError> {
    let (system, division, submitter) = read_system(options)?;
    let submitter = SubmitterDir {
        root: options.out.clone(),
        division,
        submitter,
    };
    if runs.is_empty() {
        return Err(SubmitError::Refused("no run directories given".into()));
    }
    let mut groups: BTreeMap<(String, Scenario), Vec<RunFolder>> = BTreeMap::new();
    for dir in runs {
        let run = RunFolder::read(dir, options.benchmark.as_deref())?;
        if submitter.division == Division::Network {
            if let Some(problem) = network_batching(&run.log, options.network_client_batching) {
                return Err(SubmitError::Refused(format!(
                    "{}: {problem}",
                    dir.display()
                )));
            }
        }
        groups
            .entry((run.model.clone(), run.folder_scenario))
            .or_default()
            .push(run);
    }
    let mut scenarios = Vec::new();
    for ((model, scenario), runs) in &groups {
        let target = submitter.scenario(&system, model, *scenario);
        let plan = ScenarioRuns::sort(runs)?;
        if target.path().exists() {
            if !options.force {
                return Err(SubmitError::Refused(format!(
                    "{} already exists (--force replaces it)",
                    target.path().display()
                )));
            }
            std::fs::remove_dir_all(target.path()).map_err(io_at(&target.path()))?;
        }
        file_scenario(&target, &plan, options)?;
        scenarios.push(target);
    }
    let systems = submitter.system_json(&system);
    create_parent(&systems)?;
    std::fs::copy(&options.system_json, &systems).map_err(io_at(&systems))?;
    // The nameplate power's YAML, where the rules look for it, when it lies beside.
    let nameplate = nameplate::yaml_path(&options.system_json);
    if nameplate.is_file() {
        let to = nameplate::yaml_path(&systems);
        std::fs::copy(&nameplate, &to).map_err(io_at(&nameplate))?;
    }
    for model in groups.keys().map(|(model, _)| model) {
        let first = groups
            .iter()
            .find(|((m, _), _)| m == model)
            .and_then(|(_, runs)| runs.first())
            .expect("a group has runs");
        let code = submitter.path().join("code").join(model).join("README.md");
        create_parent(&code)?;
        std::fs::write(&code, scenario_files::code_readme(model, &first.log))
            .map_err(io_at(&code))?;
    }
    // The official checker looks for `src/` beside `code/`.
    let src = submitter.path().join("src").join("README.md");
    create_parent(&src)?;
    std::fs::write(&src, scenario_files::src_readme()).map_err(io_at(&src))?;
    Ok(Assembled {
        submitter,
        system,
        scenarios,
    })
}

/// The system's name (the file's stem), division and submitter.
fn read_system(options: &SubmitOptions) -> Result<(String, Division, String), SubmitError> {
    let path = &options.system_json;
    let invalid = |message: String| SubmitError::System {
        path: path.clone(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| invalid(e.to_string()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| invalid(format!("invalid JSON: {e}")))?;
    let field = |name: &str| json.get(name).and_then(|v| v.as_str()).map(str::to_string);
    let system = path
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid("the file name must name the system (<system>.json)".into()))?
        .to_string();
    let division = match options.division {
        Some(division) => division,
        None => field("division")
            .ok_or_else(|| invalid("no `division` (give --division)".into()))?
            .parse()
            .map_err(|e: crate::division::UnknownDivision| invalid(format!("division {e}")))?,
    };
    let submitter = options
        .submitter
        .clone()
        .or_else(|| field("submitter"))
        .filter(|s| !s.trim().is_empty() && !s.contains(['/', '\\']))
        .ok_or_else(|| invalid("no usable `submitter` (give --submitter)".into()))?;
    Ok((system, division, submitter))
}

/// One scenario's runs, at most one of each kind.
struct ScenarioRuns<'a> {
    performance: Option<&'a RunFolder>,
    accuracy: Option<&'a RunFolder>,
    compliance: Vec<(&'a str, &'a RunFolder)>,
}

impl<'a> ScenarioRuns<'a> {
    fn sort(runs: &'a [RunFolder]) -> Result<ScenarioRuns<'a>, SubmitError> {
        let mut sorted = ScenarioRuns {
            performance: None,
            accuracy: None,
            compliance: Vec::new(),
        };
        for run in runs {
            let slot = match &run.kind {
                RunKind::Performance => &mut sorted.performance,
                RunKind::Accuracy => &mut sorted.accuracy,
                RunKind::Compliance(test) => {
                    if let Some((_, other)) = sorted.compliance.iter().find(|(t, _)| t == test) {
                        return Err(twice(other, run));
                    }
                    sorted.compliance.push((test, run));
                    continue;
                }
            };
            if let Some(other) = slot {
                return Err(twice(other, run));
            }
            *slot = Some(run);
        }
        Ok(sorted)
    }
}

fn twice(first: &RunFolder, second: &RunFolder) -> SubmitError {
    SubmitError::Refused(format!(
        "two runs for the same place: {} and {}",
        first.describe(),
        second.describe()
    ))
}

fn file_scenario(
    target: &ScenarioDir,
    runs: &ScenarioRuns,
    options: &SubmitOptions,
) -> Result<(), SubmitError> {
    if let Some(run) = runs.performance {
        match &run.power_session {
            Some(session) => file_power_session(session, target)?,
            None => file_performance_run(&run.dir, target)?,
        }
    }
    if let Some(run) = runs.accuracy {
        copy_logs(&run.dir, &target.accuracy())?;
        let txt = run.dir.join(ACCURACY_TXT);
        if !txt.is_file() {
            return Err(SubmitError::Refused(format!(
                "{}: no {ACCURACY_TXT} (score the run with `mlperf-host accuracy --benchmark {} --log {}`)",
                run.dir.display(),
                run.model,
                run.dir.join(ACCURACY_LOG).display()
            )));
        }
        // accuracy.txt scored some log; this one must at least be whole to stand under it.
        let expected = run.log.accuracy_sample_count();
        accuracy_log::verify_whole(&run.dir.join(ACCURACY_LOG), expected).map_err(|e| {
            SubmitError::Refused(format!(
                "{e}; rerun the accuracy run, then `mlperf-host accuracy --benchmark {} --log {}`",
                run.model,
                run.dir.join(ACCURACY_LOG).display()
            ))
        })?;
        accuracy_log::file_truncated(
            &run.dir.join(ACCURACY_LOG),
            &txt,
            &target.accuracy().join(ACCURACY_LOG),
            &target.accuracy().join(ACCURACY_TXT),
        )
        .map_err(io_at(&run.dir))?;
    }
    for (test, run) in &runs.compliance {
        file_compliance(test, run, &target.compliance(test))?;
    }
    let anchor = runs
        .performance
        .or(runs.accuracy)
        .or(runs.compliance.first().map(|(_, run)| *run))
        .expect("a scenario has a run");
    let dir = target.path();
    let user_conf = dir.join("user.conf");
    match &options.user_conf {
        Some(given) => {
            std::fs::copy(given, &user_conf).map_err(io_at(given))?;
        }
        None => std::fs::write(
            &user_conf,
            scenario_files::user_conf(&anchor.model, anchor.scenario, &anchor.log),
        )
        .map_err(io_at(&user_conf))?,
    }
    let filed: Vec<&RunFolder> = [runs.performance, runs.accuracy]
        .into_iter()
        .flatten()
        .chain(runs.compliance.iter().map(|(_, run)| *run))
        .collect();
    let dataset_sha256 = agreed_dataset_sha256(&filed)?;
    let measurements = dir.join("measurements.json");
    std::fs::write(
        &measurements,
        scenario_files::measurements_json(&anchor.log, dataset_sha256),
    )
    .map_err(io_at(&measurements))?;
    let readme = dir.join("README.md");
    let sources: Vec<String> = [runs.performance, runs.accuracy]
        .into_iter()
        .flatten()
        .chain(runs.compliance.iter().map(|(_, run)| *run))
        .map(RunFolder::describe)
        .collect();
    std::fs::write(
        &readme,
        scenario_files::scenario_readme(target, &anchor.log, &sources),
    )
    .map_err(io_at(&readme))?;
    Ok(())
}

/// A performance run's folder: its logs and spl.txt, and what a power measurement left beside
/// them (our power_summary.json, a ranging run, a hand-placed `power/`).
fn file_performance_run(dir: &Path, target: &ScenarioDir) -> Result<(), SubmitError> {
    copy_logs(dir, &target.performance_run())?;
    copy_if_present(
        &dir.join("spl.txt"),
        &target.performance_run().join("spl.txt"),
    )?;
    // Our own power record sits beside the run folders, where the checker's file lists do
    // not look.
    copy_if_present(
        &dir.join("power_summary.json"),
        &target.path().join("performance").join("power_summary.json"),
    )?;
    let ranging = dir.join("ranging");
    if ranging.is_dir() {
        copy_logs(&ranging, &target.ranging_run())?;
        copy_if_present(
            &ranging.join("spl.txt"),
            &target.ranging_run().join("spl.txt"),
        )?;
    }
    let power = dir.join("power");
    if power.is_dir() {
        copy_tree(&power, &target.power_dir())?;
    }
    Ok(())
}

/// A power-dev session, byte for byte: each run's logs and spl.txt, and the client's and
/// server's five files. Nothing else: the checker's file lists reject any other file there
/// (`run_1/ptd_out.txt` holds PTDaemon's Watts and Uncertainty replies, which server.json
/// records too).
fn file_power_session(session: &Path, target: &ScenarioDir) -> Result<(), SubmitError> {
    let required = |path: PathBuf| -> Result<PathBuf, SubmitError> {
        if path.is_file() {
            Ok(path)
        } else {
            Err(SubmitError::Refused(format!(
                "{}: missing from the power-dev session (its client writes it)",
                path.display()
            )))
        }
    };
    for (from, to) in [
        (power_dev::TESTING, target.performance_run()),
        (power_dev::RANGING, target.ranging_run()),
    ] {
        let run = session.join(from);
        for name in LOG_FILES.into_iter().chain(["spl.txt"]) {
            let file = required(run.join(name))?;
            create_parent(&to.join(name))?;
            std::fs::copy(&file, to.join(name)).map_err(io_at(&file))?;
        }
    }
    for name in POWER_DEV_FILES {
        let file = required(session.join(power_dev::POWER).join(name))?;
        let to = target.power_dir().join(name);
        create_parent(&to)?;
        std::fs::copy(&file, &to).map_err(io_at(&file))?;
    }
    Ok(())
}

/// The data set's sha256 the runs logged (`sut_dataset_sha256`); runs of different data sets
/// are refused.
fn agreed_dataset_sha256<'a>(runs: &[&'a RunFolder]) -> Result<Option<&'a str>, SubmitError> {
    let mut agreed: Option<(&RunFolder, &str)> = None;
    for run in runs {
        let Some(digest) = run.log.str(DATASET_SHA256) else {
            continue;
        };
        match agreed {
            Some((first, seen)) if seen != digest => {
                return Err(SubmitError::Refused(format!(
                    "{} and {} ran different data sets (sha256 {seen} and {digest})",
                    first.dir.display(),
                    run.dir.display()
                )))
            }
            Some(_) => {}
            None => agreed = Some((run, digest)),
        }
    }
    Ok(agreed.map(|(_, digest)| digest))
}

/// A compliance folder: its verification files, its run's logs, and a failed TEST01's
/// accuracy folder (its log truncated with its hash, as the truncate tool does).
fn file_compliance(test: &str, run: &RunFolder, target: &Path) -> Result<(), SubmitError> {
    for name in [
        "verify_accuracy.txt",
        "verify_performance.txt",
        "verify_output_len.txt",
    ] {
        copy_if_present(&run.dir.join(name), &target.join(name))?;
    }
    let from_run = performance_run(&run.dir);
    let to_run = performance_run(target);
    copy_logs(&from_run, &to_run)?;
    let accuracy = run.dir.join("accuracy");
    if test == "TEST01" && accuracy.join(ACCURACY_LOG).is_file() {
        let to = target.join("accuracy");
        copy_tree(&accuracy, &to)?;
        if accuracy.join(ACCURACY_TXT).is_file() {
            accuracy_log::file_truncated(
                &accuracy.join(ACCURACY_LOG),
                &accuracy.join(ACCURACY_TXT),
                &to.join(ACCURACY_LOG),
                &to.join(ACCURACY_TXT),
            )
            .map_err(io_at(&accuracy))?;
        }
    }
    Ok(())
}

fn copy_logs(from: &Path, to: &Path) -> Result<(), SubmitError> {
    std::fs::create_dir_all(to).map_err(io_at(to))?;
    for name in LOG_FILES {
        std::fs::copy(from.join(name), to.join(name)).map_err(io_at(&from.join(name)))?;
    }
    Ok(())
}

fn copy_if_present(from: &Path, to: &Path) -> Result<(), SubmitError> {
    if from.is_file() {
        create_parent(to)?;
        std::fs::copy(from, to).map_err(io_at(from))?;
    }
    Ok(())
}

/// Copies a folder as it is (regular files and folders; links are refused).
fn copy_tree(from: &Path, to: &Path) -> Result<(), SubmitError> {
    std::fs::create_dir_all(to).map_err(io_at(to))?;
    for entry in std::fs::read_dir(from).map_err(io_at(from))? {
        let entry = entry.map_err(io_at(from))?;
        let path = entry.path();
        let kind = entry.file_type().map_err(io_at(&path))?;
        if kind.is_dir() {
            copy_tree(&path, &to.join(entry.file_name()))?;
        } else if kind.is_file() {
            std::fs::copy(&path, to.join(entry.file_name())).map_err(io_at(&path))?;
        } else {
            return Err(SubmitError::Refused(format!(
                "{}: not a regular file or folder (a tree holds copies, not links)",
                relative(from, &path).display()
            )));
        }
    }
    Ok(())
}

fn create_parent(path: &Path) -> Result<(), SubmitError> {
    match path.parent() {
        Some(parent) => std::fs::create_dir_all(parent).map_err(io_at(parent)),
        None => Ok(()),
    }
}

fn io_at(path: &Path) -> impl Fn(std::io::Error) -> SubmitError + '_ {
    move |source| SubmitError::Io {
        path: path.to_path_buf(),
        source,
    }
}
