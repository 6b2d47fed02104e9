//! Shared by the differential tests: the seeded source patterns of
//! gen_cases.py / letterbox_ref.py, TSV reading and sha256.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// splitmix64 finaliser, as `mix64` in gen_cases.py.
fn mix64(mut z: u64) -> u64 {
    z ^= z >> 30;
    z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^= z >> 27;
    z = z.wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Same bytes as `make_image(pattern, seed, w, h, cn)` in gen_cases.py
/// (HWC, tightly packed).
pub fn make_image(pattern: &str, seed: u64, w: usize, h: usize, cn: usize) -> Vec<u8> {
    let offset = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (0..w * h * cn)
        .map(|i| match pattern {
            "noise" => (mix64(offset.wrapping_add(i as u64)) >> 56) as u8,
            "bimodal" => ((mix64(offset.wrapping_add(i as u64)) >> 63) * 255) as u8,
            "const255" => 255,
            "gradient" => {
                let (c, x, y) = (i % cn, (i / cn) % w, i / (cn * w));
                ((x * 3 + y * 5 + c * 85) % 256) as u8
            }
            other => panic!("unknown pattern {other}"),
        })
        .collect()
}

/// A file next to Cargo.toml, or the path in `$var` when set.
pub fn data_path(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(default))
}

/// The tab-separated rows of a manifest, comments and blank lines skipped.
pub fn read_rows(path: &Path) -> Vec<Vec<String>> {
    let text = fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}; run the generator first", path.display()));
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| line.split('\t').map(str::to_string).collect())
        .collect()
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// Little-endian bytes of an f32 slice (numpy's `tobytes()` on x86_64).
pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}
