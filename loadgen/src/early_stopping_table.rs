//! The early-stopping answer sequences of the percentiles MLPerf uses (0.9, 0.99, 0.999),
//! shipped precomputed: a long SingleStream run needs ~10^6 of them, which take seconds to
//! compute but are the same for every run. `examples/early_stopping_table.rs` writes the file
//! from [`MinPassingSequence`](super::early_stopping::MinPassingSequence) itself, and a test
//! recomputes a prefix of every sequence, so the table cannot drift from the computation.
//!
//! Format (little-endian): per sequence `p: f64 bits (u64)`, `count: u32`, `byte length: u32`,
//! then the values as varints: the first two literally, then the change of each increment
//! (zigzag), with runs of unchanged increments as `0, run length`.

const TABLE: &[u8] = include_bytes!("early_stopping_table.bin");

/// The shipped values for percentile `p` (confidence 0.99, tolerance 0), if any.
pub fn values(p: f64) -> Option<Vec<i64>> {
    let mut rest = TABLE;
    while rest.len() >= 16 {
        let bits = u64::from_le_bytes(rest[..8].try_into().ok()?);
        let count = u32::from_le_bytes(rest[8..12].try_into().ok()?) as usize;
        let length = u32::from_le_bytes(rest[12..16].try_into().ok()?) as usize;
        let body = rest.get(16..16 + length)?;
        if bits == p.to_bits() {
            return decode(body, count);
        }
        rest = &rest[16 + length..];
    }
    None
}

/// Encodes one sequence (used by the generator).
pub fn encode(p: f64, values: &[i64]) -> Vec<u8> {
    let mut body = Vec::new();
    for &v in values.iter().take(2) {
        put_varint(&mut body, zigzag(v));
    }
    let mut previous_increment = values.get(1).zip(values.first()).map_or(0, |(b, a)| b - a);
    let mut run = 0u64;
    for pair in values.windows(2).skip(1) {
        let increment = pair[1] - pair[0];
        let change = increment - previous_increment;
        previous_increment = increment;
        if change == 0 {
            run += 1;
            continue;
        }
        if run > 0 {
            put_varint(&mut body, 0);
            put_varint(&mut body, run);
            run = 0;
        }
        put_varint(&mut body, zigzag(change));
    }
    if run > 0 {
        put_varint(&mut body, 0);
        put_varint(&mut body, run);
    }
    let mut out = Vec::with_capacity(body.len() + 16);
    out.extend_from_slice(&p.to_bits().to_le_bytes());
    out.extend_from_slice(&(values.len() as u32).to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

fn decode(mut body: &[u8], count: usize) -> Option<Vec<i64>> {
    let mut values = Vec::with_capacity(count);
    while values.len() < count.min(2) {
        values.push(unzigzag(take_varint(&mut body)?));
    }
    let mut increment = if values.len() == 2 {
        values[1] - values[0]
    } else {
        0
    };
    while values.len() < count {
        let token = take_varint(&mut body)?;
        let repeat = if token == 0 {
            take_varint(&mut body)?
        } else {
            increment += unzigzag(token);
            1
        };
        for _ in 0..repeat {
            let last = *values.last()?;
            values.push(last + increment);
        }
    }
    (values.len() == count).then_some(values)
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn take_varint(input: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = input.split_first()?;
        *input = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::early_stopping::{EarlyStoppingConfig, MinPassingSequence};
    use super::*;

    #[test]
    fn encoding_round_trips() {
        let values = vec![44, 53, 62, 72, 81, 90, 99, 109, 118, 127, 200, 201];
        let encoded = encode(0.5, &values);
        assert_eq!(decode(&encoded[16..], values.len()), Some(values));
    }

    #[test]
    fn shipped_sequences_equal_the_computation() {
        // Prefixes long enough to cover runs of ~10^6 (p 0.99) and 10^7 (p 0.999) queries;
        // the #[ignore]d test below checks every entry.
        for (p, prefix) in [(0.9, 60_000), (0.99, 20_000), (0.999, 10_000)] {
            let shipped = values(p).expect("a shipped sequence");
            let mut computed = MinPassingSequence::computed(p, &EarlyStoppingConfig::default());
            computed.value(prefix.min(shipped.len()) as i64);
            assert_eq!(
                &shipped[..computed.values().len()],
                computed.values(),
                "p {p}"
            );
        }
    }

    #[test]
    #[ignore = "recomputes the whole table (tens of seconds in release)"]
    fn every_shipped_entry_equals_the_computation() {
        for p in [0.9, 0.99, 0.999] {
            let shipped = values(p).expect("a shipped sequence");
            let mut computed = MinPassingSequence::computed(p, &EarlyStoppingConfig::default());
            computed.value(shipped.len() as i64);
            assert_eq!(shipped, computed.values(), "p {p}");
        }
    }
}
