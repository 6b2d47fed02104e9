//! `mlperf-host sysinfo`, driven through the built binary on this machine.

use crate::support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use mlperf_host::submission::system::fields::{NETWORK_FIELDS, POWER_FIELDS, REQUIRED_FIELDS};
use mlperf_host::submission::system::{
    check_system, fields_to_fill_in, SystemExpectations, FILL_IN,
};
use serde_json::{Map, Value};
use support::{assert_ok, TempDir};

const EXE: &str = env!("CARGO_BIN_EXE_mlperf-host");

/// The names every draft here is made with.
const NAMES: [&str; 8] = [
    "--system",
    "test-box",
    "--submitter",
    "ExampleCo",
    "--system-type",
    "datacenter",
    "--status",
    "available",
];

/// Runs `mlperf-host sysinfo ARGS` in `dir`.
fn sysinfo_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(EXE)
        .arg("sysinfo")
        .args(args)
        .current_dir(dir)
        .env_remove("MLPERF_HOST_LOG")
        .output()
        .expect("run mlperf-host")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Exit status 1 and an `error: …` line last on stderr; returns that line.
fn assert_error(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(1), "stderr:\n{}", stderr(output));
    let err = stderr(output);
    let last = err.lines().last().unwrap_or_default().to_string();
    assert!(last.starts_with("error: "), "{err}");
    last
}

fn read_json(path: &Path) -> Map<String, Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

