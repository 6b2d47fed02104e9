//! `mlperf_log_summary.txt`: the human-readable result of a test, in the exact layout of the
//! official LoadGen 6.0.17 (`PerformanceSummary::LogSummary`, `TestSettingsInternal::LogSummary`
//! and the footer `Logger` writes at StopLogging; spec §6.2).
//!
//! Every official `summary(...)` call writes its message and value followed by `\n`; values go
//! through a default `std::ostream` (doubles as `%g` with 6 significant digits, bools as 0/1)
//! unless the official code formats them with `DoubleToString` (`%.2f`, `%.1f` for labels).

use crate::diagnostics::Severity;
use crate::results::{LatencyStats, PerformanceSummary, ScenarioMetrics, REPORTED_PERCENTILES};
use crate::settings::{TestMode, TestScenario};
use crate::TestResult;

use super::number::{format_fixed, format_g6};

/// The 48-character rule around the section titles.
const BANNER: &str = "================================================";

/// The official text for the failed min-queries check; the summary adds a second line to it.
const MIN_QUERIES_REASON: &str = "The test exited early, before enough queries were issued.";

/// Labels of one latency block: min, max, mean, and the text after each percentile.
struct BlockLabels {
    min: &'static str,
    max: &'static str,
    mean: &'static str,
    percentile_suffix: &'static str,
}

const SAMPLE_LATENCY_LABELS: BlockLabels = BlockLabels {
    min: "Min latency (ns)                : ",
    max: "Max latency (ns)                : ",
    mean: "Mean latency (ns)               : ",
    percentile_suffix: " percentile latency (ns)   : ",
};

const FIRST_TOKEN_LABELS: BlockLabels = BlockLabels {
    min: "Min First Token latency (ns)                : ",
    max: "Max First Token latency (ns)                : ",
    mean: "Mean First Token latency (ns)               : ",
    percentile_suffix: " percentile first token latency (ns)   : ",
};

const TIME_PER_OUTPUT_TOKEN_LABELS: BlockLabels = BlockLabels {
    min: "Min Time per Output Token (ns)                : ",
    max: "Max Time per Output Token (ns)                : ",
    mean: "Mean Time per Output Token (ns)               : ",
    percentile_suffix: " percentile time to output token (ns)   : ",
};

/// The official mlperf_log_summary.txt for a finished test, byte for byte in layout.
///
/// Runs with a performance result (PerformanceOnly, SubmissionRun, FindPeakPerformance) print
/// the results, the additional stats and the parameters used; every run ends with the warning
/// and error counts, which is all an AccuracyOnly run prints.
pub fn render_summary(result: &TestResult) -> String {
    let mut out = Lines::default();
    if let Some(reason) = &result.abandoned {
        write_abandoned(&mut out, result, reason);
    }
    if let Some(performance) = &result.performance {
        write_results(&mut out, result, performance);
        write_additional_stats(&mut out, performance);
        write_parameters(&mut out, result);
    }
    let warnings = count(result, Severity::Warning);
    let errors = count(result, Severity::Error);
    write_footer(&mut out, warnings, errors);
    out.text
}

/// The summary text, one official `summary(...)` call per [`Lines::line`].
#[derive(Default)]
struct Lines {
    text: String,
}

impl Lines {
    fn line(&mut self, line: impl AsRef<str>) {
        self.text.push_str(line.as_ref());
        self.text.push('\n');
    }

    /// A title between banners, preceded by an empty line.
    fn section(&mut self, title: &str) {
        self.line("");
        self.line(BANNER);
        self.line(title);
        self.line(BANNER);
    }
}

fn count(result: &TestResult, severity: Severity) -> usize {
    result
        .diagnostics
        .iter()
        .filter(|d| d.severity == severity)
        .count()
}

fn yes_no(met: bool) -> &'static str {
    if met {
        "Yes"
    } else {
        "NO"
    }
}

/// The `%.1f` label of a target percentile: 0.9 → `90.0`.
fn percentile_label(percentile: f64) -> String {
    format_fixed(percentile * 100.0, 1)
}

/// The target-percentile value of a population; the official value stays 0 without samples.
fn target_ns(stats: Option<&LatencyStats>) -> i64 {
    stats.map_or(0, |s| s.target_ns)
}

/// The header of a test given up with a call into the SUT running, which has no numbers: its
/// validity and why, in the place and words of the results block.
fn write_abandoned(out: &mut Lines, result: &TestResult, reason: &str) {
    write_header(out, result);
    out.line("Result is : INVALID");
    out.line("Recommendations:");
    out.line(format!(" * The test was abandoned: {reason}."));
}

