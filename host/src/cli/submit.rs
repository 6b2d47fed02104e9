//! `mlperf-host submit`: assembles the submission tree from run directories, then checks it.

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn main(_args: &Args) -> ExitCode {
    super::report_error(&anyhow::anyhow!("not built yet"))
}
