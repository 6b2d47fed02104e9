#!/usr/bin/env bash
# Installs the KServe v2 / Open Inference Protocol servers that the network plugin's tests start
# on 127.0.0.1, each serving a benchmark's model.onnx through ONNX Runtime (the same library
# version as the onnxruntime plugin, so answers match it sample for sample):
#   .venv-mlserver  MLServer, with the custom runtime plugins/network/tests/servers/mlserver_onnx.py
#   .venv-triton    NVIDIA Triton through PyPI's nvidia-pytriton (it bundles tritonserver), with
#                   plugins/network/tests/servers/triton_onnx.py. Made with Debian's
#                   /usr/bin/python3: PyTriton's Python-backend stub links the system
#                   libpython3.11, and under another 3.11 build the model fails to load.
# Idempotent: pinned versions already installed are only checked. Messages go to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
ORT=onnxruntime==1.31.1
MLSERVER_PINS=(mlserver==1.7.1 "$ORT" numpy==2.4.6)
TRITON_PINS=(nvidia-pytriton==0.7.0 "$ORT" numpy==1.26.4)

# has_pins VENV PIN... : the venv has exactly these versions.
has_pins() {
    local venv="$1"
    shift
    "$venv/bin/python" - "$@" 2>/dev/null <<'PY'
import importlib.metadata as m, sys
sys.exit(any(m.version(n) != v for n, v in (p.split("==") for p in sys.argv[1:])))
PY
}

# install VENV PYTHON PIN...
install() {
    local venv="$1" python="$2"
    shift 2
    if has_pins "$venv" "$@"; then
        echo "$venv ready ($*)" >&2
        return
    fi
    echo "installing $* into $venv" >&2
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >&2
    has_pins "$venv" "$@" || { echo "error: $venv lacks $*" >&2; exit 1; }
}

install .venv-mlserver python3 "${MLSERVER_PINS[@]}"
if [ -x /usr/bin/python3 ]; then
    install .venv-triton /usr/bin/python3 "${TRITON_PINS[@]}"
else
    echo "warning: no /usr/bin/python3 (Debian's): Triton is not installed and its tests fail" >&2
fi
