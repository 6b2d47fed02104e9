//! `tune`: the setting a scenario's full run needs, found by short trial runs of the real
//! system — SingleStream/MultiStream expected latency, Offline expected QPS, Server's highest
//! target QPS whose latency (and token) bounds hold with early stopping met.
//!
//! Each trial is a real LoadGen run with its own logs; [`TrialRunner`] carries it out (the
//! command line runs a session per trial), so the searches here know nothing of plugins.

mod estimate;
mod search;
mod user_conf;

use std::path::PathBuf;
use std::time::Duration;

use mlperf_loadgen::{ScenarioMetrics, TestResult, TestScenario, TestSettings};
use mlperf_submission::results::round_significant;

pub use estimate::{estimate_full_run, FullRunEstimate};
pub use search::tune;
pub use user_conf::{human_duration, render_user_conf};

/// What one trial run measured.
#[derive(Debug, Clone)]
pub struct Trial {
    /// `trial-3`: also the name of its log folder.
    pub name: String,
    pub dir: PathBuf,
    /// The LoadGen's verdict on the trial: latency (and TTFT/TPOT) bounds, early stopping,
    /// minimum duration and query count.
    pub valid: bool,
    /// Why the trial is INVALID, as the LoadGen says.
    pub reasons: String,
    pub queries: u64,
    pub samples: u64,
    /// From the first issue to the last completion.
    pub duration_s: f64,
    /// Samples per second over the trial: Offline's and Server's headline, SingleStream's
    /// and MultiStream's issue rate.
    pub samples_per_second: f64,
    /// Mean latency of a query (MultiStream) or sample (the other scenarios).
    pub mean_latency_ns: f64,
    /// Latency at the scenario's target percentile.
    pub percentile_latency_ns: f64,
    pub percentile: f64,
    /// The sample library's counts, for the full run's estimate.
    pub performance_sample_count: u64,
    pub total_sample_count: u64,
}

impl Trial {
    /// Reads a trial from the native engine's result; `None` without a performance result.
    pub fn from_result(name: String, dir: PathBuf, result: &TestResult) -> Option<Trial> {
        let performance = result.performance.as_ref()?;
        let latency = match performance.scenario {
            TestScenario::MultiStream => performance.query_latency.as_ref(),
            _ => performance.sample_latency.as_ref(),
        }?;
        let duration_s = performance.final_query_all_samples_done_time_s;
        let samples_per_second = match performance.metrics {
            ScenarioMetrics::Offline {
                samples_per_second, ..
            } => samples_per_second,
            ScenarioMetrics::Server {
                completed_samples_per_second,
                ..
            } => completed_samples_per_second,
            _ => performance.sample_count as f64 / duration_s,
        };
        let validity = &performance.validity;
        let mut reasons: Vec<String> = validity
            .reasons
            .iter()
            .map(|reason| reason.trim().trim_end_matches('.').to_string())
            .collect();
        if !validity.early_stopping_met {
            // The summary gives early stopping's verdict in lines of its own, not as a reason.
            reasons.push(early_stopping_reason(&performance.early_stopping.lines));
        }
        Some(Trial {
            name,
            dir,
            valid: validity.valid,
            reasons: reasons.join("; "),
            queries: performance.query_count,
            samples: performance.sample_count,
            duration_s,
            samples_per_second,
            mean_latency_ns: latency.mean_ns as f64,
            percentile_latency_ns: latency.target_ns as f64,
            percentile: latency.target_percentile,
            performance_sample_count: result.qsl_performance_sample_count as u64,
            total_sample_count: result.qsl_total_sample_count as u64,
        })
    }
}

/// Carries out one trial: a PerformanceOnly run with these settings, logged under `name`.
pub trait TrialRunner {
    fn run(&mut self, name: &str, settings: &TestSettings) -> Result<Trial, TuneError>;
}

/// How long and how thoroughly to try.
#[derive(Debug, Clone, Copy)]
pub struct TuneOptions {
    /// The minimum duration of each measuring trial.
    pub trial_duration: Duration,
    /// Server: the minimum query count of each trial, enough for early stopping to be met at
    /// the target percentile.
    pub trial_queries: u64,
    /// Server: bisection stops when the passing and failing QPS are this close (0.05: 5 %).
    pub precision: f64,
    /// Server: the written rate is this far below the highest VALID one (0.1: 10 %), so that
    /// the full run, many times longer than the trials, holds its bounds too; the confirming
    /// trial runs at it.
    pub margin: f64,
    /// The most trials in all.
    pub max_trials: usize,
}

impl Default for TuneOptions {
    fn default() -> Self {
        TuneOptions {
            trial_duration: Duration::from_secs(2),
            trial_queries: 1000,
            precision: 0.05,
            margin: 0.10,
            max_trials: 16,
        }
    }
}

