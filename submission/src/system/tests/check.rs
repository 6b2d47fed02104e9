//! The check: each kind of defect yields exactly its finding.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::*;
use crate::system::fields::NETWORK_FIELDS;
use crate::Division;
use crate::{Findings, Severity};

const FILE: &str = "closed/ExampleCo/systems/server.json";

fn expect() -> SystemExpectations {
    SystemExpectations {
        division: Division::Closed,
        submitter: "ExampleCo".into(),
        ..SystemExpectations::default()
    }
}

/// The server's draft with every FILL IN answered.
fn complete() -> Map<String, Value> {
    let tree = server();
    let mut request = request();
    request.power = true;
    let mut fields = draft_system(
        &request,
        &MachineFacts::read(&tree.0),
        &SoftwareStack::with_backend(Some(onnxruntime_backend())),
    );
    for (key, _) in fields_to_fill_in(&fields) {
        fields.insert(key, json!("N/A"));
    }
    fields
}

fn check(fields: &Map<String, Value>, expect: &SystemExpectations) -> Findings {
    check_system(&Value::Object(fields.clone()), Path::new(FILE), expect)
}

/// (rule, message) of each finding, after checking that each names the file.
fn found(findings: &Findings) -> Vec<(&'static str, String)> {
    findings
        .0
        .iter()
        .map(|f| {
            assert_eq!(f.file, Path::new(FILE));
            (f.rule.id(), f.message.clone())
        })
        .collect()
}

/// The one finding, which must be an error of `rule` naming `field`.
fn only_error(findings: &Findings, rule: &str, field: &str) {
    let found = found(findings);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, rule, "{found:?}");
    assert!(found[0].1.contains(field), "{found:?}");
    assert_eq!(findings.0[0].severity, Severity::Error);
}

#[test]
fn a_complete_description_passes() {
    let fields = complete();
    assert_eq!(found(&check(&fields, &expect())), vec![]);
    let power = SystemExpectations {
        power: true,
        ..expect()
    };
    assert_eq!(found(&check(&fields, &power)), vec![]);
}

#[test]
fn a_missing_field_is_named() {
    let mut fields = complete();
    fields.remove("host_storage_type");
    only_error(
        &check(&fields, &expect()),
        "system-field-missing",
        "host_storage_type",
    );
}

#[test]
fn an_empty_meaningful_field_is_named() {
    let mut fields = complete();
    fields.insert("cooling".into(), json!(""));
    only_error(&check(&fields, &expect()), "system-field-empty", "cooling");
    // An optional field may be empty.
    let mut fields = complete();
    fields.insert("hw_notes".into(), json!(""));
    assert_eq!(found(&check(&fields, &expect())), vec![]);
}

#[test]
fn a_number_zero_is_empty_to_the_official_checker() {
    let mut fields = complete();
    fields.insert("accelerators_per_node".into(), json!(0));
    only_error(
        &check(&fields, &expect()),
        "system-field-empty",
        "accelerators_per_node",
    );
}

#[test]
fn counts_the_results_table_multiplies_must_be_whole_numbers() {
    let mut fields = complete();
    fields.insert("number_of_nodes".into(), json!("one"));
    only_error(
        &check(&fields, &expect()),
        "system-field-not-integer",
        "number_of_nodes",
    );
    fields.insert("number_of_nodes".into(), json!(" 2 "));
    assert_eq!(found(&check(&fields, &expect())), vec![]);
}

#[test]
fn a_wrong_division_is_named() {
    let mut fields = complete();
    fields.insert("division".into(), json!("open"));
    only_error(&check(&fields, &expect()), "system-division", "division");
    fields.insert("division".into(), json!("Closed"));
    assert_eq!(found(&check(&fields, &expect())), vec![], "case is ignored");
}

#[test]
fn a_wrong_submitter_is_named() {
    let mut fields = complete();
    fields.insert("submitter".into(), json!("OtherCo"));
    only_error(&check(&fields, &expect()), "system-submitter", "submitter");
    fields.insert("submitter".into(), json!("EXAMPLECO"));
    assert_eq!(found(&check(&fields, &expect())), vec![], "case is ignored");
}

