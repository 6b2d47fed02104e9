//! `mlperf-host audit`: runs a compliance test (TEST01, TEST04, TEST06) with its official audit.config and verifies it against the submission's runs.
//!
//! `--out DIR` becomes the test's folder as the submission checker expects it: the compliance
//! run's logs in `DIR/performance/run_1/`, then the official scripts' `verify_accuracy.txt` and
//! `verify_performance.txt`, and `DIR/accuracy/` with the compliance run's responses.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::ValueEnum;
use mlperf_host::benchmark::{Accuracy, Benchmark, OutputEncoding};
use mlperf_host::compliance::{
    find_audit_config, score_accuracy_fallback, verify_test01_accuracy, verify_test01_performance,
    verify_test04_performance, verify_test06, AccuracyFallback, ComplianceTest, DetailLog, Dtype,
    LogFields, Verification, DEFAULT_EOS_TOKEN_ID, VERIFY_ACCURACY_FILE, VERIFY_PERFORMANCE_FILE,
};
use mlperf_host::loadgen::TestScenario;
use mlperf_host::logs::{ACCURACY_LOG, DETAIL_LOG, RESULT_JSON, SUMMARY_LOG};
use mlperf_host::submission::tree::performance_run;

use super::run_args::RunArgs;
use super::EXIT_INVALID;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TestArg {
    #[value(name = "TEST01")]
    Test01,
    #[value(name = "TEST04")]
    Test04,
    #[value(name = "TEST06")]
    Test06,
}

