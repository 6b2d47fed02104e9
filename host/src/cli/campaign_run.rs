//! `mlperf-host campaign run`: the plan's runs in order, each through the same session code as
//! `run`, `audit` and `tune` (a power-dev run through the submitter's power client, which runs
//! this executable as its workload), each recorded in the journal as it starts and ends; then
//! the tree, its check, results.md and report.html.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use mlperf_host::campaign::estimate::human;
use mlperf_host::campaign::journal::{now, FinishRecord};
use mlperf_host::campaign::state::EntryState;
use mlperf_host::campaign::{crash_point, Entry, RunKind, RunRecord, RunState};
use mlperf_host::session::Session;
use mlperf_host::submission::assemble::{assemble, SubmitOptions};
use mlperf_host::submission::check::{check_tree, CheckOptions};
use mlperf_host::submission::results::{collect, to_markdown};

use super::campaign::{aside_path, load, EntryCommand, Loaded, RunCampaignArgs};
use super::console::Console;
use super::shell;
use super::EXIT_INVALID;

pub(super) fn main(args: &RunCampaignArgs) -> ExitCode {
    super::init_logging(0, false);
    super::watch_signals();
    match run_campaign(args) {
        Ok(status) => status,
        Err(error) => super::report_error(&error),
    }
}

/// How one run ended.
struct Outcome {
    passed: bool,
    verdict: String,
    metric: Option<String>,
    /// Why it failed and where to look.
    reason: Option<String>,
    /// The folder `submit` files.
    filed: PathBuf,
}

fn run_campaign(args: &RunCampaignArgs) -> anyhow::Result<ExitCode> {
    let mut loaded = load(&args.plan)?;
    let dir = loaded.plan.file.dir.clone();
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let redo = |entry: &Entry| {
        args.redo
            .iter()
            .any(|id| entry.id == *id || (id.ends_with('/') && entry.id.starts_with(id.as_str())))
    };
    // A run redone redoes the runs that read it (they come after it in the plan).
    let mut to_run: Vec<usize> = Vec::new();
    for (i, entry) in loaded.plan.entries.iter().enumerate() {
        let reads_a_redone_run = entry
            .depends
            .iter()
            .any(|d| to_run.iter().any(|&j| loaded.plan.entries[j].id == *d));
        if !loaded.states[i].is_done() || redo(entry) || reads_a_redone_run {
            to_run.push(i);
        }
    }
    let view = View::new(to_run.len() as u64);
    view.line(&format!(
        "{} of {} runs to do, about {}",
        to_run.len(),
        loaded.plan.entries.len(),
        human(to_run.iter().map(|&i| loaded.estimates[i]).sum())
    ));
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let mut failed: Vec<String> = Vec::new();
    let mut remaining: f64 = to_run.iter().map(|&i| loaded.estimates[i]).sum();
    for (n, &i) in to_run.iter().enumerate() {
        let entry = loaded.plan.entries[i].clone();
        if let Some(dependency) = entry.depends.iter().find(|d| failed.contains(d)) {
            view.line(&format!(
                "[{}/{}] {}  skipped: {dependency} failed",
                n + 1,
                to_run.len(),
                entry.id
            ));
            failed.push(entry.id.clone());
            view.advance();
            continue;
        }
        view.current(&entry.id, loaded.estimates[i], remaining);
        let started = Instant::now();
        start(&mut loaded, i, &dir)?;
        let outcome = match execute(&entry, &exe) {
            Ok(outcome) => outcome,
            Err(error) => Outcome {
                passed: false,
                verdict: "ERROR".into(),
                metric: None,
                reason: Some(format!("{error:#}")),
                filed: entry.folder.clone(),
            },
        };
        if let Some((number, name)) = mlperf_host::session::interrupt::received() {
            let record =
                finished_record(&loaded, i, &outcome, Some(format!("interrupted by {name}")));
            loaded.journal.runs.insert(entry.id.clone(), record);
            loaded.journal.save(&dir)?;
            view.clear();
            eprintln!(
                "error: interrupted by {name}; {} is redone by the next `campaign run`",
                entry.id
            );
            return Ok(ExitCode::from((128 + number) as u8));
        }
        crash_point("after-run");
        let record = finished_record(&loaded, i, &outcome, None);
        loaded.journal.runs.insert(entry.id.clone(), record);
        loaded.journal.save(&dir)?;
        remaining -= loaded.estimates[i];
        view.line(&format!(
            "[{}/{}] {}  {}{}  {}",
            n + 1,
            to_run.len(),
            entry.id,
            outcome.verdict,
            outcome
                .metric
                .as_deref()
                .map(|m| format!("  {m}"))
                .unwrap_or_default(),
            human(started.elapsed().as_secs_f64())
        ));
        view.advance();
        crash_point("between-runs");
        if !outcome.passed {
            let reason = outcome.reason.unwrap_or_else(|| outcome.verdict.clone());
            if !args.keep_going {
                view.clear();
                eprintln!("error: {} failed: {reason}\n(the campaign stops here; `campaign run` again redoes it, `--keep-going` goes on past failures)", entry.id);
                return Ok(ExitCode::from(EXIT_INVALID));
            }
            view.line(&format!("    {reason}"));
            failed.push(entry.id.clone());
        }
    }
    view.clear();
    if !failed.is_empty() {
        eprintln!(
            "error: {} runs failed or were skipped, so no submission was filed:",
            failed.len()
        );
        for id in &failed {
            let reason = loaded
                .journal
                .runs
                .get(id)
                .and_then(|r| r.reason.clone())
                .unwrap_or_else(|| "skipped (a run it needs failed)".into());
            eprintln!("  {id}: {reason}");
        }
        return Ok(ExitCode::from(EXIT_INVALID));
    }
    finish(&mut loaded, args)
}

