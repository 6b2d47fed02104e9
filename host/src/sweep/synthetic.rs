//! Synthetic prompts of drawn lengths, exact in tokens: with the model's tokenizer, text whose
//! encoding has exactly that length (for servers that take text, as llama.cpp's does);
//! without one, token ids drawn at random, written as an int32 data set (rows padded with -1,
//! which the network plugin drops with `prompt = "token_ids"`). Answers of drawn lengths are
//! a second input beside the prompts, `max_tokens`, one int32 per sample. Groups of prompts
//! may share a prefix (`--shared-prefix`).

use std::path::Path;

use mlperf_loadgen::rng::{uniform_int, Mt19937};
use mlperf_serving::Lengths;
use mlperf_tokenizer::Tokenizer;

/// Token ids are drawn from this range: ordinary tokens of any vocabulary of 10,000 or more
/// (low ids are often special or control tokens).
pub const TOKEN_IDS: (u32, u32) = (1_000, 9_999);

/// What the synthetic prompts are: their own lengths, how many, the seed, and whether groups
/// of them begin alike.
pub struct PromptPlan<'a> {
    pub lengths: &'a Lengths,
    pub count: usize,
    pub seed: u64,
    pub shared_prefix: Option<SharedPrefix>,
}

/// Consecutive groups of `group` prompts that begin with the same `tokens` tokens (each group
/// its own), as a server's prefix cache sees a shared system prompt; each prompt is then its
/// prefix and its own drawn length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedPrefix {
    pub group: usize,
    pub tokens: usize,
}

impl SharedPrefix {
    /// `N:L`: groups of N prompts sharing L tokens.
    pub fn parse(text: &str) -> Result<SharedPrefix, String> {
        let bad = || format!("{text:?}: expected N:L (groups of N prompts sharing L tokens)");
        let (group, tokens) = text.split_once(':').ok_or_else(bad)?;
        let number = |s: &str| s.trim().parse::<usize>().ok().filter(|&n| n > 0);
        match (number(group), number(tokens)) {
            (Some(group), Some(tokens)) => Ok(SharedPrefix { group, tokens }),
            _ => Err(bad()),
        }
    }

    fn starts_group(prefix: Option<SharedPrefix>, prompt: usize) -> bool {
        prefix.is_some_and(|p| prompt.is_multiple_of(p.group))
    }
}

/// `n` token ids drawn from [`TOKEN_IDS`].
pub fn random_token_ids(rng: &mut Mt19937, n: usize) -> Vec<u32> {
    (0..n)
        .map(|_| uniform_int(rng, u64::from(TOKEN_IDS.0), u64::from(TOKEN_IDS.1)) as u32)
        .collect()
}

/// Writes the prompts as token ids to `path`; returns each prompt's length (its shared prefix
/// included).
pub fn write_prompts(path: &Path, plan: &PromptPlan<'_>) -> std::io::Result<Vec<usize>> {
    let mut rng = Mt19937::new(plan.seed);
    let drawn: Vec<usize> = (0..plan.count)
        .map(|_| plan.lengths.draw(&mut rng))
        .collect();
    let prefix_tokens = plan.shared_prefix.map_or(0, |p| p.tokens);
    let mut prefix = Vec::new();
    let prompts: Vec<Vec<u32>> = drawn
        .iter()
        .enumerate()
        .map(|(k, &length)| {
            if SharedPrefix::starts_group(plan.shared_prefix, k) {
                prefix = random_token_ids(&mut rng, prefix_tokens);
            }
            let mut ids = prefix.clone();
            ids.extend(random_token_ids(&mut rng, length));
            ids
        })
        .collect();
    write_token_id_rows(path, &prompts)?;
    Ok(prompts.iter().map(Vec::len).collect())
}

/// Writes prompts of token ids to `path`: int32 rows as wide as the longest, -1 padded.
pub fn write_token_id_rows(path: &Path, prompts: &[Vec<u32>]) -> std::io::Result<()> {
    let width = prompts.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let mut data = Vec::with_capacity(prompts.len() * width * 4);
    for ids in prompts {
        for position in 0..width {
            let id = ids.get(position).map_or(-1, |&id| id as i32);
            data.extend_from_slice(&id.to_le_bytes());
        }
    }
    mlperf_submission::npy::write_npy(path, "<i4", prompts.len(), &[width as i64], &data)
}

/// Writes text prompts to `path`: uint8 rows as wide as the longest, NUL padded.
pub fn write_text_rows(path: &Path, texts: &[String]) -> std::io::Result<()> {
    let width = texts.iter().map(String::len).max().unwrap_or(1).max(1);
    let mut data = vec![0u8; texts.len() * width];
    for (row, text) in data.chunks_exact_mut(width).zip(texts) {
        row[..text.len()].copy_from_slice(text.as_bytes());
    }
    mlperf_submission::npy::write_npy(path, "|u1", texts.len(), &[width as i64], &data)
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
    write_int32_rows(path, &drawn)?;
    Ok(drawn)
}

/// Writes `values` to `path`, one int32 per sample (the `max_tokens`, `session` and `turn`
/// inputs).
pub fn write_int32_rows(path: &Path, values: &[usize]) -> std::io::Result<()> {
    let data: Vec<u8> = values
        .iter()
        .flat_map(|&n| (n.min(i32::MAX as usize) as i32).to_le_bytes())
        .collect();
    mlperf_submission::npy::write_npy(path, "<i4", values.len(), &[1], &data)
}

