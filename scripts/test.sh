#!/usr/bin/env bash
# Everything CI checks: formatting, lints, and every test (including the differential test
# against the official LoadGen wheel, the ONNX Runtime plugin on real models and the network
# plugin against real MLServer and Triton servers, whose packages and data this script
# installs into .venv, .venv-mlserver, .venv-triton and data/).
set -euo pipefail
cd "$(dirname "$0")/.."
log="$(mktemp)"
timings="$(mktemp)"
# Each phase's seconds, printed as a table at the end (before the closing line), or on the
# way out when a phase fails.
phase_start=$SECONDS
done_phase() {
    printf '%s\t%s\n' "$1" "$((SECONDS - phase_start))" >>"$timings"
    phase_start=$SECONDS
}
print_timings() {
    echo "CI phases (seconds, $SECONDS in all):"
    awk -F '\t' '{ printf "  %-44s %6d\n", $1, $2 }' "$timings"
    # Each test binary's own run time, as cargo reports it after the binary's name.
    awk '/^ *Running / { crate = $NF; gsub(/.*deps\/|-[0-9a-f]+\)$/, "", crate)
                         name = crate ": " ($2 == "unittests" ? $3 : $2) }
         /^test result:/ && name != "" { sub(/s$/, "", $NF); printf "    %-42s %6.1f\n", name, $NF; name = "" }' "$log"
}
trap 'status=$?; if [ "$status" -ne 0 ]; then print_timings; fi; rm -f "$log" "$timings"' EXIT
# A fresh clone builds into the cache outside it (target/ links there), reusing the
# dependencies the clones before it built; the workspace's own crates, whose paths differ
# from clone to clone, are cleaned out first, so that the cache does not grow.
cache="${MLPERF_HOST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mlperf-host}"
if [ ! -e target ]; then
    mkdir -p "$cache/target"
    ln -s "$cache/target" target
    if [ "$(cat "$cache/target/.clone" 2>/dev/null)" != "$PWD" ]; then
        cargo clean --quiet --workspace
        cargo clean --quiet --workspace --release
        echo "$PWD" >"$cache/target/.clone"
    fi
fi
# The generated benchmark data too: prepare.sh keeps what the current generators made.
if [ ! -e data ]; then
    mkdir -p "$cache/data"
    ln -s "$cache/data" data
