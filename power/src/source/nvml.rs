//! `nvml`: (to be written).

use super::{PowerSource, SourceError};

/// The source `nvml[:ARGUMENT]` names.
pub fn open(spec: &str, _argument: &str) -> Result<Box<dyn PowerSource>, SourceError> {
    Err(SourceError::Spec {
        spec: spec.to_owned(),
        message: "not built yet".into(),
    })
}