#[test]
fn a_bad_status_is_named() {
    let mut fields = complete();
    fields.insert("status".into(), json!("released"));
    only_error(&check(&fields, &expect()), "system-status", "status");
    fields.insert("status".into(), json!("Preview"));
    assert_eq!(found(&check(&fields, &expect())), vec![], "case is ignored");
}

#[test]
fn a_bad_system_type_is_named() {
    let mut fields = complete();
    fields.insert("system_type".into(), json!("Datacenter"));
    only_error(&check(&fields, &expect()), "system-type", "system_type");
    fields.insert("system_type".into(), json!("edge,datacenter"));
    assert_eq!(found(&check(&fields, &expect())), vec![]);
}

#[test]
fn a_field_left_to_fill_in_is_named_once() {
    let mut fields = complete();
    fields.insert(
        "cooling".into(),
        json!(format!("{FILL_IN}how it is cooled")),
    );
    only_error(&check(&fields, &expect()), "system-fill-in", "cooling");
    // Not also an invalid status.
    let mut fields = complete();
    fields.insert("status".into(), json!("FILL IN: available, preview or rdi"));
    only_error(&check(&fields, &expect()), "system-fill-in", "status");
}

#[test]
fn power_fields_are_required_with_power_results() {
    let mut fields = complete();
    fields.remove("power_supply_details");
    assert_eq!(
        found(&check(&fields, &expect())),
        vec![],
        "not without power"
    );
    let power = SystemExpectations {
        power: true,
        ..expect()
    };
    only_error(
        &check(&fields, &power),
        "system-power-field-missing",
        "power_supply_details",
    );
}

#[test]
fn the_network_division_needs_is_network_and_its_fields() {
    let mut fields = complete();
    fields.insert("division".into(), json!("network"));
    let network = SystemExpectations {
        division: Division::Network,
        ..expect()
    };
    let found = found(&check(&fields, &network));
    assert_eq!(found[0].0, "system-network-mode", "{found:?}");
    let missing: Vec<&str> = found[1..].iter().map(|(rule, _)| *rule).collect();
    assert_eq!(missing, vec!["system-field-missing"; NETWORK_FIELDS.len()]);
}

#[test]
fn any_is_network_makes_the_network_fields_required() {
    // The official checker's reading: the string "false" is set, so the fields are required.
    let mut fields = complete();
    fields.insert("is_network".into(), json!("false"));
    let found = found(&check(&fields, &expect()));
    assert_eq!(found.len(), NETWORK_FIELDS.len() - 1, "{found:?}");
    assert!(found
        .iter()
        .all(|(rule, message)| *rule == "system-field-missing"
            && message.contains("because is_network is set")));
    // And "true" in the closed division is the wrong mode.
    fields.insert("is_network".into(), json!("True"));
    assert_eq!(
        found_rules(&check(&fields, &expect()))[0],
        "system-network-mode"
    );
}

fn found_rules(findings: &Findings) -> Vec<&'static str> {
    findings.0.iter().map(|f| f.rule.id()).collect()
}

#[test]
fn an_unknown_field_is_a_warning() {
    let mut fields = complete();
    fields.insert("host_processor_cores".into(), json!(4));
    let findings = check(&fields, &expect());
    assert_eq!(found_rules(&findings), ["system-field-unknown"]);
    assert_eq!(findings.0[0].severity, Severity::Warning);
    assert!(!findings.has_errors());
}

#[test]
fn not_an_object_is_one_error() {
    let findings = check_system(&json!(["division"]), Path::new(FILE), &expect());
    assert_eq!(found_rules(&findings), ["system-not-object"]);
}

#[test]
fn skipping_the_emptiness_check_as_the_official_option_does() {
    let mut fields = complete();
    fields.insert("cooling".into(), json!(""));
    let lenient = SystemExpectations {
        skip_meaningful_fields_emptiness_check: true,
        ..expect()
    };
    assert_eq!(found(&check(&fields, &lenient)), vec![]);
}
