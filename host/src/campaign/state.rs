//! Where each run of the plan stands, from the journal and the inputs' hashes now.

use super::journal::{Journal, RunState};
use super::plan::Plan;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryState {
    /// Never run.
    Pending,
    /// Done with these inputs: kept.
    Done,
    /// Done with other inputs (a setting, the plugin, the model or the data changed): redone.
    Stale,
    /// Ended without a result the rules accept: redone.
    Failed,
    /// Begun and never ended (a crash, a kill, a reboot): redone from scratch.
    Interrupted,
}

impl EntryState {
    pub fn name(self) -> &'static str {
        match self {
            EntryState::Pending => "pending",
            EntryState::Done => "done",
            EntryState::Stale => "stale",
            EntryState::Failed => "failed",
            EntryState::Interrupted => "interrupted",
        }
    }

    pub fn is_done(self) -> bool {
        self == EntryState::Done
    }
}

/// Each entry's state, in plan order; `hashes` are the entries' input hashes now.
pub fn entry_states(plan: &Plan, journal: &Journal, hashes: &[String]) -> Vec<EntryState> {
    plan.entries
        .iter()
        .zip(hashes)
        .map(|(entry, hash)| match journal.runs.get(&entry.id) {
            None => EntryState::Pending,
            Some(record) => match record.state {
                RunState::Started => EntryState::Interrupted,
                RunState::Failed => EntryState::Failed,
                RunState::Done if &record.inputs != hash => EntryState::Stale,
                // A folder deleted by hand is a run to redo.
                RunState::Done if !entry.folder.is_dir() => EntryState::Pending,
                RunState::Done => EntryState::Done,
            },
        })
        .collect()
}
