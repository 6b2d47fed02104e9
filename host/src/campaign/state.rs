//! Where each run of the plan stands, from the journal and the inputs' hashes now.

use super::journal::{Journal, RunRecord, RunState};
use super::plan::{Entry, Plan};

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

/// Each entry's state, in plan order; `hashes` are the entries' input hashes now. A done run
/// that reads a run not done, or one redone after it (a compliance test's performance run, a
/// tuning's user.conf), is stale: what it compared with or ran from is gone.
pub fn entry_states(plan: &Plan, journal: &Journal, hashes: &[String]) -> Vec<EntryState> {
    let mut states: Vec<EntryState> = Vec::with_capacity(plan.entries.len());
    for (entry, hash) in plan.entries.iter().zip(hashes) {
        let state = match journal.runs.get(&entry.id) {
            None => EntryState::Pending,
            Some(record) => match record.state {
                RunState::Started => EntryState::Interrupted,
                RunState::Failed => EntryState::Failed,
                RunState::Done if &record.inputs != hash => EntryState::Stale,
                // A folder deleted by hand is a run to redo.
                RunState::Done if !entry.folder.is_dir() => EntryState::Pending,
                RunState::Done
                    if reads_a_newer_or_undone_run(plan, journal, &states, entry, record) =>
                {
                    EntryState::Stale
                }
                RunState::Done => EntryState::Done,
            },
        };
        states.push(state);
    }
    states
}

fn reads_a_newer_or_undone_run(
    plan: &Plan,
    journal: &Journal,
    earlier: &[EntryState],
    entry: &Entry,
    record: &RunRecord,
) -> bool {
    entry.depends.iter().any(|dependency| {
        let done = plan
            .entries
            .iter()
            .position(|e| &e.id == dependency)
            .and_then(|i| earlier.get(i))
            .is_some_and(|state| state.is_done());
        let newer = journal
            .runs
            .get(dependency)
            .is_some_and(|d| d.started > record.started);
        !done || newer
    })
}
