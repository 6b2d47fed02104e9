//! The nameplate power of a system with power results: `system_power_capacity` in its
//! description, or `systems/<system>_power.yaml` (the v6.1 rules' template: each unit's PSUs
//! and how many it needs), from which the official checker sums the design power.

use std::path::{Path, PathBuf};

use serde_yaml_ng::Value;

use super::FILL_IN;

/// The YAML's file name beside `systems/<system>.json`.
pub fn yaml_path(system_json: &Path) -> PathBuf {
    let stem = system_json
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    system_json.with_file_name(format!("{stem}_power.yaml"))
}

/// The draft `sysinfo --power` writes beside the description: the rules' template with each
/// value to supply marked as the description's are.
pub fn draft_yaml(system: &str) -> String {
    format!(
        r#"# The nameplate power of {system}: each unit (server, switch, storage) of the measured system,
# its power supplies, and how many of them it needs. The official checker sums, per unit, the
# capacities of the largest `Min PSUs Needed` supplies. Replace every {fill}value, or delete
# this file and give the total as system_power_capacity (watts) in {system}.json.
{system}:
- Rack 1:
  - Server 1:
    - Description: "{fill}the server, e.g. its model"
      Min PSUs Needed: "{fill}how many supplies it needs to run, e.g. 1"
      PSUs:
      - Name: PSU 1
        PowerCapacityWatts: "{fill}the supply's rating in watts, e.g. 1200"
      - Name: PSU 2
        PowerCapacityWatts: "{fill}the supply's rating in watts, e.g. 1200"
"#,
        fill = FILL_IN
    )
}

/// What is wrong with the nameplate YAML's text: values still to fill in (by line), text that
/// is not YAML, a value that is not a number, or supplies that sum to 0 W.
pub fn yaml_problems(text: &str) -> Vec<String> {
    let marker = FILL_IN.trim_end_matches([':', ' ']);
    let unfilled: Vec<String> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim_start().starts_with('#') && line.contains(marker))
        .map(|(i, line)| format!("line {} is still to be filled in: {}", i + 1, line.trim()))
        .collect();
    if !unfilled.is_empty() {
        return unfilled;
    }
    match design_power_watts(text) {
        Ok(watts) if watts > 0.0 => Vec::new(),
        Ok(_) => vec![
            "no PowerCapacityWatts: the official checker sums the supplies' PowerCapacityWatts \
             (0 W here)"
                .into(),
        ],
        Err(why) => vec![why],
    }
}

/// The design power the v6.1 checker sums from the YAML (read as its `yaml.safe_load` reads
/// it): for each unit that lists `PSUs` and `Min PSUs Needed` (keys in any case), the largest
/// `Min PSUs Needed` supplies' `PowerCapacityWatts`; units nest under labels of the
/// submitter's choosing.
pub fn design_power_watts(text: &str) -> Result<f64, String> {
    let document: Value = serde_yaml_ng::from_str(text).map_err(|e| format!("not YAML: {e}"))?;
    unit_power(&document, "")
}

fn unit_power(node: &Value, path: &str) -> Result<f64, String> {
    match node {
        Value::Mapping(map) => {
            let field = |name: &str| {
                map.iter()
                    .find(|(key, _)| key.as_str().is_some_and(|k| k.eq_ignore_ascii_case(name)))
                    .map(|(_, value)| value)
            };
            if let (Some(psus), Some(needed)) = (field("PSUs"), field("Min PSUs Needed")) {
                return supplies_power(psus, needed, path);
            }
            map.iter().try_fold(0.0, |sum, (key, value)| {
                let label = key.as_str().map_or_else(|| shown(key), str::to_string);
                Ok(sum + unit_power(value, &format!("{path}/{label}"))?)
            })
        }
        Value::Sequence(items) => items.iter().enumerate().try_fold(0.0, |sum, (i, item)| {
            Ok(sum + unit_power(item, &format!("{path}[{i}]"))?)
        }),
        Value::Tagged(tagged) => unit_power(&tagged.value, path),
        _ => Ok(0.0),
    }
}

