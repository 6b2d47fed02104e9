#!/usr/bin/env bash
# Creates .venv with the official MLPerf LoadGen wheel, the reference the tests compare against.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! .venv/bin/python -c "import mlperf_loadgen" 2>/dev/null; then
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check mlcommons-loadgen==6.0.17
fi
.venv/bin/python -c "import mlperf_loadgen; print('official LoadGen ready:', mlperf_loadgen.__file__)"