/// The fields the command listed to fill in: the indented lines after its count line.
fn listed_to_fill_in(output: &Output) -> BTreeSet<String> {
    stdout(output)
        .lines()
        .skip_while(|line| !line.contains("fields to fill in"))
        .skip(1)
        .filter_map(|line| line.strip_prefix("  ")?.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

#[test]
fn a_draft_of_this_machine_has_every_required_field() {
    let dir = TempDir::new();
    let output = sysinfo_in(dir.path(), &NAMES);
    assert_ok(&output);
    let fields = read_json(&dir.path().join("systems/test-box.json"));
    for key in REQUIRED_FIELDS {
        assert!(fields.contains_key(*key), "{key} missing: {fields:?}");
    }
    for key in POWER_FIELDS.iter().chain(NETWORK_FIELDS) {
        assert!(
            !fields.contains_key(*key),
            "{key} without --power or --network"
        );
    }
    assert!(!dir.path().join("systems/test-box_power.yaml").exists());
    assert_eq!(fields["division"], "closed");
    assert_eq!(fields["submitter"], "ExampleCo");
    assert_eq!(fields["system_type"], "datacenter");
    assert_eq!(fields["status"], "available");
    assert!(stdout(&output).starts_with("wrote systems/test-box.json"));
}

#[test]
fn the_check_of_a_draft_reports_only_the_fields_to_fill_in() {
    let dir = TempDir::new();
    let output = sysinfo_in(dir.path(), &NAMES);
    assert_ok(&output);
    let file = dir.path().join("systems/test-box.json");
    let fields = read_json(&file);
    let expect = SystemExpectations {
        division: mlperf_host::submission::Division::Closed,
        submitter: "ExampleCo".into(),
        ..SystemExpectations::default()
    };
    let findings = check_system(&Value::Object(fields.clone()), &file, &expect);
    let unfilled: BTreeSet<String> = fields_to_fill_in(&fields)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert!(unfilled.contains("cooling"), "{unfilled:?}");
    let mut reported = BTreeSet::new();
    for finding in &findings.0 {
        assert_eq!(finding.rule.id(), "system-fill-in", "{finding}");
        assert_eq!(finding.file, file);
        let field = finding
            .message
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string();
        assert!(
            fields[&field].as_str().unwrap().starts_with(FILL_IN),
            "{finding}"
        );
        reported.insert(field);
    }
    assert_eq!(reported, unfilled);
    assert_eq!(listed_to_fill_in(&output), unfilled, "{}", stdout(&output));
    assert!(
        stdout(&output).contains(&format!("{} fields to fill in", unfilled.len())),
        "{}",
        stdout(&output)
    );
}

#[test]
fn an_existing_description_is_kept_unless_forced() {
    let dir = TempDir::new();
    std::fs::create_dir_all(dir.path().join("systems")).unwrap();
    let file = dir.write("systems/test-box.json", "{\"mine\": true}\n");
    let error = assert_error(&sysinfo_in(dir.path(), &NAMES));
    assert!(
        error.contains("systems/test-box.json exists") && error.contains("--force"),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\"mine\": true}\n"
    );

    let mut forced = NAMES.to_vec();
    forced.push("--force");
    assert_ok(&sysinfo_in(dir.path(), &forced));
    let fields = read_json(&file);
    assert!(!fields.contains_key("mine"));
    assert_eq!(fields["submitter"], "ExampleCo");
}

#[test]
fn the_null_plugin_names_the_framework_and_the_software_stack() {
    let dir = TempDir::new();
    let mut args = NAMES.to_vec();
    args.extend(["--plugin", "null"]);
    let output = sysinfo_in(dir.path(), &args);
    assert_ok(&output);
    let fields = read_json(&dir.path().join("systems/test-box.json"));
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(fields["framework"], format!("null plugin {version}"));
    let stack = fields["other_software_stack"].as_str().unwrap();
    assert!(
        stack.starts_with(&format!(
            "mlperf-host {version}, mlperf-host plugin null {version}"
        )),
        "{stack}"
    );
    assert_eq!(fields["sw_notes"], "null plugin: device cpu");
    assert!(!listed_to_fill_in(&output).contains("framework"));

    // Without a plugin the framework is the submitter's to name.
    let bare = TempDir::new();
    let output = sysinfo_in(bare.path(), &NAMES);
    assert_ok(&output);
    assert!(listed_to_fill_in(&output).contains("framework"));
}

#[test]
fn a_plugin_that_fails_to_open_is_an_error_and_nothing_is_written() {
    let dir = TempDir::new();
    let mut args = NAMES.to_vec();
    args.extend(["--plugin", "/nonexistent/libnothing.so"]);
    let error = assert_error(&sysinfo_in(dir.path(), &args));
    assert!(
        error.contains("cannot start the plugin /nonexistent/libnothing.so"),
        "{error}"
    );
    assert!(!dir.path().join("systems").exists());
}

#[test]
fn power_and_network_add_their_fields_where_asked() {
    let dir = TempDir::new();
    let output = sysinfo_in(
        dir.path(),
        &[
            "--system",
            "net-box",
            "--submitter",
            "ExampleCo",
            "--division",
            "network",
            "--power",
            "--out",
            "elsewhere/net.json",
        ],
    );
    assert_ok(&output);
    let fields = read_json(&dir.path().join("elsewhere/net.json"));
    for key in REQUIRED_FIELDS
        .iter()
        .chain(POWER_FIELDS)
        .chain(NETWORK_FIELDS)
    {
        assert!(fields.contains_key(*key), "{key} missing");
    }
    assert_eq!(fields["is_network"], "true");
    assert_eq!(fields["division"], "network");
    let listed = listed_to_fill_in(&output);
    for key in [
        "status",
        "system_type",
        "network_type",
        "power_supply_details",
        "system_power_capacity",
    ] {
        assert!(listed.contains(key), "{key}: {listed:?}");
    }
    // The nameplate power's YAML beside the description, to fill in or delete.
    let yaml = std::fs::read_to_string(dir.path().join("elsewhere/net_power.yaml")).unwrap();
    assert!(yaml.contains("PowerCapacityWatts: \"FILL IN: "), "{yaml}");
    assert!(
        stdout(&output).contains("net_power.yaml"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn bad_names_are_refused() {
    let dir = TempDir::new();
    let error = assert_error(&sysinfo_in(
        dir.path(),
        &["--system", "../up", "--submitter", "ExampleCo"],
    ));
    assert!(error.contains("--system \"../up\""), "{error}");
    let error = assert_error(&sysinfo_in(
        dir.path(),
        &["--system", "box", "--submitter", "ExampleCo", "--network"],
    ));
    assert!(error.contains("closed division"), "{error}");
    assert!(!dir.path().join("systems").exists());
}

#[test]
fn an_unknown_benchmark_is_an_error() {
    let dir = TempDir::new();
    let mut args = NAMES.to_vec();
    args.extend(["--benchmark", "no-such-benchmark"]);
    let error = assert_error(&sysinfo_in(dir.path(), &args));
    assert!(error.contains("no-such-benchmark"), "{error}");
    assert!(!dir.path().join("systems").exists());
}
