//! `mlperf-host plugins sdk --prefix DIR`: what a C or C++ vendor builds a plugin against,
//! installed the usual way: the ABI header, a pkg-config file and a CMake package for it, and
//! the C example with a Makefile that builds it through pkg-config.

use std::path::{Path, PathBuf};

use anyhow::Context;
use mlperf_plugin_api::ffi;

const HEADER: &str = include_str!("../../../plugin-api/include/mlperf_plugin.h");
const EXAMPLE: &str = include_str!("../../../plugins/example-c/src/example_plugin.c");

/// The pkg-config name: `pkg-config --cflags mlperf-plugin`.
pub(super) const PACKAGE: &str = "mlperf-plugin";

/// Writes the SDK under `prefix` (made if missing; files of an earlier install are replaced)
/// and returns the files written.
pub(super) fn install(prefix: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(prefix)
        .with_context(|| format!("cannot create the prefix {}", prefix.display()))?;
    let prefix = prefix
        .canonicalize()
        .with_context(|| format!("cannot resolve the prefix {}", prefix.display()))?;
    let version = format!("{}.{}", ffi::ABI_MAJOR, ffi::ABI_MINOR);
    let files = [
        ("include/mlperf_plugin.h".to_string(), HEADER.to_string()),
        (
            format!("lib/pkgconfig/{PACKAGE}.pc"),
            pkg_config(&prefix, &version),
        ),
        (
            format!("lib/cmake/{PACKAGE}/{PACKAGE}-config.cmake"),
            cmake_config(&version),
        ),
        (
            "share/mlperf-host/example-c/example_plugin.c".to_string(),
            EXAMPLE.to_string(),
        ),
        (
            "share/mlperf-host/example-c/Makefile".to_string(),
            MAKEFILE.to_string(),
        ),
    ];
    let mut written = Vec::new();
    for (relative, text) in files {
        let path = prefix.join(relative);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

fn pkg_config(prefix: &Path, version: &str) -> String {
    format!(
        "prefix={}\n\
         includedir=${{prefix}}/include\n\
         \n\
         Name: {PACKAGE}\n\
         Description: The mlperf-host plugin ABI (a C header; the host loads the plugin)\n\
         Version: {version}\n\
         Cflags: -I${{includedir}}\n",
        prefix.display()
    )
}

/// `find_package(mlperf-plugin CONFIG)` gives the header-only target `mlperf::plugin`; the
/// file finds the prefix from where it lies, so the install can move.
fn cmake_config(version: &str) -> String {
    format!(
        "# The mlperf-host plugin ABI {version}: a header-only target.\n\
         get_filename_component(_mlperf_plugin_prefix \"${{CMAKE_CURRENT_LIST_DIR}}/../../..\" ABSOLUTE)\n\
         set(mlperf-plugin_VERSION {version})\n\
         if(NOT TARGET mlperf::plugin)\n\
         \x20 add_library(mlperf::plugin INTERFACE IMPORTED)\n\
         \x20 set_target_properties(mlperf::plugin PROPERTIES\n\
         \x20   INTERFACE_INCLUDE_DIRECTORIES \"${{_mlperf_plugin_prefix}}/include\")\n\
         endif()\n\
         unset(_mlperf_plugin_prefix)\n"
    )
}

const MAKEFILE: &str = "\
# Builds the example plugin against the installed SDK:
#   PKG_CONFIG_PATH=PREFIX/lib/pkgconfig make
CFLAGS ?= -std=c99 -O2 -Wall -Wextra
PLUGIN_CFLAGS := $(shell pkg-config --cflags mlperf-plugin)

libnpu.so: example_plugin.c
\t$(CC) $(CFLAGS) $(PLUGIN_CFLAGS) -shared -fPIC -pthread -fvisibility=hidden $< -o $@
";
