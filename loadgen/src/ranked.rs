//! Order statistics of a series' latencies without sorting them all: a summary reads about a
//! dozen ranks of up to 10^8 values, kept in 4 bytes each where they fit. Latencies of a fast
//! SUT crowd into a narrow band of nanoseconds, so a long series is first counted value by
//! value over a window of about a quarter of a millisecond; only when too many fall outside it
//! is each rank put in place by selection.

use std::cell::{Cell, RefCell};

/// Latencies (ns) in any order, answering "the value at this rank in ascending order".
///
/// Latencies from 0 to 4.3 s (nearly all of them) are kept in 4 bytes each, the rest whole:
/// the negative ones rank below every narrow value, the long ones above.
#[derive(Debug, Clone, Default)]
pub(crate) struct RankedLatencies {
    narrow: Selection<u32>,
    wide: Selection<i64>,
    /// How many of the wide values are negative.
    negatives: usize,
    /// (min, max, sum), once known.
    extremes: Cell<Option<(i64, i64, i128)>>,
}

/// The values of one width, each rank asked for placed by `select_nth_unstable` within the
/// span its nearest placed ranks leave; selection keeps every value between two placed ranks
/// inside that span, so later answers stay exact. The reordering happens behind `&self`
/// because the summary reads ranks from shared borrows of the whole result.
#[derive(Debug, Clone, Default)]
struct Selection<T> {
    values: RefCell<Vec<T>>,
    /// The smallest value, once known.
    min: Cell<Option<i64>>,
    /// Ranks already in their sorted place, ascending.
    placed: RefCell<Vec<usize>>,
    counted: RefCell<Counted>,
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
    fn count<T: Copy>(values: &[T], min: i64) -> Option<ValueCounts>
    where
        i64: From<T>,
    {
        if values.len() > u32::MAX as usize {
            return None;
        }
        let most_beyond = values.len() / OUTSIDE_SHARE;
        let mut counts = vec![0u32; WINDOW];
        let mut beyond = Vec::new();
        for &value in values {
            // Exact: value >= min, so the difference lies in 0..2^64.
            let offset = i64::from(value).wrapping_sub(min) as u64;
            if offset < WINDOW as u64 {
                counts[offset as usize] += 1;
            } else if beyond.len() < most_beyond {
                beyond.push(i64::from(value));
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

impl<T: Copy + Ord> Selection<T>
where
    i64: From<T>,
{
    fn new(values: Vec<T>, min: Option<i64>) -> Self {
        Selection {
            values: RefCell::new(values),
            min: Cell::new(min),
            placed: RefCell::new(Vec::new()),
            counted: RefCell::new(Counted::NotTried),
        }
    }

    fn len(&self) -> usize {
        self.values.borrow().len()
    }

    /// The value at `rank` (0-based) of the ascending order; panics past the end.
    fn at(&self, rank: usize) -> i64 {
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
        i64::from(values[rank])
    }

    /// The value at `rank` from the counts, counting on first use; None where they do not
    /// apply.
    fn counted_at(&self, rank: usize) -> Option<i64> {
        let mut counted = self.counted.borrow_mut();
        if matches!(*counted, Counted::NotTried) {
            *counted = match self.len() >= COUNTED_FROM {
                true => ValueCounts::count(&self.values.borrow(), self.min())
                    .map_or(Counted::Unsuitable, Counted::Ready),
                false => Counted::Unsuitable,
            };
        }
        match &*counted {
            Counted::Ready(counts) => Some(counts.at(rank)),
            _ => None,
        }
    }

    fn min(&self) -> i64 {
        if let Some(min) = self.min.get() {
            return min;
        }
        let min = self
            .values
            .borrow()
            .iter()
            .copied()
            .min()
            .map_or(0, i64::from);
        self.min.set(Some(min));
        min
    }

    /// Folds (min, max, sum) over the values.
    fn fold_extremes(&self, (min, max, sum): (i64, i64, i128)) -> (i64, i64, i128) {
        self.values
            .borrow()
            .iter()
            .fold((min, max, sum), |(min, max, sum), &value| {
                let value = i64::from(value);
                (min.min(value), max.max(value), sum + i128::from(value))
            })
    }

    fn count_above(&self, bound: i64) -> usize {
        self.values
            .borrow()
            .iter()
            .filter(|&&value| i64::from(value) > bound)
            .count()
    }
}

/// Collects latencies into their two widths, with their extremes on the way.
#[derive(Debug)]
pub(crate) struct LatencyCollector {
    narrow: Vec<u32>,
    narrow_extremes: NarrowExtremes,
    wide: WideLatencies,
}

/// The narrow latencies' extremes: a value of its own, so that a scan of 10^8 of them keeps it
/// in registers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NarrowExtremes {
    min: u32,
    max: u32,
    /// Exact: fewer than 2^32 values (the slot arena's limit), each below 2^32.
    sum: u64,
    /// How many were added.
    pub(crate) count: usize,
}

impl NarrowExtremes {
    pub(crate) const NONE: NarrowExtremes = NarrowExtremes {
        min: u32::MAX,
        max: 0,
        sum: 0,
        count: 0,
    };

    #[inline]
    pub(crate) fn add(&mut self, latency: u32) {
        self.min = self.min.min(latency);
        self.max = self.max.max(latency);
        self.sum += u64::from(latency);
        self.count += 1;
    }
}

/// The latencies that do not fit in 4 bytes: rare, so kept apart from the narrow ones' path.
#[derive(Debug)]
struct WideLatencies {
    values: Vec<i64>,
    negatives: usize,
    min: i64,
    max: i64,
    sum: i128,
}

impl WideLatencies {
    #[cold]
    #[inline(never)]
    fn push(&mut self, latency: i64) {
        self.negatives += usize::from(latency < 0);
        self.min = self.min.min(latency);
        self.max = self.max.max(latency);
        self.sum += i128::from(latency);
        self.values.push(latency);
    }
}

impl LatencyCollector {
    pub(crate) fn new() -> Self {
        LatencyCollector::reserving(0)
    }

    /// Reserves room for `expected` narrow latencies (address space; pages cost nothing until
    /// written).
    pub(crate) fn reserving(expected: usize) -> Self {
        let mut narrow = Vec::new();
        let _ = narrow.try_reserve(expected);
        LatencyCollector {
            narrow,
            narrow_extremes: NarrowExtremes::NONE,
            wide: WideLatencies {
                values: Vec::new(),
                negatives: 0,
                min: i64::MAX,
                max: i64::MIN,
                sum: 0,
            },
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, latency: i64) {
        if let Some(narrow) = self.record(latency) {
            self.narrow.push(narrow);
        }
    }

    /// Counts `latency` in the extremes; returns it in 4 bytes when it fits, for the caller to
    /// store among the narrow ones, and keeps it whole otherwise.
    #[inline]
    pub(crate) fn record(&mut self, latency: i64) -> Option<u32> {
        match u32::try_from(latency) {
            Ok(narrow) => {
                self.narrow_extremes.add(narrow);
                Some(narrow)
            }
            Err(_) => {
                self.wide.push(latency);
                None
            }
        }
    }

    /// (min, max, sum) of everything collected; None when nothing was.
    fn extremes(&self) -> Option<(i64, i64, i128)> {
        let n = &self.narrow_extremes;
        let narrow = (n.count > 0).then(|| (i64::from(n.min), i64::from(n.max), i128::from(n.sum)));
        let wide = &self.wide;
        let wide = (!wide.values.is_empty()).then_some((wide.min, wide.max, wide.sum));
        match (narrow, wide) {
            (Some(n), Some(w)) => Some((n.0.min(w.0), n.1.max(w.1), n.2 + w.2)),
            (one, other) => one.or(other),
        }
    }

    /// Ends a collection whose narrow latencies the caller kept itself, writing them over
    /// memory it no longer needs so that the end of a long run allocates nothing: the first
    /// `extremes.count` of `buffer`. Only the wide ones were [`push`](Self::push)ed here.
    pub(crate) fn written_over(
        mut self,
        mut buffer: Vec<u32>,
        extremes: NarrowExtremes,
    ) -> RankedLatencies {
        buffer.truncate(extremes.count);
        self.narrow = buffer;
        self.narrow_extremes = extremes;
        self.finish()
    }

    pub(crate) fn finish(self) -> RankedLatencies {
        let extremes = self.extremes();
        let n = self.narrow_extremes;
        let narrow_min = (n.count > 0).then_some(i64::from(n.min));
        let wide = self.wide;
        let wide_min = (!wide.values.is_empty()).then_some(wide.min);
        RankedLatencies {
            narrow: Selection::new(self.narrow, narrow_min),
            wide: Selection::new(wide.values, wide_min),
            negatives: wide.negatives,
            extremes: Cell::new(extremes),
        }
    }
}

impl From<Vec<i64>> for RankedLatencies {
    fn from(values: Vec<i64>) -> Self {
        let mut collector = LatencyCollector::reserving(values.len());
        values.into_iter().for_each(|value| collector.push(value));
        collector.finish()
    }
}

impl RankedLatencies {
    pub(crate) fn len(&self) -> usize {
        self.narrow.len() + self.wide.len()
    }

    /// The value at `rank` (0-based) of the ascending order; panics past the end, as indexing
    /// a sorted slice would.
    pub(crate) fn at(&self, rank: usize) -> i64 {
        let narrow = self.narrow.len();
        if rank < self.negatives {
            self.wide.at(rank)
        } else if rank - self.negatives < narrow {
            self.narrow.at(rank - self.negatives)
        } else {
            self.wide.at(rank - narrow)
        }
    }

    /// (min, max, sum) in one pass; None when empty.
    pub(crate) fn min_max_sum(&self) -> Option<(i64, i64, i128)> {
        if let Some(known) = self.extremes.get() {
            return Some(known);
        }
        if self.len() == 0 {
            return None;
        }
        let start = (i64::MAX, i64::MIN, 0);
        let extremes = self.wide.fold_extremes(self.narrow.fold_extremes(start));
        self.extremes.set(Some(extremes));
        Some(extremes)
    }

    /// How many latencies are strictly greater than `bound`.
    pub(crate) fn count_above(&self, bound: i64) -> u64 {
        (self.narrow.count_above(bound) + self.wide.count_above(bound)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{uniform_int, Mt19937};

    #[test]
    fn every_rank_asked_in_any_order_equals_the_sorted_value() {
        let mut rng = Mt19937::new(11);
        // The last two mostly past 4.3 s: kept whole, some of them below 2^32 ns and narrow.
        let cases = [
            (1, 5),
            (2, 1),
            (1_000, 3),
            (10_000, 1_000_000),
            (4_097, 0),
            (3_000, 1 << 40),
            (1, 1 << 40),
        ];
        for (len, spread) in cases {
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
        // Long enough that the narrow ones alone are counted when the outliers go wide.
        let len = COUNTED_FROM + COUNTED_FROM / 16;
        fn narrow(rng: &mut Mt19937) -> i64 {
            150 + uniform_int(rng, 0, 400) as i64
        }
        type Draw = Box<dyn Fn(&mut Mt19937, usize) -> i64>;
        let cases: [(&str, Draw, bool); 4] = [
            ("narrow", Box::new(|rng, _| narrow(rng)), true),
            // Latencies past 4.3 s, kept whole, and counted as the narrow ones are.
            ("long", Box::new(|rng, _| 6_000_000_000 + narrow(rng)), true),
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
            let widest = match ranked.narrow.len() >= ranked.wide.len() {
                true => ranked.narrow.counted.borrow(),
                false => ranked.wide.counted.borrow(),
            };
            assert_eq!(matches!(*widest, Counted::Ready(_)), counts_apply, "{name}");
            drop(widest);
            let (min, max) = (sorted[0], sorted[len - 1]);
            let sum = sorted.iter().map(|&v| i128::from(v)).sum();
            assert_eq!(ranked.min_max_sum(), Some((min, max, sum)), "{name}");
            let bound = sorted[len / 2];
            let above = sorted.iter().filter(|&&v| v > bound).count() as u64;
            assert_eq!(ranked.count_above(bound), above, "{name}");
        }
    }
}
