//! `mlperf-host submit`: assembles the submission tree from run directories, then checks it.

use std::path::PathBuf;
use std::process::ExitCode;

use mlperf_host::submission::assemble::{assemble, SubmitOptions};
use mlperf_host::submission::check::{check_tree, CheckOptions};
use mlperf_host::submission::round::{Round, DEFAULT_ROUND};
use mlperf_host::submission::Division;

/// `mlperf-host submit`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Each run directory is a performance run, an accuracy run (with its accuracy.txt), or a \
compliance folder from `mlperf-host audit`; each is filed by the model and scenario its detail \
log names. A performance run's spl.txt, ranging/ and power/ (a power-dev session's logs) come \
along as they are.

Exit status: 0 when the assembled tree has no errors, 3 when `check` finds errors, 1 when it \
cannot be assembled.")]
pub(crate) struct Args {
    /// The system description (systems/<system>.json, e.g. from `mlperf-host sysinfo`); its
    /// file name names the system, its `division` and `submitter` place the results.
    #[arg(long, value_name = "FILE")]
    pub system: PathBuf,
    /// The tree's root (created when missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The division (closed, open or network), instead of the system description's.
    #[arg(long)]
    pub division: Option<Division>,
    /// The submitter, instead of the system description's.
    #[arg(long)]
    pub submitter: Option<String>,
    /// The benchmark the runs belong to (their logs name it when mlperf-host made them).
    #[arg(long, value_name = "NAME")]
    pub benchmark: Option<String>,
    /// The user.conf the runs used (else one is written from the performance run's settings).
    #[arg(long, value_name = "FILE")]
    pub user_conf: Option<PathBuf>,
    /// Replace scenario folders already in the tree.
    #[arg(long)]
    pub force: bool,
    /// Check the tree with `check --allow-short` (a test submission).
    #[arg(long)]
    pub allow_short: bool,
    /// Check the tree with `check --allow-native` (runs the native engine made).
    #[arg(long)]
    pub allow_native: bool,
    /// The round whose rules the tree is checked against: a name in configs/rounds/ or a path
    /// to a round file.
    #[arg(long, value_name = "ROUND", default_value = DEFAULT_ROUND)]
    pub round: String,
    /// The run directories.
    #[arg(value_name = "RUN_DIR", required = true)]
    pub runs: Vec<PathBuf>,
}

pub(crate) fn main(args: &Args) -> ExitCode {
    super::init_logging(0, false);
    let round = match Round::find(Some(&args.round)) {
        Ok(round) => round,
        Err(error) => return super::report_error(&error.into()),
    };
    let options = SubmitOptions {
        out: args.out.clone(),
        system_json: args.system.clone(),
        division: args.division,
        submitter: args.submitter.clone(),
        benchmark: args.benchmark.clone(),
        user_conf: args.user_conf.clone(),
        force: args.force,
        network_client_batching: round.network_client_batching,
    };
    let assembled = match assemble(&options, &args.runs) {
        Ok(assembled) => assembled,
        Err(error) => return super::report_error(&error.into()),
    };
    for scenario in &assembled.scenarios {
        println!("filed {}", scenario.path().display());
    }
    let findings = check_tree(
        &args.out,
        CheckOptions {
            allow_short: args.allow_short,
            allow_native: args.allow_native,
        },
        &round,
    );
    super::check::report(&args.out, &findings, false)
}
