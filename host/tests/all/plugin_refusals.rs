//! Bad plugins are refused with a clear error before anything runs: not a shared library, no
//! entry symbol, a refused or different major version, a table too small, a missing function.
//! The plugins are tiny C libraries compiled here against the real header.

use crate::support;

use std::path::{Path, PathBuf};

use mlperf_host::plugin::{Plugin, PluginSut};
use support::compile_c_plugin;

fn work_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mlperf-bad-plugins-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A plugin table with one thing wrong, chosen by `tweak` (C statements on `api`).
fn plugin_source(tweak: &str) -> String {
    format!(
        r#"#include "mlperf_plugin.h"
static mlperf_error *create(const mlperf_host_api *h, const char *c, size_t n, void **i) {{
    (void)h; (void)c; (void)n; *i = 0; return 0; }}
static void destroy(void *i) {{ (void)i; }}
static mlperf_error *issue(void *i, const mlperf_sample *s, size_t n) {{ (void)i; (void)s; (void)n; return 0; }}
static mlperf_error *flush(void *i) {{ (void)i; return 0; }}
static mlperf_plugin_api api;
MLPERF_PLUGIN_EXPORT const mlperf_plugin_api *mlperf_plugin_entry(uint32_t major, uint32_t minor) {{
    (void)minor;
    api.struct_size = sizeof api;
    api.abi_major = MLPERF_PLUGIN_ABI_MAJOR;
    api.abi_minor = MLPERF_PLUGIN_ABI_MINOR;
    api.kind = MLPERF_PLUGIN_KIND_SUT;
    api.name = "bad";
    api.version = "0";
    api.create = create;
    api.destroy = destroy;
    api.issue_query = issue;
    api.flush_queries = flush;
    if (major != MLPERF_PLUGIN_ABI_MAJOR) return 0;
    {tweak}
    return &api;
}}
"#
    )
}

fn refusal(path: &Path) -> String {
    match Plugin::open(path).and_then(|plugin| PluginSut::create(&plugin, "", None).map(|_| ())) {
        Ok(()) => panic!("{} was accepted", path.display()),
        Err(error) => mlperf_host::error_chain(&error),
    }
}

#[test]
fn bad_plugins_are_refused_with_the_reason() {
    let dir = work_dir();

    let text = dir.join("libnot-a-library.so");
    std::fs::write(&text, "just text").unwrap();
    let message = refusal(&text);
    assert!(
        message.contains("cannot load the plugin library"),
        "{message}"
    );
    // The loader's own reason stays the error's source, not text folded into it.
    let error = Plugin::open(&text).err().expect("refused");
    let source = std::error::Error::source(&error).expect("the loader's error as the source");
    assert!(
        message.ends_with(&source.to_string()) && !error.to_string().contains(&source.to_string()),
        "{message}"
    );

    let no_entry = compile_c_plugin(&dir, "noentry", "int something(void) { return 1; }\n");
    let message = refusal(&no_entry);
    assert!(
        message.contains("entry symbol `mlperf_plugin_entry` is missing"),
        "{message}"
    );

    let cases = [
        ("refuses", "return 0;", "refused ABI 1.5"),
        (
            "major2",
            "api.abi_major = 2;",
            "implements ABI major 2, this host speaks 1",
        ),
        (
            "small",
            "api.struct_size = 40;",
            "mlperf_plugin_api is 40 bytes, smaller than the 104",
        ),
        (
            "noissue",
            "api.issue_query = 0;",
            "does not provide the required function `issue_query`",
        ),
        (
            "power",
            "api.kind = MLPERF_PLUGIN_KIND_POWER;",
            "is a power plugin, not a system-under-test",
        ),
    ];
    for (name, tweak, expected) in cases {
        let so = compile_c_plugin(&dir, name, &plugin_source(tweak));
        let message = refusal(&so);
        assert!(message.contains(expected), "{name}: {message}");
        assert!(
            message.contains(&format!("lib{name}.so")),
            "{name}: names the file: {message}"
        );
    }

    // The control: the same table untouched loads, reports itself and creates an instance.
    let good = compile_c_plugin(&dir, "good", &plugin_source(""));
    let plugin = Plugin::open(&good).unwrap();
    assert_eq!(plugin.info.abi, "1.5");
    assert_eq!(plugin.info.kind, "sut");
    assert_eq!(plugin.info.sha256.len(), 64);
    assert!(
        !plugin.info.layout_checked,
        "a C plugin carries no layout descriptor"
    );
    PluginSut::create(&plugin, "", None).unwrap();

    // Plugins of earlier minors still load and create: 1.3 (whose table ends before
    // `devices`), 1.2 and 1.1 (before the sample set functions), and 1.0 (before the power
    // functions too). The host's 1.4 table is larger than what they know; they read what
    // they know, and the host calls no function past their table (no devices are listed, the
    // sample set calls are skipped).
    for (name, tweak, abi) in [
        (
            "minor3",
            // Past its struct_size the table holds a poisoned pointer: called, it would crash.
            "api.abi_minor = 3; api.struct_size = offsetof(mlperf_plugin_api, devices); \
             api.devices = (mlperf_error *(*)(const mlperf_host_api *, const char *, size_t, \
             const mlperf_device **, size_t *))1;",
            "1.3",
        ),
        (
            "minor2",
            // Past its struct_size the table holds a poisoned pointer: called, it would crash.
            "api.abi_minor = 2; api.struct_size = offsetof(mlperf_plugin_api, load_samples); \
             api.load_samples = api.unload_samples = \
             (mlperf_error *(*)(void *, const mlperf_sample *, size_t))1;",
            "1.2",
        ),
        (
            "minor1",
            "api.abi_minor = 1; api.struct_size = offsetof(mlperf_plugin_api, load_samples);",
            "1.1",
        ),
        (
            "minor0",
            "api.abi_minor = 0; api.struct_size = offsetof(mlperf_plugin_api, power_info);",
            "1.0",
        ),
    ] {
        let so = compile_c_plugin(&dir, name, &plugin_source(tweak));
        let plugin = Plugin::open(&so).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(plugin.info.abi, abi);
        assert_eq!(plugin.devices("").unwrap(), [], "{name}");
        PluginSut::create(&plugin, "", None).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
