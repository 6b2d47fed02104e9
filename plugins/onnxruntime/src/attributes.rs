//! The attributes the host writes into its detail log and result.json.

use crate::config::Config;
use crate::runtime::Runtime;
use crate::session::model::{Io, ModelFile};

pub(crate) struct Facts<'a> {
    pub config: &'a Config,
    pub runtime: &'a Runtime,
    pub model: &'a ModelFile,
    pub io: &'a Io,
    /// max_batch as used (1 when the model's batch axis is fixed at 1).
    pub max_batch: usize,
}

pub(crate) fn attributes(facts: &Facts<'_>) -> Vec<(String, String)> {
    let config = facts.config;
    [
        ("vendor", "ONNX Runtime".to_owned()),
        ("device", config.device()),
        ("provider", config.provider.to_string()),
        ("onnxruntime_version", facts.runtime.version.clone()),
        (
            "onnxruntime_library",
            facts.runtime.path.display().to_string(),
        ),
        ("model", facts.model.path.display().to_string()),
        ("model_sha256", facts.model.sha256.clone()),
        ("precision", facts.io.precision(facts.model)),
        ("input", facts.io.describe_input()),
        ("output", facts.io.describe_output()),
        ("workers", config.workers.to_string()),
        ("max_batch", facts.max_batch.to_string()),
        ("max_wait_us", config.max_wait_us.to_string()),
        ("intra_op_threads", config.intra_op_threads.to_string()),
        ("inter_op_threads", config.inter_op_threads.to_string()),
        (
            "plugin",
            format!("onnxruntime {}", env!("CARGO_PKG_VERSION")),
        ),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect()
}
