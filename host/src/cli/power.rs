//! `mlperf-host power report DIR`: the power checker's numbers from a session's `spl.txt` and
//! LoadGen detail log, so a submitter sees the result before uploading.

use std::path::PathBuf;
use std::process::ExitCode;

use mlperf_host::power::{report_dir, result};

#[derive(clap::Subcommand, Debug)]
pub enum PowerCommand {
    /// Recompute the power checker's metric from a session's spl.txt and mlperf_log_detail.txt.
    Report(ReportArgs),
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Exit status: 0 when the power result is VALID, 3 when it is INVALID, 1 on \
an error."
)]
pub struct ReportArgs {
    /// A run's output directory (mlperf_log_detail.txt and spl.txt, maybe ranging/), or a
    /// power-client session (run_1/ and ranging/).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Print power_summary.json's object instead of the block.
    #[arg(long)]
    pub json: bool,
}

pub fn main(command: &PowerCommand) -> ExitCode {
    match command {
        PowerCommand::Report(args) => match report_main(args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(crate::cli::EXIT_INVALID),
            Err(error) => crate::cli::report_error(&error),
        },
    }
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
