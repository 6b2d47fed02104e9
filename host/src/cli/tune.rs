//! `mlperf-host tune` and `run --tune`: trial runs of the plan `run` would carry out (each a
//! session with its own logs), the setting they find written into a user.conf.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use mlperf_host::loadgen::TestScenario;
use mlperf_host::session::{EnginePlan, RunPlan, Session, TestOutcome};
use mlperf_host::tune::{
    estimate_full_run, human_duration, render_user_conf, Trial, TrialRunner, TuneError, Tuned,
};

use super::console::Console;
use super::run_args::RunArgs;

/// `mlperf-host tune`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Each trial is a real PerformanceOnly run of the plan `run` would carry out with these flags \
(native engine, no power meters, no equal-issue padding), logged in OUT/trial-N/:
  SingleStream, MultiStream  a short probe, then a trial of --trial-duration: the latency at \
the target percentile (the mean when the trial has too few queries for it; capped at 1.5 x \
the mean)
  Offline                    a probe, then trials of --trial-duration sized by the rate before, \
until two agree within --precision
  Server                     an Offline probe; from half its rate, doubling or halving to a \
VALID and an INVALID rate, geometric bisection to --precision; the highest VALID rate less \
--margin (10 %), confirmed by a trial twice as long
The user.conf (--write, default OUT/user.conf) holds the --user-conf the trials ran with, then \
the tuned value with comments saying how it was found.

Exit status: 0 when a value was found, 1 on an error, 2 on a usage error.")]
pub(crate) struct Args {
    /// Where to write the user.conf [default: OUT/user.conf].
    #[arg(long, value_name = "PATH")]
    pub write: Option<PathBuf>,
    #[command(flatten)]
    pub run: RunArgs,
}

pub(crate) fn main(args: &Args) -> ExitCode {
    super::init_logging(args.run.verbose, args.run.quiet);
    super::watch_signals();
    let out = &args.run.out;
    let write = args.write.clone().unwrap_or_else(|| out.join("user.conf"));
    let tuned = tune(&args.run, out, &write);
    if let Some(status) = super::interrupted(out) {
        return status;
    }
    super::exit_with(tuned.map(|_| ()))
}

/// Runs the trials into `trials_dir`, writes the user.conf to `write` and prints what was
/// found; returns the tuned value.
pub(crate) fn tune(run: &RunArgs, trials_dir: &Path, write: &Path) -> anyhow::Result<Tuned> {
    let options = run.tuning.options()?;
    let mut plan = super::run_plan::run_plan(run)?;
    // Trials measure the system: the native engine, no meters, no audit.config.
    plan.engine = EnginePlan::Native;
    plan.power.clear();
    plan.audit_config = None;
    let base = plan.settings.clone();
    // A run that names no model tunes for any: its user.conf line is `*.Scenario.key`.
    let model = if plan.model_named {
        plan.model.clone()
    } else {
        "*".to_string()
    };
    if !run.quiet {
        let named = if plan.model_named {
            format!("{} ", plan.model)
        } else {
            String::new()
        };
        println!(
            "Tuning {named}{} with trial runs (logs in {})",
            base.scenario,
            trials_dir.display()
        );
    }
    let mut runner = SessionTrials {
        plan: &mut plan,
        dir: trials_dir.to_path_buf(),
        quiet: run.quiet,
    };
    let tuned = mlperf_host::tune::tune(&base, &options, &mut runner)?;

    let mut full = base.clone();
    tuned.apply(&mut full);
    let estimate = estimate_full_run(&full, &tuned.basis);
    let previous = match &run.user_conf {
        Some(path) => Some((
            path.display().to_string(),
            mlperf_submission::input_file::read_to_string(path)
                .with_context(|| format!("--user-conf {}", path.display()))?,
        )),
        None => None,
    };
    let text = render_user_conf(
        &model,
        &tuned,
        &estimate,
        previous.as_ref().map(|(p, t)| (p.as_str(), t.as_str())),
    );
    if let Some(parent) = write.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(write, text).with_context(|| format!("cannot write {}", write.display()))?;
    if !run.quiet {
        for line in &tuned.how {
            println!("  {line}");
        }
        println!(
            "{} (--set {}={})",
            tuned.conf_line(&model),
            tuned.key,
            tuned.value_text()
        );
        println!(
            "The full run: about {} ({}). Written to {}",
            human_duration(estimate.seconds),
            count(estimate.queries, "query", "queries"),
            write.display()
        );
    }
    Ok(tuned)
}

/// Trials as sessions of the same plan, each in its own folder.
struct SessionTrials<'a> {
    plan: &'a mut RunPlan,
    dir: PathBuf,
    quiet: bool,
}

impl TrialRunner for SessionTrials<'_> {
    fn run(
        &mut self,
        name: &str,
        settings: &mlperf_host::loadgen::TestSettings,
    ) -> Result<Trial, TuneError> {
        let dir = self.dir.join(name);
        self.plan.settings = settings.clone();
        self.plan.out = dir.clone();
        self.plan.results_dir = dir.clone();
        let failed = |message: String| TuneError::Trial {
            name: name.to_string(),
            message,
        };
        let outcome = Session::new(&mut Console::new(true))
            .run(self.plan)
            .map_err(|e| failed(mlperf_host::error_chain(&e)))?;
        if let Some((_, signal)) = mlperf_host::session::interrupt::received() {
            return Err(failed(format!("interrupted by {signal}")));
        }
        if let Some(message) = outcome.result.failure() {
            return Err(failed(format!(
                "the system under test failed: {message} (logs in {})",
                dir.display()
            )));
        }
        let TestOutcome::Native(result) = &outcome.result else {
            return Err(failed("trials run on the native engine".to_string()));
        };
        let trial = Trial::from_result(name.to_string(), dir.clone(), result).ok_or_else(|| {
            TuneError::NoResult {
                name: name.to_string(),
                dir: dir.display().to_string(),
            }
        })?;
        if !self.quiet {
            println!("{}", describe(&trial, settings));
        }
        Ok(trial)
    }
}

/// One line per trial: what it tried and what it measured.
fn describe(trial: &Trial, settings: &mlperf_host::loadgen::TestSettings) -> String {
    let tried = match settings.scenario {
        TestScenario::Server => format!("Server at {:.2} qps", settings.server_target_qps),
        TestScenario::Offline if settings.min_duration_ms == 0 => {
            format!("Offline probe of {} samples", settings.min_query_count)
        }
        TestScenario::Offline => format!(
            "Offline, expected {:.2} samples/s",
            settings.offline_expected_qps
        ),
        scenario if settings.min_duration_ms == 0 => {
            format!("{scenario} probe of {} queries", settings.min_query_count)
        }
        scenario => format!("{scenario} for {} ms", settings.min_duration_ms),
    };
    format!(
        "  {:<9} {tried}: {}, {:.2} samples/s, p{} {:.3} ms, mean {:.3} ms, {} in {:.2} s",
        trial.name,
        if trial.valid { "VALID" } else { "INVALID" },
        trial.samples_per_second,
        (trial.percentile * 1000.0).round() / 10.0,
        trial.percentile_latency_ns / 1e6,
        trial.mean_latency_ns / 1e6,
        count(trial.queries, "query", "queries"),
        trial.duration_s
    )
}

fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