fn write_header(out: &mut Lines, result: &TestResult) {
    let settings = &result.effective;
    out.line(BANNER);
    out.line("MLPerf Results Summary");
    out.line(BANNER);
    out.line(format!("SUT name : {}", result.sut_name));
    out.line(format!("Scenario : {}", settings.scenario.as_str()));
    out.line(format!("Mode     : {}", settings.mode.as_str()));
}

/// Header, headline numbers, validity, recommendations and early stopping.
fn write_results(out: &mut Lines, result: &TestResult, performance: &PerformanceSummary) {
    let settings = &result.effective;
    let scenario = settings.scenario;
    write_header(out, result);

    let percentile = percentile_label(settings.target_latency_percentile);
    let first_token_line = |out: &mut Lines| {
        if let Some(tokens) = &performance.tokens {
            out.line(format!(
                "{percentile}th first token percentile latency (ns) : {}",
                target_ns(tokens.first_token.as_ref())
            ));
        }
    };
    match &performance.metrics {
        ScenarioMetrics::SingleStream { .. } => {
            out.line(format!(
                "{percentile}th percentile latency (ns) : {}",
                target_ns(performance.sample_latency.as_ref())
            ));
            first_token_line(out);
        }
        ScenarioMetrics::MultiStream { .. } => {
            out.line(format!(
                "{percentile}th percentile latency (ns) : {}",
                target_ns(performance.query_latency.as_ref())
            ));
            first_token_line(out);
        }
        ScenarioMetrics::Server {
            completed_samples_per_second,
            tokens,
            inferred_completed_tokens_per_second,
            ..
        } => {
            out.line(format!(
                "Completed samples per second    : {}",
                format_fixed(*completed_samples_per_second, 2)
            ));
            if let Some(tokens) = tokens {
                out.line(format!(
                    "Completed tokens per second: {}",
                    format_fixed(tokens.completed_tokens_per_second, 2)
                ));
            }
            if let Some(inferred) = inferred_completed_tokens_per_second {
                out.line(format!(
                    "Completed tokens per second (inferred): {}",
                    format_fixed(*inferred, 2)
                ));
            }
        }
        ScenarioMetrics::Offline {
            samples_per_second,
            tokens_per_second,
            inferred_tokens_per_second,
        } => {
            out.line(format!(
                "Samples per second: {}",
                format_g6(*samples_per_second)
            ));
            if let Some(tokens_per_second) = tokens_per_second {
                out.line(format!(
                    "Tokens per second: {}",
                    format_g6(*tokens_per_second)
                ));
            }
            if let Some(inferred) = inferred_tokens_per_second {
                out.line(format!(
                    "Tokens per second (inferred): {}",
                    format_g6(*inferred)
                ));
            }
        }
    }

    let validity = &performance.validity;
    out.line(format!(
        "Result is : {}",
        if validity.valid { "VALID" } else { "INVALID" }
    ));
    if scenario == TestScenario::Server {
        out.line(format!(
            "  Performance constraints satisfied : {}",
            yes_no(validity.perf_constraints_met)
        ));
    }
    out.line(format!(
        "  Min duration satisfied : {}",
        yes_no(validity.min_duration_met)
    ));
    out.line(format!(
        "  Min queries satisfied : {}",
        yes_no(validity.min_queries_met)
    ));
    out.line(format!(
        "  Early stopping satisfied: {}",
        yes_no(validity.early_stopping_met)
    ));

    if !validity.valid {
        // An early-stopping failure adds no bullet (as upstream), so the list may be empty.
        out.line("Recommendations:");
        for reason in &validity.reasons {
            out.line(format!(" * {reason}"));
            if reason == MIN_QUERIES_REASON {
                out.line("   See the detailed log for why this may have occurred.");
            }
        }
    }

    if scenario != TestScenario::Offline {
        // Each text is one official summary call, so an empty one (TTFT when the TPOT test
        // already failed) still prints an empty line.
        let early_stopping = &performance.early_stopping;
        if settings.use_token_latencies {
            out.line("TTFT Early Stopping Result:");
            out.line(
                early_stopping
                    .ttft_lines
                    .as_deref()
                    .unwrap_or(&[])
                    .join("\n"),
            );
            out.line("TPOT Early Stopping Result:");
            out.line(early_stopping.lines.join("\n"));
        } else {
            out.line("Early Stopping Result:");
            out.line(early_stopping.lines.join("\n"));
        }
    }
}

