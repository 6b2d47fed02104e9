//! `mlperf-host plugins list|inspect` and `run --plugin NAME` through a plugin directory.

use crate::support;

use std::path::PathBuf;

use std::process::Command;
use support::null_plugin;

fn exe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mlperf-host"))
}

/// A plugin directory holding `null/plugin.toml` beside a copy of the null plugin (`tag`
/// keeps tests apart).
fn plugin_dir(tag: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("mlperf-plugin-dir-{}-{tag}", std::process::id()));
    let dir = root.join("null");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(null_plugin(), dir.join("libmlperf_plugin_null.so")).unwrap();
    std::fs::write(
        dir.join("plugin.toml"),
        "name = \"null\"\nkind = \"sut\"\nlibrary = \"libmlperf_plugin_null.so\"\nabi = \"1.0\"\ndescription = \"the null backend\"\n",
    )
    .unwrap();
    root
}

#[test]
fn inspect_shows_abi_kind_capabilities_attributes_and_sha256() {
    let output = exe()
        .args(["plugins", "inspect"])
        .arg(null_plugin())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    for expected in [
        "abi           : 1.5",
        "kind          : sut",
        "capabilities  : async_completion, concurrent_issue, tokens",
        "layout check  : passed",
        "attribute     : vendor = mlperf-host",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    let sha = text
        .lines()
        .find_map(|l| l.strip_prefix("sha256        : "))
        .unwrap();
    assert_eq!(sha.len(), 64);
}

#[test]
fn plugins_list_names_the_plugins_built_beside_the_executable() {
    // `--plugin null` resolves to the library cargo built beside the executable: the list says so.
    let list = exe().args(["plugins", "list"]).output().unwrap();
    support::assert_ok(&list);
    let text = support::text(&list.stdout);
    let null = text
        .lines()
        .find(|l| l.starts_with("null ") && l.contains("built beside this executable"))
        .unwrap_or_else(|| panic!("no null plugin listed in\n{text}"));
    assert!(null.ends_with("libmlperf_plugin_null.so"), "{null}");
}

#[test]
fn plugins_are_found_by_name_through_the_plugin_path() {
    let root = plugin_dir("by-name");
    let list = exe()
        .args(["plugins", "list"])
        .env("MLPERF_HOST_PLUGIN_PATH", &root)
        .output()
        .unwrap();
    let text = String::from_utf8(list.stdout).unwrap();
    assert!(
        text.contains("null") && text.contains("the null backend"),
        "{text}"
    );

    let out = root.join("logs");
    let run = exe()
        .args([
            "run",
            "--plugin",
            "null",
            "--quiet",
            "--scenario",
            "Offline",
        ])
        .args(["--set", "min_duration_ms=0", "--set", "min_query_count=100"])
        .args(["--plugin-set", "workers=1"])
        .arg("--out")
        .arg(&out)
        .env("MLPERF_HOST_PLUGIN_PATH", &root)
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let detail = std::fs::read_to_string(out.join("mlperf_log_detail.txt")).unwrap();
    assert!(detail.contains("\"key\": \"sut_plugin_name\", \"value\": \"null\""));
    assert!(detail.contains("\"key\": \"sut_plugin_attribute_workers\", \"value\": \"1\""));

    let missing = exe()
        .args(["run", "--plugin", "no-such-plugin"])
        .env("MLPERF_HOST_PLUGIN_PATH", &root)
        .output()
        .unwrap();
    assert!(!missing.status.success());
    let message = String::from_utf8(missing.stderr).unwrap();
    assert!(
        message.contains("plugin `no-such-plugin` not found"),
        "{message}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_path_comes_before_a_name_and_a_plugin_folder_is_a_path() {
    let root = plugin_dir("paths");
    // A folder named `null` where the command runs, without a manifest: not the plugin.
    let cwd = root.join("work");
    std::fs::create_dir_all(cwd.join("null")).unwrap();
    let run = |plugin: &std::ffi::OsStr, out: &str| {
        exe()
            .args(["run", "--quiet", "--scenario", "Offline", "--plugin"])
            .arg(plugin)
            .args(["--set", "min_duration_ms=0", "--set", "min_query_count=100"])
            .args(["--out", out])
            .current_dir(&cwd)
            .env("MLPERF_HOST_PLUGIN_PATH", &root)
            .output()
            .unwrap()
    };
    let by_name = run("null".as_ref(), "by-name");
    assert!(by_name.status.success(), "{}", support::describe(&by_name));
    // An installed plugin's folder, given as a path.
    let folder = run(root.join("null").as_os_str(), "folder");
    assert!(folder.status.success(), "{}", support::describe(&folder));
    let detail = std::fs::read_to_string(cwd.join("folder/mlperf_log_detail.txt")).unwrap();
    assert!(detail.contains("\"key\": \"sut_plugin_name\", \"value\": \"null\""));
    // A folder path without a manifest is refused, naming it (not "Is a directory").
    let empty = run("./null".as_ref(), "empty");
    assert!(!empty.status.success());
    let message = support::text(&empty.stderr);
    assert!(
        message.contains("./null: not a regular file (a directory without a plugin.toml)"),
        "{message}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_panicking_plugin_exits_non_zero_with_logs_written() {
    let out = std::env::temp_dir().join(format!("mlperf-panic-cli-{}", std::process::id()));
    let run = exe()
        .arg("run")
        .arg("--plugin")
        .arg(null_plugin())
        .args(["--plugin-set", "panic_after=20", "--quiet"])
        .args(["--set", "min_duration_ms=0", "--drain-timeout", "1"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let message = String::from_utf8(run.stderr).unwrap();
    assert!(
        message.contains("the system under test failed"),
        "{message}"
    );
    let summary = std::fs::read_to_string(out.join("mlperf_log_summary.txt")).unwrap();
    assert!(summary.contains("Result is : INVALID"));
    assert!(out.join("result.json").is_file());
    std::fs::remove_dir_all(&out).unwrap();
}

/// `plugins test` on `plugin` with `args`: its exit success and its lines.
fn conformance(plugin: &std::path::Path, args: &[&str]) -> (bool, String) {
    let output = exe()
        .args(["plugins", "test"])
        .arg(plugin)
        .args(["--timeout", "2s"])
        .args(args)
        .output()
        .unwrap();
    (output.status.success(), support::text(&output.stdout))
}

#[test]
fn the_shipped_plugins_pass_the_conformance_suite() {
    let example_c = support::plugin_library("libmlperf_example_c.so");
    for (plugin, args) in [
        (
            null_plugin(),
            vec!["--tokens", "--plugin-set", "tokens=true"],
        ),
        (
            null_plugin(),
            vec![
                "--isolate",
                "none",
                "--plugin-set",
                "workers=2",
                "--plugin-set",
                "devices=3",
            ],
        ),
        (example_c, vec!["--plugin-set", "workers=2"]),
    ] {
        let (passed, text) = conformance(&plugin, &args);
        assert!(passed, "{args:?}\n{text}");
        assert!(text.contains("CONFORMS: "), "{text}");
        assert!(!text.contains("FAIL"), "{text}");
        for scenario in ["SingleStream", "MultiStream", "Server", "Offline"] {
            for mode in ["performance", "accuracy"] {
                let line =
                    format!("  ok    {scenario} {mode}: every sample completes exactly once");
                assert!(text.contains(&line), "{line:?} missing in\n{text}");
            }
        }
        // Both the SDK's null plugin and the C example have the ABI 1.3 sample set calls.
        assert!(
            text.contains("  ok    load_samples and unload_samples: each loaded set handed over, then released"),
            "{text}"
        );
        // Without a data set there is nothing to place in the plugin's memory.
        let memory = "sample memory: the same results with the samples in the plugin's memory as in the host's";
        assert!(text.contains(&format!("  skip  {memory}")), "{text}");
        // Handed a 1.2 host's table, both read nothing past it; in-process that is not tried.
        // ABI 1.4: a plugin that lists devices gets a run over all of them.
        let devices = "devices: an instance per listed device, each given queries";
        let expected = match args.contains(&"devices=3") {
            true => format!("  ok    {devices}"),
            false => format!("  skip  {devices} (it lists none; ABI 1.4)"),
        };
        assert!(text.contains(&expected), "{expected:?} missing in\n{text}");
        for old_host in [
            "with a host of ABI 1.2: reads nothing past the host table's struct_size",
            "with a host of ABI 1.3: reads nothing past the run description's struct_size",
        ] {
            let expected = match args.contains(&"none") {
                true => format!("  skip  {old_host}"),
                false => format!("  ok    {old_host}"),
            };
            assert!(text.contains(&expected), "{expected:?} missing in\n{text}");
        }
    }
}

/// The C example as a plugin of ABI 1.3 would be: its table ends before 1.4's `devices`, and
/// what lies past the end is poison (0x5a bytes), which a host that called it would fault on.
fn example_as_abi_1_3(dir: &std::path::Path) -> PathBuf {
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../plugins/example-c/src/example_plugin.c");
    let source = format!(
        r#"#define mlperf_plugin_entry example_entry_of_1_4
#include "{}"
#undef mlperf_plugin_entry
#include <stddef.h>
static mlperf_plugin_api api_of_1_3;
MLPERF_PLUGIN_EXPORT const mlperf_plugin_api *mlperf_plugin_entry(uint32_t major, uint32_t minor) {{
    const mlperf_plugin_api *full = example_entry_of_1_4(major, minor);
    if (full == NULL) return NULL;
    size_t end = offsetof(mlperf_plugin_api, devices);
    api_of_1_3 = *full;
    api_of_1_3.abi_minor = 3;
    api_of_1_3.struct_size = end;
    memset((char *)&api_of_1_3 + end, 0x5a, sizeof api_of_1_3 - end);
    return &api_of_1_3;
}}
"#,
        example.display()
    );
    support::compile_c_plugin(dir, "example_1_3", &source)
}

#[test]
fn a_plugin_of_abi_1_3_passes_the_conformance_suite_on_this_host() {
    let dir = support::TempDir::new();
    let plugin = example_as_abi_1_3(dir.path());
    let (passed, text) = conformance(&plugin, &["--plugin-set", "workers=2"]);
    assert!(passed, "{text}");
    assert!(
        text.contains("  ok    loads (example-c 0.1.0, ABI 1.3"),
        "{text}"
    );
    for check in [
        "  ok    load_samples and unload_samples: each loaded set handed over, then released",
        "  ok    with a host of ABI 1.2: reads nothing past the host table's struct_size",
        "  skip  devices: an instance per listed device, each given queries (it lists none",
        "  skip  sample memory: the same results with the samples in the plugin's memory as in the host's (it offers none",
    ] {
        assert!(text.contains(check), "{check:?} missing in\n{text}");
    }
}

#[test]
fn a_plugin_offering_sample_memory_is_checked_for_the_same_results_as_in_host_memory() {
    let dir = support::TempDir::new();
    let dataset = dir.path().join("set.npy");
    let bytes: Vec<u8> = (0..64u8).flat_map(|i| [i; 8]).collect();
    support::write_npy(&dataset, "|u1", "(64, 8)", &bytes);
    let example_c = support::plugin_library("libmlperf_example_c.so");
    let check =
        "sample memory: the same results with the samples in the plugin's memory as in the host's";
    let dataset = dataset.display().to_string();
    for memory in ["device", "pinned"] {
        let memory = format!("sample_memory=\"{memory}\"");
        let args = [
            "--plugin-set",
            "workers=2",
            "--plugin-set",
            &memory,
            "--dataset",
            &dataset,
        ];
        let (passed, text) = conformance(&example_c, &args);
        assert!(passed, "{memory}\n{text}");
        assert!(
            text.contains(&format!("  ok    {check}")),
            "{memory}\n{text}"
        );
    }
    // A plugin without allocate_samples has nothing to check.
    let (passed, text) = conformance(&null_plugin(), &["--dataset", &dataset]);
    assert!(passed, "{text}");
    assert!(
        text.contains(&format!("  skip  {check} (it offers none")),
        "{text}"
    );
}

#[test]
fn the_faulty_plugin_fails_the_conformance_checks_its_fault_breaks() {
    let faulty = support::faulty_plugin();
    for (fault, expected) in [
        (
            "garbage_response",
            "1 completions of samples already completed, 1 of ids never issued",
        ),
        (
            "segfault",
            "plugin process killed by SIGSEGV after 9 samples",
        ),
        // The plugin's error reaches the host ahead of the samples it refused, isolated too
        // (Offline is one call: the test could end on them before the error arrived).
        (
            "fail_issue",
            "faulty: issue_query fails from sample 10 on (fault = fail_issue)",
        ),
        // ABI 1.3: the load before the first query fails (MultiStream loads a padded set).
        ("fail_load", "samples fails (fault = fail_load)"),
    ] {
        let set = format!("fault={fault}");
        let (passed, text) = conformance(
            &faulty,
            &["--plugin-set", &set, "--plugin-set", "at_sample=10"],
        );
        assert!(!passed, "{fault}: {text}");
        assert!(text.contains("DOES NOT CONFORM"), "{fault}: {text}");
        assert!(
            text.contains("  ok    loads (faulty 0.1.0, ABI 1.5"),
            "{fault}: {text}"
        );
        for scenario in ["SingleStream", "MultiStream", "Server", "Offline"] {
            let line =
                format!("  FAIL  {scenario} performance: every sample completes exactly once: ");
            let found = text.lines().find(|l| l.starts_with(&line));
            assert!(
                found.is_some_and(|l| l.contains(expected)),
                "{fault}, {scenario}: {found:?}\n{text}"
            );
        }
    }
    // A thread left behind by destroy calls the host afterwards: the plugin's process counts it.
    let (passed, text) = conformance(&faulty, &["--plugin-set", "fault=late_callback"]);
    assert!(!passed);
    assert!(
        text.contains("  FAIL  creates an instance with its config, and destroy returns: 1 callbacks after destroy returned: a thread of the plugin outlives destroy"),
        "{text}"
    );
    assert!(
        text.contains("  FAIL  Offline accuracy: every sample completes exactly once: 1 callbacks after destroy returned"),
        "{text}"
    );
    // Reading the run description without checking the host table's size: a 1.2 host's table
    // ends before it, and what lies past it is followed into a fault.
    let (passed, text) = conformance(&faulty, &["--plugin-set", "fault=unchecked_run"]);
    assert!(!passed);
    assert!(
        text.contains("  FAIL  with a host of ABI 1.2: reads nothing past the host table's struct_size (no run description): the plugin process did not start the plugin: plugin process killed by SIGSEGV"),
        "{text}"
    );
    assert!(
        text.contains("  ok    Offline accuracy: every sample completes exactly once"),
        "{text}"
    );
    // Reading the device without checking the run description's size: a 1.3 host's
    // description ends before it.
    let (passed, text) = conformance(&faulty, &["--plugin-set", "fault=unchecked_device"]);
    assert!(!passed);
    assert!(
        text.contains("  FAIL  with a host of ABI 1.3: reads nothing past the run description's struct_size (no device): the plugin process did not start the plugin: plugin process killed by SIGSEGV"),
        "{text}"
    );
    assert!(
        text.contains(
            "  ok    with a host of ABI 1.2: reads nothing past the host table's struct_size"
        ),
        "{text}"
    );
    let (passed, text) = conformance(&faulty, &["--plugin-set", "fault=hang_destroy"]);
    assert!(!passed);
    assert!(
        text.contains("  FAIL  creates an instance with its config, and destroy returns: destroy has not returned after 2s"),
        "{text}"
    );
}

/// The `Cflags` of a pkg-config file, its `${variables}` resolved as pkg-config does.
fn pc_cflags(pc: &str) -> String {
    let mut variables: Vec<(String, String)> = Vec::new();
    let resolve = |text: &str, variables: &[(String, String)]| {
        variables
            .iter()
            .fold(text.to_string(), |text, (name, value)| {
                text.replace(&format!("${{{name}}}"), value)
            })
    };
    for line in pc.lines() {
        if let Some(flags) = line.strip_prefix("Cflags:") {
            return resolve(flags.trim(), &variables);
        }
        if let Some((name, value)) = line.split_once('=') {
            if !name.contains(':') {
                let value = resolve(value.trim(), &variables);
                variables.push((name.trim().to_string(), value));
            }
        }
    }
    panic!("no Cflags in\n{pc}");
}

#[test]
fn the_sdk_builds_a_conforming_plugin_from_its_pkg_config_file() {
    let dir = support::TempDir::new();
    let prefix = dir.path().join("sdk");
    let output = exe()
        .args(["plugins", "sdk", "--prefix"])
        .arg(&prefix)
        .output()
        .unwrap();
    support::assert_ok(&output);
    let prefix = prefix.canonicalize().unwrap();
    let header = std::fs::read_to_string(prefix.join("include/mlperf_plugin.h")).unwrap();
    assert!(header.contains("#define MLPERF_PLUGIN_ABI_MINOR 5u"));
    let pc = std::fs::read_to_string(prefix.join("lib/pkgconfig/mlperf-plugin.pc")).unwrap();
    assert!(pc.contains("Version: 1.5\n"), "{pc}");
    let cflags = pc_cflags(&pc);
    assert_eq!(cflags, format!("-I{}/include", prefix.display()));
    // pkg-config itself, where this machine has it, reads the file the same way.
    let pkg_config = Command::new("pkg-config")
        .args(["--cflags", "mlperf-plugin"])
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .output();
    if let Ok(found) = pkg_config {
        assert!(found.status.success(), "{}", support::describe(&found));
        assert_eq!(support::text(&found.stdout).trim(), cflags);
    }
    // The printed hint works when pasted: the variable is exported before the `$(…)` that
    // needs it (as one `VAR=… cc $(pkg-config …)` line it would not reach pkg-config).
    let hint = support::text(&output.stdout);
    let export = hint
        .lines()
        .find(|l| l.trim_start().starts_with("export PKG_CONFIG_PATH="))
        .unwrap_or_else(|| panic!("no export line in\n{hint}"));
    let build = hint
        .lines()
        .find(|l| {
            l.trim_start().starts_with("cc ") && l.contains("$(pkg-config --cflags mlperf-plugin)")
        })
        .unwrap_or_else(|| panic!("no cc line in\n{hint}"));
    if Command::new("pkg-config").arg("--version").output().is_ok() {
        let example = prefix.join("share/mlperf-host/example-c/example_plugin.c");
        let built = dir.path().join("libmyplugin.so");
        let pasted = format!(
            "cd {}\n{export}\n{}",
            dir.path().display(),
            build.replace("my_plugin.c", &format!("{} -pthread", example.display()))
        );
        let shell = Command::new("sh")
            .arg("-c")
            .arg(&pasted)
            .env_remove("PKG_CONFIG_PATH")
            .output()
            .unwrap();
        support::assert_ok(&shell);
        assert!(built.is_file(), "{pasted}");
    }
    let cmake =
        std::fs::read_to_string(prefix.join("lib/cmake/mlperf-plugin/mlperf-plugin-config.cmake"))
            .unwrap();
    assert!(
        cmake.contains("add_library(mlperf::plugin INTERFACE IMPORTED)"),
        "{cmake}"
    );

    // A vendor's build: the installed example, compiled with nothing but the SDK's flags.
    let source = prefix.join("share/mlperf-host/example-c/example_plugin.c");
    let library = dir.path().join("libnpu.so");
    let compiled = Command::new("cc")
        .args([
            "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
        ])
        .args(["-pthread", "-fvisibility=hidden", &cflags])
        .arg(&source)
        .arg("-o")
        .arg(&library)
        .output()
        .unwrap();
    support::assert_ok(&compiled);
    let (passed, text) = conformance(&library, &["--plugin-set", "workers=1"]);
    assert!(passed, "{text}");
    assert!(
        text.contains("  ok    loads (example-c 0.1.0, ABI 1.5"),
        "{text}"
    );
}
