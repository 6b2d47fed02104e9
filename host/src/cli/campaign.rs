//! `mlperf-host campaign plan|run|status FILE`: a whole submission from one campaign file.
//! The plan and its checks live in the library (`mlperf_host::campaign`); this module turns
//! each planned run into the plan `run`, `audit` or `tune` would make of the same command line
//! (so every flag is checked before anything runs), prints tables, and hands the runs to
//! [`super::campaign_run`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;
use clap::Parser;
use mlperf_host::campaign::estimate::{human, run_seconds};
use mlperf_host::campaign::inputs::entry_hashes;
use mlperf_host::campaign::journal::utc_text;
use mlperf_host::campaign::state::{entry_states, EntryState};
use mlperf_host::campaign::{CampaignFile, Entry, Journal, Plan, PlanOptions, RunKind};
use mlperf_host::session::RunPlan;

use super::run_args::RunArgs;

/// `mlperf-host campaign`.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum Command {
    /// Every run the round's rules require of the campaign, in order, with its estimated
    /// duration and whether it is done, stale or still to run. Refuses a campaign that cannot
    /// run, naming the benchmark and the key.
    Plan(PlanArgs),
    /// Runs what the plan still needs (resuming after any interruption), then files the
    /// submission tree, checks it, and writes results.md and report.html.
    Run(RunCampaignArgs),
    /// The journal as a table, and what is left with its estimated time.
    Status(PlanArgs),
}

#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
The campaign file (TOML) is documented by configs/campaign.example.toml. Its folder (`dir`, \
default: the file's name without .toml, beside it) holds journal.json, runs/<benchmark>/<scenario>/\
{accuracy,performance,TEST..}/, tune/, aside/ (partial runs moved out of the way), submission/, \
results.md and report.html.")]
pub(crate) struct PlanArgs {
    /// The campaign file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// A test campaign: run-length settings (`min_duration_ms`, …) may be set, and `check`
    /// runs with `--allow-short`.
    #[arg(long)]
    pub allow_short: bool,
    /// A test campaign: the native engine may make closed results (`check --allow-native`).
    #[arg(long)]
    pub allow_native: bool,
    /// Also print each run's command line.
    #[arg(long)]
    pub commands: bool,
}

#[derive(clap::Args, Debug)]
pub(crate) struct RunCampaignArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Go on after a failed run (its dependants are skipped) and list the failures at the end.
    #[arg(long)]
    pub keep_going: bool,
    /// Run again a run that is done (its id, e.g. fmnist/Offline/performance, or a prefix of
    /// ids such as fmnist/Offline/), and the runs that read it. Repeatable.
    #[arg(long, value_name = "ID")]
    pub redo: Vec<String>,
}

pub(crate) fn main(command: &Command) -> ExitCode {
    match command {
        Command::Plan(args) => {
            super::init_logging(0, false);
            super::exit_with(load(args).map(|loaded| print_plan(&loaded, args.commands)))
        }
        Command::Status(args) => {
            super::init_logging(0, false);
            // Status only reads: a test campaign needs no flag to be looked at.
            let reading = PlanArgs {
                allow_short: true,
                allow_native: true,
                ..args.clone()
            };
            super::exit_with(load(&reading).map(|loaded| print_status(&loaded)))
        }
        Command::Run(args) => super::campaign_run::main(args),
    }
}

/// The plan with where each run stands.
pub(crate) struct Loaded {
    pub plan: Plan,
    pub journal: Journal,
    pub hashes: Vec<String>,
    pub states: Vec<EntryState>,
    /// Seconds, per entry.
    pub estimates: Vec<f64>,
}

impl Loaded {
    pub(crate) fn remaining_seconds(&self) -> f64 {
        self.states
            .iter()
            .zip(&self.estimates)
            .filter(|(state, _)| !state.is_done())
            .map(|(_, seconds)| seconds)
            .sum()
    }
}