/// One latency block: min, max, mean and the six reported percentiles (`%.2f` labels).
fn write_latency_block(out: &mut Lines, stats: Option<&LatencyStats>, labels: &BlockLabels) {
    out.line(format!("{}{}", labels.min, stats.map_or(0, |s| s.min_ns)));
    out.line(format!("{}{}", labels.max, stats.map_or(0, |s| s.max_ns)));
    out.line(format!("{}{}", labels.mean, stats.map_or(0, |s| s.mean_ns)));
    let percentiles: Vec<(f64, i64)> = match stats {
        Some(s) => s.percentiles.clone(),
        None => REPORTED_PERCENTILES.iter().map(|&p| (p, 0)).collect(),
    };
    for (percentile, latency) in percentiles {
        out.line(format!(
            "{}{}{latency}",
            format_fixed(percentile * 100.0, 2),
            labels.percentile_suffix
        ));
    }
}

fn write_additional_stats(out: &mut Lines, performance: &PerformanceSummary) {
    out.section("Additional Stats");

    match &performance.metrics {
        ScenarioMetrics::SingleStream {
            qps_with_loadgen_overhead,
            qps_without_loadgen_overhead,
            ..
        } => {
            out.line(format!(
                "QPS w/ loadgen overhead         : {}",
                format_fixed(*qps_with_loadgen_overhead, 2)
            ));
            out.line(format!(
                "QPS w/o loadgen overhead        : {}",
                format_fixed(*qps_without_loadgen_overhead, 2)
            ));
            out.line("");
        }
        ScenarioMetrics::Server {
            scheduled_samples_per_second,
            ..
        } => {
            out.line(format!(
                "Scheduled samples per second : {}",
                format_fixed(*scheduled_samples_per_second, 2)
            ));
        }
        ScenarioMetrics::MultiStream { .. } => {
            // Two trailing spaces, as upstream.
            out.line("Per-query latency:  ");
            write_latency_block(
                out,
                performance.query_latency.as_ref(),
                &SAMPLE_LATENCY_LABELS,
            );
        }
        ScenarioMetrics::Offline { .. } => {}
    }
    if performance.scenario != TestScenario::MultiStream {
        write_latency_block(
            out,
            performance.sample_latency.as_ref(),
            &SAMPLE_LATENCY_LABELS,
        );
    }

    let Some(tokens) = &performance.tokens else {
        return;
    };
    out.line("");
    match &performance.metrics {
        ScenarioMetrics::SingleStream {
            tokens: Some(rates),
            ..
        } => {
            out.line(format!(
                "TPS w/ loadgen overhead         : {}",
                format_fixed(rates.rates.tps_with_loadgen_overhead, 2)
            ));
            out.line(format!(
                "TPS w/o loadgen overhead        : {}",
                format_fixed(rates.tps_without_loadgen_overhead, 2)
            ));
        }
        ScenarioMetrics::Server {
            tokens: Some(rates),
            ..
        } => {
            out.line(format!(
                "Completed tokens per second                 : {}",
                format_fixed(rates.completed_tokens_per_second, 2)
            ));
        }
        _ => {}
    }
    if performance.scenario != TestScenario::Offline {
        write_latency_block(out, tokens.first_token.as_ref(), &FIRST_TOKEN_LABELS);
        out.line("");
        write_latency_block(
            out,
            tokens.time_per_output_token.as_ref(),
            &TIME_PER_OUTPUT_TOKEN_LABELS,
        );
    }
}