/// Set apart the output lengths' random stream from the prompts'.
const OUTPUT_SEED: u64 = 0x6f75_7470_7574;

/// Writes the prompts as text to `path` (uint8 rows, NUL padded), each exactly as many tokens
/// long by `tokenizer` as drawn (random ids decoded, re-encoded, and cut or topped up until
/// the text's own encoding has that length); a shared prefix is a text of its length whose
/// tokens begin every prompt of its group. Returns each prompt's length. For servers that take
/// text only.
pub fn write_text_prompts(
    path: &Path,
    plan: &PromptPlan<'_>,
    tokenizer: &Tokenizer,
) -> Result<Vec<usize>, String> {
    let mut rng = Mt19937::new(plan.seed);
    let drawn: Vec<usize> = (0..plan.count)
        .map(|_| plan.lengths.draw(&mut rng))
        .collect();
    let mut texts = Vec::with_capacity(plan.count);
    let mut prefix = (String::new(), Vec::new());
    for (n, &length) in drawn.iter().enumerate() {
        if let Some(shared) = plan.shared_prefix.filter(|p| n.is_multiple_of(p.group)) {
            let text = text_of_length(shared.tokens, &mut rng, tokenizer)
                .map_err(|why| format!("shared prefix of prompt {n}: {why}"))?;
            let ids = tokenizer.encode(&text).map_err(|e| e.to_string())?;
            prefix = (text, ids);
        }
        let text = if prefix.1.is_empty() {
            text_of_length(length, &mut rng, tokenizer)
        } else {
            after_prefix(&prefix, length, &mut rng, tokenizer)
        };
        texts.push(text.map_err(|why| format!("synthetic prompt {n} ({length} tokens): {why}"))?);
    }
    write_text_rows(path, &texts).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(drawn.iter().map(|n| n + prefix.1.len()).collect())
}

/// The prefix's text and then text of `length` more tokens, such that the whole encodes to
/// the prefix's tokens and exactly `length` more (a join that merges tokens across the
/// boundary is drawn again).
fn after_prefix(
    (prefix, prefix_ids): &(String, Vec<u32>),
    length: usize,
    rng: &mut Mt19937,
    tokenizer: &Tokenizer,
) -> Result<String, String> {
    for _ in 0..ROUNDS {
        let joined = format!("{prefix}{}", text_of_length(length, rng, tokenizer)?);
        let ids = tokenizer.encode(&joined).map_err(|e| e.to_string())?;
        if ids.len() == prefix_ids.len() + length && ids.starts_with(prefix_ids) {
            return Ok(joined);
        }
    }
    Err(format!(
        "no text after the shared prefix keeps it whole after {ROUNDS} rounds"
    ))
}

/// Most rounds of decode and re-encode before giving up on a length.
const ROUNDS: usize = 32;

pub(super) fn text_of_length(
    length: usize,
    rng: &mut Mt19937,
    tokenizer: &Tokenizer,
) -> Result<String, String> {
    let mut ids = random_token_ids(rng, length);
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
                ids.extend(random_token_ids(rng, length - ids.len()));
            }
        }
    }
    Err(format!(
        "no text of exactly that length after {ROUNDS} rounds"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_of_token_id_prompts_share_their_own_prefix() {
        let dir = std::env::temp_dir().join(format!("shared-prefix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("prompts.npy");
        let plan = PromptPlan {
            lengths: &Lengths::Uniform { low: 2, high: 6 },
            count: 7,
            seed: 4,
            shared_prefix: Some(SharedPrefix {
                group: 3,
                tokens: 5,
            }),
        };
        let lengths = write_prompts(&path, &plan).unwrap();
        assert!(lengths.iter().all(|n| (7..=11).contains(n)), "{lengths:?}");
        let bytes = std::fs::read(&path).unwrap();
        let width = *lengths.iter().max().unwrap();
        let data = &bytes[bytes.len() - 7 * width * 4..];
        let row = |k: usize| -> Vec<i32> {
            data[k * width * 4..(k + 1) * width * 4]
                .chunks_exact(4)
                .map(|b| i32::from_le_bytes(b.try_into().unwrap()))
                .collect()
        };
        // Prompts 0-2, 3-5 and 6 make three groups: alike within, different across.
        assert_eq!(row(0)[..5], row(2)[..5]);
        assert_eq!(row(3)[..5], row(5)[..5]);
        assert_ne!(row(0)[..5], row(3)[..5]);
        assert_ne!(row(3)[..5], row(6)[..5]);
        // What follows the prefix is each prompt's own.
        assert_ne!(row(0)[5..7], row(1)[5..7]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn shared_prefixes_parse_and_bad_ones_are_named() {
        assert_eq!(
            SharedPrefix::parse("8:512"),
            Ok(SharedPrefix {
                group: 8,
                tokens: 512
            })
        );
        for bad in ["8", "0:5", "8:x", ""] {
            assert!(SharedPrefix::parse(bad)
                .unwrap_err()
                .contains("expected N:L"));
        }
    }
}
