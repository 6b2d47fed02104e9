//! Synthetic prompts: token ids drawn at random, each prompt exactly as long as its drawn
//! length, written as an int32 data set (rows padded with -1, which the network plugin drops
//! with `prompt = "token_ids"`), so that input lengths are exact whatever the tokenizer.

use std::path::Path;

use mlperf_loadgen::rng::{uniform_int, Mt19937};
use mlperf_serving::Lengths;

/// Token ids are drawn from this range: ordinary tokens of any vocabulary of 10,000 or more
/// (low ids are often special or control tokens).
pub const TOKEN_IDS: (u32, u32) = (1_000, 9_999);

/// Writes `count` prompts of `lengths` tokens to `path`; returns each prompt's length.
pub fn write_prompts(
    path: &Path,
    lengths: Lengths,
    count: usize,
    seed: u64,
) -> std::io::Result<Vec<usize>> {
    let mut rng = Mt19937::new(seed);
    let drawn: Vec<usize> = (0..count).map(|_| lengths.draw(&mut rng)).collect();
    let width = drawn.iter().copied().max().unwrap_or(1);
    let mut data = Vec::with_capacity(count * width * 4);
    for &length in &drawn {
        for position in 0..width {
            let id = if position < length {
                uniform_int(&mut rng, u64::from(TOKEN_IDS.0), u64::from(TOKEN_IDS.1)) as i32
            } else {
                -1
            };
            data.extend_from_slice(&id.to_le_bytes());
        }
    }
    mlperf_submission::npy::write_npy(path, "<i4", count, &[width as i64], &data)?;
    Ok(drawn)
}