/// Records the run as started (the journal first, so a crash from here on is seen as an
/// interrupted run) and moves any old folder of it aside.
fn start(loaded: &mut Loaded, i: usize, dir: &Path) -> anyhow::Result<()> {
    let entry = &loaded.plan.entries[i];
    loaded.journal.runs.insert(
        entry.id.clone(),
        RunRecord {
            inputs: loaded.hashes[i].clone(),
            state: RunState::Started,
            started: now(),
            ended: None,
            verdict: None,
            metric: None,
            reason: None,
            filed: None,
        },
    );
    loaded.journal.save(dir)?;
    loaded.states[i] = EntryState::Interrupted;
    if entry.folder.exists() {
        let aside = aside_path(dir, &entry.id, now());
        std::fs::create_dir_all(aside.parent().expect("aside/ has a parent"))?;
        std::fs::rename(&entry.folder, &aside).with_context(|| {
            format!(
                "cannot move {} aside to {}",
                entry.folder.display(),
                aside.display()
            )
        })?;
        tracing::info!("moved the earlier {} to {}", entry.id, aside.display());
    }
    if let Some(parent) = entry.folder.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    Ok(())
}

fn finished_record(
    loaded: &Loaded,
    i: usize,
    outcome: &Outcome,
    interrupted: Option<String>,
) -> RunRecord {
    let entry = &loaded.plan.entries[i];
    let started = loaded
        .journal
        .runs
        .get(&entry.id)
        .map_or_else(now, |r| r.started);
    let passed = outcome.passed && interrupted.is_none();
    RunRecord {
        inputs: loaded.hashes[i].clone(),
        state: if passed {
            RunState::Done
        } else {
            RunState::Failed
        },
        started,
        ended: Some(now()),
        verdict: Some(outcome.verdict.clone()),
        metric: outcome.metric.clone(),
        reason: interrupted.or_else(|| outcome.reason.clone()),
        filed: Some(outcome.filed.clone()),
    }
}

