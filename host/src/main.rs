//! The `mlperf-host` command.

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "mlperf-host",
    version,
    about = "MLPerf Inference benchmark host"
)]
struct Cli {}

fn main() -> anyhow::Result<()> {
    let _cli = Cli::parse();
    Ok(())
}
