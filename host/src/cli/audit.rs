//! `mlperf-host audit`: runs a compliance test (TEST01, TEST04, TEST06) with its official audit.config and verifies it against the submission's runs.

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn main(_args: &Args) -> ExitCode {
    super::report_error(&anyhow::anyhow!("not built yet"))
}
