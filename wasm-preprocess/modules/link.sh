#!/usr/bin/env bash
# The linker build.sh has rustc use: rust-lld without the `--export=__heap_base` and
# `--export=__data_end` that rustc adds to every wasm32-unknown-unknown cdylib, so a module
# exports exactly its memory and the ABI's functions.
set -euo pipefail

args=()
for arg in "$@"; do
    case "$arg" in
        --export=__heap_base | --export=__data_end) ;;
        *) args+=("$arg") ;;
    esac
done
exec "${MLPERF_RUST_LLD:?link.sh runs under build.sh, which sets MLPERF_RUST_LLD}" "${args[@]}"
