//! `mlperf-host check`: checks a submission tree with the official checker's rules.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mlperf_host::submission::check::{check_tree, CheckOptions};
use mlperf_host::submission::round::{Round, DEFAULT_ROUND};
use mlperf_host::submission::Findings;

/// `mlperf-host check`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Exit status: 0 when the tree has no errors (warnings allowed), 3 when it has errors, 1 when it \
cannot be read.")]
pub(crate) struct Args {
    /// The submission tree's root (holding closed/, open/ or network/).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// A test flag: accept what a short test submission lacks — runs below the minimum
    /// duration and query count, and a simulated power analyzer — as warnings.
    #[arg(long)]
    pub allow_short: bool,
    /// A test flag: accept closed and network results whose logs were not made by the
    /// official LoadGen (`run --engine native`) as warnings.
    #[arg(long)]
    pub allow_native: bool,
    /// The round whose rules to apply: a name in configs/rounds/ or a path to a round file.
    #[arg(long, value_name = "ROUND", default_value = DEFAULT_ROUND)]
    pub round: String,
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn main(args: &Args) -> ExitCode {
    super::init_logging(0, false);
    if !args.dir.is_dir() {
        return super::report_error(&anyhow::anyhow!(
            "{} is not a directory",
            args.dir.display()
        ));
    }
    let round = match Round::find(Some(&args.round)) {
        Ok(round) => round,
        Err(error) => return super::report_error(&error.into()),
    };
    let findings = check_tree(
        &args.dir,
        CheckOptions {
            allow_short: args.allow_short,
            allow_native: args.allow_native,
        },
        &round,
    );
    report(&args.dir, &findings, args.json)
}

/// Prints the findings and maps them to the exit status.
pub(crate) fn report(dir: &Path, findings: &Findings, json: bool) -> ExitCode {
    if json {
        match serde_json::to_string_pretty(findings) {
            Ok(text) => println!("{text}"),
            Err(e) => return super::report_error(&e.into()),
        }
    } else {
        for finding in &findings.0 {
            println!("{finding}");
        }
        let errors = findings.errors().count();
        let warnings = findings.0.len() - errors;
        println!(
            "{}: {errors} error{}, {warnings} warning{}",
            dir.display(),
            if errors == 1 { "" } else { "s" },
            if warnings == 1 { "" } else { "s" }
        );
    }
    if findings.has_errors() {
        ExitCode::from(super::EXIT_INVALID)
    } else {
        ExitCode::SUCCESS
    }
}
