#!/usr/bin/env bash
# Installs ONNX Runtime (whose libonnxruntime.so the onnxruntime plugin loads at run time) and the
# Python packages the benchmark scripts use (scripts/benchmarks/) into .venv, beside what
# setup-official-loadgen.sh puts there. Idempotent: when the pinned versions are already
# installed it only checks them.
# Messages go to stderr; stdout is one line, the library's path:
#   ORT_DYLIB_PATH=/abs/path/.venv/lib/python3.X/site-packages/onnxruntime/capi/libonnxruntime.so.1.31.1
# so that `export "$(bash scripts/setup-onnxruntime.sh | tail -n1)"` sets it.
set -euo pipefail
cd "$(dirname "$0")/.."
ORT_VERSION=1.31.1
PINS=(
    "onnxruntime==$ORT_VERSION"
    numpy==2.4.6
    scipy==1.17.1
    scikit-learn==1.9.1
    skl2onnx==1.20.0
    onnx==1.23.2
    pillow==12.1.1
)
# The same venv setup-official-loadgen.sh makes; created here only when it does not exist yet.
[ -x .venv/bin/python ] || python3 -m venv .venv
if ! .venv/bin/python - "${PINS[@]}" 2>/dev/null <<'EOF'
import importlib.metadata as m, sys
sys.exit(any(m.version(n) != v for n, v in (p.split("==") for p in sys.argv[1:])))
EOF
then
    echo "installing onnxruntime==$ORT_VERSION, numpy, scikit-learn, skl2onnx, onnx, pillow into .venv" >&2
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "${PINS[@]}" >&2
fi
shopt -s nullglob
libs=("$PWD"/.venv/lib/python3*/site-packages/onnxruntime/capi/libonnxruntime.so."$ORT_VERSION")
if [ "${#libs[@]}" -ne 1 ]; then
    echo "error: expected one libonnxruntime.so.$ORT_VERSION under .venv/lib/python3*/site-packages/onnxruntime/capi/, found ${#libs[@]}" >&2
    exit 1
fi
echo "onnxruntime $ORT_VERSION ready" >&2
echo "ORT_DYLIB_PATH=${libs[0]}"
