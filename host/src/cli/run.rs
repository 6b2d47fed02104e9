//! `mlperf-host run`: one LoadGen test, its plan built from the flags ([`super::run_plan`])
//! and carried out by a [`Session`]; this module prints what the session reports and sets the
//! exit status.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use mlperf_host::benchmark::accuracy::Score;
use mlperf_host::loadgen::ProgressHandle;
use mlperf_host::power::{result as power_result, PowerResult};
use mlperf_host::session::{Observer, RunOutcome, RunPlan, Session, SessionError};

use super::progress::ProgressWatcher;
use super::run_args::RunArgs;
use super::EXIT_INVALID;

/// Runs the command; prints any error as one line.
pub fn main(args: &RunArgs) -> ExitCode {
    super::init_logging(args.verbose, args.quiet);
    let outcome = super::run_plan::run_plan(args)
        .and_then(|plan| run(&plan, args.quiet).map_err(anyhow::Error::from));
    match outcome {
        Ok(RunOutcome {
            result,
            power_valid,
            ..
        }) => {
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

/// Carries out `plan`, printing its summary, accuracy and power blocks unless `quiet`.
pub fn run(plan: &RunPlan, quiet: bool) -> Result<RunOutcome, SessionError> {
    let mut console = Console {
        quiet,
        progress: None,
    };
    Session::new(&mut console).run(plan)
}

/// The terminal's view of a session: the blocks on stdout, the progress bar on stderr.
struct Console {
    quiet: bool,
    progress: Option<ProgressWatcher>,
}

impl Observer for Console {
    fn ranging_started(&mut self, out: &Path) {
        if !self.quiet {
            println!(
                "Ranging run (power analyzer ranges on automatic), logs in {}",
                out.display()
            );
        }
    }

    fn test_starting(&mut self) -> Option<ProgressHandle> {
        // The bar: on a terminal, not --quiet; the watcher also runs for the debug log.
        self.progress = ProgressWatcher::start(!self.quiet && std::io::stderr().is_terminal());
        self.progress.as_ref().map(ProgressWatcher::handle)
    }

    fn test_finished(&mut self) {
        if let Some(progress) = self.progress.take() {
            progress.finish();
        }
    }

    fn summary(&mut self, text: &str) {
        if !self.quiet {
            print!("{text}");
        }
    }

    fn accuracy(&mut self, score: &Score) {
        if !self.quiet {
            print!("{}", score.report());
        }
    }

    fn power(&mut self, result: &PowerResult) {
        if !self.quiet {
            print!("{}", power_result::render(result));
        }
    }

    fn power_failed(&mut self, error: &SessionError) {
        eprintln!("error: no power result: {}", super::error_chain(error));
    }
}
