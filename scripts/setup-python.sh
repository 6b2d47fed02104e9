#!/usr/bin/env bash
# Builds the Python module mlperf_host.loadgen (host/python) as a wheel with pip, the way a
# user installs it (`pip install ./host/python`), and installs it into .venv beside the
# official wheel, with pytest for its tests. Run scripts/setup-official-loadgen.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTEST_VERSION=9.0.2
pip_quiet=(--quiet --disable-pip-version-check)
if ! .venv/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('pytest') != '$PYTEST_VERSION')" 2>/dev/null; then
    .venv/bin/python -m pip install "${pip_quiet[@]}" "pytest==$PYTEST_VERSION"
fi
wheels=target/wheels/python
rm -rf "$wheels"
# pip builds it with maturin (pyproject.toml) in the workspace's target directory.
.venv/bin/python -m pip wheel "${pip_quiet[@]}" --no-deps --wheel-dir "$wheels" ./host/python
.venv/bin/python -m pip install "${pip_quiet[@]}" --force-reinstall --no-deps "$wheels"/mlperf_host-*.whl
.venv/bin/python -c "import mlperf_host.loadgen as lg; print('mlperf_host.loadgen ready:', lg.__file__)"
