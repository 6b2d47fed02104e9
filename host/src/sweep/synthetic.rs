//! Synthetic prompts of drawn lengths, exact in tokens: with the model's tokenizer, text whose
//! encoding has exactly that length (for servers that take text, as llama.cpp's does);
//! without one, token ids drawn at random, written as an int32 data set (rows padded with -1,
//! which the network plugin drops with `prompt = "token_ids"`). Answers of drawn lengths are
//! a second input beside the prompts, `max_tokens`, one int32 per sample.

use std::path::Path;

use mlperf_loadgen::rng::{uniform_int, Mt19937};
use mlperf_serving::Lengths;
use mlperf_tokenizer::Tokenizer;

/// Token ids are drawn from this range: ordinary tokens of any vocabulary of 10,000 or more
/// (low ids are often special or control tokens).
pub const TOKEN_IDS: (u32, u32) = (1_000, 9_999);

/// Writes `count` prompts of `lengths` tokens to `path`; returns each prompt's length.
pub fn write_prompts(
    path: &Path,
    lengths: &Lengths,
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

/// Writes `count` output lengths drawn from `lengths` to `path` (int32, one per sample: the
/// network plugin's `max_tokens` input); returns them.
pub fn write_output_lengths(
    path: &Path,
    lengths: &Lengths,
    count: usize,
    seed: u64,
) -> std::io::Result<Vec<usize>> {
    // A stream of its own: the prompts' draws stay as they are with or without it.
    let mut rng = Mt19937::new(seed ^ OUTPUT_SEED);
    let drawn: Vec<usize> = (0..count).map(|_| lengths.draw(&mut rng)).collect();
    let data: Vec<u8> = drawn
        .iter()
        .flat_map(|&n| (n.min(i32::MAX as usize) as i32).to_le_bytes())
        .collect();
    mlperf_submission::npy::write_npy(path, "<i4", count, &[1], &data)?;
    Ok(drawn)
}

/// Set apart the output lengths' random stream from the prompts'.
const OUTPUT_SEED: u64 = 0x6f75_7470_7574;

/// Writes `count` text prompts to `path` (uint8 rows, NUL padded), each exactly as many
/// tokens long by `tokenizer` as its drawn length (random ids decoded, re-encoded, and cut or
/// topped up until the text's own encoding has that length); returns each prompt's length.
/// For servers that take text only.
pub fn write_text_prompts(
    path: &Path,
    lengths: &Lengths,
    count: usize,
    seed: u64,
    tokenizer: &Tokenizer,
) -> Result<Vec<usize>, String> {
    let mut rng = Mt19937::new(seed);
    let drawn: Vec<usize> = (0..count).map(|_| lengths.draw(&mut rng)).collect();
    let mut texts = Vec::with_capacity(count);
    for (n, &length) in drawn.iter().enumerate() {
        texts.push(
            text_of_length(length, &mut rng, tokenizer)
                .map_err(|why| format!("synthetic prompt {n} ({length} tokens): {why}"))?,
        );
    }
    let width = texts.iter().map(String::len).max().unwrap_or(1).max(1);
    let mut data = vec![0u8; count * width];
    for (row, text) in data.chunks_exact_mut(width).zip(&texts) {
        row[..text.len()].copy_from_slice(text.as_bytes());
    }
    mlperf_submission::npy::write_npy(path, "|u1", count, &[width as i64], &data)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(drawn)
}

/// Most rounds of decode and re-encode before giving up on a length.
const ROUNDS: usize = 32;

fn text_of_length(
    length: usize,
    rng: &mut Mt19937,
    tokenizer: &Tokenizer,
) -> Result<String, String> {
    let mut draw = |n: usize| -> Vec<u32> {
        (0..n)
            .map(|_| uniform_int(rng, u64::from(TOKEN_IDS.0), u64::from(TOKEN_IDS.1)) as u32)
            .collect()
    };
    let mut ids = draw(length);
    for _ in 0..ROUNDS {
        let text = tokenizer.decode(&ids).map_err(|e| e.to_string())?;
        // NUL ends a prompt row: a text holding one cannot be written.
        let text = text.replace('\0', " ");
        let encoded = tokenizer.encode(&text).map_err(|e| e.to_string())?;
        match encoded.len().cmp(&length) {
            std::cmp::Ordering::Equal => return Ok(text),
            std::cmp::Ordering::Greater => ids = encoded[..length].to_vec(),
            std::cmp::Ordering::Less => {
                ids = encoded;
                ids.extend(draw(length - ids.len()));
            }
        }
    }
    Err(format!(
        "no text of exactly that length after {ROUNDS} rounds"
    ))
}