fi
done_phase "build cache"
bash scripts/setup-official-loadgen.sh
# The official LoadGen's C++ sources (PyPI sdist, cached outside the clone), which
# mlperf-official-loadgen compiles for `--engine official`.
export "$(bash scripts/setup-official-engine.sh | tail -n 1)"
export MLPERF_OFFICIAL_PYTHON="$PWD/.venv/bin/python"
done_phase "official LoadGen wheel and sources"
ort_dylib="$(bash scripts/setup-onnxruntime.sh | tail -n 1)"
export "$ort_dylib"
done_phase "ONNX Runtime"
bash scripts/benchmarks/prepare.sh digits fmnist images minilm resnet smollm2 yolo unet3d bert punkt whisper
done_phase "benchmark data"
# libjpeg-turbo's TurboJPEG (Debian's libturbojpeg0), which decodes ImageNet's JPEGs as
# cv2.imread does.
bash scripts/setup-jpeg.sh >/dev/null
done_phase "libjpeg-turbo"
# The KServe v2 servers (MLServer, Triton) and the LLM server (llama.cpp's OpenAI server;
# its build is cached outside the clone) the network plugin's tests start.
bash scripts/setup-servers.sh
done_phase "MLServer and Triton"
bash scripts/setup-llm.sh
done_phase "LLM server (llama.cpp)"
# llama.cpp's own server, which takes token-id prompts (the LLM benchmarks' tests); built once
# and cached outside the clone.
export "$(bash scripts/setup-llama-server.sh | tail -n 1)"
done_phase "LLM server (llama-server)"
# Headless Chromium, in which the report test renders and screenshots report.html.
MLPERF_HOST_CHROMIUM="$(bash scripts/setup-chromium.sh | tail -n 1)"
export MLPERF_HOST_CHROMIUM
done_phase "Chromium"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
done_phase "cargo fmt and clippy"
# The WASM guest SDK is its own workspace (its modules build only for wasm32; the test suite
# rebuilds and compares them where that target is installed).
guest_sdk=wasm-preprocess/guest-sdk/Cargo.toml
cargo fmt --manifest-path "$guest_sdk" -- --check
cargo clippy --manifest-path "$guest_sdk" --all-targets -- -D warnings
cargo test --manifest-path "$guest_sdk" --quiet
# The modules' own logic natively: OpenCV's INTER_AREA and INTER_LINEAR resizes against cv2's
# outputs (631 and 696 cases), YOLO's letterbox and the ImageNet module (the tests of
# wasm-preprocess compare the committed modules with their sources where the wasm32 target is
# installed).
modules=wasm-preprocess/modules/Cargo.toml
cargo fmt --manifest-path "$modules" --all -- --check
cargo clippy --manifest-path "$modules" -p mlperf-opencv-resize -p mlperf-preprocess-imagenet-vgg -p mlperf-preprocess-yolo-letterbox --all-targets -- -D warnings
cargo test --manifest-path "$modules" -p mlperf-opencv-resize -p mlperf-preprocess-imagenet-vgg -p mlperf-preprocess-yolo-letterbox --quiet
done_phase "WASM guest SDK and modules"
# Benchmarks are left to `cargo bench` and scripts/bench.sh. The tests whose verdict rests on
# timings (each file's `mod timed`: latency bounds, rates, two runs' speeds compared) run after
# the rest, one at a time with nothing beside them: on a 2-core machine another test's servers
# or ONNX Runtime take the CPU they measure.
cargo test --release --lib --bins --tests --examples -- --skip timed:: 2>&1 | tee "$log"
done_phase "cargo test --release (build and run)"
timed_log="$(mktemp)"
cargo test --release --lib --bins --tests --examples -- timed:: --test-threads=1 2>&1 | tee "$timed_log"
cat "$timed_log" >>"$log"
if ! grep -Eq '^test result: ok\. [1-9][0-9]* passed' "$timed_log"; then
    echo "error: no timed test ran (each test file's \`mod timed\`, host/tests/all and serving/tests/all)" >&2
    exit 1
fi
rm -f "$timed_log"
done_phase "timed tests, one at a time"
# mlperf_host.loadgen (host/python), built by pip as a user builds it, and pytest. Built
# after the test build, and then the test build must have nothing left to compile: pip's
# build (maturin, with its own PYO3_* variables and PATH) used to make cargo rebuild PyO3
# and the module (issue 51), and the next pip build undo it again.
bash scripts/setup-python.sh
rebuilt=$(cargo test --release --lib --bins --tests --examples --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"reason":"compiler-artifact".*"name":"\([^"]*\)".*"fresh":false.*/\1/p' | sort -u)
if [ -n "$rebuilt" ]; then
    echo "error: the test build compiled again after pip built the Python module:" $rebuilt >&2
    exit 1
fi
done_phase "Python module (pip), nothing rebuilt after it"
# The Python module's tests, against the official wheel where they compare.
pytest_status=0
.venv/bin/python -m pytest -q -p no:cacheprovider host/python/tests 2>&1 | tee -a "$log" || pytest_status=$?
if [ "$pytest_status" -eq 5 ]; then
    echo "pytest collected no tests in host/python/tests" >&2
    exit 1
elif [ "$pytest_status" -ne 0 ]; then
    exit "$pytest_status"
fi
done_phase "pytest"
print_timings
# One closing line for the whole run: cargo prints a result line per test binary, pytest
# one line for all of its tests.
awk '/^test result:/ { passed += $4; failed += $6 }
     /^[0-9]+ (passed|failed).* in [0-9.]+s/ { for (i = 2; i <= NF; i++) { if ($i ~ /^passed/) passed += $(i-1); if ($i ~ /^failed/) failed += $(i-1) } }
     END { printf "tests: %d passed, %d failed\n", passed, failed }' "$log"
