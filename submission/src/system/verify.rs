//! `sysinfo --verify`: a system description against the machine it runs on, field by field —
//! what an auditor checks first. Only what the machine states is compared: fields the
//! submitter chooses (names, division, category, availability) and fields a draft cannot know
//! are not.

use serde::Serialize;
use serde_json::{Map, Value};

use super::fields_to_fill_in;

/// Fields that name the submission, not the machine.
const SUBMITTER_FIELDS: [&str; 6] = [
    "division",
    "submitter",
    "status",
    "system_name",
    "system_type",
    "system_type_detail",
];

/// One field of the description against the machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldCheck {
    pub field: String,
    /// The description's value (None: the field is missing).
    pub described: Option<String>,
    /// What this machine states.
    pub measured: String,
}

impl FieldCheck {
    pub fn matches(&self) -> bool {
        self.described
            .as_deref()
            .is_some_and(|d| same(d, &self.measured))
    }
}

/// Each field this machine's draft states, against the description.
pub fn verify_system(
    description: &Map<String, Value>,
    machine_draft: &Map<String, Value>,
) -> Vec<FieldCheck> {
    let unknown: Vec<String> = fields_to_fill_in(machine_draft)
        .into_iter()
        .map(|(field, _)| field)
        .collect();
    machine_draft
        .iter()
        .filter(|(field, _)| {
            !SUBMITTER_FIELDS.contains(&field.as_str()) && !unknown.contains(field)
        })
        .map(|(field, measured)| FieldCheck {
            field: field.clone(),
            described: description.get(field).map(text),
            measured: text(measured),
        })
        .collect()
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Equal up to case and runs of white space (`Intel(R) Xeon(R)  CPU` as the kernel spaces it).
fn same(a: &str, b: &str) -> bool {
    let words = |s: &str| {
        s.split_whitespace()
            .map(str::to_lowercase)
            .collect::<Vec<_>>()
    };
    words(a) == words(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn each_stated_field_is_compared_and_a_change_is_named() {
        let draft = map(json!({
            "submitter": "us",
            "host_processor_core_count": 2,
            "host_memory_capacity": "24 GB",
            "host_processor_model_name": "AMD  EPYC 9575F",
            "accelerator_model_name": "FILL IN: the accelerator",
        }));
        let described = map(json!({
            "submitter": "someone else",
            "host_processor_core_count": "2",
            "host_memory_capacity": "24 GB",
            "host_processor_model_name": "amd epyc 9575F",
            "accelerator_model_name": "H100",
        }));
        let checks = verify_system(&described, &draft);
        let fields: Vec<&str> = checks.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "host_memory_capacity",
                "host_processor_core_count",
                "host_processor_model_name"
            ]
        );
        assert!(checks.iter().all(FieldCheck::matches));
        let mut changed = described.clone();
        changed.insert("host_memory_capacity".into(), json!("48 GB"));
        changed.remove("host_processor_core_count");
        let failed: Vec<FieldCheck> = verify_system(&changed, &draft)
            .into_iter()
            .filter(|c| !c.matches())
            .collect();
        assert_eq!(failed.len(), 2);
        assert_eq!(failed[0].described.as_deref(), Some("48 GB"));
        assert_eq!(failed[1].described, None);
    }
}
