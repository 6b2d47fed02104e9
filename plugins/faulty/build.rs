//! Compiles `src/faulty_plugin.c` into a real shared library, `libmlperf_faulty.so`, as
//! plugins/example-c builds its own, and tells the crate where it is through the
//! `MLPERF_FAULTY_PLUGIN` environment variable at compile time.

include!("../c_plugin_build.rs");

fn main() {
    build_c_plugin(
        "src/faulty_plugin.c",
        "libmlperf_faulty.so",
        "MLPERF_FAULTY_PLUGIN",
    );
}
