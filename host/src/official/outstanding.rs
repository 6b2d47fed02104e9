//! The ids the official library handed to the system under test and not yet seen completed.
//! The official `QuerySamplesComplete` reads an id as a pointer into its own memory, so a
//! completion of any other id (never issued, or completed twice) must stop here.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;

use crate::loadgen::{QuerySample, QuerySampleResponse};

/// Completions whose ids were not outstanding.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) count: u64,
    pub(crate) first: Option<u64>,
}

/// A query of at least this many samples whose ids are evenly spaced (the official library
/// keeps a query's samples in one array) is kept as a run: a bitmap, not one hash entry per id.
const RUN_MIN: usize = 16;

#[derive(Default)]
pub(crate) struct OutstandingIds {
    ids: Mutex<Ids>,
}

#[derive(Default)]
struct Ids {
    /// Ids of small or irregular queries.
    singles: HashSet<u64, BuildHasherDefault<IdHasher>>,
    /// Evenly spaced queries, sorted by their first id.
    runs: Vec<Run>,
}

/// The ids `first + i * stride` for `i < count`, and which of them are completed.
struct Run {
    first: u64,
    stride: u64,
    count: u64,
    remaining: u64,
    completed: Vec<u64>,
}

impl Run {
    /// `samples` as a run, when their ids are evenly spaced upward.
    fn of(samples: &[QuerySample]) -> Option<Run> {
        let first = samples.first()?.id.0;
        let stride = samples.get(1)?.id.0.checked_sub(first)?;
        let count = samples.len() as u64;
        let evenly = samples.iter().zip(0..).all(|(sample, i)| {
            stride
                .checked_mul(i)
                .and_then(|offset| offset.checked_add(first))
                == Some(sample.id.0)
        });
        (stride > 0 && evenly).then(|| Run {
            first,
            stride,
            count,
            remaining: count,
            completed: vec![0; samples.len().div_ceil(64)],
        })
    }

    /// The position of `id` in the run, if it is one of its ids.
    fn position(&self, id: u64) -> Option<usize> {
        let offset = id.checked_sub(self.first)?;
        (offset % self.stride == 0 && offset / self.stride < self.count)
            .then(|| (offset / self.stride) as usize)
    }

    fn is_completed(&self, position: usize) -> bool {
        self.completed[position / 64] & (1 << (position % 64)) != 0
    }
}

impl Ids {
    /// The run `id` would belong to.
    fn run_of(&self, id: u64) -> Option<usize> {
        self.runs
            .partition_point(|run| run.first <= id)
            .checked_sub(1)
    }

    fn contains(&self, id: u64) -> bool {
        if let Some(run) = self.run_of(id).map(|r| &self.runs[r]) {
            if let Some(position) = run.position(id) {
                return !run.is_completed(position);
            }
        }
        self.singles.contains(&id)
    }

    /// Marks `id` completed; false when it was not outstanding.
    fn complete(&mut self, id: u64) -> bool {
        if let Some(index) = self.run_of(id) {
            let run = &mut self.runs[index];
            if let Some(position) = run.position(id) {
                if run.is_completed(position) {
                    return false;
                }
                run.completed[position / 64] |= 1 << (position % 64);
                run.remaining -= 1;
                if run.remaining == 0 {
                    self.runs.remove(index);
                }
                return true;
            }
        }
        self.singles.remove(&id)
    }
}

impl OutstandingIds {
    /// Records the samples of a query about to be issued (one lock per query).
    pub(crate) fn issue(&self, samples: &[QuerySample]) {
        let run = (samples.len() >= RUN_MIN)
            .then(|| Run::of(samples))
            .flatten();
        let mut ids = self.lock();
        match run {
            Some(run) => {
                let at = ids.runs.partition_point(|r| r.first < run.first);
                ids.runs.insert(at, run);
            }
            None => {
                ids.singles.reserve(samples.len());
                for sample in samples {
                    ids.singles.insert(sample.id.0);
                }
            }
        }
    }

