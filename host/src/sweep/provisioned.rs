//! `--provisioned-power`: the system's provisioned power, the denominator of MLPerf Endpoints'
//! output tokens/s per kW (`system_tps_per_kw`), the same for every point of a curve. As the
//! Endpoints submission checker takes it (endpoints-submission-cli 3ebc0641): in kW rounded to
//! 2 decimals, from watts given here or from the system's `system_power.json`
//! (`provisioned_power_kw`, else `declared_provisioned_power`, else `computed.total_system_power_w`).

use std::path::Path;

use serde_json::Value;

/// The provisioned power a sweep divides by.
#[derive(Debug, Clone, PartialEq)]
pub struct ProvisionedPower {
    /// kW, rounded to 2 decimals.
    pub kw: f64,
    /// Where it came from: `--provisioned-power 1200W`, or the file and key.
    pub source: String,
}

impl ProvisionedPower {
    /// `1200`, `1200W`, `1.2kW`, or a `system_power.json` file.
    pub fn parse(arg: &str) -> Result<ProvisionedPower, String> {
        let text = arg.trim();
        let number = |digits: &str, scale: f64| -> Option<f64> {
            digits.trim().parse::<f64>().ok().map(|v| v * scale)
        };
        let lower = text.to_ascii_lowercase();
        let watts = if let Some(kw) = lower.strip_suffix("kw") {
            number(kw, 1000.0)
        } else if let Some(w) = lower.strip_suffix('w') {
            number(w, 1.0)
        } else {
            number(&lower, 1.0)
        };
        match watts {
            Some(watts) => from_watts(watts, format!("--provisioned-power {text}")),
            None if Path::new(text).is_file() => from_file(Path::new(text)),
            None => Err(format!(
                "--provisioned-power {text}: neither watts (1200, 1200W, 1.2kW) nor a \
                 system_power.json file"
            )),
        }
    }

    /// Output tokens/s per provisioned kW.
    pub fn per_kw(&self, output_tokens_per_s: f64) -> f64 {
        output_tokens_per_s / self.kw
    }
}

fn from_watts(watts: f64, source: String) -> Result<ProvisionedPower, String> {
    if !watts.is_finite() {
        return Err(format!("{source}: {watts} is not a number of watts"));
    }
    // Halves to even, as Python's round() that the Endpoints checker uses.
    let kw = (watts / 1000.0 * 100.0).round_ties_even() / 100.0;
    if !kw.is_finite() || kw <= 0.0 {
        return Err(format!(
            "{source}: {watts} W is {kw:.2} kW rounded to 2 decimals; it must be more than 0"
        ));
    }
    Ok(ProvisionedPower { kw, source })
}

fn from_file(path: &Path) -> Result<ProvisionedPower, String> {
    let name = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    let json: Value =
        serde_json::from_str(&text).map_err(|e| format!("{name}: invalid JSON: {e}"))?;
    let source = |key: &str| format!("{name} ({key})");
    let positive = |value: &Value, key: &str| -> Result<f64, String> {
        value
            .as_f64()
            .filter(|v| v.is_finite() && *v > 0.0)
            .ok_or_else(|| format!("{name}: {key} is {value}, not a number of more than 0"))
    };
    if let Some(kw) = json.get("provisioned_power_kw").filter(|v| !v.is_null()) {
        let kw = positive(kw, "provisioned_power_kw")?;
        return from_watts(kw * 1000.0, source("provisioned_power_kw"));
    }
    if let Some(declared) = json
        .get("declared_provisioned_power")
        .filter(|v| !v.is_null())
    {
        return match (declared.get("value_w"), declared.get("value_kw")) {
            (Some(w), None) => from_watts(
                positive(w, "declared_provisioned_power.value_w")?,
                source("declared_provisioned_power.value_w"),
            ),
            (None, Some(kw)) => from_watts(
                positive(kw, "declared_provisioned_power.value_kw")? * 1000.0,
                source("declared_provisioned_power.value_kw"),
            ),
            _ => Err(format!(
                "{name}: declared_provisioned_power needs exactly one of value_w and value_kw"
            )),
        };
    }
    if let Some(total) = json
        .pointer("/computed/total_system_power_w")
        .filter(|v| !v.is_null())
    {
        return from_watts(
            positive(total, "computed.total_system_power_w")?,
            source("computed.total_system_power_w"),
        );
    }
    Err(format!(
        "{name}: no provisioned_power_kw, declared_provisioned_power or \
         computed.total_system_power_w (the submission CLI computes them from the components)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watts_and_kilowatts_round_to_two_decimals_of_a_kw() {
        assert_eq!(ProvisionedPower::parse("1234").unwrap().kw, 1.23);
        assert_eq!(ProvisionedPower::parse("1236W").unwrap().kw, 1.24);
        assert_eq!(ProvisionedPower::parse("10.5kW").unwrap().kw, 10.5);
        let power = ProvisionedPower::parse("2kW").unwrap();
        assert_eq!(power.per_kw(500.0), 250.0);
        assert_eq!(power.source, "--provisioned-power 2kW");
    }

    #[test]
    fn too_little_or_nonsense_is_refused_by_name() {
        let tiny = ProvisionedPower::parse("4W").unwrap_err();
        assert!(tiny.contains("0.00 kW"), "{tiny}");
        // 125 W is 0.125 kW: to even, 0.12.
        assert_eq!(ProvisionedPower::parse("125W").unwrap().kw, 0.12);
        let infinite = ProvisionedPower::parse("inf").unwrap_err();
        assert!(infinite.contains("not a number of watts"), "{infinite}");
        let nonsense = ProvisionedPower::parse("lots").unwrap_err();
        assert!(nonsense.contains("--provisioned-power lots"), "{nonsense}");
    }

    #[test]
    fn a_system_power_file_gives_its_stored_declared_or_computed_power() {
        let dir = std::env::temp_dir().join(format!("mlperf-provisioned-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("system_power.json");
        let read = |json: &str| {
            std::fs::write(&file, json).unwrap();
            ProvisionedPower::parse(file.to_str().unwrap())
        };
        let stored =
            read(r#"{"provisioned_power_kw": 14.3, "computed": {"total_system_power_w": 1}}"#)
                .unwrap();
        assert_eq!(stored.kw, 14.3);
        assert!(stored.source.ends_with("(provisioned_power_kw)"));
        let declared =
            read(r#"{"declared_provisioned_power": {"value_w": 9876, "source": "x"}}"#).unwrap();
        assert_eq!(declared.kw, 9.88);
        let computed = read(r#"{"computed": {"total_system_power_w": 4321.0}}"#).unwrap();
        assert_eq!(computed.kw, 4.32);
        let both = read(r#"{"declared_provisioned_power": {"value_w": 1, "value_kw": 1}}"#);
        assert!(both
            .unwrap_err()
            .contains("exactly one of value_w and value_kw"));
        let none = read(r#"{"cooling": "air"}"#).unwrap_err();
        assert!(
            none.contains("system_power.json: no provisioned_power_kw"),
            "{none}"
        );
        let negative = read(r#"{"provisioned_power_kw": -1}"#).unwrap_err();
        assert!(
            negative.contains("provisioned_power_kw is -1"),
            "{negative}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
