#!/usr/bin/env bash
# `--isolate process` against in-process, with the same null plugin and the same engine, in
# alternating rounds: SingleStream queries/s, Offline samples/s absorbed (first issue to last
# completion), Server highest VALID qps (bisection), and the per-sample overhead isolation
# adds. Medians with ranges; every figure measured in this run.
#
#   scripts/bench-isolated.sh [--rounds N] [--queries N] [--samples N] [--server-ms MS]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p mlperf-host -p mlperf-plugin-null
exec python3 scripts/bench_isolated.py "$@"
