//! `--benchmark` for `mlperf-host run`, and `mlperf-host accuracy`: a benchmark definition
//! supplies the data set, the backend and its configuration, settings, and the accuracy metric.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use mlperf_host::benchmark::accuracy::evaluate_into;
use mlperf_host::benchmark::{Accuracy, Benchmark};
use mlperf_host::loadgen::TestMode;

/// Opens `spec` and checks that its files exist (naming the command that makes them).
pub fn open(spec: &str) -> anyhow::Result<Benchmark> {
    let benchmark = Benchmark::find(spec)?;
    let missing = benchmark.missing_files();
    if let Some(first) = missing.first() {
        let make = benchmark
            .prepare
            .as_deref()
            .map(|command| format!("; make them with `{command}`"))
            .unwrap_or_default();
        bail!(
            "benchmark {}: {} is missing{}{make}",
            benchmark.name,
            first.display(),
            if missing.len() > 1 {
                format!(" (and {} more)", missing.len() - 1)
            } else {
                String::new()
            }
        );
    }
    Ok(benchmark)
}

/// An accuracy run needs a metric: refused before anything runs otherwise.
pub fn check_mode(benchmark: &Benchmark, mode: TestMode) -> anyhow::Result<()> {
    if let (TestMode::AccuracyOnly | TestMode::SubmissionRun, Accuracy::Unavailable { why }) =
        (mode, &benchmark.accuracy)
    {
        bail!(
            "benchmark {}: accuracy is not available ({why}); run --mode PerformanceOnly",
            benchmark.name
        );
    }
    Ok(())
}

/// `mlperf-host accuracy`.
#[derive(clap::Args, Debug)]
pub struct AccuracyArgs {
    /// The benchmark (a name in configs/benchmarks/, or a .toml path).
    #[arg(long, value_name = "NAME|FILE")]
    pub benchmark: String,
    /// The accuracy log of an AccuracyOnly run.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "mlperf-logs/mlperf_log_accuracy.json"
    )]
    pub log: PathBuf,
}

pub fn accuracy_main(args: &AccuracyArgs) -> ExitCode {
    super::init_logging(0, false);
    let result = Benchmark::find(&args.benchmark)
        .map_err(anyhow::Error::from)
        .and_then(|benchmark| {
            let (score, _) = evaluate_into(&benchmark, &args.log)
                .with_context(|| format!("cannot score {}", args.log.display()))?;
            print!("{}", score.report());
            Ok(())
        });
    super::exit_with(result)
}
