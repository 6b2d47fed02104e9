//! `cargo bench`: the LoadGen engine against in-process null SUTs. The same cases, each in a
//! process of its own and against the official C++ LoadGen in alternating rounds, run with
//! `bash scripts/bench.sh --official`.

use mlperf_host::engine_bench::{self, Completion};

fn main() -> anyhow::Result<()> {
    // BENCH_QUICK=1 shrinks every case a hundredfold for a smoke run.
    let scale = if std::env::var_os("BENCH_QUICK").is_some() {
        100
    } else {
        1
    };
    let cases = [
        (
            "single-stream",
            engine_bench::single_stream_settings(2_000_000 / scale),
            Completion::Inline,
        ),
        (
            "offline",
            engine_bench::offline_settings(10_000_000 / scale),
            Completion::Inline,
        ),
        (
            "server",
            engine_bench::server_settings(200_000.0, 5_000 / scale),
            Completion::Worker,
        ),
    ];
    for (name, settings, completion) in cases {
        let report = engine_bench::run_case(name, &settings, completion, 1024)?;
        println!("{}", serde_json::to_string(&report)?);
    }
    Ok(())
}
