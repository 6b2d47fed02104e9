//! Advancing the sample engine past equal-issue rounds that are never read. The official
//! LoadGen shuffles every round up front, so the engine must be moved past tens of millions of
//! draws before the first query of a long run. Only the number of engine outputs matters, and
//! an output is wasted only when Lemire's method rejects it, so each output is tested against
//! its draw's bound and rejection threshold straight from the state block: a whole block
//! without a branch, eight at a time and then one by one only around a rejection.

use super::mt19937::{temper, Mt19937};
use super::skip_shuffle;

/// Outputs tested together when a block holds a rejection; a multiple of every vector width
/// the loop may compile to.
const LANES: usize = 8;

/// The largest set whose draws are tabled (8 bytes a draw).
const MOST_TABLED: usize = 1 << 20;

/// The most outputs tested at once: one state block of the engine.
const BLOCK: usize = super::mt19937::N;

/// Advances `rng` as `rounds` successive `shuffle`s of `n` elements would.
pub fn skip_shuffles(rounds: u64, n: usize, rng: &mut Mt19937) {
    let Some(draws) = RoundDraws::new(n) else {
        for _ in 0..rounds {
            skip_shuffle(n, rng);
        }
        return;
    };
    if draws.len() == 0 || rounds == 0 {
        return;
    }
    let outputs = rounds.saturating_mul(draws.len() as u64);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        unsafe { skip_draws_avx2(&draws, outputs, rng) };
        return;
    }
    skip_draws(&draws, outputs, rng);
}

/// `skip_draws` compiled for AVX2: eight lanes of 32-bit multiplies per group.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn skip_draws_avx2(draws: &RoundDraws, accepted: u64, rng: &mut Mt19937) {
    skip_draws(draws, accepted, rng);
}

/// Draws outputs from `rng` until `accepted` of them have passed the round's draws in turn.
#[inline(always)]
fn skip_draws(draws: &RoundDraws, accepted: u64, rng: &mut Mt19937) {
    let per_round = draws.len();
    let mut remaining = accepted;
    // The draw of the round the next output is for.
    let mut draw = 0usize;
    while remaining > 0 {
        let words = rng.pending_words();
        let pending = words.len();
        // The common case: no output of the whole block is rejected.
        if pending as u64 <= remaining && !draws.any_rejected(words, draw) {
            rng.consume(pending);
            remaining -= pending as u64;
            draw = (draw + pending) % per_round;
            continue;
        }
        if words.len() >= LANES
            && remaining >= LANES as u64
            && !draws.any_rejected(&words[..LANES], draw)
        {
            rng.consume(LANES);
            remaining -= LANES as u64;
            draw += LANES;
            if draw >= per_round {
                draw %= per_round;
            }
            continue;
        }
        // One output at a time: near the end of a block, of the run, or of a rejection.
        let accepted = !draws.rejects(temper(words[0]), draw);
        rng.consume(1);
        if accepted {
            remaining -= 1;
            draw += 1;
            if draw == per_round {
                draw = 0;
            }
        }
    }
}

/// Each draw of one shuffle round: its bound and the low words Lemire's method rejects
/// (`low < (2^32 - bound) % bound`), extended cyclically by a block so that a block's outputs
/// may run on into the next round.
struct RoundDraws {
    bounds: Vec<u32>,
    thresholds: Vec<u32>,
}