/// The tuned setting and how it was found.
#[derive(Debug, Clone)]
pub struct Tuned {
    pub scenario: TestScenario,
    /// The TestSettings key (`offline_expected_qps`, …).
    pub key: &'static str,
    pub value: f64,
    /// One line per reason, written as comments above the value.
    pub how: Vec<String>,
    /// The trial the value comes from (latency and rate for the duration estimate).
    pub basis: Trial,
    pub trials: Vec<Trial>,
}

impl Tuned {
    /// The value as `--set` writes it: latencies in whole nanoseconds.
    pub fn value_text(&self) -> String {
        format!("{}", self.value)
    }

    /// The value as a config file (user.conf) sets it: `target_latency` in milliseconds for
    /// SingleStream/MultiStream, `target_qps` for Server/Offline.
    pub fn conf_line(&self, model: &str) -> String {
        let (key, value) = match self.scenario {
            TestScenario::SingleStream | TestScenario::MultiStream => {
                ("target_latency", format!("{}", self.value.round() / 1e6))
            }
            TestScenario::Server | TestScenario::Offline => {
                ("target_qps", format!("{}", self.value))
            }
        };
        format!("{model}.{}.{key} = {value}", self.scenario)
    }

    /// Puts the value into `settings`.
    pub fn apply(&self, settings: &mut TestSettings) {
        match self.scenario {
            TestScenario::SingleStream => settings.single_stream_expected_latency_ns = self.value,
            TestScenario::MultiStream => settings.multi_stream_expected_latency_ns = self.value,
            TestScenario::Server => settings.server_target_qps = self.value,
            TestScenario::Offline => settings.offline_expected_qps = self.value,
        }
    }
}

/// What a tuned value is written as: latencies in whole nanoseconds, rates to 5 significant
/// digits, so that user.conf, `--set` and `run --tune` all carry the same number.
fn written_value(key: &str, value: f64) -> f64 {
    if key.ends_with("_ns") {
        value.round()
    } else {
        round_significant(value, 5)
    }
}

/// Early stopping's failure as one reason: the summary's lines, without their bullets and the
/// bare "Run unsuccessful.".
fn early_stopping_reason(lines: &[String]) -> String {
    let text = lines
        .iter()
        .map(|line| line.trim().trim_start_matches('*').trim())
        .filter(|line| !line.is_empty() && *line != "Run unsuccessful.")
        .collect::<Vec<_>>()
        .join(" ");
    if text.is_empty() {
        "early stopping not met".to_string()
    } else {
        format!("early stopping not met: {}", text.trim_end_matches('.'))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error("trial {name}: {message}")]
    Trial { name: String, message: String },
    #[error("trial {name} has no performance result (logs in {dir})")]
    NoResult { name: String, dir: String },
    #[error("{0}")]
    Search(String),
}

/// A measured trial for the searches' and estimates' tests.
#[cfg(test)]
pub(crate) fn test_trial(mean_latency_ns: f64, samples_per_second: f64) -> Trial {
    Trial {
        name: "trial-2".into(),
        dir: PathBuf::new(),
        valid: true,
        reasons: String::new(),
        queries: 1,
        samples: 1,
        duration_s: 1.0,
        samples_per_second,
        mean_latency_ns,
        percentile_latency_ns: mean_latency_ns,
        percentile: 0.9,
        performance_sample_count: 1024,
        total_sample_count: 1024,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn early_stopping_reads_as_one_reason() {
        let lines = mlperf_loadgen::early_stopping::server_lines(
            &mlperf_loadgen::early_stopping::ServerEarlyStopping {
                passed: false,
                processed: 384,
                overlatency: 3,
                required_queries: 459,
                more_queries_needed: 75,
            },
        );
        assert_eq!(
            early_stopping_reason(&lines),
            "early stopping not met: Processed 384 queries. Would need to run at least 75 more \
             queries, with the run being successful if every additional query were under latency"
        );
        assert_eq!(early_stopping_reason(&[]), "early stopping not met");
    }

    #[test]
    fn config_lines_use_the_config_files_keys_and_units() {
        let trial = test_trial(1.0, 1.0);
        let tuned = |scenario, key, value| Tuned {
            scenario,
            key,
            value: written_value(key, value),
            how: Vec::new(),
            basis: trial.clone(),
            trials: Vec::new(),
        };
        let single = tuned(
            TestScenario::SingleStream,
            "single_stream_expected_latency_ns",
            1_000_568.4,
        );
        assert_eq!(
            single.conf_line("resnet50"),
            "resnet50.SingleStream.target_latency = 1.000568"
        );
        assert_eq!(single.value_text(), "1000568");
        let server = tuned(TestScenario::Server, "server_target_qps", 840.6234);
        assert_eq!(server.conf_line("bert"), "bert.Server.target_qps = 840.62");
        let mut settings = mlperf_loadgen::TestSettings::default();
        server.apply(&mut settings);
        assert_eq!(settings.server_target_qps, 840.62);
    }
}
