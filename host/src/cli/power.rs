//! `mlperf-host power report DIR`: the power checker's numbers from a session's `spl.txt` and
//! LoadGen detail log, so a submitter sees the result before uploading.

use std::path::PathBuf;
use std::process::ExitCode;

use mlperf_host::power::{report_dir, result};
use mlperf_host::submission::power_dev;

#[derive(clap::Subcommand, Debug)]
pub(crate) enum PowerCommand {
    /// Recompute the power checker's metric from a session's spl.txt and mlperf_log_detail.txt.
    Report(ReportArgs),
    /// Run the checks of power-dev's compliance/check.py on a session of MLCommons' power
    /// workflow (ranging/, run_1/, power/), as the official submission checker does.
    Check(CheckArgs),
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Exit status: 0 when every check passes, 3 when one fails, 1 on an error (the \
session's client.json or server.json cannot be read)."
)]
pub(crate) struct CheckArgs {
    /// The session folder the power client wrote (ranging/, run_1/, power/), or its run_1/.
    #[arg(value_name = "SESSION")]
    pub dir: PathBuf,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Exit status: 0 when the power result is VALID, 3 when it is INVALID, 1 on \
an error."
)]
pub(crate) struct ReportArgs {
    /// A run's output directory (mlperf_log_detail.txt and spl.txt, maybe ranging/), or a
    /// power-client session (run_1/ and ranging/).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Print power_summary.json's object instead of the block.
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn main(command: &PowerCommand) -> ExitCode {
    match command {
        PowerCommand::Report(args) => match report_main(args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(crate::cli::EXIT_INVALID),
            Err(error) => crate::cli::report_error(&error),
        },
        PowerCommand::Check(args) => match check_main(args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(crate::cli::EXIT_INVALID),
            Err(error) => crate::cli::report_error(&error),
        },
    }
}

/// Prints check.py's verdicts; true when every check passes.
fn check_main(args: &CheckArgs) -> anyhow::Result<bool> {
    let session = power_dev::session_of(&args.dir).ok_or_else(|| {
        anyhow::anyhow!(
            "{}: not a power-dev session (no run_1/ beside power/ or ranging/)",
            args.dir.display()
        )
    })?;
    let report = power_dev::check_session(&session)?;
    print!("{}", report.render());
    if let Some(reason) = &report.simulated {
        println!("Note: {reason}");
    }
    if report.passed() {
        println!("All checks passed");
    } else {
        println!("Not all checks passed");
    }
    Ok(report.passed())
}

/// Prints the report; true when the power result is VALID.
fn report_main(args: &ReportArgs) -> anyhow::Result<bool> {
    let power = report_dir(&args.dir)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&result::to_json(&power))?
        );
    } else {
        print!("{}", result::render(&power));
    }
    Ok(power.is_valid())
}
