//! The check of a system description with the official checker's rules
//! (`checks/system_check.py`, newest): the status, the system type, the network mode for the
//! division, required fields present and meaningful ones not empty, and the submitter and
//! division matching the tree's. Ours besides: power fields for a power submission, whole
//! numbers where the official results table needs them, no field left to fill in, and a
//! warning for fields no rule knows (a misspelt field is otherwise only "missing").

use std::path::Path;

use serde_json::{Map, Value};

use super::fields::{
    known_fields, IS_NETWORK, MEANINGFUL_FIELDS, NETWORK_FIELDS, NUMERIC_FIELDS, POWER_FIELDS,
    REQUIRED_FIELDS, VALID_AVAILABILITIES, VALID_SYSTEM_TYPES, WHOLE_NUMBER_FIELDS,
};
use super::fields_to_fill_in;
use crate::division::Division;
use crate::rule::Rule;
use crate::Findings;

/// What the submission tree says the system description must agree with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemExpectations {
    /// The tree's division.
    pub division: Division,
    /// The tree's submitter.
    pub submitter: String,
    /// The submission has power results: the power fields are required.
    pub power: bool,
    /// The system under test is reached over the network: `is_network` must be `"true"` and
    /// the network fields are required (as in the network division).
    pub network: bool,
    /// The official checker's `--skip-meaningful-fields-emptiness-check`.
    pub skip_meaningful_fields_emptiness_check: bool,
}

/// Checks `json`, the contents of `file`, against the rules and `expect`. Each finding names
/// the field.
pub fn check_system(json: &Value, file: &Path, expect: &SystemExpectations) -> Findings {
    let mut findings = Findings::default();
    let Some(fields) = json.as_object() else {
        findings.error(
            file,
            Rule::SystemNotObject,
            "the system description is not a JSON object of fields",
        );
        return findings;
    };
    // A field left to fill in is reported once, as that, and not checked further.
    let unfilled: Vec<(String, String)> = fields_to_fill_in(fields);
    for (field, what) in &unfilled {
        findings.error(
            file,
            Rule::SystemFillIn,
            format!("field {field} is still to be filled in: {what}"),
        );
    }
    let value = |key: &str| {
        fields
            .get(key)
            .filter(|_| !unfilled.iter().any(|(field, _)| field == key))
    };
    check_status(&mut findings, file, value("status"));
    check_system_type(&mut findings, file, value("system_type"));
    check_network_mode(&mut findings, file, value(IS_NETWORK), expect);
    check_required(&mut findings, file, fields, expect);
    check_whole_numbers(&mut findings, file, &value);
    let submitter = value("submitter");
    check_matches(
        &mut findings,
        file,
        Rule::SystemSubmitter,
        ("submitter", submitter),
        &expect.submitter,
    );
    let division = value("division");
    check_matches(
        &mut findings,
        file,
        Rule::SystemDivision,
        ("division", division),
        expect.division.as_str(),
    );
    if expect.power {
        for key in POWER_FIELDS
            .iter()
            .filter(|key| !fields.contains_key(**key))
        {
            findings.error(
                file,
                Rule::SystemPowerFieldMissing,
                format!("field {key} is missing (required with power results)"),
            );
        }
    }
    for key in fields
        .keys()
        .filter(|key| !known_fields().any(|k| k == key.as_str()))
    {
        findings.warning(
            file,
            Rule::SystemFieldUnknown,
            format!("field {key} is unknown (no rule names it: misspelt?)"),
        );
    }
    findings
}

fn check_status(findings: &mut Findings, file: &Path, status: Option<&Value>) {
    match status {
        // A missing status is reported with the required fields.
        None => {}
        Some(Value::String(text))
            if VALID_AVAILABILITIES.contains(&text.to_lowercase().as_str()) => {}
        Some(other) => findings.error(
            file,
            Rule::SystemStatus,
            format!(
                "field status is {other}: one of {}",
                VALID_AVAILABILITIES.join(", ")
            ),
        ),
    }
}

fn check_system_type(findings: &mut Findings, file: &Path, system_type: Option<&Value>) {
    match system_type {
        None => {}
        Some(Value::String(text)) if VALID_SYSTEM_TYPES.contains(&text.as_str()) => {}
        Some(other) => findings.error(
            file,
            Rule::SystemType,
            format!(
                "field system_type is {other}: one of {} (as written, lower case)",
                VALID_SYSTEM_TYPES.join(", ")
            ),
        ),
    }
}

