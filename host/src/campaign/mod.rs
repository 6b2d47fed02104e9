//! A campaign: every run of a whole submission, planned from the round's rules, run in order
//! with a journal, resumable after any crash, then filed, checked and reported.
//!
//! [`file`] reads the campaign file, [`plan`] turns it into runs (each the command line of
//! `run`, `audit` or `tune`), [`inputs`] hashes what each run reads so that a changed input
//! makes exactly its runs stale, [`journal`] records each run as it starts and ends, and
//! [`estimate`] says how long each run will take. The binary's `campaign` command carries the
//! runs out through the same session code as `run` and `audit`.

pub mod estimate;
pub mod file;
pub mod inputs;
pub mod journal;
pub mod plan;
pub mod state;

use std::path::PathBuf;

pub use file::{BenchmarkEntry, CampaignFile, PowerChoice};
pub use journal::{Journal, RunRecord, RunState};
pub use plan::{Entry, Plan, PlanOptions, RunKind};

#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error("{}: {message}", path.display())]
    File { path: PathBuf, message: String },
    #[error("{}: the campaign cannot run:\n  {}", path.display(), problems.join("\n  "))]
    Plan {
        path: PathBuf,
        problems: Vec<String>,
    },
}

/// The environment variable that makes the process kill itself (SIGKILL) at a named point of
/// the campaign (`journal`, `between-runs`, `submit`, …), optionally the Nth time it gets
/// there (`journal#3`): the resume tests' way to die where a power cut could.
pub const CRASH_ENV: &str = "MLPERF_HOST_CAMPAIGN_CRASH_AT";

/// Dies at once, as `kill -9` would, when [`CRASH_ENV`] names this point.
pub fn crash_point(point: &str) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static PASSES: AtomicU64 = AtomicU64::new(0);
    let Ok(spec) = std::env::var(CRASH_ENV) else {
        return;
    };
    let (name, nth) = match spec.split_once('#') {
        Some((name, n)) => (name, n.parse().unwrap_or(1)),
        None => (spec.as_str(), 1),
    };
    if name != point {
        return;
    }
    if PASSES.fetch_add(1, Ordering::SeqCst) + 1 == nth {
        // SAFETY: sends a signal to this process.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
}
