//! Each query's scheduled time in 4 bytes: the time since the query before it, with the rare
//! gap that does not fit (4.3 s or more, or backwards) kept whole beside. A series of 10^8
//! queries keeps 400 MB of schedule rather than 800 MB, and the end of the run writes the
//! latencies over it.

/// A delta that stands for "the next whole value in `escaped`".
const ESCAPE: u32 = u32::MAX;

/// Scheduled times (ns since the test clock's origin), in issue order, appended by the issuing
/// thread.
#[derive(Debug, Default)]
pub(crate) struct Schedule {
    deltas: Vec<u32>,
    escaped: Vec<i64>,
    last: i64,
}

impl Schedule {
    /// Reserves room for `queries` entries when the address space allows; reserved pages cost
    /// nothing until written, and growing by copying mid-run would stall the issue loop.
    pub(crate) fn reserving(queries: usize) -> Self {
        let mut schedule = Schedule::default();
        let _ = schedule.deltas.try_reserve(queries);
        schedule
    }

    #[inline]
    pub(crate) fn push(&mut self, scheduled_ns: i64) {
        let delta = scheduled_ns.wrapping_sub(self.last) as u64;
        if delta < u64::from(ESCAPE) {
            self.deltas.push(delta as u32);
        } else {
            self.deltas.push(ESCAPE);
            self.escaped.push(scheduled_ns);
        }
        self.last = scheduled_ns;
    }

    pub(crate) fn len(&self) -> usize {
        self.deltas.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.deltas.is_empty()
    }

    /// The latest entry.
    pub(crate) fn last(&self) -> Option<i64> {
        (!self.is_empty()).then_some(self.last)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        let mut decoder = Decoder::new(&self.escaped);
        self.deltas.iter().map(move |&delta| decoder.decode(delta))
    }

    /// The raw deltas (to be decoded in order with [`Decoder`]) and the whole values beside.
    pub(crate) fn into_parts(self) -> (Vec<u32>, Vec<i64>) {
        (self.deltas, self.escaped)
    }
}

impl FromIterator<i64> for Schedule {
    fn from_iter<I: IntoIterator<Item = i64>>(entries: I) -> Self {
        let entries = entries.into_iter();
        let mut schedule = Schedule::reserving(entries.size_hint().0);
        entries.for_each(|ns| schedule.push(ns));
        schedule
    }
}

/// Turns a schedule's deltas back into times, one after the other from the first.
pub(crate) struct Decoder<'a> {
    escaped: std::slice::Iter<'a, i64>,
    current: i64,
}

impl<'a> Decoder<'a> {
    pub(crate) fn new(escaped: &'a [i64]) -> Self {
        Decoder {
            escaped: escaped.iter(),
            current: 0,
        }
    }

    #[inline]
    pub(crate) fn decode(&mut self, delta: u32) -> i64 {
        self.current = match delta {
            ESCAPE => *self.escaped.next().expect("one whole value per escape"),
            _ => self.current.wrapping_add(i64::from(delta)),
        };
        self.current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_reads_back_whatever_its_gap() {
        let gap_limit = i64::from(ESCAPE);
        let entries = [
            5,
            5,
            gap_limit - 1,
            gap_limit * 2 - 1, // a gap of exactly the limit: kept whole
            gap_limit * 3 - 3, // one below it: a delta
            10,                // backwards
            i64::MIN,          // another issue thread's unissued query
            i64::MAX,
            -7,
            0,
        ];
        let schedule: Schedule = entries.iter().copied().collect();
        assert_eq!(schedule.iter().collect::<Vec<_>>(), entries);
        assert_eq!(schedule.len(), entries.len());
        assert_eq!(schedule.last(), Some(0));
        let (deltas, escaped) = schedule.into_parts();
        assert_eq!(escaped, [gap_limit * 2 - 1, 10, i64::MIN, i64::MAX, -7]);
        assert_eq!(deltas.iter().filter(|&&d| d == ESCAPE).count(), 5);
        assert_eq!(Schedule::default().last(), None);
    }
}