/// The closed division runs locally, the network division over the network: `is_network`
/// (a string, `"true"` in any case meaning yes) must say so.
fn check_network_mode(
    findings: &mut Findings,
    file: &Path,
    is_network: Option<&Value>,
    expect: &SystemExpectations,
) {
    let is_network = match is_network {
        None => false,
        Some(Value::String(text)) => text.eq_ignore_ascii_case("true"),
        Some(other) => {
            findings.error(
                file,
                Rule::SystemFieldType,
                format!("field {IS_NETWORK} is {other}: the string \"true\" or \"false\""),
            );
            return;
        }
    };
    let by_division = expect.division.requires_network_system();
    let expected = by_division.or(expect.network.then_some(true));
    if let Some(expected) = expected.filter(|expected| *expected != is_network) {
        let why = if by_division.is_some() {
            format!("the {} division", expect.division)
        } else {
            "a system under test reached over the network".to_string()
        };
        findings.error(
            file,
            Rule::SystemNetworkMode,
            format!(
                "field {IS_NETWORK} says {}, but {why} needs {:?}",
                if is_network { "true" } else { "false" },
                expected.to_string()
            ),
        );
    }
}

fn check_required(
    findings: &mut Findings,
    file: &Path,
    fields: &Map<String, Value>,
    expect: &SystemExpectations,
) {
    // As the official checker: any `is_network` that Python finds true, even "false",
    // makes the network fields required.
    let network_set = fields.get(IS_NETWORK).is_some_and(python_truthy);
    let mut required: Vec<(&str, &str)> = REQUIRED_FIELDS.iter().map(|k| (*k, "")).collect();
    // The network division needs `is_network` set: its fields are asked for at once.
    let network_expected = expect.network || expect.division == Division::Network;
    if network_set || network_expected {
        let why = if network_set {
            " (required because is_network is set)"
        } else {
            " (required for a system under test reached over the network)"
        };
        required.extend(NETWORK_FIELDS.iter().map(|k| (*k, why)));
    }
    let check_values = !expect.skip_meaningful_fields_emptiness_check;
    for (key, why) in required {
        let Some(value) = fields.get(key) else {
            findings.error(
                file,
                Rule::SystemFieldMissing,
                format!("field {key} is missing{why}"),
            );
            continue;
        };
        if check_values && MEANINGFUL_FIELDS.contains(&key) && !python_truthy(value) {
            findings.error(
                file,
                Rule::SystemFieldEmpty,
                format!("field {key} requires a meaningful response but is {value}"),
            );
        } else if check_values && NUMERIC_FIELDS.contains(&key) && !is_number(value) {
            findings.error(
                file,
                Rule::SystemFieldNotNumeric,
                format!("field {key} requires a number but is {value}"),
            );
        }
    }
}

/// The official results table does `int(number_of_nodes) * int(accelerators_per_node)`.
fn check_whole_numbers<'a>(
    findings: &mut Findings,
    file: &Path,
    value: &impl Fn(&str) -> Option<&'a Value>,
) {
    for key in WHOLE_NUMBER_FIELDS {
        let Some(found) = value(key).filter(|v| python_truthy(v)) else {
            continue;
        };
        let whole = match found {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            Value::String(text) => text.trim().parse::<i64>().is_ok(),
            _ => false,
        };
        if !whole {
            findings.error(
                file,
                Rule::SystemFieldNotInteger,
                format!("field {key} is {found}: a whole number (the official results table multiplies it)"),
            );
        }
    }
}

/// The field (name, value) equals the tree's, ignoring case; else a finding of `rule`.
fn check_matches(
    findings: &mut Findings,
    file: &Path,
    rule: Rule,
    (key, found): (&str, Option<&Value>),
    tree: &str,
) {
    match found {
        None => {}
        Some(Value::String(text)) if text.to_lowercase() == tree.to_lowercase() => {}
        Some(other) => findings.error(
            file,
            rule,
            format!("field {key} is {other}, the submission tree's is {tree:?}"),
        ),
    }
}

/// Whether Python would take the parsed JSON value as true.
fn python_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The official `is_number(str(value))`: Python's `float()` of the value's text.
fn is_number(value: &Value) -> bool {
    match value {
        Value::Number(_) => true,
        Value::String(text) => text.trim().parse::<f64>().is_ok(),
        _ => false,
    }
}
