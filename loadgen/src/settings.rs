//! `TestSettings` and `LogSettings`: every field of the official LoadGen 6.0.17 with its default.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The four MLPerf scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum TestScenario {
    #[default]
    SingleStream,
    MultiStream,
    Server,
    Offline,
}

impl TestScenario {
    pub const ALL: [TestScenario; 4] = [
        TestScenario::SingleStream,
        TestScenario::MultiStream,
        TestScenario::Server,
        TestScenario::Offline,
    ];

    /// The name the official LoadGen prints and the config files use.
    pub fn as_str(self) -> &'static str {
        match self {
            TestScenario::SingleStream => "SingleStream",
            TestScenario::MultiStream => "MultiStream",
            TestScenario::Server => "Server",
            TestScenario::Offline => "Offline",
        }
    }
}

impl fmt::Display for TestScenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TestScenario {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TestScenario::ALL
            .into_iter()
            .find(|sc| sc.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                format!("unknown scenario {s:?} (expected SingleStream, MultiStream, Server or Offline)")
            })
    }
}

/// The four LoadGen test modes, numbered as the config key `mode` numbers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum TestMode {
    SubmissionRun,
    AccuracyOnly,
    #[default]
    PerformanceOnly,
    FindPeakPerformance,
}

impl TestMode {
    pub const ALL: [TestMode; 4] = [
        TestMode::SubmissionRun,
        TestMode::AccuracyOnly,
        TestMode::PerformanceOnly,
        TestMode::FindPeakPerformance,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TestMode::SubmissionRun => "SubmissionRun",
            TestMode::AccuracyOnly => "AccuracyOnly",
            TestMode::PerformanceOnly => "PerformanceOnly",
            TestMode::FindPeakPerformance => "FindPeakPerformance",
        }
    }

    /// The numeric code of the config key `mode` (0 Submission, 1 Accuracy, 2 Performance, 3 FindPeak).
    pub fn from_code(code: u64) -> Option<TestMode> {
        TestMode::ALL.get(usize::try_from(code).ok()?).copied()
    }
}

impl fmt::Display for TestMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TestMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let aliases: [(&str, TestMode); 4] = [
            ("submission", TestMode::SubmissionRun),
            ("accuracy", TestMode::AccuracyOnly),
            ("performance", TestMode::PerformanceOnly),
            ("findpeak", TestMode::FindPeakPerformance),
        ];
        TestMode::ALL
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(s))
            .or_else(|| {
                aliases
                    .into_iter()
                    .find(|(alias, _)| alias.eq_ignore_ascii_case(s))
                    .map(|(_, m)| m)
            })
            .ok_or_else(|| {
                format!(
                    "unknown mode {s:?} (expected SubmissionRun, AccuracyOnly, PerformanceOnly or FindPeakPerformance)"
                )
            })
    }
}

/// Every `TestSettings` field of LoadGen 6.0.17 (spec §2.5), with the official defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TestSettings {
    pub scenario: TestScenario,
    pub mode: TestMode,
    pub single_stream_expected_latency_ns: f64,
    pub single_stream_target_latency_percentile: f64,
    pub multi_stream_expected_latency_ns: f64,
    pub multi_stream_target_latency_percentile: f64,
    pub multi_stream_samples_per_query: u64,
    pub server_target_qps: f64,
    pub server_target_latency_ns: u64,
    pub server_target_latency_percentile: f64,
    pub server_coalesce_queries: bool,
    pub server_find_peak_qps_decimals_of_precision: i32,
    pub server_find_peak_qps_boundary_step_size: f64,
    pub server_max_async_queries: u64,
    pub server_num_issue_query_threads: u64,
    pub offline_expected_qps: f64,
    pub sample_concatenate_permutation: bool,
    pub min_duration_ms: u64,
    pub max_duration_ms: u64,
    pub min_query_count: u64,
    pub max_query_count: u64,
    pub qsl_rng_seed: u64,
    pub sample_index_rng_seed: u64,
    pub schedule_rng_seed: u64,
    pub accuracy_log_rng_seed: u64,
    pub accuracy_log_probability: f64,
    pub accuracy_log_sampling_target: u64,
    pub test05: bool,
    pub test05_qsl_rng_seed: u64,
    pub test05_sample_index_rng_seed: u64,
    pub test05_schedule_rng_seed: u64,
    pub print_timestamps: bool,
    pub performance_issue_unique: bool,
    pub performance_issue_same: bool,
    pub performance_issue_same_index: u64,
    pub performance_sample_count_override: u64,
    pub accuracy_sample_count_override: u64,
    pub use_token_latencies: bool,
    pub server_ttft_latency: u64,
    pub server_tpot_latency: u64,
    pub infer_token_latencies: bool,
    /// Uninitialised in the C++ struct; 0 here as in the Python binding.
    pub token_latency_scaling_factor: u64,
}

