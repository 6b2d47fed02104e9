//! A large query's samples put in the order they lie in the host's sample arena, so that a
//! batch is mostly a run of neighbouring samples that the model can read in place (see
//! `Engine::infer`) instead of a gather of scattered ones.
//!
//! An Offline query draws its samples at random from the loaded set, each one many times.
//! Here the query is dealt out in rounds: round k holds occurrence k of every sample that
//! occurs more than k times, in arena order. Every occurrence runs once, as issued; only the
//! order changes, which the Offline scenario leaves to the system under test. Nothing depends
//! on samples repeating: a query that holds each loaded sample once is a single round.

use mlperf_plugin_api::sdk::Sample;

use super::item::Item;

/// Data-set indices are counted in a table as long as the query or this, whichever is more.
const MIN_TABLE: usize = 1 << 16;

/// A query's samples by round: `ids[k * columns + c]` is the id of occurrence k of the sample
/// in arena column `c`, when it occurs more than k times.
pub(crate) struct Rounds {
    /// One item per distinct sample, in arena order.
    columns: Vec<Item>,
    counts: Vec<u32>,
    ids: Vec<u64>,
    /// The next item: `column` of `round`.
    round: u32,
    column: usize,
    remaining: usize,
}

#[derive(Clone, Copy, Default)]
struct Slot {
    /// The index's first occurrence (its data address is every occurrence's).
    first: Option<Item>,
    count: u32,
    column: u32,
}

