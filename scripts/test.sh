#!/usr/bin/env bash
# Everything CI checks: formatting, lints, and every test (including the differential test
# against the official LoadGen wheel, which this script installs into .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-official-loadgen.sh
export MLPERF_OFFICIAL_PYTHON="$PWD/.venv/bin/python"
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo test --release --all-targets
