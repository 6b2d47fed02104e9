//! `--set key=value`: overrides of single `TestSettings` fields, applied after the config files.
//!
//! Keys are the `TestSettings` field names in their own units (`min_duration_ms`,
//! `server_target_latency_ns`, …), not the config-file keys. A value is read by the type of its
//! field: booleans accept `0`/`1`/`true`/`false`, integers base 10 or `0x` hex, reals any finite
//! number, enums their name (`mode` also its aliases and its config code 0..=3).
//!
//! The field set and types come from `TestSettings`' serde form, so a field added to the engine
//! is settable here without a change.

use std::str::FromStr;

use anyhow::{anyhow, bail};
use mlperf_host::loadgen::{OutOfDomain, TestMode, TestSettings};
use serde_json::{Map, Number, Value};

/// One `--set` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Override {
    pub key: String,
    pub value: String,
}

/// The clap value parser of `--set`: splits `key=value` (the value may contain `=`).
pub(crate) fn parse_override(arg: &str) -> Result<Override, String> {
    let (key, value) = arg
        .split_once('=')
        .ok_or_else(|| format!("expected key=value, got {arg:?}"))?;
    let key = key.trim();
    if key.is_empty() {
        return Err(format!("missing key in {arg:?}"));
    }
    Ok(Override {
        key: key.to_string(),
        value: value.trim().to_string(),
    })
}

/// Fields `--set` refuses although `TestSettings` has them, with the reason.
const REFUSED: [(&str, &str); 1] = [(
    "scenario",
    "use --scenario instead (the config-file lookups depend on it)",
)];

/// The keys `--set` accepts, sorted.
pub(crate) fn valid_keys() -> Vec<String> {
    settings_object(&TestSettings::default())
        .map(|object| {
            object
                .keys()
                .filter(|k| !REFUSED.iter().any(|(r, _)| r == k))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

fn settings_object(settings: &TestSettings) -> anyhow::Result<Map<String, Value>> {
    match serde_json::to_value(settings)? {
        Value::Object(object) => Ok(object),
        other => bail!("TestSettings serialises as {other}, not an object"),
    }
}

/// Applies `overrides` in order. Nothing is applied if any of them is refused.
pub(crate) fn apply_overrides(
    settings: &mut TestSettings,
    overrides: &[Override],
) -> anyhow::Result<()> {
    if overrides.is_empty() {
        return Ok(());
    }
    let mut object = settings_object(settings)?;
    for Override { key, value } in overrides {
        if let Some((_, why)) = REFUSED.iter().find(|(r, _)| r == key) {
            bail!("--set {key}={value}: {why}");
        }
        let Some(current) = object.get(key) else {
            let keys = valid_keys();
            let suggestion = mlperf_host::suggest::closest(key, &keys)
                .map(|near| format!(": did you mean {near:?}?"))
                .unwrap_or_default();
            bail!(
                "--set {key}={value}: unknown key {key:?}{suggestion}; valid keys: {}",
                keys.join(", ")
            );
        };
        let typed = typed_value(key, current, value)
            .map_err(|why| anyhow!("--set {key}={value}: {why}"))?;
        object.insert(key.clone(), typed);
        // Check this field now so that an out-of-range value is blamed on its own argument.
        let applied = serde_json::from_value::<TestSettings>(Value::Object(object.clone()))
            .map_err(|e| {
                anyhow!("--set {key}={value}: the value does not fit the field {key:?}: {e}")
            })?;
        if let Some((_, problem)) = applied.out_of_domain().into_iter().find(|(f, _)| f == key) {
            let hint = match problem {
                OutOfDomain::Percentile => " (0.9 for the 90th)",
                _ => "",
            };
            bail!(
                "--set {key}={value}: the value {}{hint}",
                problem.describe(1.0)
            );
        }
    }
    *settings = serde_json::from_value(Value::Object(object))?;
    Ok(())
}

/// Reads `text` as the type of the field's current value.
fn typed_value(key: &str, current: &Value, text: &str) -> Result<Value, String> {
    match current {
        Value::Bool(_) => parse_bool(text).map(Value::Bool),
        Value::Number(n) if n.is_f64() => {
            let real = parse_real(text)?;
            Number::from_f64(real)
                .map(Value::Number)
                .ok_or_else(|| format!("{text:?} is not a finite number"))
        }
        Value::Number(_) => parse_int(text).map(Value::Number),
        Value::String(_) if key == "mode" => parse_mode(text).map(|m| Value::String(m.to_string())),
        Value::String(_) => Ok(Value::String(text.to_string())),
        _ => Err("this field cannot be set from the command line".to_string()),
    }
}

fn parse_bool(text: &str) -> Result<bool, String> {
    match text.to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(format!(
            "{text:?} is not a boolean (expected 0, 1, true or false)"
        )),
    }
}

fn parse_real(text: &str) -> Result<f64, String> {
    let real = f64::from_str(text).map_err(|_| format!("{text:?} is not a number"))?;
    if real.is_finite() {
        Ok(real)
    } else {
        Err(format!("{text:?} is not a finite number"))
    }
}

/// Base 10, or base 16 with `0x`; an optional leading `-` (the field's type decides whether it
/// may be negative).
fn parse_int(text: &str) -> Result<Number, String> {
    let not_int = || format!("{text:?} is not an integer (expected base 10 or 0x hex)");
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let hex = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"));
    let magnitude = match hex {
        Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            u128::from_str_radix(hex, 16).map_err(|_| not_int())?
        }
        None if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse::<u128>().map_err(|_| not_int())?
        }
        _ => return Err(not_int()),
    };
    let out_of_range = || format!("{text:?} is out of range");
    if negative {
        let value = i64::try_from(magnitude)
            .ok()
            .and_then(i64::checked_neg)
            .ok_or_else(out_of_range)?;
        Ok(Number::from(value))
    } else {
        u64::try_from(magnitude)
            .map(Number::from)
            .map_err(|_| out_of_range())
    }
}

