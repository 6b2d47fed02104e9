//! Order statistics of a series' latencies without sorting them all: a summary reads about a
//! dozen ranks of up to 10^8 values, so each is put in place by selection instead.

use std::cell::RefCell;

/// Latencies (ns) in any order, answering "the value at this rank in ascending order".
///
/// Each rank asked for is placed by `select_nth_unstable` within the span its nearest placed
/// ranks leave; selection keeps every value between two placed ranks inside that span, so
/// later answers stay exact. The reordering happens behind `&self` because the summary reads
/// ranks from shared borrows of the whole result.
#[derive(Debug, Clone, Default)]
pub(crate) struct RankedLatencies {
    values: RefCell<Vec<i64>>,
    /// Ranks already in their sorted place, ascending.
    placed: RefCell<Vec<usize>>,
}

impl From<Vec<i64>> for RankedLatencies {
    fn from(values: Vec<i64>) -> Self {
        RankedLatencies {
            values: RefCell::new(values),
            placed: RefCell::new(Vec::new()),
        }
    }
}

impl RankedLatencies {
    pub(crate) fn len(&self) -> usize {
        self.values.borrow().len()
    }

    /// The value at `rank` (0-based) of the ascending order; panics past the end, as indexing
    /// a sorted slice would.
    pub(crate) fn at(&self, rank: usize) -> i64 {
        let mut values = self.values.borrow_mut();
        let mut placed = self.placed.borrow_mut();
        if let Err(slot) = placed.binary_search(&rank) {
            let low = slot.checked_sub(1).map_or(0, |before| placed[before] + 1);
            let high = placed.get(slot).copied().unwrap_or(values.len());
            values[low..high].select_nth_unstable(rank - low);
            placed.insert(slot, rank);
        }
        values[rank]
    }

    /// (min, max, sum) in one pass; None when empty.
    pub(crate) fn min_max_sum(&self) -> Option<(i64, i64, i128)> {
        let values = self.values.borrow();
        let first = *values.first()?;
        let (mut min, mut max, mut sum) = (first, first, 0i128);
        for &l in values.iter() {
            min = min.min(l);
            max = max.max(l);
            sum += i128::from(l);
        }
        Some((min, max, sum))
    }

    /// How many latencies are strictly greater than `bound`.
    pub(crate) fn count_above(&self, bound: i64) -> u64 {
        self.values.borrow().iter().filter(|&&l| l > bound).count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{uniform_int, Mt19937};

    #[test]
    fn every_rank_asked_in_any_order_equals_the_sorted_value() {
        let mut rng = Mt19937::new(11);
        for (len, spread) in [(1, 5), (2, 1), (1_000, 3), (10_000, 1_000_000), (4_097, 0)] {
            let values: Vec<i64> = (0..len)
                .map(|_| uniform_int(&mut rng, 0, spread) as i64 - 7)
                .collect();
            let mut sorted = values.clone();
            sorted.sort_unstable();
            let ranked = RankedLatencies::from(values);
            // Ranks in a scattered order, some twice, then a third of all and the last.
            let scattered = (0..len).map(|_| uniform_int(&mut rng, 0, len as u64 - 1) as usize);
            let sweep = (0..len).step_by(3).chain([len - 1]);
            for rank in scattered.take(40).chain(sweep) {
                assert_eq!(ranked.at(rank), sorted[rank], "len {len} rank {rank}");
            }
        }
    }
}