    /// Hands `accept` each response whose id is outstanding, in order (completing it when
    /// `completes`: a first token leaves its sample outstanding); returns the refused ones.
    pub(crate) fn admit(
        &self,
        responses: &[QuerySampleResponse<'_>],
        completes: bool,
        mut accept: impl FnMut(&QuerySampleResponse<'_>),
    ) -> Refused {
        let mut refused = Refused::default();
        let mut ids = self.lock();
        for response in responses {
            let id = response.id.0;
            let known = if completes {
                ids.complete(id)
            } else {
                ids.contains(id)
            };
            if known {
                accept(response);
            } else {
                refused.first.get_or_insert(id);
                refused.count += 1;
            }
        }
        refused
    }

    /// Whether `id` is outstanding (issued, not yet completed).
    pub(crate) fn contains(&self, id: u64) -> bool {
        self.lock().contains(id)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Ids> {
        self.ids.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The ids are addresses a fixed stride apart: a multiply spreads them and the fold brings
/// the mixed high bits down to the low bits the table indexes with.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        let mixed = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        mixed ^ (mixed >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 << 8) | u64::from(byte);
        }
    }

    fn write_u64(&mut self, id: u64) {
        self.0 = id;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::ResponseId;

    fn samples(ids: &[u64]) -> Vec<QuerySample> {
        ids.iter()
            .map(|&id| QuerySample {
                id: ResponseId(id),
                index: 0,
            })
            .collect()
    }

    fn responses(ids: &[u64]) -> Vec<QuerySampleResponse<'static>> {
        ids.iter()
            .map(|&id| QuerySampleResponse {
                id: ResponseId(id),
                data: &[],
                n_tokens: 0,
            })
            .collect()
    }

    fn admitted(outstanding: &OutstandingIds, ids: &[u64], completes: bool) -> (Vec<u64>, Refused) {
        let mut accepted = Vec::new();
        let refused = outstanding.admit(&responses(ids), completes, |r| accepted.push(r.id.0));
        (accepted, refused)
    }

    #[test]
    fn only_issued_ids_complete_and_only_once() {
        let outstanding = OutstandingIds::default();
        outstanding.issue(&samples(&[0x1000, 0x1020, 0x1040]));
        // A first token leaves the sample outstanding.
        let (accepted, refused) = admitted(&outstanding, &[0x1020, 0x7777], false);
        assert_eq!(accepted, [0x1020]);
        assert_eq!(
            refused,
            Refused {
                count: 1,
                first: Some(0x7777)
            }
        );
        let (accepted, refused) = admitted(&outstanding, &[0x1020, 0x9999, 0x1020, 0x1000], true);
        assert_eq!(accepted, [0x1020, 0x1000]);
        assert_eq!(
            refused,
            Refused {
                count: 2,
                first: Some(0x9999)
            }
        );
        let (accepted, refused) = admitted(&outstanding, &[0x1000, 0x1040], true);
        assert_eq!(accepted, [0x1040]);
        assert_eq!(refused.count, 1);
    }

    #[test]
    fn an_evenly_spaced_query_completes_each_of_its_ids_once() {
        let outstanding = OutstandingIds::default();
        let run: Vec<u64> = (0..100).map(|i| 0x10_000 + 32 * i).collect();
        outstanding.issue(&samples(&run));
        outstanding.issue(&samples(&[0x500, 0x900]));
        assert!(outstanding.lock().runs.len() == 1);
        // Between two ids of the run, past its end, and the small query's ids.
        let (accepted, refused) = admitted(
            &outstanding,
            &[0x10_000 + 16, 0x10_000 + 32 * 100, 0x10_000 + 32 * 7, 0x900],
            true,
        );
        assert_eq!(accepted, [0x10_000 + 32 * 7, 0x900]);
        assert_eq!(refused.count, 2);
        assert!(!outstanding.contains(0x10_000 + 32 * 7));
        assert!(outstanding.contains(0x10_000 + 32 * 8));
        let (_, refused) = admitted(&outstanding, &[0x10_000 + 32 * 7], true);
        assert_eq!(refused.count, 1);
        let rest: Vec<u64> = run
            .iter()
            .copied()
            .filter(|&id| id != 0x10_000 + 32 * 7)
            .collect();
        let (accepted, refused) = admitted(&outstanding, &rest, true);
        assert_eq!((accepted.len(), refused.count), (99, 0));
        // Every id completed: the run is gone.
        assert!(outstanding.lock().runs.is_empty());
        assert!(outstanding.contains(0x500));
    }
}
