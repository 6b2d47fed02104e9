//! The system description, `systems/<system>.json`: drafted from this machine
//! ([`MachineFacts`], [`draft_system`]), checked against the fields the submission rules
//! require ([`check_system`]).
//!
//! A value the draft cannot know is [`FILL_IN`] followed by what to write; the check reports
//! every such value left in a description as an error.

mod check;
mod draft;
pub mod fields;
pub mod machine;
pub mod nameplate;
mod software;
mod units;
mod verify;

#[cfg(test)]
mod tests;

use serde_json::{Map, Value};

pub use check::{check_system, SystemExpectations};
pub use draft::{draft_system, to_pretty_json, DraftRequest};
pub use machine::{Accelerators, FactError, MachineFacts};
pub use software::{Backend, SoftwareStack};
pub use verify::{verify_system, FieldCheck};

/// The start of every value the submitter has still to supply; what to write follows.
pub const FILL_IN: &str = "FILL IN: ";

/// The fields still marked [`FILL_IN`], with what to write in each, in field-name order. A
/// value counts from `FILL IN` on, whatever follows, so an edited hint still counts.
pub fn fields_to_fill_in(fields: &Map<String, Value>) -> Vec<(String, String)> {
    let marker = FILL_IN.trim_end_matches([':', ' ']);
    fields
        .iter()
        .filter_map(|(key, value)| {
            let rest = value.as_str()?.trim_start().strip_prefix(marker)?;
            let what = rest.trim_start_matches([':', ' ']).trim();
            Some((key.clone(), what.to_string()))
        })
        .collect()
}
