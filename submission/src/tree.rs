//! The submission tree of the MLPerf rules (the official checker's v6.x paths):
//! `<division>/<submitter>/{systems/<system>.json, code/, src/,
//! results/<system>/<benchmark>/<scenario>/…}`.

use std::path::{Path, PathBuf};

use crate::division::Division;
use crate::scenario::Scenario;

/// The LoadGen logs every run folder holds.
pub const LOG_FILES: [&str; 2] = [SUMMARY_LOG, DETAIL_LOG];
pub use crate::logs::{ACCURACY_LOG, ACCURACY_TXT};
use crate::logs::{DETAIL_LOG, SUMMARY_LOG};
/// What the MLCommons power client and server leave in `performance/power/`.
pub const POWER_DEV_FILES: [&str; 5] = [
    "client.json",
    "client.log",
    "ptd_logs.txt",
    "server.json",
    "server.log",
];

/// The run a performance folder holds (the rules allow one): `DIR/performance/run_1`, in a
/// scenario folder, a compliance test's folder or the output of `mlperf-host audit`.
pub fn performance_run(dir: &Path) -> PathBuf {
    dir.join("performance").join(RUN_1)
}

/// The one run of a performance folder, as the rules name it.
pub const RUN_1: &str = "run_1";

/// One submitter's part of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmitterDir {
    pub root: PathBuf,
    pub division: Division,
    pub submitter: String,
}

impl SubmitterDir {
    pub fn path(&self) -> PathBuf {
        self.root.join(self.division.as_str()).join(&self.submitter)
    }

    pub fn system_json(&self, system: &str) -> PathBuf {
        self.path().join("systems").join(format!("{system}.json"))
    }

    pub fn scenario(&self, system: &str, benchmark: &str, scenario: Scenario) -> ScenarioDir {
        ScenarioDir {
            submitter: self.clone(),
            system: system.to_string(),
            benchmark: benchmark.to_string(),
            scenario,
        }
    }
}

/// `results/<system>/<benchmark>/<scenario>/` of one submitter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioDir {
    pub submitter: SubmitterDir,
    pub system: String,
    pub benchmark: String,
    pub scenario: Scenario,
}

impl ScenarioDir {
    pub fn path(&self) -> PathBuf {
        self.submitter
            .path()
            .join("results")
            .join(&self.system)
            .join(&self.benchmark)
            .join(self.scenario.as_str())
    }

    pub fn performance_run(&self) -> PathBuf {
        performance_run(&self.path())
    }

    pub fn ranging_run(&self) -> PathBuf {
        self.path().join("performance").join("ranging")
    }

    pub fn power_dir(&self) -> PathBuf {
        self.path().join("performance").join("power")
    }

    pub fn accuracy(&self) -> PathBuf {
        self.path().join("accuracy")
    }

    pub fn compliance(&self, test: &str) -> PathBuf {
        self.path().join(test)
    }
}

/// `path` relative to `root`, for findings and messages.
pub fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_path_buf()
}

/// The names of the directories in `dir`, sorted; none when it cannot be read.
pub fn subdirectories(dir: &Path) -> Vec<String> {
    names_in(dir, std::fs::FileType::is_dir)
}

/// The names of the regular files in `dir`, sorted; none when it cannot be read.
pub fn files(dir: &Path) -> Vec<String> {
    names_in(dir, std::fs::FileType::is_file)
}

fn names_in(dir: &Path, kind: fn(&std::fs::FileType) -> bool) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| kind(&t)))
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}