/// The rounds of `samples` (one run of one shape, already checked); `None` when their indices
/// are too sparse for a table, an index's samples do not share one address, or the counts are
/// so uneven that rounds would be mostly empty (then the query's own order is as good).
pub(crate) fn arena_order(samples: &[Sample<'_>]) -> Option<Rounds> {
    let largest = usize::try_from(samples.iter().map(Sample::index).max()?).ok()?;
    if largest >= samples.len().max(MIN_TABLE) {
        return None;
    }
    let mut slots = vec![Slot::default(); largest + 1];
    for sample in samples {
        let slot = &mut slots[sample.index() as usize];
        match &slot.first {
            None => slot.first = Some(Item::of(sample)),
            Some(first) if first.data() != sample.data().as_ptr() => return None,
            Some(_) => {}
        }
        slot.count += 1;
    }
    let mut order: Vec<u32> = (0..=largest as u32)
        .filter(|&index| slots[index as usize].count > 0)
        .collect();
    order.sort_unstable_by_key(|&index| slots[index as usize].first.map(|item| item.data()));
    let rounds = order.iter().map(|&i| slots[i as usize].count).max()?;
    let cells = rounds as usize * order.len();
    if cells > 2 * samples.len() {
        return None;
    }

    let mut columns = Vec::with_capacity(order.len());
    let mut counts = Vec::with_capacity(order.len());
    for (column, &index) in order.iter().enumerate() {
        let slot = &mut slots[index as usize];
        columns.push(slot.first.expect("counted indices have a first item"));
        counts.push(slot.count);
        slot.column = column as u32;
        slot.count = 0;
    }
    // Occurrence k of each sample into row k: the rows being filled at any time are few, as
    // a sample's k-th occurrence comes about k loaded-set lengths into the query.
    let width = order.len();
    let mut ids = vec![0u64; cells];
    for sample in samples {
        let slot = &mut slots[sample.index() as usize];
        ids[slot.count as usize * width + slot.column as usize] = sample.id();
        slot.count += 1;
    }
    Some(Rounds {
        columns,
        counts,
        ids,
        round: 0,
        column: 0,
        remaining: samples.len(),
    })
}

impl Rounds {
    /// How many items are left.
    pub(crate) fn len(&self) -> usize {
        self.remaining
    }

    /// Up to `max` items of the current round, in arena order, into `batch`; a batch never
    /// spans two rounds, so that its samples are neighbours. Takes at least one while any
    /// are left. Rounds narrower than a batch (few distinct samples: TEST04 repeats one) fill
    /// it from the rounds that follow instead, gathered rather than read in place: batches of
    /// one round each would be as small as the round.
    pub(crate) fn take(&mut self, max: usize, batch: &mut Vec<Item>) {
        let width = self.columns.len();
        let start = batch.len();
        let span_rounds = width < max;
        while self.remaining > 0 && (batch.len() == start || (span_rounds && batch.len() < max)) {
            let before = batch.len();
            let row = &self.ids[self.round as usize * width..][..width];
            while batch.len() < max && self.column < width {
                let column = self.column;
                self.column += 1;
                if self.counts[column] > self.round {
                    batch.push(self.columns[column].with_id(row[column]));
                }
            }
            if self.column == width {
                self.round += 1;
                self.column = 0;
            }
            self.remaining -= batch.len() - before;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use mlperf_plugin_api::ffi::mlperf_sample;
    use mlperf_plugin_api::testing::sample;

    use super::*;

    const LENGTH: usize = 16;

    /// `count` samples of LENGTH bytes back to back, index i at place `place(i)`.
    struct Arena {
        bytes: Vec<u8>,
        place: Vec<usize>,
    }

    impl Arena {
        fn new(count: usize, place: impl Fn(usize) -> usize) -> Arena {
            Arena {
                bytes: vec![0; count * LENGTH],
                place: (0..count).map(place).collect(),
            }
        }

        fn raw(&self, id: u64, index: usize) -> mlperf_sample {
            let at = self.place[index] * LENGTH;
            sample(id, index as u64, &self.bytes[at..at + LENGTH])
        }

        /// Which place an item's bytes are at.
        fn place_of(&self, item: &Item) -> usize {
            (item.data() as usize - self.bytes.as_ptr() as usize) / LENGTH
        }
    }

    fn samples(raw: &[mlperf_sample]) -> Vec<Sample<'_>> {
        // SAFETY: the raw samples point into an Arena that outlives the test's use of them.
        raw.iter()
            .map(|&r| unsafe { Sample::from_raw(r) })
            .collect()
    }

    /// Every batch `take` gives, `max` at a time, until none are left.
    fn batches(mut rounds: Rounds, max: usize) -> Vec<Vec<Item>> {
        let mut all = Vec::new();
        while rounds.len() > 0 {
            let mut batch = Vec::new();
            rounds.take(max, &mut batch);
            assert!(!batch.is_empty() && batch.len() <= max, "{}", batch.len());
            all.push(batch);
        }
        all
    }

    /// A query of `length` draws from `count` indices, ids 100.., uneven counts.
    fn draws(count: usize, length: usize) -> Vec<(u64, usize)> {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        (0..length)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (100 + i as u64, (state % count as u64) as usize)
            })
            .collect()
    }

    #[test]
    fn every_occurrence_runs_once_round_by_round_in_arena_order() {
        // Places reversed and interleaved, so arena order is not index order.
        let arena = Arena::new(10, |i| (7 * i + 3) % 10);
        let query = draws(10, 300);
        let raw: Vec<_> = query.iter().map(|&(id, i)| arena.raw(id, i)).collect();
        let rounds = arena_order(&samples(&raw)).expect("a dense query is ordered");
        assert_eq!(rounds.len(), 300);
        let dealt: Vec<Item> = batches(rounds, 4).into_iter().flatten().collect();

        let issued: BTreeMap<u64, usize> = query.iter().copied().collect();
        let mut seen = BTreeSet::new();
        for item in &dealt {
            assert!(seen.insert(item.id), "id {} dealt twice", item.id);
            assert_eq!(item.index as usize, issued[&item.id], "id {}", item.id);
            assert_eq!(arena.place_of(item), arena.place[item.index as usize]);
        }
        assert_eq!(seen.len(), 300);

        // Rounds: runs of rising places; round k holds the indices issued more than k times.
        let mut counts = [0; 10];
        for &(_, index) in &query {
            counts[index] += 1;
        }
        let mut rounds: Vec<Vec<usize>> = vec![Vec::new()];
        for item in &dealt {
            let place = arena.place_of(item);
            if rounds.last().unwrap().last().is_some_and(|&p| p >= place) {
                rounds.push(Vec::new());
            }
            rounds.last_mut().unwrap().push(place);
        }
        assert_eq!(rounds.len(), *counts.iter().max().unwrap());
        for (k, round) in rounds.iter().enumerate() {
            let expected: Vec<usize> = (0..10)
                .filter(|&i| counts[i] > k)
                .map(|i| arena.place[i])
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            assert_eq!(round, &expected, "round {k}");
        }
    }

    #[test]
    fn batches_of_full_rounds_are_neighbours_and_never_span_two_rounds() {
        let arena = Arena::new(10, |i| 9 - i);
        // Each index three times, issued in a scrambled order.
        let query: Vec<(u64, usize)> = (0..30).map(|k| (k as u64, (k * 7) % 10)).collect();
        let raw: Vec<_> = query.iter().map(|&(id, i)| arena.raw(id, i)).collect();
        let got = batches(arena_order(&samples(&raw)).unwrap(), 4);
        let places: Vec<Vec<usize>> = got
            .iter()
            .map(|batch| batch.iter().map(|item| arena.place_of(item)).collect())
            .collect();
        let round = [vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![8, 9]];
        assert_eq!(places, [&round[..], &round, &round].concat());
    }

    #[test]
    fn rounds_narrower_than_a_batch_fill_it_from_the_rounds_after() {
        // TEST04: one sample issued a thousand times is a thousand rounds of one.
        let arena = Arena::new(4, |i| i);
        let raw: Vec<_> = (0..1000).map(|k| arena.raw(k, 3)).collect();
        let got = batches(arena_order(&samples(&raw)).unwrap(), 256);
        let sizes: Vec<usize> = got.iter().map(Vec::len).collect();
        assert_eq!(sizes, [256, 256, 256, 232]);
        let ids: Vec<u64> = got.iter().flatten().map(|item| item.id).collect();
        assert_eq!(ids, (0..1000).collect::<Vec<u64>>());
        // Two samples, each three times: rounds of two, batches of four across them.
        let raw: Vec<_> = (0..6).map(|k| arena.raw(k, (k % 2) as usize)).collect();
        let got = batches(arena_order(&samples(&raw)).unwrap(), 4);
        let sizes: Vec<usize> = got.iter().map(Vec::len).collect();
        assert_eq!(sizes, [4, 2]);
    }

    #[test]
    fn a_query_holding_each_sample_once_is_one_round() {
        let arena = Arena::new(6, |i| (i + 2) % 6);
        let raw: Vec<_> = (0..6).map(|i| arena.raw(i as u64, i)).collect();
        let got = batches(arena_order(&samples(&raw)).unwrap(), 6);
        assert_eq!(got.len(), 1);
        let places: Vec<usize> = got[0].iter().map(|item| arena.place_of(item)).collect();
        assert_eq!(places, [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn a_round_whose_rest_is_all_gaps_still_yields_a_batch() {
        // Index 0 three times, 1 and 2 once: rounds 1 and 2 are index 0 alone, so a take
        // that starts after it in round 1 finds only gaps there and goes on to round 2.
        let arena = Arena::new(3, |i| i);
        let query = [(1, 0), (2, 1), (3, 0), (4, 2), (5, 0)];
        let raw: Vec<_> = query.iter().map(|&(id, i)| arena.raw(id, i)).collect();
        let got = batches(arena_order(&samples(&raw)).unwrap(), 1);
        let ids: Vec<u64> = got.iter().map(|batch| batch[0].id).collect();
        assert_eq!(ids, [1, 2, 4, 3, 5]);
    }

    #[test]
    fn queries_that_cannot_be_dealt_keep_their_own_order() {
        let arena = Arena::new(4, |i| i);
        let ordered = |raw: &[mlperf_sample]| arena_order(&samples(raw)).is_some();
        assert!(ordered(&[arena.raw(1, 0), arena.raw(2, 1)]));
        assert!(!ordered(&[]));

        // An index beyond what a table covers.
        let mut far = arena.raw(1, 0);
        far.index = 1 << 20;
        assert!(!ordered(&[far, arena.raw(2, 1)]));

        // One index at two addresses.
        let mut moved = arena.raw(2, 1);
        moved.index = 0;
        assert!(!ordered(&[arena.raw(1, 0), moved]));

        // Counts so uneven that rounds would be mostly gaps: index 0 forty times, 1..3 once.
        let mut lopsided: Vec<_> = (0..40).map(|k| arena.raw(k, 0)).collect();
        lopsided.extend((1..4).map(|i| arena.raw(100 + i as u64, i)));
        assert!(!ordered(&lopsided));
    }
}
