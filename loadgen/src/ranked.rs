//! Order statistics of a series' latencies without sorting them all: a summary reads about a
//! dozen ranks of up to 10^8 values. Latencies of a fast SUT crowd into a narrow band of
//! nanoseconds, so a long series is first counted value by value over a window of about a
//! quarter of a millisecond; only when too many fall outside it is each rank put in place by
//! selection.

use std::cell::{Cell, RefCell};

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
    counted: RefCell<Counted>,
    /// (min, max, sum), once known.
    extremes: Cell<Option<(i64, i64, i128)>>,
}

/// Whether a long series' ranks are read from counts.
#[derive(Debug, Clone, Default)]
enum Counted {
    #[default]
    NotTried,
    /// Too short to be worth it, or too spread out: selection answers.
    Unsuitable,
    Ready(ValueCounts),
}

/// Series shorter than this are ranked by selection alone.
const COUNTED_FROM: usize = 1 << 20;
/// Values counted one by one from the smallest on (256 Ki values: 1 MiB of counts).
const WINDOW: usize = 1 << 18;
/// At most this share (1 / N) of the values may lie past the window, kept and sorted apart.
const OUTSIDE_SHARE: usize = 256;

/// How many values lie at or below each value of the window, and the few beyond it.
#[derive(Debug, Clone)]
struct ValueCounts {
    min: i64,
    /// `at_or_below[k]`: how many values are `<= min + k`.
    at_or_below: Vec<u32>,
    /// The values past the window, ascending.
    beyond: Vec<i64>,
}

impl ValueCounts {
    /// Counts `values`, whose smallest is `min`.
    fn count(values: &[i64], min: i64) -> Option<ValueCounts> {
        if values.len() > u32::MAX as usize {
            return None;
        }
        let most_beyond = values.len() / OUTSIDE_SHARE;
        let mut counts = vec![0u32; WINDOW];
        let mut beyond = Vec::new();
        for &value in values {
            // Exact: value >= min, so the difference lies in 0..2^64.
            let offset = value.wrapping_sub(min) as u64;
            if offset < WINDOW as u64 {
                counts[offset as usize] += 1;
            } else if beyond.len() < most_beyond {
                beyond.push(value);
            } else {
                return None;
            }
        }
        let mut total = 0u32;
        let at_or_below = counts
            .iter()
            .map(|&count| {
                total += count;
                total
            })
            .collect();
        beyond.sort_unstable();
        Some(ValueCounts {
            min,
            at_or_below,
            beyond,
        })
    }

    fn at(&self, rank: usize) -> i64 {
        let in_window = *self.at_or_below.last().expect("a window") as usize;
        if rank < in_window {
            let k = self.at_or_below.partition_point(|&n| n as usize <= rank);
            self.min + k as i64
        } else {
            self.beyond[rank - in_window]
        }
    }
}

impl From<Vec<i64>> for RankedLatencies {
    fn from(values: Vec<i64>) -> Self {
        RankedLatencies {
            values: RefCell::new(values),
            placed: RefCell::new(Vec::new()),
            counted: RefCell::new(Counted::NotTried),
            extremes: Cell::new(None),
        }
    }
}

impl RankedLatencies {
    /// Latencies whose (min, max, sum) the caller worked out while writing them, sparing a
    /// pass over them.
    pub(crate) fn with_extremes(values: Vec<i64>, min: i64, max: i64, sum: i128) -> Self {
        let ranked = RankedLatencies::from(values);
        if ranked.len() > 0 {
            ranked.extremes.set(Some((min, max, sum)));
        }
        ranked
    }

    pub(crate) fn len(&self) -> usize {
        self.values.borrow().len()
    }

    /// The value at `rank` (0-based) of the ascending order; panics past the end, as indexing
    /// a sorted slice would.
    pub(crate) fn at(&self, rank: usize) -> i64 {
        if let Some(value) = self.counted_at(rank) {
            return value;
        }
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

    /// The value at `rank` from the counts, counting on first use; None where they do not
    /// apply.
    fn counted_at(&self, rank: usize) -> Option<i64> {
        let mut counted = self.counted.borrow_mut();
        if matches!(*counted, Counted::NotTried) {
            *counted = match self.len() >= COUNTED_FROM {
                true => self
                    .min_max_sum()
                    .and_then(|(min, _, _)| ValueCounts::count(&self.values.borrow(), min))
                    .map_or(Counted::Unsuitable, Counted::Ready),
                false => Counted::Unsuitable,
            };
        }
        match &*counted {
            Counted::Ready(counts) => Some(counts.at(rank)),
            _ => None,
        }
    }

    /// (min, max, sum) in one pass; None when empty.
    pub(crate) fn min_max_sum(&self) -> Option<(i64, i64, i128)> {
        if let Some(known) = self.extremes.get() {
            return Some(known);
        }
        let values = self.values.borrow();
        let first = *values.first()?;
        let (mut min, mut max, mut sum) = (first, first, 0i128);
        for &l in values.iter() {
            min = min.min(l);
            max = max.max(l);
            sum += i128::from(l);
        }
        self.extremes.set(Some((min, max, sum)));
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

    /// Long series: counted when nearly all values lie within the window of the smallest,
    /// selected otherwise; the answers are the sorted values either way.
    #[test]
    fn long_series_are_counted_or_selected_and_ranked_exactly() {
        let mut rng = Mt19937::new(5);
        let len = COUNTED_FROM + 3;
        fn narrow(rng: &mut Mt19937) -> i64 {
            150 + uniform_int(rng, 0, 400) as i64
        }
        type Draw = Box<dyn Fn(&mut Mt19937, usize) -> i64>;
        let cases: [(&str, Draw, bool); 3] = [
            ("narrow", Box::new(|rng, _| narrow(rng)), true),
            (
                // One value in 1000 far out (past the window, within the share kept apart),
                // and a negative one as the smallest.
                "outliers",
                Box::new(|rng, i| match i % 1000 {
                    0 => 5_000_000 + uniform_int(rng, 0, 1 << 40) as i64,
                    1 if i == 1 => -3,
                    _ => narrow(rng),
                }),
                true,
            ),
            (
                "spread",
                Box::new(|rng, _| uniform_int(rng, 0, 1 << 30) as i64),
                false,
            ),
        ];
        for (name, draw, counts_apply) in cases {
            let values: Vec<i64> = (0..len).map(|i| draw(&mut rng, i)).collect();
            let mut sorted = values.clone();
            sorted.sort_unstable();
            let ranked = RankedLatencies::from(values);
            let ranks = [
                0,
                1,
                len / 2,
                len * 9 / 10,
                len * 99 / 100,
                len * 999 / 1000,
            ]
            .into_iter()
            .chain([len - 2, len - 1, 7, len / 3]);
            for rank in ranks {
                assert_eq!(ranked.at(rank), sorted[rank], "{name} rank {rank}");
            }
            let counted = matches!(*ranked.counted.borrow(), Counted::Ready(_));
            assert_eq!(counted, counts_apply, "{name}");
        }
    }
}
