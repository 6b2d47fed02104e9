//! What a session's run produced, read the same way whichever engine ran it.

use mlperf_loadgen::{StopReason, TestMode, TestResult, TestScenario};

use super::official_run;
use crate::official::result::OfficialResult;
use crate::plugin::DeviceShare;
use crate::timing::LatencyBreakdown;

/// The testing run's result and, with meters, whether its power result is VALID.
pub struct RunOutcome {
    pub result: TestOutcome,
    pub scenario: TestScenario,
    pub power_valid: Option<bool>,
    /// The plugin's `destroy` had not returned within the stall timeout (every file was
    /// written all the same).
    pub destroy_stalled: bool,
    /// The plugin called the host this many times after its destroy returned (counted for an
    /// isolated plugin).
    pub late_callbacks: u64,
    /// The sets the plugin was handed (`load_samples`) and released (`unload_samples`).
    pub sample_sets: super::SampleSetCalls,
    /// A run over several devices: what each was given.
    pub device_shares: Vec<DeviceShare>,
    /// Where the latencies went, when the run divided them (`--sample-timing`).
    pub latency_breakdown: Option<LatencyBreakdown>,
}

/// The test's result, as the engine that ran it gives it.
pub enum TestOutcome {
    Native(Box<TestResult>),
    /// Read back from the official LoadGen's detail log.
    Official(Box<OfficialResult>),
}

impl TestOutcome {
    /// The message of a backend that failed, panicked or stalled in a call (under the
    /// official engine such a run never returns: the watchdog ends it).
    pub fn failure(&self) -> Option<String> {
        match self {
            TestOutcome::Native(result) => failure(result),
            TestOutcome::Official(_) => None,
        }
    }

    /// VALID or INVALID as `--require-valid` judges it: the performance result's validity;
    /// for an AccuracyOnly run (no performance result) the absence of engine errors.
    pub fn is_valid(&self) -> bool {
        match self {
            TestOutcome::Native(result) => match &result.performance {
                Some(performance) => performance.validity.valid,
                None => {
                    result.effective.mode == TestMode::AccuracyOnly && result.error_count() == 0
                }
            },
            TestOutcome::Official(result) => official_run::is_valid(result),
        }
    }

    /// Why the result is INVALID, when the engine says.
    pub fn invalid_reasons(&self) -> Option<String> {
        match self {
            TestOutcome::Native(result) => result
                .performance
                .as_ref()
                .map(|p| p.validity.reasons.join("; "))
                .filter(|r| !r.is_empty())
                .or_else(|| result.abandoned.clone()),
            TestOutcome::Official(result) => official_run::invalid_reasons(result),
        }
    }

    /// Samples that never completed (native: the drain gave up on them).
    pub fn incomplete(&self) -> bool {
        match self {
            TestOutcome::Native(result) => {
                result.series.iter().any(|s| s.never_completed > 0) || failure(result).is_some()
            }
            TestOutcome::Official(result) => {
                result.samples.completed < result.samples.issued || result.aborted.is_some()
            }
        }
    }

    /// result.json: the engine's result in its own field order, then its power result, what
    /// each device was given (a run over several) and where the latencies went.
    pub fn to_json(&self, beside: &Beside<'_>) -> serde_json::Result<Vec<u8>> {
        match self {
            TestOutcome::Native(result) => document(&**result, beside),
            TestOutcome::Official(result) => document(&**result, beside),
        }
    }
}

/// What result.json holds beside the engine's result.
#[derive(serde::Serialize, Default)]
pub struct Beside<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power: Option<&'a serde_json::Value>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub devices: &'a [DeviceShare],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_breakdown: Option<&'a LatencyBreakdown>,
}

#[derive(serde::Serialize)]
struct Document<'a, T> {
    #[serde(flatten)]
    result: &'a T,
    #[serde(flatten)]
    beside: &'a Beside<'a>,
}

fn document<T: serde::Serialize>(result: &T, beside: &Beside<'_>) -> serde_json::Result<Vec<u8>> {
    let mut text = serde_json::to_vec_pretty(&Document { result, beside })?;
    text.push(b'\n');
    Ok(text)
}

/// The message of a backend that failed, panicked, or was abandoned inside a call.
fn failure(result: &TestResult) -> Option<String> {
    if let Some(reason) = &result.abandoned {
        return Some(reason.clone());
    }
    result.series.iter().find_map(|series| match &series.stop {
        StopReason::SutFailed(message) | StopReason::SutPanicked(message) => Some(message.clone()),
        _ => None,
    })
}
