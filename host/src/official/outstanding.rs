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

#[derive(Default)]
pub(crate) struct OutstandingIds {
    ids: Mutex<HashSet<u64, BuildHasherDefault<IdHasher>>>,
}

impl OutstandingIds {
    /// Records the samples of a query about to be issued (one lock per query).
    pub(crate) fn issue(&self, samples: &[QuerySample]) {
        let mut ids = self.lock();
        ids.reserve(samples.len());
        for sample in samples {
            ids.insert(sample.id.0);
        }
    }

    /// Hands `accept` each response whose id is outstanding, in order (removing the id when
    /// `completes`: a first token leaves its sample outstanding); returns the refused ones.
    pub(crate) fn admit(
        &self,
        responses: &[QuerySampleResponse<'_>],
        completes: bool,
        mut accept: impl FnMut(&QuerySampleResponse<'_>),
    ) -> Refused {
        let mut refused = Refused::default();
        let mut outstanding = self.lock();
        for response in responses {
            let id = response.id.0;
            let known = if completes {
                outstanding.remove(&id)
            } else {
                outstanding.contains(&id)
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

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<u64, BuildHasherDefault<IdHasher>>> {
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
}
