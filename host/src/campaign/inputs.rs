//! The hash of a run's inputs: its command line, the contents of every file it reads, and the
//! hashes of the runs it depends on. A run whose hash changed is stale and is redone, and so is
//! every run after it that reads its result.
//!
//! File contents are hashed once per (path, size, modification time), in the same cache as
//! the data sets' digests, so that a multi-gigabyte data set is not read again at every plan.

use std::collections::BTreeMap;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::plan::{Entry, Plan};
use super::CampaignError;
use crate::samples::digest::file_sha256;

/// The sha256 of a file's contents (cached as the data sets' digests are); "missing" for a
/// file that is not there (the run refuses it, naming it).
fn file_hash(path: &Path) -> Result<String, CampaignError> {
    if !path.exists() {
        return Ok("missing".into());
    }
    file_sha256(path).map_err(|e| CampaignError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Every entry's input hash, in plan order (an entry's includes those it depends on).
pub fn entry_hashes(plan: &Plan) -> Result<Vec<String>, CampaignError> {
    let mut hashes: BTreeMap<&str, String> = BTreeMap::new();
    let mut ordered = Vec::with_capacity(plan.entries.len());
    for entry in &plan.entries {
        let hash = entry_hash(entry, &hashes)?;
        hashes.insert(&entry.id, hash.clone());
        ordered.push(hash);
    }
    Ok(ordered)
}

fn entry_hash(entry: &Entry, earlier: &BTreeMap<&str, String>) -> Result<String, CampaignError> {
    let mut hasher = Sha256::new();
    let mut field = |label: &str, value: &str| {
        hasher.update(label.as_bytes());
        hasher.update([0]);
        hasher.update(value.as_bytes());
        hasher.update([0]);
    };
    for arg in &entry.command {
        field("arg", arg);
    }
    if let Some(client) = &entry.power_dev_client {
        field("power-dev client", client);
    }
    for input in &entry.inputs {
        // A file an earlier run writes is covered by that run's hash.
        if entry.produced_input.as_ref() == Some(input) {
            continue;
        }
        field("file", &input.display().to_string());
        field("sha256", &file_hash(input)?);
    }
    for dependency in &entry.depends {
        field("after", dependency);
        field(
            "inputs",
            earlier.get(dependency.as_str()).map_or("", String::as_str),
        );
    }
    Ok(crate::logs::accuracy::hex(&hasher.finalize()))
}