/// The effective settings of the reported run (`TestSettingsInternal::LogSummary`).
fn write_parameters(out: &mut Lines, result: &TestResult) {
    let settings = &result.effective;
    out.section("Test Parameters Used");
    // FindPeakPerformance reports the summary of its peak run, whose settings differ from the
    // base ones only in target_qps.
    let target_qps = match (&result.find_peak, settings.mode) {
        (Some(report), TestMode::FindPeakPerformance) => {
            report.peak_qps.unwrap_or(settings.target_qps)
        }
        _ => settings.target_qps,
    };
    let flag = |value: bool| u8::from(value);

    out.line(format!(
        "samples_per_query : {}",
        settings.samples_per_query
    ));
    out.line(format!("target_qps : {}", format_g6(target_qps)));
    if settings.use_token_latencies {
        out.line(format!(
            "ttft_latency (ns): {}",
            settings.server_ttft_latency
        ));
        out.line(format!(
            "tpot_latency (ns): {}",
            settings.server_tpot_latency
        ));
    } else {
        out.line(format!(
            "target_latency (ns): {}",
            settings.target_latency_ns
        ));
    }
    out.line(format!(
        "max_async_queries : {}",
        settings.max_async_queries
    ));
    out.line(format!("min_duration (ms): {}", settings.min_duration_ms));
    out.line(format!("max_duration (ms): {}", settings.max_duration_ms));
    out.line(format!("min_query_count : {}", settings.min_query_count));
    out.line(format!("max_query_count : {}", settings.max_query_count));
    out.line(format!("qsl_rng_seed : {}", settings.qsl_rng_seed));
    out.line(format!(
        "sample_index_rng_seed : {}",
        settings.sample_index_rng_seed
    ));
    out.line(format!(
        "schedule_rng_seed : {}",
        settings.schedule_rng_seed
    ));
    out.line(format!(
        "accuracy_log_rng_seed : {}",
        settings.accuracy_log_rng_seed
    ));
    out.line(format!(
        "accuracy_log_probability : {}",
        format_g6(settings.accuracy_log_probability)
    ));
    out.line(format!(
        "accuracy_log_sampling_target : {}",
        settings.accuracy_log_sampling_target
    ));
    out.line(format!(
        "print_timestamps : {}",
        flag(settings.print_timestamps)
    ));
    out.line(format!(
        "performance_issue_unique : {}",
        flag(settings.performance_issue_unique)
    ));
    out.line(format!(
        "performance_issue_same : {}",
        flag(settings.performance_issue_same)
    ));
    out.line(format!(
        "performance_issue_same_index : {}",
        settings.performance_issue_same_index
    ));
    out.line(format!(
        "performance_sample_count : {}",
        settings.performance_sample_count
    ));
    out.line(format!(
        "accuracy_sample_count : {}",
        settings.accuracy_sample_count
    ));
    if settings.sample_concatenate_permutation {
        // The trailing space of the first line is upstream's.
        out.line("WARNING: sample_concatenate_permutation was set to true. ");
        out.line("Generated samples per query might be different as the one in the setting.");
        out.line("Check the generated_samples_per_query line in the detailed log for the real");
        out.line("samples_per_query value");
    }
}

