//! One system's description and one scenario folder: the files every folder needs, then the
//! performance, accuracy, compliance and power checks.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{accuracy, compliance, performance, power, Context};
use crate::division::Division;
use crate::rule::Rule;
use crate::rules::Rules;
use crate::scenario::Scenario;
use crate::system::{check_system, nameplate, SystemExpectations};
use crate::tree::{subdirectories, ScenarioDir, SubmitterDir, RUN_1};

/// The measurements.json fields the checker requires, each with a meaningful value.
const MEASUREMENTS_FIELDS: [&str; 5] = [
    "input_data_types",
    "retraining",
    "starting_weights_filename",
    "weight_data_types",
    "weight_transformations",
];

/// `systems/<system>.json`, checked; None when it is missing or not JSON.
pub(super) fn read_system(
    context: &mut Context,
    dir: &SubmitterDir,
    system: &str,
) -> Option<Value> {
    let path = dir.system_json(system);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(_) => {
            context.error(
                &path,
                Rule::SystemJson,
                "missing: every system with results needs its description",
            );
            return None;
        }
    };
    let json: Value = match serde_json::from_str(&text) {
        Ok(json) => json,
        Err(e) => {
            context.error(&path, Rule::SystemJson, format!("invalid JSON: {e}"));
            return None;
        }
    };
    let expectations = SystemExpectations {
        division: dir.division,
        submitter: dir.submitter.clone(),
        power: has_power_results(&dir.path().join("results").join(system)),
        network: dir.division == Division::Network,
        skip_meaningful_fields_emptiness_check: false,
    };
    let file = context.file(&path);
    context
        .findings
        .extend(check_system(&json, &file, &expectations));
    if has_power_dev_results(&dir.path().join("results").join(system)) {
        check_nameplate(context, &path, &json);
    }
    Some(json)
}

/// The v6.1 checker's nameplate rule for a system with power-dev results: its description's
/// `system_power_capacity`, else `systems/<system>_power.yaml`, or a warning.
fn check_nameplate(context: &mut Context, system_json: &Path, json: &Value) {
    if json.get("system_power_capacity").is_some() {
        return;
    }
    let yaml = nameplate::yaml_path(system_json);
    match std::fs::read_to_string(&yaml) {
        Ok(text) => {
            for problem in nameplate::yaml_problems(&text) {
                context.error(&yaml, Rule::NameplatePower, problem);
            }
        }
        Err(_) => context.warning(
            system_json,
            Rule::NameplatePower,
            format!(
                "a system with power results and no nameplate power: neither system_power_capacity here nor {} (the official checker warns)",
                yaml.file_name().unwrap_or_default().to_string_lossy()
            ),
        ),
    }
}

/// Whether any scenario of the system was measured through MLCommons' power workflow.
fn has_power_dev_results(system_dir: &Path) -> bool {
    scenario_performance_dirs(system_dir).any(|performance| performance.join("power").is_dir())
}

/// Each `<benchmark>/<scenario>/performance` folder of a system's results.
fn scenario_performance_dirs(system_dir: &Path) -> impl Iterator<Item = PathBuf> + '_ {
    subdirectories(system_dir)
        .into_iter()
        .flat_map(move |benchmark| {
            subdirectories(&system_dir.join(&benchmark))
                .into_iter()
                .map(move |scenario| {
                    system_dir
                        .join(&benchmark)
                        .join(scenario)
                        .join("performance")
                })
        })
}

/// Whether any scenario of the system has a power measurement.
fn has_power_results(system_dir: &Path) -> bool {
    scenario_performance_dirs(system_dir).any(|performance| {
        performance.join("power").is_dir() || performance.join(RUN_1).join("spl.txt").is_file()
    })
}

/// The system type's required scenarios are all there, and none the round does not know for
/// the model; where Interactive and Server are both optional, one of them is required.
pub(super) fn check_scenario_set(
    context: &mut Context,
    dir: &SubmitterDir,
    benchmark_dir: &Path,
    system_json: &Value,
    rules: &Rules,
    present: &[Scenario],
) {
    if dir.division.is_open() {
        return;
    }
    let system_type = system_json
        .get("system_type")
        .and_then(Value::as_str)
        .unwrap_or("");
    let path = benchmark_dir;
    let Some(set) = rules.scenario_set(system_type) else {
        context.error(
            path,
            Rule::RequiredScenarios,
            format!(
                "{} is not a benchmark of system type {system_type:?} ({})",
                rules.benchmark, rules.source
            ),
        );
        return;
    };
    let mut missing: Vec<String> = set
        .required
        .iter()
        .filter(|s| !present.contains(s))
        .map(Scenario::to_string)
        .collect();
    let either = [Scenario::Interactive, Scenario::Server];
    if either.iter().all(|s| set.optional.contains(s))
        && !either.iter().any(|s| present.contains(s))
    {
        missing.push("(one of) Interactive or Server".to_string());
    }
    if !missing.is_empty() {
        context.error(
            path,
            Rule::RequiredScenarios,
            format!(
                "system type {system_type:?} requires {} for {} ({})",
                missing.join(", "),
                rules.benchmark,
                rules.source
            ),
        );
    }
    for scenario in present {
        let known = set.required.contains(scenario) || set.optional.contains(scenario);
        if !known {
            context.error(
                &path.join(scenario.as_str()),
                Rule::UnknownScenario,
                format!(
                    "{} does not have a {scenario} scenario for system type {system_type:?} ({})",
                    rules.benchmark, rules.source
                ),
            );
        }
    }
}

pub(super) fn check_scenario(
    context: &mut Context,
    target: &ScenarioDir,
    rules: &Rules,
    system: &Value,
) {
    check_measurements(context, target);
    let performance_metric = performance::check(context, target, rules, system);
    accuracy::check(context, target, rules);
    compliance::check(context, target, rules, system);
    power::check(context, target, performance_metric);
}

/// measurements.json, user.conf and README.md beside the runs.
fn check_measurements(context: &mut Context, target: &ScenarioDir) {
    let dir = target.path();
    for name in ["user.conf", "README.md"] {
        let path = dir.join(name);
        match std::fs::metadata(&path) {
            Err(_) => context.error(&path, Rule::MeasurementsFiles, "missing"),
            Ok(meta) if meta.len() == 0 => context.error(&path, Rule::MeasurementsFiles, "empty"),
            Ok(_) => {}
        }
    }
    let path = dir.join("measurements.json");
    let json: Value = match std::fs::read_to_string(&path) {
        Err(_) => {
            context.error(&path, Rule::MeasurementsFiles, "missing");
            return;
        }
        Ok(text) => match serde_json::from_str(&text) {
            Ok(json) => json,
            Err(e) => {
                context.error(&path, Rule::MeasurementsFiles, format!("invalid JSON: {e}"));
                return;
            }
        },
    };
    for field in MEASUREMENTS_FIELDS {
        match json.get(field) {
            None => context.error(
                &path,
                Rule::MeasurementsFields,
                format!("field {field} is missing"),
            ),
            Some(value) if is_empty(value) => context.error(
                &path,
                Rule::MeasurementsFields,
                format!("field {field} has no meaningful value"),
            ),
            Some(Value::String(text)) if text.starts_with(crate::system::FILL_IN) => context.error(
                &path,
                Rule::MeasurementsFields,
                format!("field {field} is still to be filled in: {text:?}"),
            ),
            Some(_) => {}
        }
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.trim().is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.is_empty(),
        _ => false,
    }
}