impl Default for TestSettings {
    fn default() -> Self {
        TestSettings {
            scenario: TestScenario::SingleStream,
            mode: TestMode::PerformanceOnly,
            single_stream_expected_latency_ns: 1_000_000.0,
            single_stream_target_latency_percentile: 0.90,
            multi_stream_expected_latency_ns: 8_000_000.0,
            multi_stream_target_latency_percentile: 0.99,
            multi_stream_samples_per_query: 8,
            server_target_qps: 1.0,
            server_target_latency_ns: 100_000_000,
            server_target_latency_percentile: 0.99,
            server_coalesce_queries: false,
            server_find_peak_qps_decimals_of_precision: 1,
            server_find_peak_qps_boundary_step_size: 1.0,
            server_max_async_queries: 0,
            server_num_issue_query_threads: 0,
            offline_expected_qps: 1.0,
            sample_concatenate_permutation: false,
            min_duration_ms: 10_000,
            max_duration_ms: 0,
            min_query_count: 100,
            max_query_count: 0,
            qsl_rng_seed: 0,
            sample_index_rng_seed: 0,
            schedule_rng_seed: 0,
            accuracy_log_rng_seed: 0,
            accuracy_log_probability: 0.0,
            accuracy_log_sampling_target: 0,
            test05: false,
            test05_qsl_rng_seed: 0,
            test05_sample_index_rng_seed: 0,
            test05_schedule_rng_seed: 0,
            print_timestamps: false,
            performance_issue_unique: false,
            performance_issue_same: false,
            performance_issue_same_index: 0,
            performance_sample_count_override: 0,
            accuracy_sample_count_override: 0,
            use_token_latencies: false,
            server_ttft_latency: 100_000_000,
            server_tpot_latency: 100_000_000,
            infer_token_latencies: false,
            token_latency_scaling_factor: 0,
        }
    }
}

/// Where and how the log files are written (`LogOutputSettings`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogOutputSettings {
    /// Where the log files go; `None` writes none (the result is still returned).
    pub outdir: Option<PathBuf>,
    pub prefix: String,
    pub suffix: String,
    pub prefix_with_datetime: bool,
    pub copy_detail_to_stdout: bool,
    pub copy_summary_to_stdout: bool,
}

/// The official log files' prefix: `mlperf_log_summary.txt` and so on.
pub(crate) const DEFAULT_PREFIX: &str = "mlperf_log_";

impl Default for LogOutputSettings {
    fn default() -> Self {
        LogOutputSettings {
            outdir: None,
            prefix: DEFAULT_PREFIX.to_string(),
            suffix: String::new(),
            prefix_with_datetime: false,
            copy_detail_to_stdout: false,
            copy_summary_to_stdout: false,
        }
    }
}

/// The default of [`LogSettings::issue_spin`]: covers a sleep's late wake-up on most machines.
pub const DEFAULT_ISSUE_SPIN: Duration = Duration::from_micros(200);

/// `LogSettings` of the official API plus the engine's own safety limits. The trace file is
/// off by default here (upstream: on), since it holds two lines per sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogSettings {
    pub log_output: LogOutputSettings,
    pub enable_trace: bool,
    /// Where the official LoadGen waits forever for samples that never complete, the engine gives
    /// up after this long without progress and reports the run INVALID.
    pub drain_timeout: Duration,
    /// How long before each scheduled issue the issuing thread busy-waits instead of sleeping
    /// (sleeping wakes tens of µs late). Zero sleeps to the time, as the official LoadGen
    /// does, and leaves the core to a SUT that shares the machine.
    pub issue_spin: Duration,
    /// Keep every issued query's scheduled offset (ns from the series start) in the result.
    pub record_query_schedule: bool,
    /// Write result.json beside the logs. A caller that adds to the result (a power result)
    /// turns it off and writes the file itself, once.
    pub write_result_json: bool,
    /// A call into the SUT (`issue_query`, `flush_queries`) still running after this long ends
    /// the test INVALID, every log written, without waiting for the call (see
    /// `TestContext::on_abandoned`). `None`, as the official LoadGen: wait forever.
    pub sut_call_timeout: Option<Duration>,
}

impl Default for LogSettings {
    fn default() -> Self {
        LogSettings {
            log_output: LogOutputSettings::default(),
            enable_trace: false,
            drain_timeout: Duration::from_secs(60),
            issue_spin: DEFAULT_ISSUE_SPIN,
            record_query_schedule: false,
            write_result_json: true,
            sut_call_timeout: None,
        }
    }
}