/// The counts the official logger appends at StopLogging.
fn write_footer(out: &mut Lines, warnings: usize, errors: usize) {
    out.line("");
    out.line(match warnings {
        0 => "No warnings encountered during test.".to_string(),
        1 => "1 warning encountered. See detailed log.".to_string(),
        n => format!("{n} warnings encountered. See detailed log."),
    });
    out.line("");
    out.line(match errors {
        0 => "No errors encountered during test.".to_string(),
        1 => "1 ERROR encountered. See detailed log.".to_string(),
        n => format!("{n} ERRORS encountered. See detailed log."),
    });
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::{ConfigFile, ConfigLoader};
    use crate::{
        start_test, Completer, Diagnostic, FindPeakReport, LogSettings, QuerySample,
        QuerySampleResponse, SystemUnderTest, TestSettings,
    };

    /// The golden harness's SUT: answers each sample with its index as 4 little-endian bytes,
    /// token runs with FirstTokenComplete first and `2 + index % 7` tokens. With a delay it
    /// answers the whole query from another thread after sleeping.
    struct GoldenSut {
        tokens: bool,
        delay: Duration,
    }

    fn answer(samples: &[QuerySample], completer: &Completer, tokens: bool) {
        for sample in samples {
            let bytes = (sample.index as u32).to_le_bytes();
            if tokens {
                completer.first_token_complete(&[QuerySampleResponse::new(sample.id, &bytes)]);
                let n_tokens = 2 + (sample.index % 7) as i64;
                completer.query_samples_complete(&[QuerySampleResponse::with_tokens(
                    sample.id, &bytes, n_tokens,
                )]);
            } else {
                completer.query_samples_complete(&[QuerySampleResponse::new(sample.id, &bytes)]);
            }
        }
    }

    impl SystemUnderTest for GoldenSut {
        fn name(&self) -> &str {
            "PySUT"
        }

        fn issue_query(&self, samples: &[QuerySample], completer: &Completer) {
            if self.delay.is_zero() {
                answer(samples, completer, self.tokens);
                return;
            }
            let (samples, completer) = (samples.to_vec(), completer.clone());
            let (tokens, delay) = (self.tokens, self.delay);
            std::thread::spawn(move || {
                std::thread::sleep(delay);
                answer(&samples, &completer, tokens);
            });
        }
    }

    use crate::testing::NullQsl as Qsl;

    fn run(
        settings: &TestSettings,
        qsl: (usize, usize),
        tokens: bool,
        delay_ms: u64,
    ) -> TestResult {
        let sut = GoldenSut {
            tokens,
            delay: Duration::from_millis(delay_ms),
        };
        let mut qsl = Qsl {
            total: qsl.0,
            performance: qsl.1,
        };
        start_test(&sut, &mut qsl, settings, &LogSettings::default()).expect("test runs")
    }

    /// Settings as the golden runs built them: the embedded mlperf.conf, then a user.conf.
    fn configured(model: &str, scenario: TestScenario, user_conf: &str) -> TestSettings {
        let mut settings = TestSettings {
            scenario,
            mode: TestMode::PerformanceOnly,
            ..TestSettings::default()
        };
        let user_conf = ConfigFile::parse(user_conf, "user.conf").expect("valid user.conf");
        ConfigLoader::new().apply_user_conf(&mut settings, &user_conf, model, scenario);
        settings
    }

    /// A line with every number (`12`, `36499.8`, `1.72e+06`) replaced by `#`.
    fn skeleton(line: &str) -> String {
        let bytes = line.as_bytes();
        let digit_at = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_digit);
        let mut out = String::new();
        let mut i = 0;
        while i < bytes.len() {
            if !digit_at(i) {
                let c = line[i..].chars().next().expect("in bounds");
                out.push(c);
                i += c.len_utf8();
                continue;
            }
            while digit_at(i) {
                i += 1;
            }
            if bytes.get(i) == Some(&b'.') && digit_at(i + 1) {
                i += 1;
                while digit_at(i) {
                    i += 1;
                }
            }
            if bytes.get(i) == Some(&b'e')
                && matches!(bytes.get(i + 1), Some(b'+' | b'-'))
                && digit_at(i + 2)
            {
                i += 2;
                while digit_at(i) {
                    i += 1;
                }
            }
            out.push('#');
        }
        out
    }

    /// The key of a `key : value` parameter line.
    fn parameter_key(line: &str) -> &str {
        line.split(':').next().unwrap_or(line).trim_end()
    }

    /// Same lines as the golden except for numbers; parameter lines identical unless their key
    /// is in `changed` (settings the test shortened).
    fn assert_matches_golden(name: &str, golden: &str, ours: &str, changed: &[&str]) {
        let golden_lines: Vec<&str> = golden.split('\n').collect();
        let our_lines: Vec<&str> = ours.split('\n').collect();
        let mismatches: Vec<String> = golden_lines
            .iter()
            .zip(&our_lines)
            .enumerate()
            .filter(|(_, (g, o))| skeleton(g) != skeleton(o))
            .map(|(i, (g, o))| format!("line {}: golden {g:?}, ours {o:?}", i + 1))
            .collect();
        assert!(
            mismatches.is_empty() && golden_lines.len() == our_lines.len(),
            "{name}: {} golden lines, {} ours; differences:\n{}\n--- ours:\n{ours}",
            golden_lines.len(),
            our_lines.len(),
            mismatches.join("\n")
        );
        let parameters = golden_lines
            .iter()
            .position(|l| *l == "Test Parameters Used")
            .expect("golden has parameters");
        for (g, o) in golden_lines[parameters..]
            .iter()
            .zip(&our_lines[parameters..])
        {
            if !changed.contains(&parameter_key(g)) {
                assert_eq!(g, o, "{name}: parameter line");
            }
        }
    }

    struct GoldenCase {
        name: &'static str,
        golden: &'static str,
        model: &'static str,
        scenario: TestScenario,
        /// QSL total and performance sample counts.
        qsl: (usize, usize),
        tokens: bool,
        /// The golden's user.conf, shortened: min_duration 0 and, for Server, a higher qps.
        user_conf: &'static str,
        /// Parameter lines whose value the shortened user.conf changes.
        changed: &'static [&'static str],
        sut_delay_ms: u64,
        /// Warnings the official logger raised from timing ("Logging allocation detected"),
        /// which the engine does not have; added so the footers compare.
        timing_warnings: usize,
    }

    fn check_golden(case: &GoldenCase) {
        let settings = configured(case.model, case.scenario, case.user_conf);
        let mut result = run(&settings, case.qsl, case.tokens, case.sut_delay_ms);
        for _ in 0..case.timing_warnings {
            result.diagnostics.push(Diagnostic::warning(
                "warning_generic_message",
                "Logging allocation detected",
            ));
        }
        let ours = render_summary(&result);
        assert_matches_golden(case.name, case.golden, &ours, case.changed);
    }

    #[test]
    fn resnet50_single_stream_matches_golden() {
        check_golden(&GoldenCase {
            name: "resnet50_SingleStream",
            golden: GOLDEN_RESNET50_SINGLE_STREAM,
            model: "resnet50",
            scenario: TestScenario::SingleStream,
            qsl: (5000, 1024),
            tokens: false,
            user_conf: "*.SingleStream.target_latency = 1\n\
                        *.SingleStream.min_duration = 0\n\
                        *.SingleStream.min_query_count = 700\n",
            changed: &["min_duration (ms)"],
            sut_delay_ms: 0,
            timing_warnings: 0,
        });
    }

    #[test]
    fn resnet50_multi_stream_matches_golden() {
        check_golden(&GoldenCase {
            name: "resnet50_MultiStream",
            golden: GOLDEN_RESNET50_MULTI_STREAM,
            model: "resnet50",
            scenario: TestScenario::MultiStream,
            qsl: (5000, 1024),
            tokens: false,
            user_conf: "*.MultiStream.target_latency = 2\n*.MultiStream.min_duration = 0\n",
            changed: &["min_duration (ms)"],
            sut_delay_ms: 0,
            timing_warnings: 0,
        });
    }

    #[test]
    fn resnet50_server_matches_golden() {
        check_golden(&GoldenCase {
            name: "resnet50_Server",
            golden: GOLDEN_RESNET50_SERVER,
            model: "resnet50",
            scenario: TestScenario::Server,
            qsl: (5000, 1024),
            tokens: false,
            user_conf: "*.Server.target_qps = 20000\n\
                        *.Server.min_duration = 0\n\
                        *.Server.min_query_count = 600\n",
            changed: &["min_duration (ms)", "target_qps"],
            sut_delay_ms: 0,
            timing_warnings: 0,
        });
    }

    #[test]
    fn resnet50_offline_matches_golden() {
        check_golden(&GoldenCase {
            name: "resnet50_Offline",
            golden: GOLDEN_RESNET50_OFFLINE,
            model: "resnet50",
            scenario: TestScenario::Offline,
            qsl: (5000, 1024),
            tokens: false,
            user_conf: "*.Offline.target_qps = 20000\n*.Offline.min_duration = 0\n",
            changed: &["min_duration (ms)"],
            sut_delay_ms: 5,
            timing_warnings: 1,
        });
    }

    #[test]
    fn llama2_single_stream_tokens_matches_golden() {
        check_golden(&GoldenCase {
            name: "llama2-70b_SingleStream_tokens",
            golden: GOLDEN_LLAMA2_SINGLE_STREAM_TOKENS,
            model: "llama2-70b",
            scenario: TestScenario::SingleStream,
            qsl: (1000, 1000),
            tokens: true,
            user_conf: "*.SingleStream.min_duration = 0\n",
            changed: &["min_duration (ms)"],
            sut_delay_ms: 0,
            timing_warnings: 0,
        });
    }

    #[test]
    fn llama2_server_tokens_matches_golden() {
        check_golden(&GoldenCase {
            name: "llama2-70b_Server_tokens",
            golden: GOLDEN_LLAMA2_SERVER_TOKENS,
            model: "llama2-70b",
            scenario: TestScenario::Server,
            qsl: (1000, 1000),
            tokens: true,
            user_conf: "*.Server.target_qps = 50000\n*.Server.min_duration = 0\n",
            changed: &["min_duration (ms)", "target_qps"],
            sut_delay_ms: 0,
            timing_warnings: 0,
        });
    }

    #[test]
    fn llama2_offline_tokens_matches_golden() {
        check_golden(&GoldenCase {
            name: "llama2-70b_Offline_tokens",
            golden: GOLDEN_LLAMA2_OFFLINE_TOKENS,
            model: "llama2-70b",
            scenario: TestScenario::Offline,
            qsl: (1000, 1000),
            tokens: true,
            user_conf: "*.Offline.target_qps = 1000\n*.Offline.min_duration = 0\n",
            changed: &["min_duration (ms)"],
            sut_delay_ms: 5,
            timing_warnings: 1,
        });
    }

    #[test]
    fn skeleton_replaces_every_number_form() {
        assert_eq!(
            skeleton("99.0th percentile latency (ns) : 3616133"),
            "#th percentile latency (ns) : #"
        );
        assert_eq!(
            skeleton("Samples per second: 1.2288e+06"),
            "Samples per second: #"
        );
        assert_eq!(skeleton(" * Would need 5 more,"), " * Would need # more,");
    }

    #[test]
    fn format_g6_prints_like_a_default_ostream() {
        let cases: [(f64, &str); 25] = [
            (0.0, "0"),
            (-0.0, "-0"),
            (1000.0, "1000"),
            (36499.8, "36499.8"),
            (483290.0, "483290"),
            (1e6, "1e+06"),
            (1.72e6, "1.72e+06"),
            (0.9, "0.9"),
            (0.99, "0.99"),
            (-2.5, "-2.5"),
            (-1234567.0, "-1.23457e+06"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (0.000123456789, "0.000123457"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (999999.5, "1e+06"),
            (199.978123, "199.978"),
            (12345.65, "12345.6"), // stored just below the half
            (0.1 + 0.2, "0.3"),
            (1e100, "1e+100"),
            (2.5e-300, "2.5e-300"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ];
        for (value, expected) in cases {
            assert_eq!(format_g6(value), expected, "{value:e}");
        }
        // glibc prints a NaN's sign bit (x86 produces 0/0 with it set).
        assert_eq!(format_g6(-f64::NAN), "-nan");
        // An exact tie rounds to even, as glibc does.
        assert_eq!(format_g6(1234565.0), "1.23456e+06");
        assert_eq!(format_g6(1234575.0), "1.23458e+06");
    }

    #[test]
    fn fixed_format_matches_double_to_string() {
        assert_eq!(format_fixed(199.978, 2), "199.98");
        assert_eq!(format_fixed(1e6, 2), "1000000.00");
        assert_eq!(format_fixed(0.9 * 100.0, 1), "90.0");
        assert_eq!(format_fixed(0.999 * 100.0, 2), "99.90");
        assert_eq!(format_fixed(-0.0, 2), "-0.00");
        assert_eq!(format_fixed(f64::INFINITY, 2), "inf");
        assert_eq!(format_fixed(f64::NAN, 2), "nan");
    }

    fn quick_settings(scenario: TestScenario, mode: TestMode) -> TestSettings {
        TestSettings {
            scenario,
            mode,
            min_duration_ms: 0,
            min_query_count: 64,
            // Server queries follow the schedule in every mode; keep it short.
            server_target_qps: 10_000.0,
            ..TestSettings::default()
        }
    }

    const CLEAN_FOOTER: &str =
        "\nNo warnings encountered during test.\n\nNo errors encountered during test.\n";

    #[test]
    fn accuracy_only_prints_only_the_footer() {
        for scenario in TestScenario::ALL {
            let result = run(
                &quick_settings(scenario, TestMode::AccuracyOnly),
                (40, 20),
                false,
                0,
            );
            assert!(result.performance.is_none());
            assert_eq!(render_summary(&result), CLEAN_FOOTER, "{scenario}");
        }
    }

    #[test]
    fn footer_counts_warnings_and_errors_with_official_wording() {
        let mut result = run(
            &quick_settings(TestScenario::SingleStream, TestMode::AccuracyOnly),
            (40, 20),
            false,
            0,
        );
        result
            .diagnostics
            .push(Diagnostic::info("generic_message", "not counted"));
        assert_eq!(render_summary(&result), CLEAN_FOOTER);
        result.diagnostics.push(Diagnostic::warning("w", "one"));
        result.diagnostics.push(Diagnostic::error("e", "one"));
        assert_eq!(
            render_summary(&result),
            "\n1 warning encountered. See detailed log.\n\n1 ERROR encountered. See detailed log.\n"
        );
        result.diagnostics.push(Diagnostic::warning("w", "two"));
        result.diagnostics.push(Diagnostic::error("e", "two"));
        result.diagnostics.push(Diagnostic::error("e", "three"));
        assert_eq!(
            render_summary(&result),
            "\n2 warnings encountered. See detailed log.\n\n3 ERRORS encountered. See detailed log.\n"
        );
    }

    const EQUAL_ISSUE_WARNING: &str = "accuracy_sample_count : 40\n\
        WARNING: sample_concatenate_permutation was set to true. \n\
        Generated samples per query might be different as the one in the setting.\n\
        Check the generated_samples_per_query line in the detailed log for the real\n\
        samples_per_query value\n\
        \nNo warnings";

    #[test]
    fn equal_issue_warning_follows_the_parameters_only_when_set() {
        for equal_issue in [false, true] {
            let settings = TestSettings {
                sample_concatenate_permutation: equal_issue,
                ..quick_settings(TestScenario::SingleStream, TestMode::PerformanceOnly)
            };
            let summary = render_summary(&run(&settings, (40, 20), false, 0));
            assert_eq!(
                summary.contains(EQUAL_ISSUE_WARNING),
                equal_issue,
                "{summary}"
            );
            assert_eq!(
                summary.contains("accuracy_sample_count : 40\n\nNo warnings"),
                !equal_issue
            );
        }
    }

    #[test]
    fn submission_run_prints_the_performance_block() {
        let result = run(
            &quick_settings(TestScenario::SingleStream, TestMode::SubmissionRun),
            (40, 20),
            false,
            0,
        );
        let summary = render_summary(&result);
        assert!(
            summary.contains("\nMode     : SubmissionRun\n"),
            "{summary}"
        );
        assert!(summary.contains("\nResult is : VALID\n"), "{summary}");
        assert!(summary.ends_with(&format!("accuracy_sample_count : 40\n{CLEAN_FOOTER}")));
    }

    #[test]
    fn invalid_server_run_lists_recommendations() {
        // 20 queries of a SUT slower than the 1 ms bound, stopped by max_query_count before
        // min_query_count and min_duration: every check fails.
        let settings = TestSettings {
            scenario: TestScenario::Server,
            server_target_qps: 1000.0,
            server_target_latency_ns: 1_000_000,
            min_duration_ms: 200,
            min_query_count: 100,
            max_query_count: 20,
            ..TestSettings::default()
        };
        let result = run(&settings, (40, 20), false, 3);
        let summary = render_summary(&result);
        let expected = "Result is : INVALID\n\
            \x20 Performance constraints satisfied : NO\n\
            \x20 Min duration satisfied : NO\n\
            \x20 Min queries satisfied : NO\n\
            \x20 Early stopping satisfied: NO\n\
            Recommendations:\n\
            \x20* Reduce target QPS to improve latency.\n\
            \x20* Increase the target QPS so the loadgen pre-generates more queries.\n\
            \x20* The test exited early, before enough queries were issued.\n\
            \x20  See the detailed log for why this may have occurred.\n\
            Early Stopping Result:\n\
            \x20* Run unsuccessful.\n\
            \x20* Processed 20 queries.\n";
        assert!(summary.contains(expected), "{summary}");
    }

    #[test]
    fn engine_reasons_become_extra_bullets_and_an_empty_ttft_text_an_empty_line() {
        let settings = TestSettings {
            use_token_latencies: true,
            ..quick_settings(TestScenario::SingleStream, TestMode::PerformanceOnly)
        };
        let mut result = run(&settings, (40, 20), true, 0);
        let performance = result.performance.as_mut().expect("performance");
        performance.validity.valid = false;
        performance.validity.all_samples_completed = false;
        performance
            .validity
            .reasons
            .push("3 samples never completed.".to_string());
        // The TTFT test is skipped when the TPOT one fails.
        performance.validity.early_stopping_met = false;
        performance.early_stopping.ttft_lines = Some(Vec::new());
        let summary = render_summary(&result);
        assert!(
            summary.contains(
                "  Early stopping satisfied: NO\n\
                 Recommendations:\n\
                 \x20* 3 samples never completed.\n\
                 TTFT Early Stopping Result:\n\
                 \n\
                 TPOT Early Stopping Result:\n\
                 \x20* Processed at least 64 queries (64).\n"
            ),
            "{summary}"
        );
    }

    #[test]
    fn find_peak_reports_the_peak_target_qps() {
        let mut result = run(
            &quick_settings(TestScenario::SingleStream, TestMode::PerformanceOnly),
            (40, 20),
            false,
            0,
        );
        result.effective.mode = TestMode::FindPeakPerformance;
        result.find_peak = Some(FindPeakReport {
            trials: vec![(1000.0, true), (1234.5, true)],
            peak_qps: Some(1234.5),
        });
        let summary = render_summary(&result);
        assert!(summary.contains("\nMode     : FindPeakPerformance\n"));
        assert!(summary.contains("\ntarget_qps : 1234.5\n"), "{summary}");
    }

    // The official 6.0.17 wheel's summaries (shared/reference/golden/example_logs), verbatim;
    // two lines carry trailing spaces ("Per-query latency:  ", "...set to true. ").
    const GOLDEN_RESNET50_SINGLE_STREAM: &str =
        include_str!("../../tests/data/example_logs/resnet50_SingleStream/mlperf_log_summary.txt");

    const GOLDEN_RESNET50_MULTI_STREAM: &str =
        include_str!("../../tests/data/example_logs/resnet50_MultiStream/mlperf_log_summary.txt");

    const GOLDEN_RESNET50_SERVER: &str =
        include_str!("../../tests/data/example_logs/resnet50_Server/mlperf_log_summary.txt");

    const GOLDEN_RESNET50_OFFLINE: &str =
        include_str!("../../tests/data/example_logs/resnet50_Offline/mlperf_log_summary.txt");

    const GOLDEN_LLAMA2_SINGLE_STREAM_TOKENS: &str = include_str!(
        "../../tests/data/example_logs/llama2-70b_SingleStream_tokens/mlperf_log_summary.txt"
    );

    const GOLDEN_LLAMA2_SERVER_TOKENS: &str = include_str!(
        "../../tests/data/example_logs/llama2-70b_Server_tokens/mlperf_log_summary.txt"
    );

    const GOLDEN_LLAMA2_OFFLINE_TOKENS: &str = include_str!(
        "../../tests/data/example_logs/llama2-70b_Offline_tokens/mlperf_log_summary.txt"
    );
}