impl From<TestArg> for ComplianceTest {
    fn from(arg: TestArg) -> ComplianceTest {
        match arg {
            TestArg::Test01 => ComplianceTest::Test01,
            TestArg::Test04 => ComplianceTest::Test04,
            TestArg::Test06 => ComplianceTest::Test06,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DtypeArg {
    Byte,
    Int16,
    Int32,
    Int64,
    Float32,
}

impl From<DtypeArg> for Dtype {
    fn from(arg: DtypeArg) -> Dtype {
        match arg {
            DtypeArg::Byte => Dtype::Byte,
            DtypeArg::Int16 => Dtype::Int16,
            DtypeArg::Int32 => Dtype::Int32,
            DtypeArg::Int64 => Dtype::Int64,
            DtypeArg::Float32 => Dtype::Float32,
        }
    }
}

/// `mlperf-host audit`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
--out DIR is the compliance test's folder, laid out as the submission checker expects:
  DIR/performance/run_1/       the compliance run's LoadGen logs
  DIR/verify_accuracy.txt      TEST01 (against --accuracy-run), TEST06
  DIR/verify_performance.txt   TEST01 (detail logs), TEST04 (summaries), against --performance-run
  DIR/accuracy/mlperf_log_accuracy.json   TEST01, TEST06: the compliance run's responses
  DIR/accuracy/{accuracy,baseline_accuracy,compliance_accuracy}.txt   TEST01 when the responses \
differ and --benchmark has an accuracy metric
  DIR/result.json              the compliance run's result, for programs

The audit.config is configs/audit/<TEST>/<model>/audit.config, else configs/audit/<TEST>/audit.config \
(model: --model, else the benchmark's name, else resnet50), unless --audit-conf names one.

Exit status: 0 when every verification passes, 1 on an error, 2 on a usage error, 3 when a \
verification fails.")]
pub struct Args {
    /// The compliance test.
    #[arg(long, value_enum, ignore_case = true)]
    pub test: TestArg,
    /// TEST01: the submission's accuracy run directory (its mlperf_log_accuracy.json).
    #[arg(long, value_name = "DIR", help_heading = "Compliance")]
    pub accuracy_run: Option<PathBuf>,
    /// TEST01, TEST04: the submission's performance run directory (its mlperf_log_detail.txt,
    /// mlperf_log_summary.txt).
    #[arg(long, value_name = "DIR", help_heading = "Compliance")]
    pub performance_run: Option<PathBuf>,
    /// How responses are decoded. TEST01: byte, float32, int32, int64 [default: the benchmark's
    /// output encoding, else byte]; TEST06: int64, int32, int16, float32 [default: int32].
    #[arg(long, value_enum, help_heading = "Compliance")]
    pub dtype: Option<DtypeArg>,
    /// TEST06: the tokenizer's EOS token id [default: 2].
    #[arg(long, value_name = "ID", help_heading = "Compliance")]
    pub eos_token_id: Option<i64>,
    #[command(flatten)]
    pub run: RunArgs,
}

pub fn main(args: &Args) -> ExitCode {
    super::init_logging(args.run.verbose, args.run.quiet);
    match audit(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(EXIT_INVALID),
        Err(error) => super::report_error(&error),
    }
}

/// The submission's files a verification reads.
struct References {
    accuracy_log: Option<PathBuf>,
    performance_detail: Option<PathBuf>,
    performance_summary: Option<PathBuf>,
}

/// What an audit does, settled before anything runs.
struct Plan {
    test: ComplianceTest,
    references: References,
    benchmark: Option<Benchmark>,
    model: String,
    dtype: Dtype,
    eos_token_id: i64,
    audit_config: PathBuf,
}

/// Runs the test and verifies it; true when every verification passed.
fn audit(args: &Args) -> anyhow::Result<bool> {
    let plan = plan(args)?;
    let out = &args.run.out;
    check_out_dir(out, &plan.references)?;
    clear_old_outputs(out)?;
    let scenario = run_compliance(args, &plan)?;
    verify(args, &plan, scenario)
}

/// Everything that can be refused is refused here, before anything runs.
fn plan(args: &Args) -> anyhow::Result<Plan> {
    let test = ComplianceTest::from(args.test);
    let references = check_references(args, test)?;
    let benchmark = args
        .run
        .benchmark
        .as_deref()
        .map(Benchmark::find)
        .transpose()?;
    // As `run` names the model its config files are read for.
    let model = args
        .run
        .model
        .clone()
        .or_else(|| benchmark.as_ref().map(|b| b.name.clone()))
        .unwrap_or_else(|| "resnet50".to_string());
    let dtype = dtype(args, test, benchmark.as_ref())?;
    let eos_token_id = match (test, args.eos_token_id) {
        (ComplianceTest::Test06, id) => id.unwrap_or(DEFAULT_EOS_TOKEN_ID),
        (_, Some(_)) => bail!("--eos-token-id is for TEST06 (its EOS check)"),
        (_, None) => DEFAULT_EOS_TOKEN_ID,
    };
    let audit_config = match &args.run.audit_conf {
        Some(path) => path.clone(),
        None => find_audit_config(test, &model)?,
    };
    Ok(Plan {
        test,
        references,
        benchmark,
        model,
        dtype,
        eos_token_id,
        audit_config,
    })
}

/// The compliance run, as `mlperf-host run` with the audit.config, into `out/performance/run_1`;
/// returns its scenario.
fn run_compliance(args: &Args, plan: &Plan) -> anyhow::Result<TestScenario> {
    let out = &args.run.out;
    let run_dir = performance_run(out);
    if !args.run.quiet {
        println!(
            "{} for {}: {}; the compliance run's logs in {}",
            plan.test,
            plan.model,
            plan.audit_config.display(),
            run_dir.display()
        );
    }
    let mut run_plan = super::run_plan::run_plan(&args.run)?;
    run_plan.out = run_dir.clone();
    // The checker allows only LoadGen's files in run_1/.
    run_plan.results_dir = out.clone();
    run_plan.audit_config = Some(super::run_plan::checked_audit_config(&plan.audit_config)?);
    let outcome = super::run::run(&run_plan, args.run.quiet)?;
    if let Some(message) = outcome.result.failure() {
        bail!(
            "the system under test failed: {message} (logs in {}; nothing verified)",
            run_dir.display()
        );
    }
    Ok(outcome.scenario)
}

/// Writes the verification files of the test and prints their verdicts, as the official
/// `run_verification.py` scripts do; true when every one passed.
fn verify(args: &Args, plan: &Plan, scenario: TestScenario) -> anyhow::Result<bool> {
    let (out, quiet) = (&args.run.out, args.run.quiet);
    let run_dir = performance_run(out);
    let compliance_log = run_dir.join(ACCURACY_LOG);
    let mut verdicts = Vec::new();
    if let Some(accuracy_log) = &plan.references.accuracy_log {
        let verification = verify_test01_accuracy(accuracy_log, &compliance_log, plan.dtype)?;
        write_verification(out, VERIFY_ACCURACY_FILE, &verification, quiet)?;
        copy_compliance_log(out, &compliance_log)?;
        if !verification.passed {
            fallback(args, plan.benchmark.as_ref(), accuracy_log, &compliance_log)?;
        }
        verdicts.push(("Accuracy check pass", verification.passed));
    }
    let performance = match (
        &plan.references.performance_detail,
        &plan.references.performance_summary,
    ) {
        (Some(detail), _) => Some(verify_test01_performance(
            detail,
            &run_dir.join(DETAIL_LOG),
        )?),
        (None, Some(summary)) => Some(verify_test04_performance(
            summary,
            &run_dir.join(SUMMARY_LOG),
        )?),
        (None, None) => None,
    };
    if let Some(verification) = performance {
        write_verification(out, VERIFY_PERFORMANCE_FILE, &verification, quiet)?;
        verdicts.push(("Performance check pass", verification.passed));
    }
    if plan.test == ComplianceTest::Test06 {
        let verification = verify_test06(&compliance_log, scenario, plan.dtype, plan.eos_token_id)?;
        // Its text ends with the verdict line itself.
        write_verification(out, VERIFY_ACCURACY_FILE, &verification, quiet)?;
        copy_compliance_log(out, &compliance_log)?;
        return Ok(verification.passed);
    }
    if !quiet {
        for (check, passed) in &verdicts {
            println!("{check}: {}", python_bool(*passed));
        }
        println!("{} verification complete", plan.test);
    }
    Ok(verdicts.iter().all(|(_, passed)| *passed))
}

/// The reference files the test reads, each checked to exist; flags the test does not use are
/// refused rather than ignored.
fn check_references(args: &Args, test: ComplianceTest) -> anyhow::Result<References> {
    let accuracy_log = match (test, &args.accuracy_run) {
        (ComplianceTest::Test01, Some(dir)) => {
            let log = reference_file(
                "--accuracy-run",
                dir,
                ACCURACY_LOG,
                "the accuracy run's responses TEST01 compares with",
            )?;
            check_run_mode("--accuracy-run", dir, "AccuracyOnly")?;
            Some(log)
        }
        (ComplianceTest::Test01, None) => bail!(
            "TEST01 needs --accuracy-run DIR: the submission's accuracy run, holding {ACCURACY_LOG}"
        ),
        (_, Some(_)) => bail!("--accuracy-run is for TEST01 ({test} does not read it)"),
        (_, None) => None,
    };
    let performance_file = match test {
        ComplianceTest::Test01 => Some(DETAIL_LOG),
        ComplianceTest::Test04 => Some(SUMMARY_LOG),
        ComplianceTest::Test06 => None,
    };
    let performance = match (performance_file, &args.performance_run) {
        (Some(file), Some(dir)) => {
            let path = reference_file(
                "--performance-run",
                dir,
                file,
                "the performance run's result the compliance run is compared with",
            )?;
            check_run_mode("--performance-run", dir, "PerformanceOnly")?;
            Some(path)
        }
        (Some(file), None) => bail!(
            "{test} needs --performance-run DIR: the submission's performance run, holding {file}"
        ),
        (None, Some(_)) => {
            bail!("--performance-run is for TEST01 and TEST04 ({test} does not read it)")
        }
        (None, None) => None,
    };
    let (performance_detail, performance_summary) = match test {
        ComplianceTest::Test01 => (performance, None),
        _ => (None, performance),
    };
    Ok(References {
        accuracy_log,
        performance_detail,
        performance_summary,
    })
}

/// `dir/file`, or an error naming the flag.
fn reference_file(flag: &str, dir: &Path, file: &str, what: &str) -> anyhow::Result<PathBuf> {
    if !dir.is_dir() {
        bail!("{flag} {}: no such directory", dir.display());
    }
    let path = dir.join(file);
    if !path.is_file() {
        bail!("{flag} {}: no {file} in it ({what})", dir.display());
    }
    Ok(path)
}

/// A run given for the other mode is refused (a SubmissionRun holds both). Runs without a
/// detail log (another harness's accuracy log alone) are taken as given.
fn check_run_mode(flag: &str, dir: &Path, expected: &str) -> anyhow::Result<()> {
    let detail = dir.join(DETAIL_LOG);
    if !detail.is_file() {
        return Ok(());
    }
    let mode = DetailLog::read(&detail)?.text("effective_test_mode")?;
    if mode != expected && mode != "SubmissionRun" {
        bail!(
            "{flag} {}: its test mode is {mode}; {flag} takes the submission's {expected} run",
            dir.display()
        );
    }
    Ok(())
}

/// The dtype the test decodes responses with.
fn dtype(
    args: &Args,
    test: ComplianceTest,
    benchmark: Option<&Benchmark>,
) -> anyhow::Result<Dtype> {
    let given = args.dtype.map(Dtype::from);
    Ok(match (test, given) {
        (ComplianceTest::Test04, Some(_)) => {
            bail!("--dtype is for TEST01 and TEST06 (TEST04 compares performance only)")
        }
        (ComplianceTest::Test01, Some(Dtype::Int16)) => {
            bail!("--dtype int16: TEST01 decodes byte, float32, int32 or int64")
        }
        (ComplianceTest::Test06, Some(Dtype::Byte)) => {
            bail!("--dtype byte: TEST06 decodes int64, int32, int16 or float32 tokens")
        }
        (_, Some(dtype)) => dtype,
        (ComplianceTest::Test01, None) => match benchmark.map(|b| &b.accuracy) {
            Some(Accuracy::Top1 {
                output: OutputEncoding::Int64,
                ..
            }) => Dtype::Int64,
            // Float32 scores, or float32 embeddings.
            Some(Accuracy::Top1 {
                output: OutputEncoding::Float32,
                ..
            })
            | Some(Accuracy::Cosine { .. }) => Dtype::Float32,
            _ => Dtype::Byte,
        },
        (ComplianceTest::Test06, None) => Dtype::Int32,
        (ComplianceTest::Test04, None) => Dtype::Byte,
    })
}

/// The compliance run must not overwrite the submission's runs.
fn check_out_dir(out: &Path, references: &References) -> anyhow::Result<()> {
    let run_dir = performance_run(out);
    let reference_dirs = [
        &references.accuracy_log,
        &references.performance_detail,
        &references.performance_summary,
    ]
    .into_iter()
    .flatten()
    .filter_map(|file| file.parent());
    for reference in reference_dirs {
        let same = |dir: &Path| {
            dir.canonicalize()
                .ok()
                .zip(reference.canonicalize().ok())
                .is_some_and(|(a, b)| a == b)
        };
        if same(out) || same(&run_dir) {
            bail!(
                "--out {}: it would write into the submission's run {}; give the compliance test a folder of its own",
                out.display(),
                reference.display()
            );
        }
    }
    Ok(())
}

/// Removes what an earlier audit into `out` wrote, so no stale verdict survives a failure.
fn clear_old_outputs(out: &Path) -> anyhow::Result<()> {
    let accuracy = out.join("accuracy");
    let stale = [
        out.join(VERIFY_ACCURACY_FILE),
        out.join(VERIFY_PERFORMANCE_FILE),
        out.join(RESULT_JSON),
        accuracy.join(ACCURACY_LOG),
        accuracy.join(mlperf_host::compliance::ACCURACY_FILE),
        accuracy.join(mlperf_host::compliance::BASELINE_ACCURACY_FILE),
        accuracy.join(mlperf_host::compliance::COMPLIANCE_ACCURACY_FILE),
    ];
    for path in stale.iter().filter(|p| p.is_file()) {
        std::fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))?;
    }
    Ok(())
}

/// Writes `out/file` and prints it (with what the script prints to the console only).
fn write_verification(
    out: &Path,
    file: &str,
    verification: &Verification,
    quiet: bool,
) -> anyhow::Result<()> {
    let path = out.join(file);
    std::fs::write(&path, &verification.text)
        .with_context(|| format!("cannot write {}", path.display()))?;
    if !quiet {
        for note in &verification.console_notes {
            println!("{note}");
        }
        println!("\n{}:", path.display());
        print!("{}", verification.text);
    }
    Ok(())
}

/// The compliance run's responses in `out/accuracy/`, as the official scripts copy them.
fn copy_compliance_log(out: &Path, compliance_log: &Path) -> anyhow::Result<()> {
    let dir = out.join("accuracy");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    std::fs::copy(compliance_log, dir.join(ACCURACY_LOG)).with_context(|| {
        format!(
            "cannot copy {} into {}",
            compliance_log.display(),
            dir.display()
        )
    })?;
    Ok(())
}

/// TEST01's accuracy fallback, when the benchmark can score the logs.
fn fallback(
    args: &Args,
    benchmark: Option<&Benchmark>,
    accuracy_log: &Path,
    compliance_log: &Path,
) -> anyhow::Result<()> {
    let (out, quiet) = (&args.run.out, args.run.quiet);
    let Some(benchmark) = benchmark.filter(|b| !matches!(b.accuracy, Accuracy::Unavailable { .. }))
    else {
        if !quiet {
            println!(
                "The responses differ; no benchmark with an accuracy metric (--benchmark) to score the baseline and compliance accuracy in {}",
                out.join("accuracy").display()
            );
        }
        return Ok(());
    };
    let accuracy_dir = out.join("accuracy");
    let result = score_accuracy_fallback(benchmark, accuracy_log, compliance_log, &accuracy_dir)
        .context("scoring TEST01's baseline and compliance accuracy")?;
    if !quiet {
        print_fallback(&result, &accuracy_dir);
    }
    Ok(())
}

fn print_fallback(result: &AccuracyFallback, accuracy_dir: &Path) {
    println!(
        "\nThe responses differ: accuracy of the accuracy run on the {} records of the samples the compliance run logged, and of the compliance run ({}):",
        result.baseline_records,
        accuracy_dir.display()
    );
    print!("baseline:   {}", result.baseline.report());
    print!("compliance: {}", result.compliance.report());
    match result.delta_percent {
        Some(delta) => println!(
            "delta {delta:.3} %: {} the {:.1} % the submission checker accepts",
            if result.within_delta() {
                "within"
            } else {
                "beyond"
            },
            result.allowed_delta_percent
        ),
        None => println!("the compliance accuracy is 0: the submission checker fails it"),
    }
}

/// The message of a backend that failed or panicked during the compliance run.
fn python_bool(value: bool) -> &'static str {
    if value {
        "True"
    } else {
        "False"
    }
}
