//! `ptd://HOST:PORT`: a client of SPEC PTDaemon's TCP text protocol (to be written).

use super::{PowerSource, SourceError};

/// The source `ptd://HOST:PORT[?options]` names.
pub fn open(spec: &str, _address: &str) -> Result<Box<dyn PowerSource>, SourceError> {
    Err(SourceError::Spec {
        spec: spec.to_owned(),
        message: "the PTDaemon client is not built yet".into(),
    })
}
