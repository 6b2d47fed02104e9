//! `--benchmark` for `mlperf-host run`, and `mlperf-host accuracy`: a benchmark definition
//! supplies the data set, the backend and its configuration, settings, and the accuracy metric.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use mlperf_host::benchmark::accuracy::reference_script::{
    reference_command, report_with_reference, run_and_compare,
};
use mlperf_host::benchmark::accuracy::{evaluate, evaluate_into};
use mlperf_host::benchmark::{Accuracy, Benchmark};
use mlperf_host::loadgen::TestMode;
use mlperf_host::logs::accuracy::read_accuracy_log;
use mlperf_host::logs::{DetailLog, ACCURACY_LOG, DETAIL_LOG, PROVENANCE_FILE};

/// Opens `spec` and checks that its files exist (naming the command that makes them).
pub(crate) fn open(spec: &str) -> anyhow::Result<Benchmark> {
    open_with(spec, None, None)
}

/// Opens `spec` on the user's copy of its data set folder and model, where given, and checks
/// that its files exist.
pub(crate) fn open_with(
    spec: &str,
    dataset_dir: Option<&Path>,
    model_file: Option<&Path>,
) -> anyhow::Result<Benchmark> {
    let mut benchmark = Benchmark::find(spec)?;
    if let Some(dir) = dataset_dir {
        benchmark = benchmark.with_dataset_dir(dir)?;
    }
    if let Some(model) = model_file {
        benchmark = benchmark.with_model_file(model);
    }
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
pub(crate) fn check_mode(benchmark: &Benchmark, mode: TestMode) -> anyhow::Result<()> {
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
pub(crate) struct AccuracyArgs {
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
    /// The data set folder whose ground truth the log is scored against (ImageNet: its
    /// val_map.txt) [default: the definition's].
    #[arg(long, value_name = "DIR")]
    pub dataset_dir: Option<PathBuf>,
    /// A checkout of mlcommons/inference: its accuracy script scores the log too, with the
    /// flags MLCommons' automation gives it, and accuracy.txt holds the line it prints (the
    /// native scorer's beside it); a disagreement is an error that shows both.
    #[arg(long, value_name = "INFERENCE_CHECKOUT")]
    pub reference_script: Option<PathBuf>,
    /// The Python that runs --reference-script (with the script's own dependencies).
    #[arg(
        long,
        value_name = "PYTHON",
        default_value = "python3",
        requires = "reference_script"
    )]
    pub python: PathBuf,
}

pub(crate) fn accuracy_main(args: &AccuracyArgs) -> ExitCode {
    super::init_logging(0, false);
    match score(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(super::EXIT_INVALID),
        Err(error) => super::report_error(&error),
    }
}

/// Scores the log into accuracy.txt; true when the score reaches the benchmark's target.
fn score(args: &AccuracyArgs) -> anyhow::Result<bool> {
    let mut benchmark = Benchmark::find(&args.benchmark)?;
    if let Some(dir) = &args.dataset_dir {
        benchmark = benchmark.with_dataset_dir(dir)?;
    }
    check_log(&benchmark, &args.log)?;
    let Some(checkout) = &args.reference_script else {
        let (score, _) = evaluate_into(&benchmark, &args.log)
            .with_context(|| format!("cannot score {}", args.log.display()))?;
        print!("{}", score.report());
        return Ok(score.passes());
    };
    let score = evaluate(&benchmark, &args.log)
        .with_context(|| format!("cannot score {}", args.log.display()))?;
    let command = reference_command(&benchmark, checkout, &args.python, &args.log)?;
    let reference = run_and_compare(command, &score)?;
    let text = report_with_reference(&score, &reference);
    let out = args.log.with_file_name(mlperf_host::logs::ACCURACY_TXT);
    std::fs::write(&out, &text).with_context(|| format!("cannot write {}", out.display()))?;
    print!("{text}");
    Ok(score.passes())
}

/// A log that is not an accuracy run of this benchmark is refused, before accuracy.txt is
/// written beside it: an empty one, a performance run's, another model's.
fn check_log(benchmark: &Benchmark, log: &Path) -> anyhow::Result<()> {
    if !log.is_file() {
        bail!(
            "{}: no such file (--log names an accuracy run's {ACCURACY_LOG})",
            log.display()
        );
    }
    let entries = read_accuracy_log(log)?;
    let folder = log.parent().unwrap_or(Path::new("."));
    let detail_path = folder.join(DETAIL_LOG);
    if detail_path.is_file() {
        let mut detail = DetailLog::read(&detail_path)?;
        detail.add_provenance_from(&folder.join(PROVENANCE_FILE))?;
        if let Some(mode) = detail.str("effective_test_mode") {
            if mode != "AccuracyOnly" && mode != "SubmissionRun" {
                bail!(
                    "{}: the log of a {mode} run (its {DETAIL_LOG} says so), which logs no response \
                     of most samples: score an AccuracyOnly run's log",
                    log.display()
                );
            }
        }
        let names = [
            Some(benchmark.name.as_str()),
            benchmark.config_model.as_deref(),
        ];
        if let Some(model) = detail
            .str("sut_model")
            .filter(|m| !names.contains(&Some(*m)))
        {
            bail!(
                "{}: a log of model {model} (its {DETAIL_LOG} says so), not of {}",
                log.display(),
                benchmark.name
            );
        }
    }
    if entries.is_empty() {
        bail!(
            "{}: holds no responses: an accuracy run logs one per sample",
            log.display()
        );
    }
    Ok(())
}
