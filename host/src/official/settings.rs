//! Native settings handed to the official engine field by field, for runs that build their
//! settings in code (benchmarks) rather than from config files.

use mlperf_official_loadgen::{Mode, Scenario, TestSettings as OfficialSettings};
use serde_json::Value;

use crate::loadgen::{TestMode, TestScenario, TestSettings};

/// What a field could not be handed over for.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error(transparent)]
    Official(#[from] mlperf_official_loadgen::Error),
    #[error("the field {0} has no value the official TestSettings can take")]
    Unrepresentable(String),
}

pub fn official_scenario(scenario: TestScenario) -> Scenario {
    match scenario {
        TestScenario::SingleStream => Scenario::SingleStream,
        TestScenario::MultiStream => Scenario::MultiStream,
        TestScenario::Server => Scenario::Server,
        TestScenario::Offline => Scenario::Offline,
    }
}

pub fn official_mode(mode: TestMode) -> Mode {
    match mode {
        TestMode::SubmissionRun => Mode::SubmissionRun,
        TestMode::AccuracyOnly => Mode::AccuracyOnly,
        TestMode::PerformanceOnly => Mode::PerformanceOnly,
        TestMode::FindPeakPerformance => Mode::FindPeakPerformance,
    }
}

/// A field's value as the official setter reads it: flags 0/1, numbers exactly.
pub fn field_text(key: &str, value: &Value) -> Result<String, SettingsError> {
    match value {
        Value::Bool(flag) => Ok(u8::from(*flag).to_string()),
        Value::Number(number) => Ok(number.to_string()),
        _ => Err(SettingsError::Unrepresentable(key.to_string())),
    }
}

/// Every field of `native` in a fresh official TestSettings.
pub fn settings_from_native(native: &TestSettings) -> Result<OfficialSettings, SettingsError> {
    let mut settings = OfficialSettings::new()?;
    settings.set_scenario(official_scenario(native.scenario));
    settings.set_mode(official_mode(native.mode));
    let Ok(Value::Object(fields)) = serde_json::to_value(native) else {
        return Err(SettingsError::Unrepresentable("TestSettings".into()));
    };
    for (key, value) in fields
        .iter()
        .filter(|(k, _)| *k != "scenario" && *k != "mode")
    {
        settings.set(key, &field_text(key, value)?)?;
    }
    Ok(settings)
}
