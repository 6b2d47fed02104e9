//! `client.json` and `server.json`: what power-dev's client and server record of a session
//! (sources, messages, UUIDs, phases, result checksums, the analyzer's configuration).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The members check.py requires in both files.
const REQUIRED: [&str; 9] = [
    "version",
    "timezone",
    "modules",
    "sources",
    "messages",
    "uuid",
    "session_name",
    "results",
    "phases",
];

#[derive(Debug, thiserror::Error)]
pub enum DescriptorError {
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not JSON: {source}", path.display())]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{}: required fields {missing} do not exist", path.display())]
    Missing { path: PathBuf, missing: String },
}

/// One of the session's descriptors.
#[derive(Debug, Clone)]
pub struct Descriptor {
    pub path: PathBuf,
    pub json: Value,
}

impl Descriptor {
    pub fn read(path: &Path) -> Result<Descriptor, DescriptorError> {
        let text = std::fs::read_to_string(path).map_err(|source| DescriptorError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let json: Value = serde_json::from_str(&text).map_err(|source| DescriptorError::Json {
            path: path.to_path_buf(),
            source,
        })?;
        let missing: Vec<&str> = REQUIRED
            .into_iter()
            .filter(|key| json.get(key).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(DescriptorError::Missing {
                path: path.to_path_buf(),
                missing: missing.join(", "),
            });
        }
        Ok(Descriptor {
            path: path.to_path_buf(),
            json,
        })
    }

    pub fn get(&self, key: &str) -> &Value {
        &self.json[key]
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        self.json[key].as_str()
    }

    /// PTDaemon's exchanges the server logged: (command, reply) in order.
    pub fn ptd_messages(&self) -> Vec<(&str, &str)> {
        exchanges(&self.json["ptd_messages"])
    }

    /// The client/server exchanges: (command, reply) in order.
    pub fn messages(&self) -> Vec<(&str, &str)> {
        exchanges(&self.json["messages"])
    }

    /// PTDaemon's answer to `Identify` (its model, `version=…` and more), if it was asked.
    pub fn identify(&self) -> Option<&str> {
        self.ptd_messages()
            .into_iter()
            .find(|(command, _)| *command == "Identify")
            .map(|(_, reply)| reply)
    }

    /// The analyzers' device types, as the server's configuration gave them.
    pub fn device_types(&self) -> Vec<i64> {
        self.json["ptd_config"]
            .as_array()
            .map(|analyzers| {
                analyzers
                    .iter()
                    .filter_map(|a| a["device_type"].as_i64())
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn exchanges(list: &Value) -> Vec<(&str, &str)> {
    list.as_array()
        .map(|messages| {
            messages
                .iter()
                .map(|m| {
                    (
                        m["cmd"].as_str().unwrap_or(""),
                        m["reply"].as_str().unwrap_or(""),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Python's `repr` of a string, as check.py quotes values in its messages.
pub(super) fn repr(text: &str) -> String {
    if text.contains('\'') && !text.contains('"') {
        format!("\"{text}\"")
    } else {
        format!("'{}'", text.replace('\'', "\\'"))
    }
}
