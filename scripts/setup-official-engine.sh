#!/usr/bin/env bash
# Fetches the official MLPerf LoadGen 6.0.17 sources (the PyPI source distribution, which ships
# the C++ files) into a cache outside the repository, checks the archive's sha256 and unpacks it,
# unaltered, for the mlperf-official-loadgen crate to compile (`--engine official`).
# Idempotent: a cache that is already unpacked and verified is only checked.
# Messages go to stderr; stdout is one line, the sources' path:
#   MLPERF_LOADGEN_SRC=/home/me/.cache/mlperf-host/official-loadgen-6.0.17/mlcommons_loadgen-6.0.17
# so that `export "$(bash scripts/setup-official-engine.sh | tail -n1)"` sets it.
# MLPERF_HOST_CACHE chooses the cache directory (default: $XDG_CACHE_HOME/mlperf-host, else
# ~/.cache/mlperf-host).
set -euo pipefail
VERSION=6.0.17
SHA256=a2e85d09e3cc0c606f89bfe1fbf97537c8b5b238ae0afbd923ad9c710fcf2ca8
ARCHIVE="mlcommons_loadgen-$VERSION.tar.gz"
cache="${MLPERF_HOST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mlperf-host}/official-loadgen-$VERSION"
sources="$cache/mlcommons_loadgen-$VERSION"
# Written last: its presence says the archive was verified and unpacked whole.
stamp="$cache/.verified"
mkdir -p "$cache"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$SHA256" ] || [ ! -f "$sources/loadgen.cc" ]; then
    if [ ! -f "$cache/$ARCHIVE" ]; then
        echo "fetching the official LoadGen $VERSION sources (PyPI sdist) into $cache" >&2
        # Not --no-build-isolation: pip prepares the sdist's metadata in an isolated build.
        python3 -m pip download --quiet --disable-pip-version-check --no-deps \
            --no-binary :all: -d "$cache" "mlcommons-loadgen==$VERSION" >&2
    fi
    actual="$(sha256sum "$cache/$ARCHIVE" | cut -d' ' -f1)"
    if [ "$actual" != "$SHA256" ]; then
        echo "error: $cache/$ARCHIVE has sha256 $actual, expected $SHA256 (removed; run again)" >&2
        rm -f "$cache/$ARCHIVE"
        exit 1
    fi
    rm -rf "$sources" "$stamp"
    tar -xzf "$cache/$ARCHIVE" -C "$cache"
    echo "$SHA256" >"$stamp"
fi
echo "official LoadGen $VERSION sources ready in $sources" >&2
echo "MLPERF_LOADGEN_SRC=$sources"