/// Carries out one run.
fn execute(entry: &Entry, exe: &Path) -> anyhow::Result<Outcome> {
    if let Some(client) = &entry.power_dev_client {
        return power_dev_run(entry, client, exe);
    }
    match EntryCommand::parse_entry(entry)? {
        EntryCommand::Run(args) => {
            let plan = super::run_plan::run_plan(&args)?;
            let outcome = Session::new(&mut Console::bar_only()).run(&plan)?;
            if let Some(message) = outcome.result.failure() {
                return Ok(failed(
                    entry,
                    "ERROR",
                    format!(
                        "the system under test failed: {message} (logs in {})",
                        entry.folder.display()
                    ),
                ));
            }
            judge_run(entry, &entry.folder)
        }
        EntryCommand::Audit(args) => {
            let plan = super::audit::plan(&args)?;
            let outcome = Session::new(&mut Console::bar_only()).audit(&plan)?;
            let failing: Vec<&str> = outcome
                .checks
                .iter()
                .filter(|(_, passed)| !passed)
                .map(|(check, _)| *check)
                .collect();
            Ok(Outcome {
                passed: outcome.passed,
                verdict: if outcome.passed { "PASS" } else { "FAIL" }.into(),
                metric: None,
                reason: (!outcome.passed).then(|| {
                    format!(
                        "{} failed{} (see the verify_*.txt files in {})",
                        entry.kind.name(),
                        if failing.is_empty() {
                            String::new()
                        } else {
                            format!(": {}", failing.join(", "))
                        },
                        entry.folder.display()
                    )
                }),
                filed: entry.folder.clone(),
            })
        }
        EntryCommand::Tune(args) => {
            let write = args
                .write
                .clone()
                .unwrap_or_else(|| args.run.out.join("user.conf"));
            let tuned = super::tune::tune(&args.run, &args.run.out, &write)?;
            Ok(Outcome {
                passed: true,
                verdict: "TUNED".into(),
                metric: Some(format!("{}={}", tuned.key, tuned.value_text())),
                reason: None,
                filed: entry.folder.clone(),
            })
        }
    }
}

fn failed(entry: &Entry, verdict: &str, reason: String) -> Outcome {
    Outcome {
        passed: false,
        verdict: verdict.into(),
        metric: None,
        reason: Some(reason),
        filed: entry.folder.clone(),
    }
}

/// The verdict the rules give the run in `folder`: an accuracy run's against its target, a
/// performance run's validity.
fn judge_run(entry: &Entry, folder: &Path) -> anyhow::Result<Outcome> {
    let rows = collect(&[folder.to_path_buf()])?;
    let Some(row) = rows.first() else {
        bail!("{}: no result in it", folder.display());
    };
    Ok(match entry.kind {
        RunKind::Accuracy => {
            let accuracy = row.accuracy.clone().unwrap_or_default();
            let passed = accuracy.contains("PASS");
            Outcome {
                passed,
                verdict: if passed { "PASS" } else { "FAIL" }.into(),
                metric: Some(
                    accuracy
                        .trim_end_matches(" PASS")
                        .trim_end_matches(" FAIL")
                        .to_string(),
                )
                .filter(|m| !m.is_empty()),
                reason: (!passed).then(|| {
                    format!(
                        "accuracy below target (see {})",
                        folder.join("accuracy.txt").display()
                    )
                }),
                filed: folder.to_path_buf(),
            }
        }
        _ => {
            let valid = row.valid == Some(true);
            let power_invalid = row.power_valid == Some(false);
            let passed = valid && !power_invalid;
            Outcome {
                passed,
                verdict: match (valid, power_invalid) {
                    (true, false) => "VALID",
                    (true, true) => "POWER INVALID",
                    _ => "INVALID",
                }
                .into(),
                metric: row
                    .value
                    .map(|v| format!("{} {v} {}", row.metric, row.units)),
                reason: match (valid, power_invalid) {
                    (true, false) => None,
                    (true, true) => Some(format!(
                        "the power result is INVALID{} (see `mlperf-host power report {}`)",
                        power_reasons(folder),
                        folder.display()
                    )),
                    _ => Some(format!(
                        "the result is INVALID (see {}, or `mlperf-host report {}`)",
                        folder.join("mlperf_log_summary.txt").display(),
                        folder.display()
                    )),
                },
                filed: folder.to_path_buf(),
            }
        }
    })
}

