//! `mlperf-host check`: checks a submission tree with the official checker's rules.

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn main(_args: &Args) -> ExitCode {
    super::report_error(&anyhow::anyhow!("not built yet"))
}
