//! `mlperf-host report RUN_DIR… --out report.html`, and `run --report`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

/// `mlperf-host report`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Reads each run folder's mlperf_log_summary.txt, mlperf_log_detail.txt, mlperf_log_trace.json \
(written by run --trace or --report: the histogram and the rates over time need it) and \
spl.txt (power runs). The HTML file holds everything it shows (inline SVG, no script): it can \
be mailed or archived as it is.")]
pub(crate) struct Args {
    /// Run folders (each holding a run's LoadGen logs), or sweep folders (`sweep --out`: the
    /// points' table, the Pareto plot, latency against load).
    #[arg(value_name = "RUN_DIR", required = true)]
    pub runs: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(long, value_name = "FILE", default_value = "report.html")]
    pub out: PathBuf,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

pub(crate) fn main(args: &Args) -> ExitCode {
    super::init_logging(0, args.quiet);
    super::exit_with(write_report(&args.runs, &args.out).map(|()| {
        if !args.quiet {
            println!("Wrote {}", args.out.display());
        }
    }))
}

/// Reads `runs` (run folders, or sweep folders: those holding a sweep.json) and writes
/// their report to `out`.
pub(crate) fn write_report(runs: &[PathBuf], out: &Path) -> anyhow::Result<()> {
    use mlperf_host::report;
    let (sweeps, runs): (Vec<&PathBuf>, Vec<&PathBuf>) =
        runs.iter().partition(|dir| report::is_sweep(dir));
    let runs = runs
        .iter()
        .map(|dir| report::read_run(dir))
        .collect::<Result<Vec<_>, _>>()?;
    let sweeps = sweeps
        .iter()
        .map(|dir| report::read_sweep(dir))
        .collect::<Result<Vec<_>, _>>()?;
    let html = report::render_with_sweeps(&runs, &sweeps);
    std::fs::write(out, html).with_context(|| format!("cannot write {}", out.display()))
}
