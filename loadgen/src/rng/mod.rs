//! Bit-exact randomness (spec §5): `std::mt19937` plus the libstdc++ (GCC ≥ 11) algorithms the
//! official LoadGen is built with. Other standard libraries draw differently for the same seeds,
//! so these are written out here rather than taken from a generic crate.

mod mt19937;
mod skip;

pub use mt19937::Mt19937;
pub use skip::skip_shuffles;

/// `std::uniform_int_distribution<T>(low, high)(engine)` as libstdc++ (GCC ≥ 11) computes it
/// with a 32-bit engine: Lemire's nearly-divisionless multiply with rejection when the range
/// fits in 32 bits, the plain draw when it is exactly 2^32, and upscaling above.
#[inline]
pub fn uniform_int(rng: &mut Mt19937, low: u64, high: u64) -> u64 {
    let range = high - low;
    if range < u64::from(u32::MAX) {
        low + lemire_below(rng, range + 1)
    } else if range == u64::from(u32::MAX) {
        low + u64::from(rng.next_u32())
    } else {
        low + upscaled(rng, range)
    }
}

/// A draw in `0..bound` for `1 <= bound <= 2^32 - 1`.
#[inline]
fn lemire_below(rng: &mut Mt19937, bound: u64) -> u64 {
    let mut product = u64::from(rng.next_u32()) * bound;
    let mut low = product & 0xFFFF_FFFF;
    if low < bound {
        let threshold = (0x1_0000_0000 - bound) % bound;
        while low < threshold {
            product = u64::from(rng.next_u32()) * bound;
            low = product & 0xFFFF_FFFF;
        }
    }
    product >> 32
}

/// Ranges wider than the engine: the high part is drawn recursively before the low word.
fn upscaled(rng: &mut Mt19937, range: u64) -> u64 {
    const SPAN: u64 = 1 << 32;
    loop {
        let high = SPAN.wrapping_mul(uniform_int(rng, 0, range / SPAN));
        let candidate = high.wrapping_add(u64::from(rng.next_u32()));
        if candidate <= range && candidate >= high {
            return candidate;
        }
    }
}

/// libstdc++ `std::shuffle`: for n ≤ 65535 one draw decides two swaps; above, one draw a swap.
pub fn shuffle<T>(values: &mut [T], rng: &mut Mt19937) {
    shuffle_swaps(values.len(), rng, |i, j| values.swap(i, j));
}

/// The draws of a shuffle of `n` elements, without a list to shuffle: what advancing the
/// engine past it costs. `skip_shuffles` does the same for many rounds, faster.
pub fn skip_shuffle(n: usize, rng: &mut Mt19937) {
    shuffle_swaps(n, rng, |_, _| {});
}

#[inline(always)]
fn shuffle_swaps(n: usize, rng: &mut Mt19937, mut swap: impl FnMut(usize, usize)) {
    let n = n as u64;
    if n == 0 {
        return;
    }
    if u64::from(u32::MAX) / n >= n {
        let mut i: u64 = 1;
        if n.is_multiple_of(2) {
            let j = uniform_int(rng, 0, 1);
            swap(1, j as usize);
            i = 2;
        }
        while i < n {
            let swap_range = i + 1;
            let x = uniform_int(rng, 0, swap_range * (swap_range + 1) - 1);
            swap(i as usize, (x / (swap_range + 1)) as usize);
            swap(i as usize + 1, (x % (swap_range + 1)) as usize);
            i += 2;
        }
    } else {
        for i in 1..n {
            let j = uniform_int(rng, 0, i);
            swap(i as usize, j as usize);
        }
    }
}

/// `std::generate_canonical<double, 53>` with a 32-bit engine: two draws, low word first.
#[inline]
pub fn generate_canonical(rng: &mut Mt19937) -> f64 {
    let mut sum = f64::from(rng.next_u32());
    sum += f64::from(rng.next_u32()) * 4_294_967_296.0;
    let value = sum / 18_446_744_073_709_551_616.0;
    if value >= 1.0 {
        // nextafter(1.0, 0.0)
        f64::from_bits(1.0f64.to_bits() - 1)
    } else {
        value
    }
}

/// `std::exponential_distribution<double>(rate)`: -log(1 - u) / rate.
#[inline]
pub fn exponential(rng: &mut Mt19937, rate: f64) -> f64 {
    -(1.0 - generate_canonical(rng)).ln() / rate
}

/// `duration_cast<nanoseconds>(duration<double>(seconds))`: truncation toward zero.
#[inline]
pub fn seconds_to_ns(seconds: f64) -> i64 {
    (seconds * 1e9) as i64
}

/// The Server scenario's gap to the next query, in ns.
#[inline]
pub fn exponential_gap_ns(rng: &mut Mt19937, qps: f64) -> i64 {
    seconds_to_ns(exponential(rng, qps))
}

/// The constant gap of the non-Server scenarios, in ns.
pub fn period_ns(qps: f64) -> i64 {
    seconds_to_ns(1.0 / qps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_seed_ten_thousandth_output() {
        let mut rng = Mt19937::new(u64::from(Mt19937::DEFAULT_SEED));
        let mut last = 0;
        for _ in 0..10_000 {
            last = rng.next_u32();
        }
        assert_eq!(last, 4_123_659_995);
    }

    #[test]
    fn seed_is_truncated_to_32_bits() {
        let mut wide = Mt19937::new(2_085_463_073_848_966_840);
        let mut narrow = Mt19937::new(3_438_689_976);
        assert_eq!(wide.next_u32(), narrow.next_u32());
    }

    #[test]
    fn shuffle_of_one_draws_nothing() {
        let mut rng = Mt19937::new(7);
        let mut fresh = Mt19937::new(7);
        shuffle(&mut [0u32], &mut rng);
        assert_eq!(rng.next_u32(), fresh.next_u32());
    }

    #[test]
    fn upscaled_range_stays_in_bounds() {
        let mut rng = Mt19937::new(1);
        for _ in 0..1000 {
            let v = uniform_int(&mut rng, 10, 10 + (1u64 << 40));
            assert!((10..=10 + (1u64 << 40)).contains(&v));
        }
    }
}
