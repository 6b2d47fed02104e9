#!/usr/bin/env bash
# Builds llama.cpp's own HTTP server, llama-server, which takes a completion's prompt as token
# ids (the MLPerf LLM references send token ids; llama-cpp-python's server takes text only),
# from the llama.cpp that llama-cpp-python 0.3.36's PyPI source distribution vendors (the same
# llama.cpp as the smollm2 server's), CPU only and portable (GGML_NATIVE=OFF), statically
# linked, no web UI, no TLS. About 7 min on 2 cores, once: the binary is kept in the cache
# outside the repository and reused. cmake comes from PyPI, into a venv in the cache.
# Messages go to stderr; stdout is one line, the binary's path:
#   MLPERF_HOST_LLAMA_SERVER=/home/me/.cache/mlperf-host/llama-server-0.3.36/llama-server
# so that `export "$(bash scripts/setup-llama-server.sh | tail -n1)"` sets it.
# MLPERF_HOST_CACHE chooses the cache directory (default: $XDG_CACHE_HOME/mlperf-host, else
# ~/.cache/mlperf-host).
set -euo pipefail
VERSION=0.3.36
SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
ARCHIVE="llama_cpp_python-$VERSION.tar.gz"
CMAKE=3.31.6
cache="${MLPERF_HOST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mlperf-host}"
dir="$cache/llama-server-$VERSION"
binary="$dir/llama-server"
if [ -x "$binary" ] && "$binary" --version >/dev/null 2>&1; then
    echo "llama-server ready: $binary" >&2
    echo "MLPERF_HOST_LLAMA_SERVER=$binary"
    exit 0
fi
mkdir -p "$dir"
work="$(mktemp -d "$dir/build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
if [ ! -f "$dir/$ARCHIVE" ] || [ "$(sha256sum "$dir/$ARCHIVE" | cut -d' ' -f1)" != "$SHA256" ]; then
    echo "fetching llama-cpp-python $VERSION's sources (PyPI sdist) into $dir" >&2
    # The index page links each file with its sha256; pip download would build the sdist's
    # metadata first, which compiles llama.cpp.
    url="$(curl -fsS https://pypi.org/simple/llama-cpp-python/ | grep -o "https://[^\"#]*/$ARCHIVE" | head -n 1)"
    [ -n "$url" ] || { echo "error: PyPI's index lists no $ARCHIVE" >&2; exit 1; }
    curl -fsSL -o "$work/$ARCHIVE" "$url"
    actual="$(sha256sum "$work/$ARCHIVE" | cut -d' ' -f1)"
    if [ "$actual" != "$SHA256" ]; then
        echo "error: $url has sha256 $actual, expected $SHA256" >&2
        exit 1
    fi
    mv "$work/$ARCHIVE" "$dir/$ARCHIVE"
fi
tools="$dir/cmake-venv"
if ! "$tools/bin/cmake" --version 2>/dev/null | grep -q "$CMAKE"; then
    python3 -m venv "$tools"
    "$tools/bin/python" -m pip install --quiet --disable-pip-version-check "cmake==$CMAKE" >&2
fi
tar -xzf "$dir/$ARCHIVE" -C "$work"
source="$work/llama_cpp_python-$VERSION/vendor/llama.cpp"
echo "building llama-server (llama.cpp of llama-cpp-python $VERSION, CPU) into $dir: about 7 min on 2 cores" >&2
start=$SECONDS
"$tools/bin/cmake" -S "$source" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
    -DBUILD_SHARED_LIBS=OFF -DGGML_OPENMP=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DGGML_CCACHE=OFF >"$work/configure.log" 2>&1 ||
    { tail -n 30 "$work/configure.log" >&2; exit 1; }
"$tools/bin/cmake" --build "$work/build" --target llama-server -j "$(nproc)" >"$work/build.log" 2>&1 ||
    { tail -n 30 "$work/build.log" >&2; exit 1; }
install -m 755 "$work/build/bin/llama-server" "$binary.part"
mv "$binary.part" "$binary"
# The sources are no longer needed (76 MB).
rm -f "$dir/$ARCHIVE"
echo "built in $((SECONDS - start)) s" >&2
"$binary" --version >&2 2>&1 || true
echo "llama-server ready: $binary" >&2
echo "MLPERF_HOST_LLAMA_SERVER=$binary"
