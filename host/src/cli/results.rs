//! `mlperf-host results`: the results table of submission trees or run folders.

use std::path::PathBuf;
use std::process::ExitCode;

use mlperf_host::submission::results::{collect, to_csv, to_markdown};

/// How the table is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    Md,
    Csv,
    Json,
}

/// `mlperf-host results`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Submission trees (holding closed/, open/ or network/) or run folders.
    #[arg(value_name = "TREE|RUN_DIR", required = true)]
    pub paths: Vec<PathBuf>,
    /// The table's format.
    #[arg(long, value_enum, default_value_t = Format::Md)]
    pub format: Format,
}

pub(crate) fn main(args: &Args) -> ExitCode {
    super::init_logging(0, false);
    let rows = match collect(&args.paths) {
        Ok(rows) => rows,
        Err(e) => return super::report_error(&e.into()),
    };
    let text = match args.format {
        Format::Md => to_markdown(&rows),
        Format::Csv => to_csv(&rows),
        Format::Json => match serde_json::to_string_pretty(&rows) {
            Ok(json) => json + "\n",
            Err(e) => return super::report_error(&e.into()),
        },
    };
    print!("{text}");
    ExitCode::SUCCESS
}