/// `: why, why` from power_summary.json's sources, when it says.
fn power_reasons(folder: &Path) -> String {
    let summary: Option<serde_json::Value> =
        std::fs::read_to_string(folder.join("power_summary.json"))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok());
    let reasons: Vec<String> = summary
        .iter()
        .flat_map(|s| s["sources"].as_array().cloned().unwrap_or_default())
        .flat_map(|source| {
            source["invalid_reasons"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|reason| reason.as_str().map(str::to_string))
        .collect();
    if reasons.is_empty() {
        String::new()
    } else {
        format!(": {}", reasons.join("; "))
    }
}

/// A performance run through the submitter's power client: the client runs this executable
/// twice (ranging, testing) and writes its session folder, which is what gets filed.
fn power_dev_run(entry: &Entry, client: &str, exe: &Path) -> anyhow::Result<Outcome> {
    let loadgen = entry.loadgen_dir();
    let sessions = entry.folder.join("power-dev");
    std::fs::create_dir_all(&loadgen)?;
    std::fs::create_dir_all(&sessions)?;
    let mut workload = vec![exe.display().to_string()];
    workload.extend(entry.command.iter().cloned());
    let label = format!("{}-{}", entry.benchmark, entry.scenario);
    let command = format!(
        "{client} -w {} -L {} -o {} -l {}",
        shell::quote(&shell::words(&workload)),
        shell::quote(&loadgen.display().to_string()),
        shell::quote(&sessions.display().to_string()),
        shell::quote(&label)
    );
    tracing::info!("power client: {command}");
    let log = entry.folder.join("power-client.log");
    let log_file = std::fs::File::create(&log)?;
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(&command)
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .status()
        .with_context(|| format!("cannot start the power client: {command}"))?;
    if !status.success() {
        return Ok(failed(
            entry,
            "ERROR",
            format!(
                "the power client failed ({status}); its output is in {}",
                log.display()
            ),
        ));
    }
    let session = std::fs::read_dir(&sessions)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect::<Vec<_>>();
    let [session] = session.as_slice() else {
        bail!(
            "{}: the power client left {} session folders (one expected); its output is in {}",
            sessions.display(),
            session.len(),
            log.display()
        );
    };
    // The testing run's logs, as the client copied them.
    let mut outcome = judge_run(entry, &session.join("run_1"))?;
    outcome.filed = session.clone();
    Ok(outcome)
}

/// The tree from every run, its check, results.md and report.html.
fn finish(loaded: &mut Loaded, args: &RunCampaignArgs) -> anyhow::Result<ExitCode> {
    let plan = &loaded.plan;
    let dir = plan.file.dir.clone();
    let tree = plan.submission_dir();
    let partial = dir.join("submission.partial");
    if partial.exists() {
        std::fs::remove_dir_all(&partial)
            .with_context(|| format!("cannot remove {}", partial.display()))?;
    }
    for benchmark in &plan.benchmarks {
        let runs: Vec<PathBuf> = plan
            .entries
            .iter()
            .filter(|e| e.benchmark == benchmark.name && e.kind != RunKind::Tune)
            .map(|e| {
                loaded
                    .journal
                    .runs
                    .get(&e.id)
                    .and_then(|r| r.filed.clone())
                    .unwrap_or_else(|| e.folder.clone())
            })
            .collect();
        let options = SubmitOptions {
            out: partial.clone(),
            system_json: plan.file.system.clone(),
            division: Some(plan.division),
            submitter: None,
            benchmark: Some(benchmark.definition.name.clone()),
            user_conf: benchmark.user_conf.clone(),
            force: true,
            network_client_batching: plan.round.network_client_batching,
        };
        let assembled = assemble(&options, &runs)
            .with_context(|| format!("filing {}'s runs", benchmark.name))?;
        let given = plan
            .file
            .benchmarks
            .iter()
            .find(|b| b.name == benchmark.name)
            .map(|b| &b.measurements)
            .filter(|m| !m.is_empty());
        if let Some(given) = given {
            for scenario in &assembled.scenarios {
                fill_measurements(&scenario.path().join("measurements.json"), given)?;
            }
        }
    }
    crash_point("submit");
    if tree.exists() {
        std::fs::remove_dir_all(&tree)
            .with_context(|| format!("cannot remove {}", tree.display()))?;
    }
    std::fs::rename(&partial, &tree)
        .with_context(|| format!("cannot move {} to {}", partial.display(), tree.display()))?;
    println!("Filed {}", tree.display());

    let findings = check_tree(
        &tree,
        CheckOptions {
            allow_short: args.plan.allow_short,
            allow_native: args.plan.allow_native,
        },
        &plan.round,
    );
    let status = super::check::report(&tree, &findings, false);
    let errors = findings.errors().count();

    let rows = collect(std::slice::from_ref(&tree))?;
    let results = dir.join("results.md");
    std::fs::write(&results, to_markdown(&rows))
        .with_context(|| format!("cannot write {}", results.display()))?;
    println!("Results: {}", results.display());
    let performance: Vec<PathBuf> = plan
        .entries
        .iter()
        .filter(|e| e.kind == RunKind::Performance)
        .map(Entry::loadgen_dir)
        .collect();
    let report = dir.join("report.html");
    match super::report::write_report(&performance, &report) {
        Ok(()) => println!("Report: {}", report.display()),
        Err(error) => eprintln!("warning: no report.html: {error:#}"),
    }
    loaded.journal.finished = Some(FinishRecord {
        inputs: loaded.hashes.clone(),
        ended: now(),
        errors,
        warnings: findings.0.len() - errors,
    });
    loaded.journal.save(&dir)?;
    Ok(status)
}

/// Writes the campaign's `measurements` fields over those `submit` drafted.
fn fill_measurements(
    path: &Path,
    given: &serde_json::Map<String, serde_json::Value>,
) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut json: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let Some(fields) = json.as_object_mut() else {
        bail!("{}: not a JSON object", path.display());
    };
    for (key, value) in given {
        fields.insert(key.clone(), value.clone());
    }
    let mut text = serde_json::to_string_pretty(&json)?;
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// The campaign's bar (runs done of those to do) with each run's own bar beneath it, on a
/// terminal; plain lines otherwise.
struct View {
    multi: Option<MultiProgress>,
    bar: Option<ProgressBar>,
}

impl View {
    fn new(runs: u64) -> View {
        if !std::io::stderr().is_terminal() {
            return View {
                multi: None,
                bar: None,
            };
        }
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(4));
        let bar = multi.add(ProgressBar::new(runs));
        bar.set_style(
            ProgressStyle::with_template("campaign [{bar:30}] {pos}/{len} runs  {msg}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_secs(1));
        super::progress::nest_under(multi.clone());
        View {
            multi: Some(multi),
            bar: Some(bar),
        }
    }

    fn line(&self, text: &str) {
        match &self.multi {
            Some(multi) => {
                let _ = multi.println(text);
            }
            None => println!("{text}"),
        }
    }

    fn current(&self, id: &str, estimate: f64, remaining: f64) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "{id} (about {}), about {} left",
                human(estimate),
                human(remaining)
            ));
        }
    }

    fn advance(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    fn clear(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
