//! The benchmark cases through the official LoadGen, with the SUT the native cases use: engine
//! comparisons made in one binary, with identical SUT code.
//!
//! Figures come from the official detail log, whose definitions match the native report's:
//! SingleStream (queries - 1) / last issue time, Offline samples / longest latency, Server
//! completed queries / last completion time.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::{peak_rss_bytes, BenchReport, Completion, FirstIssue, NullQsl};
use crate::loadgen::{SystemUnderTest, TestScenario, TestSettings};
use crate::logs::DetailLog;
use crate::official::engine::{run_cpp_null_sut, LogOutput, TestSettings as OfficialSettings};
use crate::official::settings::settings_from_native;
use crate::official::{run_test, AbortReport, Watch};

/// Runs `settings` against `sut` on the official LoadGen and measures it like
/// [`super::run_case_with`].
pub fn run_case_with(
    case: &str,
    settings: &TestSettings,
    completion: Completion,
    qsl_samples: usize,
    sut: &dyn SystemUnderTest,
) -> anyhow::Result<BenchReport> {
    measure(case, "official", settings, completion, |official, log| {
        let sut = FirstIssue::new(sut);
        let mut qsl = NullQsl::holding(qsl_samples);
        let watch = Watch {
            drain_timeout: Duration::from_secs(30),
            stall_timeout: None,
            sut_name: String::new(),
            on_abort: report_abort,
            interrupted: || None,
            progress: None,
        };
        let started = Instant::now();
        run_test(&sut, &mut qsl, official, log, None, &watch)?;
        let first_issue = sut.first.get().copied().unwrap_or(started);
        Ok(first_issue.duration_since(started))
    })
}

/// Runs `settings` against the in-process null SUT on the official LoadGen.
pub fn run_case(
    case: &str,
    settings: &TestSettings,
    completion: Completion,
    qsl_samples: usize,
) -> anyhow::Result<BenchReport> {
    let sut = super::NullSut::new(completion);
    let report = run_case_with(case, settings, completion, qsl_samples, &*sut);
    sut.shut_down();
    report
}

/// Runs `settings` on the official LoadGen with a null SUT written in C++ against its own
/// interfaces (no Rust, no plugin ABI): the baseline of the engine comparison.
pub fn run_case_cpp(
    case: &str,
    settings: &TestSettings,
    completion: Completion,
    qsl_samples: usize,
) -> anyhow::Result<BenchReport> {
    measure(
        case,
        "official-cpp",
        settings,
        completion,
        |official, log| {
            let worker = completion == Completion::Worker;
            Ok(run_cpp_null_sut(official, log, qsl_samples, worker)?)
        },
    )
}

/// Runs one case through `run` (which returns the time to the first issue) with its logs in
/// a temporary directory, and reads the figures from the detail log.
fn measure(
    case: &str,
    engine: &str,
    settings: &TestSettings,
    completion: Completion,
    run: impl FnOnce(&OfficialSettings, &LogOutput) -> anyhow::Result<Duration>,
) -> anyhow::Result<BenchReport> {
    let official = settings_from_native(settings)?;
    let logs = LogDir::new()?;
    let rss_before = peak_rss_bytes();
    let started = Instant::now();
    let startup = run(&official, &LogOutput::in_dir(&logs.0))?;
    let total = started.elapsed();
    let log = DetailLog::read(&logs.0.join(crate::logs::DETAIL_LOG))?;
    let mut report = report(
        case,
        completion,
        settings.scenario,
        &log,
        startup,
        total,
        rss_before,
    )?;
    report.engine = engine.to_string();
    Ok(report)
}

fn report_abort(report: &AbortReport) {
    eprintln!(
        "error: the official LoadGen was aborted: {} ({} issued, {} completed)",
        report.reason, report.counts.issued, report.counts.completed
    );
}

fn report(
    case: &str,
    completion: Completion,
    scenario: TestScenario,
    log: &DetailLog,
    startup: Duration,
    total: Duration,
    rss_before: u64,
) -> anyhow::Result<BenchReport> {
    let number = |key: &str| {
        log.f64(key)
            .with_context(|| format!("the official detail log has no {key}"))
    };
    let queries = number("result_query_count")? as u64;
    let samples_per_query = number("effective_samples_per_query")? as u64;
    let (throughput, active_s) = match scenario {
        TestScenario::Offline => {
            let throughput = number("result_samples_per_second")?;
            (throughput, number("result_max_latency_ns")? * 1e-9)
        }
        TestScenario::Server => {
            let throughput = number("result_completed_samples_per_sec")?;
            (throughput, queries as f64 / throughput)
        }
        _ => {
            let throughput = number("result_qps_with_loadgen_overhead")?;
            (throughput, queries.saturating_sub(1) as f64 / throughput)
        }
    };
    let samples = queries * samples_per_query;
    let peak = peak_rss_bytes();
    Ok(BenchReport {
        case: case.to_string(),
        engine: "official".into(),
        completion,
        valid: log.str("result_validity") == Some("VALID"),
        queries,
        samples,
        throughput_per_s: throughput,
        startup_ms: startup.as_secs_f64() * 1e3,
        end_of_run_ms: (total.as_secs_f64() - startup.as_secs_f64() - active_s).max(0.0) * 1e3,
        total_ms: total.as_secs_f64() * 1e3,
        peak_rss_bytes: peak,
        bytes_per_sample: peak.saturating_sub(rss_before) as f64 / samples.max(1) as f64,
        process_bytes_per_sample: peak as f64 / samples.max(1) as f64,
        p99_latency_ns: log
            .f64("result_99.00_percentile_latency_ns")
            .map(|ns| ns as i64),
    })
}

/// A directory for the official logs of one case, removed afterwards.
struct LogDir(PathBuf);

impl LogDir {
    fn new() -> anyhow::Result<LogDir> {
        let dir = std::env::temp_dir().join(format!("mlperf-host-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(LogDir(dir))
    }
}

impl Drop for LogDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
