//! Control messages between the host and the plugin's process: one JSON object per line on a
//! Unix socket, for everything but the data path (which is the shared region's rings). A power
//! meter's process speaks the same lines on its stdin and stdout ([`ToMeter`]).

use std::io::{BufRead, Write};

use mlperf_power::{Phase, SourceInfo};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

/// A preprocessing module run on issued samples (`--preprocess-timed`): in the plugin's
/// process, on the raw samples of its images, as the host runs it in-process.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimedModule {
    pub module: std::path::PathBuf,
    pub limits: crate::benchmark::PreprocessLimits,
}

/// Host to plugin process.
#[derive(Debug, Serialize, Deserialize)]
pub(super) enum ToPlugin {
    /// Load the plugin and create its instance.
    Start {
        spec: String,
        config: String,
        /// Issued samples carry data from sample images the host sends.
        samples: bool,
        /// Preprocessing the process runs on each issued sample, inside the timed path.
        timed_preprocess: Option<TimedModule>,
        /// The test the instance is created for.
        run: Option<crate::plugin::RunDescription>,
    },
}

/// Plugin process to host.
#[derive(Debug, Serialize, Deserialize)]
pub(super) enum ToHost {
    /// The instance is created.
    Ready {
        name: String,
        /// The plugin's MLPERF_CAP_* bits.
        capabilities: u64,
        /// The plugin has load_samples or unload_samples (ABI 1.3).
        takes_sample_sets: bool,
        attributes: Vec<(String, String)>,
        provenance: Vec<(String, String)>,
    },
    /// The plugin could not be loaded or created (the process then exits).
    StartFailed { message: String },
    /// The hand-over buffers for a query of the size asked are made (and touched).
    Reserved { ok: bool },
    /// A sample image is mapped (or could not be: `error`).
    SamplesMapped { error: Option<String> },
    /// The plugin's `load_samples` or `unload_samples` returned (its error, if any).
    SampleSet { error: Option<String> },
    /// `destroy` returned; the process exits. The plugin called the host this many times
    /// after it had returned.
    Destroyed { late_callbacks: u64 },
}

/// Host to a power meter's process: the [`mlperf_power::PowerSource`] calls. Each is answered
/// with one line, the call's `Result` (`()`, or the `Trace` for `Stop`, or its `SourceError`).
#[derive(Debug, Serialize, Deserialize)]
pub(super) enum ToMeter {
    Prepare(Phase),
    Start { mark: String },
    Stop,
    Finish,
}

/// A power meter's process's first line (inside a `Result`: or why the meter was refused).
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct MeterOpened {
    pub info: SourceInfo,
    pub needs_ranging: bool,
}

pub(super) fn send<T: Serialize>(out: &mut impl Write, message: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

/// The next message, `None` at the end of the stream.
pub(super) fn receive<T: DeserializeOwned>(input: &mut impl BufRead) -> std::io::Result<Option<T>> {
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    serde_json::from_str(&line)
        .map(Some)
        .map_err(|e| std::io::Error::other(format!("bad control message: {e}")))
}