fn parse_mode(text: &str) -> Result<TestMode, String> {
    if let Ok(code) = text.parse::<u64>() {
        return TestMode::from_code(code).ok_or_else(|| format!("mode code {code} is not 0..=3"));
    }
    TestMode::from_str(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlperf_host::loadgen::TestScenario;

    fn set(pairs: &[&str]) -> anyhow::Result<TestSettings> {
        let overrides = pairs
            .iter()
            .map(|p| parse_override(p).unwrap())
            .collect::<Vec<_>>();
        let mut settings = TestSettings::default();
        apply_overrides(&mut settings, &overrides)?;
        Ok(settings)
    }

    fn err(pairs: &[&str]) -> String {
        format!("{:#}", set(pairs).unwrap_err())
    }

    #[test]
    fn every_type_is_read() {
        let s = set(&[
            "min_duration_ms=0",
            "min_query_count=0x20",
            "server_target_qps=12.5",
            "offline_expected_qps=7",
            "print_timestamps=true",
            "server_coalesce_queries=1",
            "use_token_latencies=0",
            "mode=AccuracyOnly",
            "server_find_peak_qps_decimals_of_precision=-2",
        ])
        .unwrap();
        assert_eq!(s.min_duration_ms, 0);
        assert_eq!(s.min_query_count, 32);
        assert_eq!(s.server_target_qps, 12.5);
        assert_eq!(s.offline_expected_qps, 7.0);
        assert!(s.print_timestamps);
        assert!(s.server_coalesce_queries);
        assert!(!s.use_token_latencies);
        assert_eq!(s.mode, TestMode::AccuracyOnly);
        assert_eq!(s.server_find_peak_qps_decimals_of_precision, -2);
        assert_eq!(s.scenario, TestScenario::SingleStream);
    }

    #[test]
    fn mode_aliases_and_codes() {
        assert_eq!(
            set(&["mode=findpeak"]).unwrap().mode,
            TestMode::FindPeakPerformance
        );
        assert_eq!(set(&["mode=0"]).unwrap().mode, TestMode::SubmissionRun);
        assert!(err(&["mode=7"]).contains("mode=7"));
        assert!(err(&["mode=fast"]).contains("unknown mode"));
    }

    #[test]
    fn every_float_field_takes_a_fraction() {
        for key in [
            "single_stream_expected_latency_ns",
            "single_stream_target_latency_percentile",
            "multi_stream_expected_latency_ns",
            "multi_stream_target_latency_percentile",
            "server_target_qps",
            "server_target_latency_percentile",
            "server_find_peak_qps_boundary_step_size",
            "offline_expected_qps",
            "accuracy_log_probability",
        ] {
            set(&[&format!("{key}=0.5")]).unwrap_or_else(|e| panic!("{key}: {e:#}"));
        }
    }

    #[test]
    fn every_key_accepts_its_default() {
        let defaults = settings_object(&TestSettings::default()).unwrap();
        for key in valid_keys() {
            let text = match &defaults[&key] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let s = set(&[&format!("{key}={text}")]).unwrap_or_else(|e| panic!("{e:#}"));
            assert_eq!(s, TestSettings::default(), "{key}");
        }
    }

    #[test]
    fn refusals_name_key_and_value() {
        let unknown = err(&["min_durration_ms=5"]);
        assert!(
            unknown.contains("unknown key \"min_durration_ms\": did you mean \"min_duration_ms\"?"),
            "{unknown}"
        );
        assert!(unknown.contains("min_duration_ms"), "{unknown}");
        for (arg, why) in [
            ("min_query_count=1.5", "not an integer"),
            ("min_query_count=-1", "does not fit"),
            ("min_query_count=0x1ffffffffffffffff", "out of range"),
            (
                "server_find_peak_qps_decimals_of_precision=0x100000000",
                "does not fit",
            ),
            ("print_timestamps=2", "not a boolean"),
            ("server_target_qps=fast", "not a number"),
            ("server_target_qps=inf", "not a finite number"),
            ("server_target_qps=-5", "must be above 0"),
            ("offline_expected_qps=0", "must be above 0"),
            ("server_target_latency_percentile=99", "not a percentile"),
            (
                "single_stream_target_latency_percentile=0",
                "not a percentile",
            ),
            ("accuracy_log_probability=1.5", "not a probability"),
            ("multi_stream_samples_per_query=0", "at least 1"),
            (
                "min_query_count=0x100000001",
                "more than the 4294967296 queries",
            ),
            ("scenario=Offline", "--scenario"),
        ] {
            let message = err(&[arg]);
            assert!(message.contains(arg), "{message}");
            assert!(message.contains(why), "{message}");
        }
        assert!(parse_override("min_query_count").is_err());
        assert!(parse_override("=3").is_err());
    }

    #[test]
    fn a_refused_override_applies_nothing() {
        let mut settings = TestSettings::default();
        let overrides = [
            parse_override("min_query_count=5").unwrap(),
            parse_override("bogus=1").unwrap(),
        ];
        assert!(apply_overrides(&mut settings, &overrides).is_err());
        assert_eq!(settings, TestSettings::default());
    }
}
