//! What `mlperf-host run` reports when a test ends.

use mlperf_host::loadgen::{TestMode, TestResult};

/// VALID or INVALID as `--require-valid` judges it: the performance result's validity; for an
/// AccuracyOnly run (no performance result) the absence of engine errors.
pub fn is_valid(result: &TestResult) -> bool {
    match &result.performance {
        Some(performance) => performance.validity.valid,
        None => result.effective.mode == TestMode::AccuracyOnly && result.error_count() == 0,
    }
}
