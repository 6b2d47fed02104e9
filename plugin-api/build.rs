//! Compiles `tests/layout.c` (the header's sizes and offsets as the C compiler sees them) into
//! a static library for `tests/all/layout.rs`. Only link-search is emitted: the library itself is
//! linked by that test alone, never into plugin-api or the plugins built on it.

fn main() {
    println!("cargo:rerun-if-changed=include/mlperf_plugin.h");
    println!("cargo:rerun-if-changed=tests/layout.c");
    cc::Build::new()
        .file("tests/layout.c")
        .include("include")
        .std("c11")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .cargo_metadata(false)
        .compile("mlperf_plugin_layout_c");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    println!("cargo:rustc-link-search=native={out_dir}");
}