/// Plans the campaign, checks every run's flags as `run`/`audit`/`tune` would, and reads the
/// journal.
pub(crate) fn load(args: &PlanArgs) -> anyhow::Result<Loaded> {
    let file = CampaignFile::read(&args.file)?;
    let options = PlanOptions {
        allow_short: args.allow_short,
        allow_native: args.allow_native,
    };
    let plan = Plan::new(file, options)?;
    let mut problems = Vec::new();
    let mut estimates = Vec::with_capacity(plan.entries.len());
    for entry in &plan.entries {
        match settings_of(entry) {
            Ok(run) => estimates.push(estimate(&plan, entry, &run)),
            Err(error) => {
                problems.push(format!("run {}: {error:#}", entry.id));
                estimates.push(0.0);
            }
        }
    }
    if !problems.is_empty() {
        bail!(
            "{}: the campaign cannot run:\n  {}",
            plan.file.path.display(),
            problems.join("\n  ")
        );
    }
    let hashes = entry_hashes(&plan)?;
    let journal = Journal::open(&plan.file.dir, &plan.file.path)?;
    let states = entry_states(&plan, &journal, &hashes);
    Ok(Loaded {
        plan,
        journal,
        hashes,
        states,
        estimates,
    })
}

/// A planned run's command as `mlperf-host` parses it.
#[derive(Parser, Debug)]
#[command(name = "mlperf-host", no_binary_name = true)]
pub(crate) enum EntryCommand {
    Run(RunArgs),
    Audit(super::audit::Args),
    Tune(super::tune::Args),
}

impl EntryCommand {
    pub(crate) fn parse_entry(entry: &Entry) -> anyhow::Result<EntryCommand> {
        EntryCommand::try_parse_from(&entry.command)
            .map_err(|e| anyhow::anyhow!("{}", e.render().to_string().trim_end()))
    }

    pub(crate) fn run_args(&self) -> &RunArgs {
        match self {
            EntryCommand::Run(args) => args,
            EntryCommand::Audit(args) => &args.run,
            EntryCommand::Tune(args) => &args.run,
        }
    }
}

/// The run plan `run` would make of the entry's flags (a user.conf an earlier run will write
/// is left out until it exists).
fn settings_of(entry: &Entry) -> anyhow::Result<RunPlan> {
    let command = EntryCommand::parse_entry(entry)?;
    let mut run = command.run_args().clone();
    if run
        .user_conf
        .as_ref()
        .is_some_and(|p| entry.produced_input.as_ref() == Some(p) && !p.is_file())
    {
        run.user_conf = None;
    }
    super::run_plan::run_plan(&run)
}

fn estimate(plan: &Plan, entry: &Entry, run: &RunPlan) -> f64 {
    let benchmark = plan.benchmarks.iter().find(|b| b.name == entry.benchmark);
    let total = benchmark.map_or(1024, |b| b.rules.accuracy_sample_count_for(entry.scenario));
    let performance = match run.settings.performance_sample_count_override {
        0 => benchmark
            .and_then(|b| b.definition.performance_sample_count)
            .map_or(total, |n| n as u64),
        n => n,
    };
    run_seconds(
        &entry.kind,
        &run.settings,
        performance,
        total,
        &plan.file.power,
    )
}

fn print_plan(loaded: &Loaded, commands: bool) {
    let plan = &loaded.plan;
    println!(
        "Campaign {}: round {}, {} division, {} system, {} engine, power {}",
        plan.file.path.display(),
        plan.round.name,
        plan.division,
        plan.system_type,
        plan.engine,
        power_text(&plan.file.power)
    );
    let width = plan.entries.iter().map(|e| e.id.len()).max().unwrap_or(3);
    println!("{:>3}  {:<width$}  {:<11}  estimate", "#", "run", "state");
    for (i, entry) in plan.entries.iter().enumerate() {
        println!(
            "{:>3}  {:<width$}  {:<11}  {}{}",
            i + 1,
            entry.id,
            loaded.states[i].name(),
            human(loaded.estimates[i]),
            note(entry)
        );
        if commands {
            println!("     mlperf-host {}", super::shell::words(&entry.command));
        }
    }
    print_totals(loaded);
}

/// What a run adds beyond its kind.
fn note(entry: &Entry) -> &'static str {
    match (&entry.kind, &entry.power_dev_client) {
        (RunKind::Performance, Some(_)) => "  (power client: ranging, then testing)",
        _ => "",
    }
}

fn power_text(power: &mlperf_host::campaign::PowerChoice) -> String {
    match power {
        mlperf_host::campaign::PowerChoice::None => "none".into(),
        mlperf_host::campaign::PowerChoice::Meters(meters) => {
            format!("measured by {}", meters.join(" + "))
        }
        mlperf_host::campaign::PowerChoice::PowerDev { .. } => {
            "through MLCommons' power client".into()
        }
    }
}