/// One unit's supplies: the `needed` largest capacities.
fn supplies_power(psus: &Value, needed: &Value, path: &str) -> Result<f64, String> {
    let Some(needed) = needed.as_u64() else {
        return Err(format!(
            "{path}: Min PSUs Needed is {}, not a whole number",
            shown(needed)
        ));
    };
    let Value::Sequence(psus) = psus else {
        return Err(format!("{path}: PSUs is not a list of supplies"));
    };
    let mut capacities = Vec::with_capacity(psus.len());
    for (i, psu) in psus.iter().enumerate() {
        let watts = match psu.get("PowerCapacityWatts") {
            // The checker counts a supply without a rating as 0 W.
            None => 0.0,
            Some(value) => value.as_f64().unwrap_or(f64::NAN),
        };
        if !watts.is_finite() || watts < 0.0 {
            let value = psu
                .get("PowerCapacityWatts")
                .map_or_else(String::new, shown);
            return Err(format!(
                "{path}/PSUs[{i}]: PowerCapacityWatts is {value}, not a number of watts"
            ));
        }
        capacities.push(watts);
    }
    capacities.sort_by(|a, b| b.total_cmp(a));
    Ok(capacities.iter().take(needed as usize).sum())
}

fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => format!("{text:?}"),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "missing".to_string(),
        _ => "not a single value".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn design_power_sums_each_units_needed_supplies_as_the_checker_does() {
        // Two servers in a rack, one needing 1 of its 2 supplies (the larger counts), one
        // needing both; a switch beside them; keys in the template's case and in lower case.
        let yaml = r#"sys:
- Rack 1:
  - Server 1:
    - Description: a
      Min PSUs Needed: 1
      PSUs:
      - {Name: PSU 1, PowerCapacityWatts: 1200}
      - {Name: PSU 2, PowerCapacityWatts: 1600}
  - Server 2:
    - min psus needed: 2
      psus:
      - {PowerCapacityWatts: 800}
      - {PowerCapacityWatts: 750.5}
      - {PowerCapacityWatts: 2000}
- Switch:
    Min PSUs Needed: 1
    PSUs: [{PowerCapacityWatts: 300}, {Name: spare}]
"#;
        assert_eq!(
            design_power_watts(yaml),
            Ok(1600.0 + 2000.0 + 800.0 + 300.0)
        );
        let bad = "a:\n  Min PSUs Needed: two\n  PSUs: []\n";
        let error = design_power_watts(bad).unwrap_err();
        assert!(error.contains("/a: Min PSUs Needed is \"two\""), "{error}");
    }

    #[test]
    fn the_draft_is_flagged_until_filled_in() {
        let draft = draft_yaml("sut1");
        assert!(draft.starts_with("# The nameplate power of sut1"));
        let problems = yaml_problems(&draft);
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(
            problems[0].starts_with("line 8 is still to be filled in"),
            "{problems:?}"
        );
        let filled = draft
            .lines()
            .filter(|line| !line.starts_with('#'))
            .map(|line| match line.split_once(": \"FILL IN") {
                Some((key, _)) => format!("{key}: 1200"),
                None => line.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(yaml_problems(&filled), Vec::<String>::new(), "{filled}");
        assert_eq!(yaml_problems("sut1:\n- Rack: {}\n").len(), 1);
        // Parsed, as the checker's yaml.safe_load reads it: a rating that is no number is
        // named, not passed because the key is there.
        let abc = "sut1:\n- Min PSUs Needed: 1\n  PSUs:\n  - PowerCapacityWatts: abc\n";
        let problems = yaml_problems(abc);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].contains("PowerCapacityWatts is \"abc\", not a number of watts"),
            "{problems:?}"
        );
        assert!(yaml_problems("sut1: [unclosed\n")[0].starts_with("not YAML"));
        assert_eq!(
            yaml_path(Path::new("systems/sut1.json")),
            Path::new("systems/sut1_power.yaml")
        );
    }
}
