//! `mlperf-host sysinfo`: drafts `systems/<system>.json` from this machine.

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn main(_args: &Args) -> ExitCode {
    super::report_error(&anyhow::anyhow!("not built yet"))
}