impl RoundDraws {
    /// `None` when a draw's range does not fit Lemire's 32-bit path, or the tables would be
    /// larger than the rounds are worth (sets of millions of samples have few rounds).
    fn new(n: usize) -> Option<Self> {
        if n > MOST_TABLED {
            return None;
        }
        let n = u64::try_from(n).ok()?;
        let mut bounds = Vec::new();
        if n > 0 && u64::from(u32::MAX) / n >= n {
            // libstdc++ draws two swap positions at once: one draw in 0..(i+1)(i+2).
            let mut i = 1;
            if n % 2 == 0 {
                bounds.push(2);
                i = 2;
            }
            while i < n {
                bounds.push((i + 1) * (i + 2));
                i += 2;
            }
        } else {
            bounds.extend((1..n).map(|i| i + 1));
        }
        if bounds.iter().any(|&b| b >= u64::from(u32::MAX)) {
            return None;
        }
        let len = bounds.len();
        let bounds: Vec<u32> = (0..len + BLOCK)
            .map(|k| if len == 0 { 1 } else { bounds[k % len] as u32 })
            .collect();
        let thresholds = bounds
            .iter()
            .map(|&b| ((1u64 << 32) - u64::from(b)).rem_euclid(u64::from(b)) as u32)
            .collect();
        Some(RoundDraws { bounds, thresholds })
    }

    fn len(&self) -> usize {
        self.bounds.len() - BLOCK
    }

    #[inline(always)]
    fn rejects(&self, output: u32, draw: usize) -> bool {
        output.wrapping_mul(self.bounds[draw]) < self.thresholds[draw]
    }

    /// Whether any of the untempered `words` (at most a block) is rejected by the draws
    /// from `draw` on. Branch-free, so that it compiles to vector lanes.
    #[inline(always)]
    fn any_rejected(&self, words: &[u32], draw: usize) -> bool {
        let bounds = &self.bounds[draw..draw + words.len()];
        let thresholds = &self.thresholds[draw..draw + words.len()];
        let rejected = words.iter().zip(bounds).zip(thresholds).fold(
            0u32,
            |rejected, ((&word, &bound), &threshold)| {
                rejected | u32::from(temper(word).wrapping_mul(bound) < threshold)
            },
        );
        rejected != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engines_agree(rounds: u64, n: usize, seed: u64) {
        let mut one_by_one = Mt19937::new(seed);
        for _ in 0..rounds {
            skip_shuffle(n, &mut one_by_one);
        }
        let mut skipped = Mt19937::new(seed);
        skip_shuffles(rounds, n, &mut skipped);
        // The portable path too, where the machine picked the AVX2 one above.
        let mut portable = Mt19937::new(seed);
        if let Some(draws) = RoundDraws::new(n) {
            skip_draws(&draws, rounds * draws.len() as u64, &mut portable);
        } else {
            skip_shuffles(rounds, n, &mut portable);
        }
        assert_eq!(portable.next_u32(), skipped.clone().next_u32());
        for k in 0..700 {
            assert_eq!(
                skipped.next_u32(),
                one_by_one.next_u32(),
                "{rounds} rounds of {n}, output {k} after"
            );
        }
    }

    #[test]
    fn skipping_rounds_leaves_the_engine_where_shuffles_do() {
        for (rounds, n) in [
            (0, 10),
            (5, 0),
            (5, 1),
            (7, 2),
            (13, 3),
            (9, 8),
            (300, 1_024),
        ] {
            engines_agree(rounds, n, 7);
        }
        // Odd and even sizes around the pairwise-draw limit, and one past it.
        for n in [1_000, 1_001, 65_534, 65_535, 65_536, 100_003] {
            engines_agree(3, n, 11);
        }
        // Past the tabled sizes: drawn one by one.
        assert!(RoundDraws::new(MOST_TABLED + 1).is_none());
        engines_agree(2, MOST_TABLED + 1, 3);
    }

    #[test]
    fn rejections_are_counted_where_they_fall() {
        // Near the pairwise limit the bounds approach 2^32 and thresholds are large: many
        // outputs are rejected, in and out of the eight-wide groups.
        let draws = RoundDraws::new(65_535).expect("fits");
        let rejecting = draws.thresholds.iter().filter(|&&t| t > 1 << 30).count();
        assert!(rejecting > 1_000, "{rejecting}");
        for seed in [1, 2, 3] {
            engines_agree(4, 65_535, seed);
        }
    }
}
