//! `mlperf-host audit`: runs a compliance test (TEST01, TEST04, TEST06, TEST07, TEST08, TEST09) with its official audit.config and verifies it against the submission's runs.
//!
//! `--out DIR` becomes the test's folder as the submission checker expects it: the compliance
//! run's logs in `DIR/performance/run_1/`, then the official scripts' `verify_accuracy.txt` and
//! `verify_performance.txt`, and `DIR/accuracy/` with the compliance run's responses.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;
use clap::ValueEnum;
use mlperf_host::benchmark::{Accuracy, Benchmark, OutputEncoding};
use mlperf_host::compliance::{
    find_audit_config, ComplianceTest, DetailLog, Dtype, LogFields, DEFAULT_EOS_TOKEN_ID,
};
use mlperf_host::logs::{ACCURACY_LOG, DETAIL_LOG, SUMMARY_LOG};
use mlperf_host::session::{AuditPlan, References, Session};
use mlperf_host::submission::tree::performance_run;

use super::console::Console;
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
    #[value(name = "TEST07")]
    Test07,
    #[value(name = "TEST08")]
    Test08,
    #[value(name = "TEST09")]
    Test09,
}

impl From<TestArg> for ComplianceTest {
    fn from(arg: TestArg) -> ComplianceTest {
        match arg {
            TestArg::Test01 => ComplianceTest::Test01,
            TestArg::Test04 => ComplianceTest::Test04,
            TestArg::Test06 => ComplianceTest::Test06,
            TestArg::Test07 => ComplianceTest::Test07,
            TestArg::Test08 => ComplianceTest::Test08,
            TestArg::Test09 => ComplianceTest::Test09,
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
  DIR/verify_accuracy.txt      TEST01 (against --accuracy-run), TEST06, TEST07 (the benchmark's \
score of every sample against the audit.config's test07_accuracy_threshold), TEST08 (the \
normalized entropy of each sampled response, matched by its (ts_idx, query_idx), against \
--accuracy-run's, within 0.1 %)
  DIR/verify_output_len.txt    TEST09: the mean output length in int32 tokens against the \
audit.config's test09_min_output_tokens and test09_max_output_tokens
  DIR/verify_performance.txt   TEST01 (detail logs), TEST04 (summaries), against --performance-run
  DIR/accuracy/mlperf_log_accuracy.json   TEST01, TEST06, TEST07, TEST08, TEST09: the compliance run's \
responses
  DIR/accuracy/{accuracy,baseline_accuracy,compliance_accuracy}.txt   TEST01 when the responses \
differ and --benchmark has an accuracy metric
  DIR/result.json              the compliance run's result, for programs

The audit.config is configs/audit/<TEST>/<model>/audit.config, else configs/audit/<TEST>/audit.config \
(model: --model, else the benchmark's name, else resnet50), unless --audit-conf names one.

Exit status: 0 when every verification passes, 1 on an error, 2 on a usage error, 3 when a \
verification fails.")]
pub(crate) struct Args {
    /// The compliance test.
    #[arg(long, value_enum, ignore_case = true)]
    pub test: TestArg,
    /// TEST01 and TEST08: the submission's accuracy run directory (its mlperf_log_accuracy.json).
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

pub(crate) fn main(args: &Args) -> ExitCode {
    super::init_logging(args.run.verbose, args.run.quiet);
    super::watch_signals();
    let verified = audit(args);
    if let Some(status) = super::interrupted(&args.run.out) {
        return status;
    }
    match verified {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(EXIT_INVALID),
        Err(error) => super::report_error(&error),
    }
}

/// Runs the test and verifies it; true when every verification passed.
fn audit(args: &Args) -> anyhow::Result<bool> {
    let plan = plan(args)?;
    let outcome = Session::new(&mut Console::new(args.run.quiet)).audit(&plan)?;
    if !args.run.quiet && !outcome.checks.is_empty() {
        for (check, passed) in &outcome.checks {
            println!("{check}: {}", python_bool(*passed));
        }
        println!("{} verification complete", plan.test);
    }
    if outcome.destroy_stalled {
        super::exit_without_plugin(&args.run);
    }
    Ok(outcome.passed)
}

/// Everything that can be refused is refused here, before anything runs.
pub(crate) fn plan(args: &Args) -> anyhow::Result<AuditPlan> {
    if args.run.tuning.tune {
        bail!("--tune: a compliance test runs with the submission's settings (tune them with `mlperf-host tune`)");
    }
    let test = ComplianceTest::from(args.test);
    let references = check_references(args, test)?;
    let mut run = super::run_plan::run_plan(&args.run)?;
    if test == ComplianceTest::Test07 && run.benchmark.is_none() {
        bail!("TEST07 scores every sample with the benchmark's accuracy metric: give --benchmark");
    }
    let dtype = dtype(args, test, run.benchmark.as_ref())?;
    let eos_token_id = match (test, args.eos_token_id) {
        (ComplianceTest::Test06, id) => id.unwrap_or(DEFAULT_EOS_TOKEN_ID),
        (_, Some(_)) => bail!("--eos-token-id is for TEST06 (its EOS check)"),
        (_, None) => DEFAULT_EOS_TOKEN_ID,
    };
    let audit_config = match &args.run.audit_conf {
        Some(path) => path.clone(),
        None => find_audit_config(test, &run.model)?,
    };
    let out = args.run.out.clone();
    run.audit_config = Some(super::run_plan::checked_audit_config(&audit_config)?);
    run.out = performance_run(&out);
    // The checker allows only LoadGen's files in run_1/.
    run.results_dir = out.clone();
    Ok(AuditPlan {
        test,
        out,
        references,
        dtype,
        eos_token_id,
        run,
    })
}

/// The reference files the test reads, each checked to exist; flags the test does not use are
/// refused rather than ignored.
fn check_references(args: &Args, test: ComplianceTest) -> anyhow::Result<References> {
    let reads_accuracy_run = matches!(test, ComplianceTest::Test01 | ComplianceTest::Test08);
    let accuracy_log = match (reads_accuracy_run, &args.accuracy_run) {
        (true, Some(dir)) => {
            let log = reference_file(
                "--accuracy-run",
                dir,
                ACCURACY_LOG,
                &format!("the accuracy run's responses {test} compares with"),
            )?;
            check_run_mode("--accuracy-run", dir, "AccuracyOnly")?;
            Some(log)
        }
        (true, None) => bail!(
            "{test} needs --accuracy-run DIR: the submission's accuracy run, holding {ACCURACY_LOG}"
        ),
        (false, Some(_)) => {
            bail!("--accuracy-run is for TEST01 and TEST08 ({test} does not read it)")
        }
        (false, None) => None,
    };
    let performance_file = match test {
        ComplianceTest::Test01 => Some(DETAIL_LOG),
        ComplianceTest::Test04 => Some(SUMMARY_LOG),
        ComplianceTest::Test06
        | ComplianceTest::Test07
        | ComplianceTest::Test08
        | ComplianceTest::Test09 => None,
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
        (ComplianceTest::Test07 | ComplianceTest::Test08 | ComplianceTest::Test09, Some(_)) => {
            bail!("--dtype is for TEST01 and TEST06 ({test} decodes responses as its benchmark, as float32 or as int32 tokens)")
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
        (ComplianceTest::Test04 | ComplianceTest::Test07, None) => Dtype::Byte,
        (ComplianceTest::Test09, None) => Dtype::Int32,
        (ComplianceTest::Test08, None) => Dtype::Float32,
    })
}

/// A verdict as the official Python scripts print it.
fn python_bool(value: bool) -> &'static str {
    if value {
        "True"
    } else {
        "False"
    }
}
