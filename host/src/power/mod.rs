//! Power around a run: the meters (`--power SOURCE`), the traces and power_summary.json they
//! leave beside the LoadGen logs, and the power result, accounted over the LoadGen window as
//! MLPerf's power checker does. The LoadGen logs stay as LoadGen writes them.

pub mod meters;
pub mod outputs;
pub mod wall_total;

use std::path::PathBuf;

use thiserror::Error;

pub use meters::{Meters, MetersFinisher, Recording};
pub use mlperf_submission::power::{
    logged_run, read_logged_run, report_dir, result, LoggedRun, PowerReadError, PowerResult,
    SourceResult, POWER_SUMMARY,
};
pub use outputs::{account_recording, clear_old_outputs, write_summary, write_traces};
pub use wall_total::with_wall_total;

#[derive(Debug, Error)]
pub enum PowerError {
    #[error("--power {spec}: the meter cannot be used")]
    Open {
        spec: String,
        #[source]
        source: mlperf_power::SourceError,
    },
    #[error("--power {name}: cannot start the {phase} run")]
    Start {
        name: String,
        phase: &'static str,
        #[source]
        source: mlperf_power::SourceError,
    },
    #[error(transparent)]
    Read(#[from] PowerReadError),
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot remove the old {}", path.display())]
    Remove {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
