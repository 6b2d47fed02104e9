#!/usr/bin/env bash
# Benchmarks the LoadGen engine against an in-process null SUT: `mlperf-host bench` with these
# options (SingleStream, Offline, Server, each case in its own process; see its --help).
#
#   bash scripts/bench.sh [BENCH OPTIONS]
#   bash scripts/bench.sh --official [--rounds N] [--queries N] [--samples N] [--no-server] ...
#
# --official compares the engine with the official LoadGen 6.0.17 C++ library (built from the
# PyPI source distribution, unaltered, as `--engine official` is) running the same Rust null
# SUT, and with its own C++ null SUT, in alternating rounds: scripts/bench_official.py, whose
# options follow. The Python drop-in has its own comparison, scripts/bench_python.py.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == --official ]]; then
    shift
    export "$(bash scripts/setup-official-engine.sh | tail -n1)"
    cargo build --release --quiet -p mlperf-host
    exec python3 scripts/bench_official.py "$@"
fi
cargo build --release --quiet -p mlperf-host
exec ./target/release/mlperf-host bench "$@"
