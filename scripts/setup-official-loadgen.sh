#!/usr/bin/env bash
# Creates .venv with the official MLPerf LoadGen wheel, the reference the tests compare against,
# jsonschema, which validates result.json against schema/result.schema.json, and pandas, with
# which `dataset convert` reads llama2-70b's OpenOrca pickle in the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! .venv/bin/python -c "import mlperf_loadgen" 2>/dev/null; then
    python3 -m venv .venv
    .venv/bin/python -m pip install --quiet --disable-pip-version-check mlcommons-loadgen==6.0.17
fi
JSONSCHEMA_VERSION=4.26.0
if ! .venv/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('jsonschema') != '$JSONSCHEMA_VERSION')" 2>/dev/null; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "jsonschema==$JSONSCHEMA_VERSION"
fi
PANDAS_VERSION=2.3.3
if ! .venv/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('pandas') != '$PANDAS_VERSION')" 2>/dev/null; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "pandas==$PANDAS_VERSION"
fi
.venv/bin/python -c "import mlperf_loadgen; print('official LoadGen ready:', mlperf_loadgen.__file__)"
.venv/bin/python -c "import importlib.metadata as m; print('jsonschema ready:', m.version('jsonschema'), '; pandas ready:', m.version('pandas'))"
