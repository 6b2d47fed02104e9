//! An energy counter followed across polls into a running total that neither wraps nor resets.

/// A raw energy counter followed across polls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct WrappingCounter {
    range: Option<u64>,
    last: u64,
    total: u64,
}

impl WrappingCounter {
    /// `range`: the largest value the counter reaches before it wraps to 0; None for one that
    /// does not wrap, where a decrease is a reset to 0 (a driver reload).
    pub(super) fn new(range: Option<u64>, first: u64) -> WrappingCounter {
        WrappingCounter {
            range,
            last: first,
            total: 0,
        }
    }

    /// The last raw value taken.
    pub(super) fn last(&self) -> u64 {
        self.last
    }

    /// Whether `raw` as the next reading would be taken for a reset (a decrease of a counter
    /// without a range) rather than an advance or a wrap.
    pub(super) fn resets_at(&self, raw: u64) -> bool {
        self.range.is_none() && raw < self.last
    }

    /// Takes the next reading; returns the count since the first. A decrease is one wrap,
    /// `(range - last) + raw` as Kepler counts it: the kernel's range is the largest value
    /// (2^32 - 1 units of the hardware's), so this is short by one unit (15 to 61 µJ) per
    /// wrap, which is nothing against minutes of a package's draw. Two wraps between polls
    /// cannot be seen: poll well within the range's time. Without a range, a decrease is a
    /// reset: the count goes on from 0.
    pub(super) fn update(&mut self, raw: u64) -> u64 {
        let increase = match self.range {
            _ if raw >= self.last => raw - self.last,
            Some(range) => range.saturating_sub(self.last).saturating_add(raw),
            None => raw,
        };
        self.total = self.total.saturating_add(increase);
        self.last = raw;
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapping_counter_adds_the_range_once_per_wrap() {
        let mut counter = WrappingCounter::new(Some(100), 90);
        assert_eq!(counter.update(95), 5);
        // 95 → 100 → 0 → 5: (100 - 95) + 5.
        assert!(!counter.resets_at(5));
        assert_eq!(counter.update(5), 15);
        assert_eq!(counter.update(10), 20);
        assert_eq!(counter.update(10), 20);
        assert_eq!(counter.last(), 10);
        // A reading above the range (bad hardware) does not underflow.
        let mut odd = WrappingCounter::new(Some(100), 150);
        assert_eq!(odd.update(3), 3);
        // Without a range a decrease is a reset to 0.
        let mut reset = WrappingCounter::new(None, 50);
        assert!(reset.resets_at(10) && !reset.resets_at(50));
        assert_eq!(reset.update(10), 10);
        assert_eq!(reset.update(25), 25);
    }
}
