//! Sample memory from the plugin (ABI 1.4's `allocate_samples` / `free_samples` /
//! `write_samples`): the example C plugin with `sample_memory = "pinned"` gets each loaded set
//! in blocks it allocated (and locked where the limit allows), with `"device"` in a simulated
//! device's memory the host cannot touch (its addresses fault) and fills through
//! `write_samples`; it fails the run if any sample it is handed (at load or at issue) points
//! elsewhere, counts its blocks, and logs a digest of each set as it reads it; in this process
//! and in one of its own.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::{self, TempDir};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// 100 samples of 16 bytes, each byte its sample's index.
fn data_set(dir: &Path) {
    let bytes: Vec<u8> = (0..100u8).flat_map(|i| [i; 16]).collect();
    support::write_npy(&dir.join("set.npy"), "|u1", "(100, 16)", &bytes);
}

/// An accuracy run over the 100 samples, 16 loaded at a time: 7 sets.
fn run(dir: &Path, out: &str, isolate: &str, memory: &str) -> Output {
    run_with(dir, out, isolate, memory, &[])
}

fn run_with(dir: &Path, out: &str, isolate: &str, memory: &str, more: &[&str]) -> Output {
    let plugin = support::plugin_library("libmlperf_example_c.so");
    Command::new(EXE)
        .args(["run", "--plugin"])
        .arg(plugin)
        .args(["--out", out, "--isolate", isolate, "--dataset", "set.npy"])
        .args(["--scenario", "Server", "--mode", "AccuracyOnly"])
        .args(["--set", "performance_sample_count_override=16"])
        .args(["--set", "server_target_qps=2000"])
        .args(["--set", "server_target_latency_ns=20000000"])
        // Inline: the accuracy log's order is the issue order, the same in every run.
        .args(["--plugin-set", "workers=0"])
        .args(["--plugin-set", &format!("sample_memory=\"{memory}\"")])
        .args(more)
        .current_dir(dir)
        .env("MLPERF_HOST_LOG", "info")
        .output()
        .expect("run mlperf-host")
}

#[test]
fn every_loaded_set_lives_in_the_plugins_memory_and_the_results_do_not_change() {
    let dir = TempDir::new();
    data_set(dir.path());
    for isolate in ["none", "process"] {
        let host = format!("host-{isolate}");
        let own = format!("own-{isolate}");
        support::assert_ok(&run(dir.path(), &host, isolate, ""));
        let output = run(dir.path(), &own, isolate, "pinned");
        support::assert_ok(&output);
        let stderr = support::text(&output.stderr);
        // Seven sets: each in a block of its own, each block given back.
        assert!(
            stderr.contains("example-c: sample memory: 7 block(s) allocated, 7 freed"),
            "{isolate}: {stderr}"
        );
        let accuracy = |out: &str| {
            std::fs::read(dir.path().join(out).join("mlperf_log_accuracy.json")).unwrap()
        };
        assert_eq!(
            accuracy(&host),
            accuracy(&own),
            "{isolate}: the accuracy logs"
        );
        assert_eq!(
            support::accuracy_records(&dir.path().join(&own)).len(),
            100,
            "{isolate}"
        );
    }
}

/// The digests the example logged of each set it was handed, in order.
fn set_digests(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter_map(|line| line.split_once("example-c: load_samples: "))
        .map(|(_, digest)| digest)
        .collect()
}

#[test]
fn sets_in_device_memory_are_written_once_through_write_samples_and_read_there_intact() {
    let dir = TempDir::new();
    data_set(dir.path());
    for isolate in ["none", "process"] {
        let host = format!("host-{isolate}");
        let device = format!("device-{isolate}");
        let in_host_blocks = run(dir.path(), &host, isolate, "host");
        support::assert_ok(&in_host_blocks);
        let on_device = run(dir.path(), &device, isolate, "device");
        support::assert_ok(&on_device);
        let stderr = support::text(&on_device.stderr);
        assert!(
            stderr.contains("example-c: sample memory: 7 block(s) allocated, 7 freed"),
            "{isolate}: {stderr}"
        );
        // What the device holds is what the host loaded: each set's bytes, as the plugin reads
        // them, digest for digest the same as from the host-written block.
        let host_stderr = support::text(&in_host_blocks.stderr);
        let expected = set_digests(&host_stderr);
        assert_eq!(expected.len(), 7, "{isolate}");
        assert!(expected[0].starts_with("16 sample(s), 256 bytes, digest "));
        assert_eq!(set_digests(&stderr), expected, "{isolate}");
        let accuracy = |out: &str| {
            std::fs::read(dir.path().join(out).join("mlperf_log_accuracy.json")).unwrap()
        };
        assert_eq!(accuracy(&host), accuracy(&device), "{isolate}");
    }
}

#[test]
fn sample_memory_host_never_asks_the_plugin() {
    let dir = TempDir::new();
    data_set(dir.path());
    for memory in ["device", "refuse"] {
        let output = run_with(
            dir.path(),
            memory,
            "none",
            memory,
            &["--sample-memory", "host"],
        );
        support::assert_ok(&output);
        let stderr = support::text(&output.stderr);
        assert!(
            stderr.contains("example-c: sample memory: 0 block(s) allocated, 0 freed"),
            "{memory}: {stderr}"
        );
    }
}

#[test]
fn a_plugin_whose_allocator_fails_is_refused_with_its_error() {
    let dir = TempDir::new();
    data_set(dir.path());
    for isolate in ["none", "process"] {
        let output = run(dir.path(), isolate, isolate, "refuse");
        assert_eq!(
            output.status.code(),
            Some(1),
            "{}",
            support::describe(&output)
        );
        let stderr = support::text(&output.stderr);
        assert!(
            stderr.contains("allocate_samples")
                && stderr.contains("refusing")
                && stderr.contains("sample_memory"),
            "{isolate}: {stderr}"
        );
    }
}
