//! Writes loadgen/src/early_stopping_table.bin: the early-stopping answer sequences for
//! the percentiles MLPerf uses, long enough for SingleStream runs of ~16 M queries.
//!
//!     cargo run --release -p mlperf-host --example early_stopping_table

use mlperf_host::loadgen::early_stopping::{EarlyStoppingConfig, MinPassingSequence};
use mlperf_host::loadgen::early_stopping_table::encode;

/// The sequence must reach h(t) + t > N for runs of N queries.
const COVERED_QUERIES: i64 = 16_000_000;

fn main() -> std::io::Result<()> {
    let mut table = Vec::new();
    for p in [0.9, 0.99, 0.999] {
        let started = std::time::Instant::now();
        let mut sequence = MinPassingSequence::computed(p, &EarlyStoppingConfig::default());
        sequence.extend_past(COVERED_QUERIES);
        let encoded = encode(p, sequence.values());
        println!(
            "p {p}: {} values, {} bytes, {:.1} s",
            sequence.values().len(),
            encoded.len(),
            started.elapsed().as_secs_f64()
        );
        table.extend_from_slice(&encoded);
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../loadgen/src/early_stopping_table.bin"
    );
    std::fs::write(path, &table)?;
    println!("wrote {path} ({} bytes)", table.len());
    Ok(())
}
