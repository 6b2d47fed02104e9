//! A run's power result read back from its files: the detail log's window and figures,
//! spl.txt and power_summary.json, for ours and for a session of MLCommons' power client.
//! Measuring is the host's (its meters); this only reads what a run left.

pub mod logged_run;
pub mod result;

use std::path::PathBuf;

pub use logged_run::{read_logged_run, report_dir, LoggedRun};
pub use result::{PowerResult, SourceResult};

/// The power result a run writes beside its LoadGen logs.
pub const POWER_SUMMARY: &str = "power_summary.json";

/// A run's power files that could not be read, named.
#[derive(Debug, thiserror::Error)]
pub enum PowerReadError {
    #[error("{} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error(transparent)]
    DetailLog(#[from] crate::logs::DetailLogError),
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
