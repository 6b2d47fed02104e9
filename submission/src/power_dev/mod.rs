//! Sessions of MLCommons' power workflow (power-dev's `ptd_client_server`): the folder its
//! client writes (`ranging/`, `run_1/`, `power/`), read and checked natively with the checks
//! power-dev's `compliance/check.py` runs (and the official submission checker runs on every
//! power result), each with check.py's verdict.

mod checks;
mod descriptor;
mod phases;
mod ptd_logs;
mod results_checksum;

use std::path::{Path, PathBuf};

pub use checks::{check_session, simulated_analyzer, Check, SessionReport, Verdict};
pub use descriptor::{Descriptor, DescriptorError};

/// The ranging run's folder in a session.
pub const RANGING: &str = "ranging";
/// The testing run's folder in a session.
pub const TESTING: &str = "run_1";
/// The client's and server's logs in a session.
pub const POWER: &str = "power";

/// The files check.py requires in a session (relative to it).
pub const RESULT_PATHS: [&str; 11] = [
    "power/client.json",
    "power/client.log",
    "power/ptd_logs.txt",
    "power/server.json",
    "power/server.log",
    "ranging/mlperf_log_detail.txt",
    "ranging/mlperf_log_summary.txt",
    "ranging/spl.txt",
    "run_1/mlperf_log_detail.txt",
    "run_1/mlperf_log_summary.txt",
    "run_1/spl.txt",
];

/// Whether `dir` is laid out as a power-dev session: a testing run beside the client's and
/// server's logs or a ranging run.
pub fn is_session(dir: &Path) -> bool {
    dir.join(TESTING).is_dir() && (dir.join(POWER).is_dir() || dir.join(RANGING).is_dir())
}

/// The session a folder belongs to: the folder itself, or the session whose `run_1/` it is.
pub fn session_of(dir: &Path) -> Option<PathBuf> {
    if is_session(dir) {
        return Some(dir.to_path_buf());
    }
    let parent = dir.parent()?;
    (dir.file_name()? == TESTING && is_session(parent)).then(|| parent.to_path_buf())
}

/// The analyzer a session was measured with, as its server recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct Analyzer {
    /// PTDaemon's answer to `Identify` (model, version, …).
    pub identify: String,
    pub device_types: Vec<i64>,
    /// Why it is a simulated one, if it is.
    pub simulated: Option<String>,
}

/// The analyzer of the session in `dir` (from `power/server.json`), if the file says.
pub fn analyzer(dir: &Path) -> Option<Analyzer> {
    let text = std::fs::read_to_string(dir.join(POWER).join("server.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let descriptor = Descriptor {
        path: dir.join(POWER).join("server.json"),
        json,
    };
    let identify = descriptor.identify().unwrap_or("").to_string();
    let device_types = descriptor.device_types();
    Some(Analyzer {
        simulated: simulated_analyzer(&identify, &device_types),
        identify,
        device_types,
    })
}
