#!/usr/bin/env bash
# README command one: a real benchmark on a fresh machine. Installs ONNX Runtime 1.31.1 (PyPI
# wheel), the official LoadGen's sources (PyPI sdist) and the Fashion-MNIST data set (Debian
# package), trains and exports the model, builds the workspace with both engines, then runs
# `fmnist` on the ONNX Runtime plugin: accuracy mode, then short Offline and SingleStream
# performance runs, printing each summary and the accuracy.
# Idempotent: a second run skips what is installed. Logs go to runs/fmnist/.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n=== %s\n' "$*"; }

step "ONNX Runtime and the Python tools (.venv)"
ORT_DYLIB_PATH="$(bash scripts/setup-onnxruntime.sh | tail -n 1 | sed -n 's/^ORT_DYLIB_PATH=//p')"
[ -n "$ORT_DYLIB_PATH" ] || { echo "error: scripts/setup-onnxruntime.sh named no library" >&2; exit 1; }
export ORT_DYLIB_PATH

step "Fashion-MNIST data set and model (data/fmnist)"
bash scripts/benchmarks/prepare.sh fmnist

step "Official LoadGen sources (the second engine, --engine official)"
export "$(bash scripts/setup-official-engine.sh | tail -n 1)"

step "Build"
cargo build --release

host=./target/release/mlperf-host
# Short runs: MLPerf's 10-minute minimum is for submissions.
short=(--set min_duration_ms=5000)
# Offline tunes first: an Offline run issues its expected QPS x the duration in one query, and
# the definition's figure is a fast machine's (a slower one would run for half a minute).
for run in "AccuracyOnly Offline accuracy" "PerformanceOnly Offline offline --tune" "PerformanceOnly SingleStream singlestream"; do
    read -r mode scenario dir tune <<<"$run"
    step "fmnist: $scenario $mode${tune:+ (tuned first)}"
    "$host" run --benchmark fmnist --scenario "$scenario" --mode "$mode" "${short[@]}" ${tune:+"$tune"} --out "runs/fmnist/$dir"
done
step "Done: logs in runs/fmnist/{accuracy,offline,singlestream}"
