// The build script of the plain-C plugins (example-c, faulty), included by each one's
// build.rs: compiles one C file into a real shared library, the way a vendor would build
// theirs (plugins/example-c/README.md), with warnings as errors.

use std::env;
use std::path::{Path, PathBuf};

/// Compiles `source` (relative to the crate) into the shared library `library` and exports
/// its path to the crate as the compile-time environment variable `env_var`.
fn build_c_plugin(source: &str, library: &str, env_var: &str) {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let source = manifest_dir.join(source);
    let include = manifest_dir.join("../../plugin-api/include");
    let header = include.join("mlperf_plugin.h");
    println!("cargo:rerun-if-changed={}", source.display());
    println!("cargo:rerun-if-changed={}", header.display());
    let this_script = manifest_dir.join("../c_plugin_build.rs");
    println!("cargo:rerun-if-changed={}", this_script.display());

    // The C compiler cc would use for this target (CC and CFLAGS apply), invoked directly:
    // cc::Build only makes static archives. -O2 comes last and wins over the profile's level:
    // the library is built as it ships, and -Werror then also sees the optimiser's warnings.
    let compiler = cc::Build::new().get_compiler();
    let output = out_dir.join(library);
    let mut command = compiler.to_command();
    command
        .args([
            "-std=c99",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-shared",
            "-fPIC",
            "-pthread",
            "-fvisibility=hidden",
        ])
        .arg("-I")
        .arg(&include)
        .arg(&source)
        .arg("-o")
        .arg(&output);
    let shown = std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|arg| arg.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    let status = command
        .status()
        .unwrap_or_else(|error| panic!("could not run the C compiler ({shown}): {error}"));
    assert!(
        status.success(),
        "the C compiler failed ({status}): {shown}"
    );

    // Also place it beside the profile's other artifacts (target/<profile>/), where the host and
    // a person look first. Best effort: OUT_DIR is target/<profile>/build/<pkg>-<hash>/out.
    if let Some(profile_dir) = out_dir.ancestors().nth(3) {
        copy_if_changed(&output, &profile_dir.join(library));
    }

    println!("cargo:rustc-env={env_var}={}", output.display());
}

fn copy_if_changed(from: &Path, to: &Path) {
    // Copy to a temporary name and rename, so a process loading the old library never sees a
    // half-written file.
    let temporary = to.with_extension("so.tmp");
    if std::fs::copy(from, &temporary).is_ok() && std::fs::rename(&temporary, to).is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
}
