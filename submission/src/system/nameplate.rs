//! The nameplate power of a system with power results: `system_power_capacity` in its
//! description, or `systems/<system>_power.yaml` (the v6.1 rules' template: each unit's PSUs
//! and how many it needs), from which the official checker sums the design power.

use std::path::{Path, PathBuf};

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

/// What is wrong with the nameplate YAML's text, line by line: values still to fill in, or no
/// `PowerCapacityWatts` at all (the checker would sum to 0 W).
pub fn yaml_problems(text: &str) -> Vec<String> {
    let marker = FILL_IN.trim_end_matches([':', ' ']);
    let mut problems: Vec<String> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim_start().starts_with('#') && line.contains(marker))
        .map(|(i, line)| format!("line {} is still to be filled in: {}", i + 1, line.trim()))
        .collect();
    if problems.is_empty() && !text.contains("PowerCapacityWatts") {
        problems.push(
            "no PowerCapacityWatts: the official checker sums the supplies' PowerCapacityWatts \
             (0 W here)"
                .into(),
        );
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            yaml_path(Path::new("systems/sut1.json")),
            Path::new("systems/sut1_power.yaml")
        );
    }
}
