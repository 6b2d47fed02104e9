//! Which samples are loaded into RAM together (spec §4.2).

use super::rng::{shuffle, Mt19937};
use super::types::QuerySampleIndex;

/// One set of samples loaded at once. MultiStream pads it with copies of its first
/// `samples_per_query - 1` entries so every query can take contiguous samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoadableSet {
    pub samples: Vec<QuerySampleIndex>,
    /// The length without padding: sample draws stay below it.
    pub distribution_end: usize,
}

/// Shuffles `0..min(count, qsl_total)` with a fresh `mt19937(qsl_rng_seed)` and cuts it into sets
/// of `set_size` (a set size of 0 makes one set of everything).
pub(crate) fn generate_loadable_sets(
    qsl_rng_seed: u64,
    count: usize,
    qsl_total: usize,
    set_size: usize,
    padding: usize,
) -> Vec<LoadableSet> {
    let mut rng = Mt19937::new(qsl_rng_seed);
    let mut order: Vec<QuerySampleIndex> = (0..count.min(qsl_total)).collect();
    shuffle(&mut order, &mut rng);

    let chunk = if set_size == 0 {
        order.len().max(1)
    } else {
        set_size
    };
    order
        .chunks(chunk)
        .map(|part| {
            let mut samples = Vec::with_capacity(part.len() + padding);
            samples.extend_from_slice(part);
            for i in 0..padding {
                samples.push(samples[i]);
            }
            LoadableSet {
                samples,
                distribution_end: part.len(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_partition_a_shuffle() {
        let sets = generate_loadable_sets(1, 250, 1000, 100, 0);
        assert_eq!(
            sets.iter().map(|s| s.samples.len()).collect::<Vec<_>>(),
            [100, 100, 50]
        );
        let mut all: Vec<_> = sets.iter().flat_map(|s| s.samples.clone()).collect();
        all.sort_unstable();
        assert_eq!(all, (0..250).collect::<Vec<_>>());
    }

    #[test]
    fn padding_repeats_the_first_entries_even_past_a_short_set() {
        let sets = generate_loadable_sets(1, 1, 1, 8, 3);
        assert_eq!(sets[0].samples, vec![0, 0, 0, 0]);
        assert_eq!(sets[0].distribution_end, 1);
    }
}
