//! `mlperf-host compare`: does a rerun reproduce a run (the audit's 2 % rule)?

use std::path::PathBuf;
use std::process::ExitCode;

use mlperf_host::submission::compare::{compare, DEFAULT_TOLERANCE_PERCENT};
use mlperf_host::submission::round::{Round, DEFAULT_ROUND};

/// `mlperf-host compare`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Exit status: 0 when the rerun reproduces the run, 3 when a check fails, 1 when a folder cannot \
be read.")]
pub(crate) struct Args {
    /// The run folder (a performance run, or a compliance test's folder).
    #[arg(value_name = "RUN_A")]
    pub a: PathBuf,
    /// The rerun's folder.
    #[arg(value_name = "RUN_B")]
    pub b: PathBuf,
    /// How far the rerun's result may be from the run's, in percent.
    #[arg(long, value_name = "PERCENT", default_value_t = DEFAULT_TOLERANCE_PERCENT)]
    pub tolerance: f64,
    /// The round whose result fields to read (LLMs report tokens): a name in configs/rounds/
    /// or a path to a round file.
    #[arg(long, value_name = "ROUND", default_value = DEFAULT_ROUND)]
    pub round: String,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn main(args: &Args) -> ExitCode {
    super::init_logging(0, false);
    match run(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(super::EXIT_INVALID),
        Err(error) => super::report_error(&error),
    }
}

/// Compares and prints; true when the rerun reproduces the run.
fn run(args: &Args) -> anyhow::Result<bool> {
    if !(args.tolerance.is_finite() && args.tolerance >= 0.0) {
        anyhow::bail!(
            "--tolerance {}: not a percentage (0 or more)",
            args.tolerance
        );
    }
    let round = Round::find(Some(&args.round))?;
    let compared = compare(&args.a, &args.b, args.tolerance, &round)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&compared)?);
        return Ok(compared.passed());
    }
    for check in &compared.checks {
        let verdict = if check.passed { "ok  " } else { "FAIL" };
        println!("{verdict} {}: {}", check.check, check.detail);
    }
    let failed = compared.checks.iter().filter(|c| !c.passed).count();
    if failed == 0 {
        println!("the rerun reproduces the run");
    } else {
        println!(
            "the rerun does not reproduce the run: {failed} check{} failed",
            if failed == 1 { "" } else { "s" }
        );
    }
    Ok(compared.passed())
}
