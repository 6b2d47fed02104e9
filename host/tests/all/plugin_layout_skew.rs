//! End to end: a Rust plugin built with the SDK against an incompatible copy of plugin-api is
//! refused at load, by the library and by the CLI, with a message naming the type and field.
//!
//! plugin-api is copied into a temporary directory twice: once untouched (the control, which
//! must load, so the test fails for the right reason) and once with `mlperf_sample`'s `id` and
//! `index` swapped. Both are `u64`, so sizes, offsets, `struct_size` and the copy's compile-time
//! asserts are all unchanged: only the layout descriptor can tell. A tiny SDK plugin is built
//! against each copy with `cargo build --release --offline` into `<target>/skew-plugin`, so
//! later runs reuse the compiled dependencies (abi_stable and the rest).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mlperf_host::plugin::{Plugin, PluginSut};
use support::{copy_dir, TempDir};

/// The tiny plugin: answers every sample with no data.
const PLUGIN_SOURCE: &str = r#"use mlperf_plugin_api::sdk::{Completer, Host, PluginError, Response, Sample, SutPlugin};

pub struct Skew;

impl SutPlugin for Skew {
    fn create(_config: &str, _host: &Host) -> Result<Self, PluginError> {
        Ok(Skew)
    }

    fn issue_query(&self, samples: &[Sample<'_>], done: &Completer) -> Result<(), PluginError> {
        let answers: Vec<_> = samples.iter().map(|s| Response::new(s.id(), &[])).collect();
        done.complete(&answers);
        Ok(())
    }
}

mlperf_plugin_api::export_plugin!(Skew, name = "skew", version = "0.0.0");
"#;

/// Its manifest; `NAME` is the library's name, distinct per build so that the builds sharing
/// the target directory never overwrite each other's library.
const PLUGIN_MANIFEST: &str = r#"[package]
name = "NAME"
edition.workspace = true
version = "0.0.0"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
mlperf-plugin-api = { path = "../plugin-api" }
"#;

/// The change to the copy's `src/ffi.rs`: `mlperf_sample`'s `id` and `index` trade places.
const SAMPLE_FIELDS: &str = "    pub id: u64,\n    pub index: u64,\n";
const SAMPLE_FIELDS_SWAPPED: &str = "    pub index: u64,\n    pub id: u64,\n";

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// This test binary's target directory (`<target>/<profile>/deps/<exe>` → `<target>`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

/// Builds the tiny plugin against a copy of plugin-api (its `src/ffi.rs` passed through
/// `patch`) in `dir`, and returns the library `lib<name>.so`, copied out of the shared target
/// directory.
fn build_plugin(dir: &Path, name: &str, patch: impl Fn(String) -> String) -> PathBuf {
    let root = workspace_root();
    let workspace = dir.join(name);

    // A workspace of its own, with the real one's shared package settings, dependency
    // versions and profiles; the real Cargo.lock pins the same dependency versions offline.
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members = manifest
        .lines()
        .find(|line| line.starts_with("members = "))
        .expect("the workspace manifest lists its members on one line");
    let manifest = manifest.replace(members, r#"members = ["plugin-api", "plugin"]"#);
    // Its default members are the real workspace's, which this one does not have.
    let manifest: String = manifest
        .lines()
        .filter(|line| !line.starts_with("default-members = "))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(root.join("Cargo.lock"), workspace.join("Cargo.lock")).unwrap();

    let api = workspace.join("plugin-api");
    copy_dir(&root.join("plugin-api"), &api);
    let ffi = api.join("src/ffi.rs");
    let text = std::fs::read_to_string(&ffi).unwrap();
    std::fs::write(&ffi, patch(text)).unwrap();

    let plugin = workspace.join("plugin");
    std::fs::create_dir_all(plugin.join("src")).unwrap();
    std::fs::write(
        plugin.join("Cargo.toml"),
        PLUGIN_MANIFEST.replace("NAME", name),
    )
    .unwrap();
    std::fs::write(plugin.join("src/lib.rs"), PLUGIN_SOURCE).unwrap();

    let cargo_target = target_dir().join("skew-plugin");
    let output = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args([
            "build",
            "--release",
            "--offline",
            "--quiet",
            "--manifest-path",
        ])
        .arg(workspace.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &cargo_target)
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "building the {name} plugin failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let file = format!("lib{name}.so");
    let library = dir.join(&file);
    std::fs::copy(cargo_target.join("release").join(&file), &library).unwrap();
    library
}

fn cli(args: &[&str], plugin: &Path, out: &Path) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mlperf-host"));
    command.args(args).arg(plugin);
    if args[0] == "run" {
        command
            .args(["--quiet", "--scenario", "Offline"])
            .args(["--set", "min_duration_ms=0", "--set", "min_query_count=1"])
            .arg("--out")
            .arg(out);
    }
    command.output().expect("mlperf-host runs")
}

#[test]
fn a_plugin_built_against_a_skewed_plugin_api_is_refused_at_load() {
    let dir = TempDir::new();

    // The control: the same plugin against an untouched copy loads, passes the layout check,
    // and runs.
    let control = build_plugin(dir.path(), "skew_control", |ffi| ffi);
    let plugin = Plugin::open(&control).unwrap_or_else(|e| panic!("control refused: {e}"));
    assert!(plugin.info.layout_checked, "{:?}", plugin.info);
    assert_eq!(plugin.info.name, "skew");
    PluginSut::create(&plugin, "", None).unwrap();
    drop(plugin);
    let inspect = cli(
        &["plugins", "inspect"],
        &control,
        &dir.path().join("unused"),
    );
    assert!(inspect.status.success(), "{inspect:?}");
    let text = String::from_utf8_lossy(&inspect.stdout);
    assert!(text.contains("layout check  : passed"), "{text}");
    let out = dir.path().join("control-logs");
    let run = cli(&["run", "--plugin"], &control, &out);
    assert!(run.status.success(), "{run:?}");
    assert!(out.join("mlperf_log_summary.txt").is_file());

    // The skew: `mlperf_sample.id` and `.index` swapped.
    let swapped = build_plugin(dir.path(), "skew_swapped", |ffi| {
        assert_eq!(
            ffi.matches(SAMPLE_FIELDS).count(),
            1,
            "plugin-api/src/ffi.rs no longer has mlperf_sample's `id` then `index`: update this test"
        );
        ffi.replace(SAMPLE_FIELDS, SAMPLE_FIELDS_SWAPPED)
    });
    let message = match Plugin::open(&swapped) {
        Ok(plugin) => panic!("the skewed plugin was accepted: {:?}", plugin.info),
        Err(error) => error.to_string(),
    };
    // The type, the route to it, and the fields found where others were expected.
    let expected = [
        "libskew_swapped.so",
        "built against an incompatible plugin-api",
        "`mlperf_sample",
        "issue_query",
        "`index: u64` where `id: u64` was expected",
        "`id: u64` where `index: u64` was expected",
    ];
    for part in expected {
        assert!(message.contains(part), "missing {part:?} in:\n{message}");
    }

    // The CLI refuses it the same way: a non-zero exit with the message, no panic, nothing run.
    let out = dir.path().join("swapped-logs");
    for args in [&["plugins", "inspect"][..], &["run", "--plugin"][..]] {
        let output = cli(args, &swapped, &out);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {output:?}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        for part in expected {
            assert!(
                stderr.contains(part),
                "{args:?}: missing {part:?} in:\n{stderr}"
            );
        }
    }
    assert!(!out.join("mlperf_log_summary.txt").exists());
}
