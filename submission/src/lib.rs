//! mlperf-submission: everything that reads a run after it ran. [`logs`] names a run folder's
//! files and reads the detail and accuracy logs back; [`benchmark`] defines real benchmarks
//! and scores their accuracy (their labels read by [`npy`], their files hashed by [`digest`]);
//! [`power`] reads a run's power result back; [`compliance`] verifies the audit tests;
//! the submission itself is the system description ([`system`]), the tree of the MLPerf
//! submission rules assembled from run folders ([`assemble`]), a pre-check of that tree with
//! the official checker's rules ([`check`]), each finding naming the file and the rule, and
//! the results table, comparison and report read from run folders.
//!
//! It depends on the LoadGen engine's settings and log formats and on the power arithmetic,
//! never on plugins, WASM preprocessing or the official engine: the host runs, this reads.

pub mod assemble;
pub mod benchmark;
mod benchmark_rules;
pub mod check;
pub mod compare;
pub mod compliance;
pub mod datasets;
pub mod digest;
pub mod division;
pub mod finding;
pub mod input_file;
pub mod logs;
pub mod npy;
pub mod power;
pub mod power_dev;
pub mod report;
pub mod results;
pub mod round;
pub mod rule;
pub mod rules;
pub mod run_folder;
pub mod scenario;
pub mod scenario_files;
pub mod system;
pub mod tree;

pub use division::Division;
pub use finding::{Finding, Findings, Severity};
pub use scenario::Scenario;

/// An error and its causes on one line, each after a colon.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod dependency_rule {
    /// ARCHITECTURE.md's rule, as cargo resolves it: reading a run needs no plugin, no WASM,
    /// no official engine and no meter, directly or through another crate.
    #[test]
    fn the_crate_reaches_no_plugin_wasm_engine_or_meter() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let output = std::process::Command::new(cargo)
            .args([
                "tree",
                "--offline",
                "-p",
                "mlperf-submission",
                "-e",
                "normal",
            ])
            .args(["--prefix", "none", "--format", "{p}"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let tree = String::from_utf8_lossy(&output.stdout);
        assert!(tree.contains("mlperf-loadgen"), "{tree}");
        for forbidden in [
            "mlperf-plugin-api",
            "mlperf-wasm-preprocess",
            "mlperf-official-loadgen",
            "nvml-wrapper",
            "wasmtime",
            "libloading",
        ] {
            let found: Vec<&str> = tree.lines().filter(|l| l.starts_with(forbidden)).collect();
            assert!(found.is_empty(), "mlperf-submission depends on {found:?}");
        }
    }
}
