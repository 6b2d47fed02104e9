//! A system measured by several wall meters (too big for one analyzer): its power is their
//! sum, sample by sample, as MLCommons' power server adds its analyzers' lines. The sum comes
//! first in a run's meters, so that its trace is spl.txt and its metric the run's; each wall
//! meter follows with its own.

use mlperf_power::{sum_traces, Provenance, Scope, SourceInfo, Trace};

use super::meters::Recording;

/// `recording` with the sum of its wall meters put first, when it has two or more; and
/// `ranged` (which meters had a ranging run) to match.
pub fn with_wall_total(recording: Recording, ranged: &[bool]) -> (Recording, Vec<bool>) {
    let walls: Vec<usize> = (0..recording.infos.len())
        .filter(|&i| recording.infos[i].scope == Scope::Wall)
        .collect();
    if walls.len() < 2 {
        return (recording, ranged.to_vec());
    }
    let infos: Vec<&SourceInfo> = walls.iter().map(|&i| &recording.infos[i]).collect();
    let provenance = if infos.iter().any(|i| i.provenance == Provenance::Simulated) {
        Provenance::Simulated
    } else if infos.iter().all(|i| i.provenance == Provenance::Ptd) {
        Provenance::Ptd
    } else {
        Provenance::OnHost
    };
    let info = SourceInfo {
        name: format!("wall total ({} wall meters)", walls.len()),
        scope: Scope::Wall,
        provenance,
        period: infos.iter().map(|i| i.period).max().unwrap_or_default(),
        identity: format!(
            "the sum of {}, sample by sample",
            infos
                .iter()
                .map(|i| i.name.as_str())
                .collect::<Vec<_>>()
                .join(" and ")
        ),
    };
    let traces: Result<Vec<&Trace>, String> = walls
        .iter()
        .map(|&i| {
            recording.traces[i]
                .as_ref()
                .map_err(|e| format!("{} failed: {e}", recording.infos[i].name))
        })
        .collect();
    let total = traces.map(|traces| sum_traces(&traces));
    let any_ranged = walls
        .iter()
        .any(|&i| ranged.get(i).copied().unwrap_or(false));
    let Recording {
        infos: mut all_infos,
        traces: mut all_traces,
        mark,
        mut isolated,
    } = recording;
    all_infos.insert(0, info);
    all_traces.insert(0, total);
    if !isolated.is_empty() {
        isolated.insert(0, false);
    }
    let mut ranged = ranged.to_vec();
    ranged.insert(0, any_ranged);
    (
        Recording {
            infos: all_infos,
            traces: all_traces,
            mark,
            isolated,
        },
        ranged,
    )
}
