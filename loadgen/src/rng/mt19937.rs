//! `std::mt19937`, written out so that its state block can be read in bulk: skipping the
//! equal-issue rounds nobody reads (see `skip_shuffles`) scans whole blocks of outputs.

pub(super) const N: usize = 624;
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER: u32 = 0x8000_0000;
const LOWER: u32 = 0x7fff_ffff;

/// `std::mt19937` constructed from a 64-bit seed: libstdc++ keeps the seed modulo 2^32.
#[derive(Clone)]
pub struct Mt19937 {
    state: [u32; N],
    /// The next state word to temper; `N` once the block is used up.
    index: usize,
}

impl Mt19937 {
    /// The seed `std::mt19937` uses when default-constructed.
    pub const DEFAULT_SEED: u32 = 5489;

    pub fn new(seed: u64) -> Self {
        let mut state = [0u32; N];
        state[0] = seed as u32;
        for i in 1..N {
            let previous = state[i - 1];
            state[i] = 1_812_433_253u32
                .wrapping_mul(previous ^ (previous >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 { state, index: N }
    }

    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        if self.index == N {
            self.twist();
        }
        let word = self.state[self.index];
        self.index += 1;
        temper(word)
    }

    /// The untempered words not yet drawn from the current block, refilling it when empty.
    /// Inlined whole (the refill too), so a caller compiled for wider vectors gets them here.
    #[inline(always)]
    pub(super) fn pending_words(&mut self) -> &[u32] {
        if self.index == N {
            twist(&mut self.state);
            self.index = 0;
        }
        &self.state[self.index..]
    }

    /// Marks `count` of the pending words drawn.
    #[inline(always)]
    pub(super) fn consume(&mut self, count: usize) {
        debug_assert!(self.index + count <= N);
        self.index += count;
    }

    #[inline(never)]
    fn twist(&mut self) {
        twist(&mut self.state);
        self.index = 0;
    }
}

/// Regenerates the whole block. Written as three loops with fixed offsets so that each one
/// vectorises: every word reads only words the same loop has not yet rewritten, or ones an
/// earlier loop finished.
#[inline(always)]
fn twist(s: &mut [u32; N]) {
    for i in 0..N - M {
        s[i] = s[i + M] ^ mix(s[i], s[i + 1]);
    }
    // The rest reads words rewritten 227 places before; split so the compiler sees that
    // no loop reads a word it has already rewritten.
    const LAG: usize = N - M;
    let (done, rest) = s.split_at_mut(LAG);
    for j in 0..LAG {
        rest[j] = done[j] ^ mix(rest[j], rest[j + 1]);
    }
    let (done, rest) = s.split_at_mut(2 * LAG);
    for j in 0..N - 2 * LAG - 1 {
        rest[j] = done[LAG + j] ^ mix(rest[j], rest[j + 1]);
    }
    s[N - 1] = s[M - 1] ^ mix(s[N - 1], s[0]);
}

#[inline(always)]
fn mix(current: u32, next: u32) -> u32 {
    let y = (current & UPPER) | (next & LOWER);
    (y >> 1) ^ ((y & 1).wrapping_neg() & MATRIX_A)
}

/// The output of a state word.
#[inline(always)]
pub(super) fn temper(mut y: u32) -> u32 {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c_5680;
    y ^= (y << 15) & 0xefc6_0000;
    y ^ (y >> 18)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_outputs_of_the_reference_seed() {
        // The first outputs of mt19937 seeded with 5489, as the reference implementation
        // and every standard library give them.
        let mut rng = Mt19937::new(5489);
        let first: Vec<u32> = (0..3).map(|_| rng.next_u32()).collect();
        assert_eq!(first, [3_499_211_612, 581_869_302, 3_890_346_734]);
    }

    #[test]
    fn bulk_reading_draws_what_single_draws_give() {
        let mut single = Mt19937::new(42);
        let mut bulk = Mt19937::new(42);
        for _ in 0..3 * N + 5 {
            let word = bulk.pending_words()[0];
            bulk.consume(1);
            assert_eq!(temper(word), single.next_u32());
        }
    }
}
