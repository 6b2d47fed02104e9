#!/usr/bin/env bash
# Benchmarks the LoadGen engine against an in-process null SUT (SingleStream, Offline, Server),
# each case in its own process. With BENCH_OFFICIAL=1 the official LoadGen wheel runs the same
# cases side by side (installed into .venv) and the ratios are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p mlperf-host
./target/release/mlperf-host bench "$@"