fn print_totals(loaded: &Loaded) {
    let count = |state: EntryState| loaded.states.iter().filter(|s| **s == state).count();
    let total: f64 = loaded.estimates.iter().sum();
    let mut parts = vec![format!("{} done", count(EntryState::Done))];
    for state in [
        EntryState::Stale,
        EntryState::Failed,
        EntryState::Interrupted,
        EntryState::Pending,
    ] {
        let n = count(state);
        if n > 0 {
            parts.push(format!("{n} {}", state.name()));
        }
    }
    println!(
        "{} runs: {}; about {} left (of {} in all)",
        loaded.plan.entries.len(),
        parts.join(", "),
        human(loaded.remaining_seconds()),
        human(total)
    );
}

fn print_status(loaded: &Loaded) {
    let plan = &loaded.plan;
    let rows: Vec<[String; 5]> = plan
        .entries
        .iter()
        .zip(&loaded.states)
        .map(|(entry, state)| {
            let record = loaded.journal.runs.get(&entry.id);
            let text = |field: Option<&String>| field.cloned().unwrap_or_else(|| "-".into());
            [
                entry.id.clone(),
                state.name().to_string(),
                text(record.and_then(|r| r.verdict.as_ref())),
                text(record.and_then(|r| r.metric.as_ref())),
                record.map_or_else(|| "-".into(), |r| utc_text(r.ended.unwrap_or(r.started))),
            ]
        })
        .collect();
    let header = ["run", "state", "verdict", "metric", "when (UTC)"].map(String::from);
    let widths: Vec<usize> = (0..5)
        .map(|c| {
            rows.iter()
                .chain(std::iter::once(&header))
                .map(|r| r[c].len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |row: &[String; 5]| {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        println!("{}", cells.join("  ").trim_end());
    };
    line(&header);
    for ((row, entry), state) in rows.iter().zip(&plan.entries).zip(&loaded.states) {
        line(row);
        let reason = loaded
            .journal
            .runs
            .get(&entry.id)
            .and_then(|r| r.reason.as_deref());
        if let Some(reason) = reason.filter(|_| !state.is_done()) {
            println!("    {reason}");
        }
    }
    let tree = plan.submission_dir();
    match (&loaded.journal.finished, tree.is_dir()) {
        (Some(finished), true) => println!(
            "submission: {} ({} errors, {} warnings at {})",
            tree.display(),
            finished.errors,
            finished.warnings,
            utc_text(finished.ended)
        ),
        (None, true) => println!("submission: not finished"),
        (_, false) => println!("submission: not filed yet"),
    }
    print_totals(loaded);
}

/// `dir/aside/<id>-<unix seconds>`: where a run's old folder goes before it is redone; a
/// second move within the same second gets `-2`, `-3`, … (renaming onto the first would fail).
pub(crate) fn aside_path(dir: &Path, id: &str, now: f64) -> PathBuf {
    let stem = format!("{}-{}", id.replace('/', "_"), now as u64);
    let aside = dir.join("aside");
    std::iter::once(aside.join(&stem))
        .chain((2..).map(|n| aside.join(format!("{stem}-{n}"))))
        .find(|path| !path.exists())
        .expect("an unbounded sequence of names has a free one")
}

#[cfg(test)]
mod tests {
    use super::aside_path;

    #[test]
    fn a_second_move_aside_within_the_same_second_gets_a_name_of_its_own() {
        let dir = std::env::temp_dir().join(format!("aside-test-{}", std::process::id()));
        let first = aside_path(&dir, "fmnist/Offline/accuracy", 1_700_000_000.2);
        assert!(first.ends_with("aside/fmnist_Offline_accuracy-1700000000"));
        std::fs::create_dir_all(&first).unwrap();
        let second = aside_path(&dir, "fmnist/Offline/accuracy", 1_700_000_000.9);
        assert!(second.ends_with("aside/fmnist_Offline_accuracy-1700000000-2"));
        std::fs::create_dir_all(&second).unwrap();
        let third = aside_path(&dir, "fmnist/Offline/accuracy", 1_700_000_000.9);
        assert!(third.ends_with("aside/fmnist_Offline_accuracy-1700000000-3"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
