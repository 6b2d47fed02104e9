//! Control messages between the host and the plugin's process: one JSON object per line on a
//! Unix socket, for everything but the data path (which is the shared region's rings).

use std::io::{BufRead, Write};

use serde::{de::DeserializeOwned, Deserialize, Serialize};

/// Host to plugin process.
#[derive(Debug, Serialize, Deserialize)]
pub enum ToPlugin {
    /// Load the plugin and create its instance.
    Start {
        spec: String,
        config: String,
        /// Issued samples carry data from sample images the host sends.
        samples: bool,
    },
}

/// Plugin process to host.
#[derive(Debug, Serialize, Deserialize)]
pub enum ToHost {
    /// The instance is created.
    Ready {
        name: String,
        attributes: Vec<(String, String)>,
        provenance: Vec<(String, String)>,
    },
    /// The plugin could not be loaded or created (the process then exits).
    StartFailed { message: String },
    /// The hand-over buffers for a query of the size asked are made (and touched).
    Reserved { ok: bool },
    /// A sample image is mapped (or could not be: `error`).
    SamplesMapped { error: Option<String> },
    /// The plugin failed (its `fail`, an error from a call, a refused response).
    Fail { message: String },
    /// `destroy` returned; the process exits.
    Destroyed,
}

pub fn send<T: Serialize>(out: &mut impl Write, message: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

/// The next message, `None` at the end of the stream.
pub fn receive<T: DeserializeOwned>(input: &mut impl BufRead) -> std::io::Result<Option<T>> {
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    serde_json::from_str(&line)
        .map(Some)
        .map_err(|e| std::io::Error::other(format!("bad control message: {e}")))
}
