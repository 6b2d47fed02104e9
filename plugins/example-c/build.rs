//! Compiles `src/example_plugin.c` into a real shared library, `libmlperf_example_c.so`, the way
//! a vendor would build theirs (see README.md), and tells the crate where it is through the
//! `MLPERF_EXAMPLE_C_PLUGIN` environment variable at compile time.

include!("../c_plugin_build.rs");

fn main() {
    build_c_plugin(
        "src/example_plugin.c",
        "libmlperf_example_c.so",
        "MLPERF_EXAMPLE_C_PLUGIN",
    );
}
