//! `mlperf-host run`: one LoadGen test, its plan built from the flags ([`super::run_plan`])
//! and carried out by a [`Session`]; this module prints what the session reports and sets the
//! exit status.

use std::process::ExitCode;

use mlperf_host::session::{RunOutcome, RunPlan, Session, SessionError};

use super::console::Console;
use super::run_args::RunArgs;
use super::EXIT_INVALID;

/// Runs the command; prints any error as one line.
pub(crate) fn main(args: &RunArgs) -> ExitCode {
    super::init_logging(args.verbose, args.quiet);
    super::watch_signals();
    warn_replacing(args);
    let outcome = super::run_plan::run_plan(args)
        .and_then(|plan| tuned_first(args, plan))
        .and_then(|plan| run(&plan, args.quiet).map_err(anyhow::Error::from));
    if let Some(status) = super::interrupted(&args.out) {
        let signal = mlperf_host::session::interrupt::received();
        if let (Ok(outcome), Some((number, _))) = (&outcome, signal) {
            if outcome.destroy_stalled {
                // Exit handlers could wait on what the plugin still holds.
                mlperf_host::official::engine::exit_immediately(128 + number);
            }
        }
        return status;
    }
    match outcome {
        Ok(RunOutcome {
            result,
            power_valid,
            destroy_stalled,
            ..
        }) => {
            if destroy_stalled {
                super::exit_without_plugin(args);
            }
            if args.report {
                let out = args.out.join(mlperf_host::logs::REPORT_HTML);
                match super::report::write_report(std::slice::from_ref(&args.out), &out) {
                    Ok(()) if !args.quiet => println!("Report: {}", out.display()),
                    Ok(()) => {}
                    Err(error) => return super::report_error(&error.context("--report")),
                }
            }
            // A backend that failed or panicked: the logs are written, but this is an error.
            if let Some(message) = result.failure() {
                eprintln!("error: the system under test failed: {message} (the run is INVALID; logs in {})", args.out.display());
                return ExitCode::FAILURE;
            }
            if !result.is_valid() && args.require_valid {
                let reasons = result.invalid_reasons();
                eprintln!(
                    "error: the result is INVALID{} (--require-valid)",
                    reasons.map(|r| format!(": {r}")).unwrap_or_default()
                );
                return ExitCode::from(EXIT_INVALID);
            }
            if power_valid == Some(false) && args.require_valid {
                eprintln!("error: the power result is INVALID (--require-valid); see power_summary.json in {}", args.out.display());
                return ExitCode::from(EXIT_INVALID);
            }
            ExitCode::SUCCESS
        }
        Err(error) => super::report_error(&error),
    }
}

/// Without `--out`, every run writes into the same folder: say so when it holds a run.
fn warn_replacing(args: &RunArgs) {
    let default_out = std::path::Path::new(super::run_args::DEFAULT_OUT);
    if args.out == default_out && args.out.join(mlperf_host::logs::DETAIL_LOG).is_file() {
        tracing::warn!(
            "replacing the previous run's logs in {}/ (give --out DIR to keep each run's)",
            args.out.display()
        );
    }
}

/// `--tune`: the trials first (logs and user.conf in OUT/tune/), their value then put into
/// the plan, unless `--set` names the same key.
fn tuned_first(args: &RunArgs, mut plan: RunPlan) -> anyhow::Result<RunPlan> {
    if !args.tuning.tune {
        return Ok(plan);
    }
    let dir = args.out.join("tune");
    let tuned = super::tune::tune(args, &dir, &dir.join("user.conf"))?;
    if args.set.iter().any(|o| o.key == tuned.key) {
        tracing::warn!(
            "--set {} overrides the tuned value {}",
            tuned.key,
            tuned.value_text()
        );
    } else {
        tuned.apply(&mut plan.settings);
        if let mlperf_host::session::EnginePlan::Official(official) = &mut plan.engine {
            official
                .set(tuned.key, &tuned.value_text())
                .map_err(|e| anyhow::anyhow!("the tuned {}: {e}", tuned.key))?;
        }
    }
    Ok(plan)
}

/// Carries out `plan`, printing its summary, accuracy and power blocks unless `quiet`.
pub(crate) fn run(plan: &RunPlan, quiet: bool) -> Result<RunOutcome, SessionError> {
    Session::new(&mut Console::new(quiet)).run(plan)
}
