//! Compiles the official LoadGen 6.0.17 from its PyPI source distribution, unaltered, with the
//! wheel's flags (`-std=c++14 -O3`, `MAJOR_VERSION`/`MINOR_VERSION` from VERSION.txt), together
//! with our bridge `glue/glue.cc` and a C++ null SUT (`glue/null_sut.cc`, the baseline of
//! engine benchmarks), and sets `cfg(official_loadgen)`.
//!
//! The sources are found through `MLPERF_LOADGEN_SRC`, else in the cache that
//! `scripts/setup-official-engine.sh` fills. Without them the crate still builds; the engine
//! then reports how to get them.

use std::env;
use std::path::{Path, PathBuf};

const VERSION: &str = "6.0.17";
/// The library's sources, as the wheel's setup.py lists them (without the Python bindings).
const SOURCES: &[&str] = &[
    "early_stopping.cc",
    "issue_query_controller.cc",
    "loadgen.cc",
    "logging.cc",
    "test_settings_internal.cc",
    "utils.cc",
    "version.cc",
    "results.cc",
    "generated/version_generated.cc",
];

fn main() {
    println!("cargo::rustc-check-cfg=cfg(official_loadgen)");
    println!("cargo:rerun-if-env-changed=MLPERF_LOADGEN_SRC");
    println!("cargo:rerun-if-env-changed=MLPERF_HOST_CACHE");
    println!("cargo:rerun-if-changed=glue/glue.cc");
    println!("cargo:rerun-if-changed=glue/null_sut.cc");
    let Some(sources) = find_sources() else {
        println!(
            "cargo:warning=official LoadGen sources not found: --engine official is unavailable \
             (export \"$(bash scripts/setup-official-engine.sh | tail -n1)\" and rebuild)"
        );
        return;
    };
    if let Err(problem) = check_sources(&sources) {
        panic!(
            "MLPERF_LOADGEN_SRC={} is not the official LoadGen {VERSION} source distribution: \
             {problem} (scripts/setup-official-engine.sh fetches and verifies it)",
            sources.display()
        );
    }
    let version = std::fs::read_to_string(sources.join("VERSION.txt")).expect("checked");
    let mut parts = version.trim().split('.');
    let (major, minor) = (parts.next().unwrap_or("0"), parts.next().unwrap_or("0"));

    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++14")
        .opt_level(3)
        .define("MAJOR_VERSION", major)
        .define("MINOR_VERSION", minor)
        .include(&sources)
        // The official files are compiled as they are; their warnings are not ours to fix.
        .warnings(false);
    // The logs name each source file as the wheel's do ("loadgen.cc"): the wheel compiles
    // from inside the source directory.
    build.flag_if_supported(format!("-fmacro-prefix-map={}/=", sources.display()));
    for file in SOURCES {
        let path = sources.join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        build.file(path);
    }
    build.file("glue/glue.cc");
    build.file("glue/null_sut.cc");
    build.compile("mlperf_loadgen_official");
    println!("cargo:rustc-cfg=official_loadgen");
    println!("cargo:rustc-env=MLPERF_LOADGEN_SRC={}", sources.display());
}

/// `MLPERF_LOADGEN_SRC`, else the setup script's cache when it is there.
fn find_sources() -> Option<PathBuf> {
    if let Some(dir) = env::var_os("MLPERF_LOADGEN_SRC").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let cache = match env::var_os("MLPERF_HOST_CACHE").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => env::var_os("XDG_CACHE_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| env::var_os("HOME").map(|home| Path::new(&home).join(".cache")))?
            .join("mlperf-host"),
    };
    let dir = cache
        .join(format!("official-loadgen-{VERSION}"))
        .join(format!("mlcommons_loadgen-{VERSION}"));
    dir.join("loadgen.cc").is_file().then_some(dir)
}

fn check_sources(dir: &Path) -> Result<(), String> {
    let version = std::fs::read_to_string(dir.join("VERSION.txt"))
        .map_err(|e| format!("cannot read VERSION.txt: {e}"))?;
    if version.trim() != VERSION {
        return Err(format!("VERSION.txt says {:?}", version.trim()));
    }
    for file in SOURCES.iter().chain(&["loadgen.h", "mlperf_conf.h"]) {
        if !dir.join(file).is_file() {
            return Err(format!("{file} is missing"));
        }
    }
    Ok(())
}
