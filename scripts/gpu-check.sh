#!/usr/bin/env bash
# The GPU path on a machine with an NVIDIA GPU: the ONNX Runtime plugin's `cuda` provider, one
# instance per GPU (`--devices all`), the NVML power source, and `plugins test` on it.
#
#   bash scripts/gpu-check.sh            # short runs (10 s each): fits a 15-minute GPU lease
#   GPU_CHECK_FULL=1 bash scripts/gpu-check.sh   # mlperf.conf's durations (10 min a scenario)
#
# Installs the GPU build of ONNX Runtime and the CUDA libraries it loads from PyPI into
# .venv-gpu (onnxruntime-gpu[cuda,cudnn]; nothing from the system but the driver), builds the
# host and the plugin, prepares the resnet50 benchmark, then runs it on cuda:0 in every
# scenario with --power nvml:0 and --sample-timing on. Each run's folder is under
# out/gpu-check/; the summary table at the end (and out/gpu-check/summary.md) is what
# docs/performance.md quotes. Exits non-zero at the first step that fails.
set -euo pipefail
cd "$(dirname "$0")/.."
ORT_VERSION=1.31.1
OUT=out/gpu-check
mkdir -p "$OUT"

if ! command -v nvidia-smi > /dev/null; then
    echo "error: no nvidia-smi: this script needs an NVIDIA GPU and its driver" >&2
    exit 1
fi
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader >&2

[ -x .venv-gpu/bin/python ] || python3 -m venv .venv-gpu
if ! .venv-gpu/bin/python -c "import importlib.metadata as m, sys; sys.exit(m.version('onnxruntime-gpu') != '$ORT_VERSION')" 2>/dev/null; then
    echo "installing onnxruntime-gpu[cuda,cudnn]==$ORT_VERSION into .venv-gpu" >&2
    .venv-gpu/bin/python -m pip install --quiet --disable-pip-version-check \
        "onnxruntime-gpu[cuda,cudnn]==$ORT_VERSION" "nvidia-cublas~=13.0" >&2
fi
site=$(.venv-gpu/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
export ORT_DYLIB_PATH="$site/onnxruntime/capi/libonnxruntime.so.$ORT_VERSION"
# The CUDA provider library finds cudart, cublas and cudnn through the loader's path.
cuda_libs=$(find "$site/nvidia" -type d -name lib 2>/dev/null | paste -sd:)
export LD_LIBRARY_PATH="$cuda_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

export "$(bash scripts/setup-official-engine.sh | tail -n 1)"
cargo build --release -p mlperf-host -p mlperf-plugin-onnxruntime >&2
bash scripts/benchmarks/prepare.sh resnet50 images >&2

HOST=./target/release/mlperf-host
CUDA=(--benchmark resnet50-topology --plugin-set 'provider="cuda"' --devices all)
SHORT=()
if [ "${GPU_CHECK_FULL:-0}" != 1 ]; then
    SHORT=(--set min_duration_ms=10000 --set min_query_count=100)
fi

printf 'model = "data/resnet50/model.onnx"\nprovider = "cuda"\n' > "$OUT/cuda.toml"
"$HOST" plugins inspect onnxruntime --plugin-config "$OUT/cuda.toml" | tee "$OUT/inspect.txt" >&2
"$HOST" plugins test onnxruntime --dataset data/resnet50/inputs.npy \
    --plugin-set 'model="data/resnet50/model.onnx"' --plugin-set 'provider="cuda"' \
    --plugin-set workers=2 | tee "$OUT/plugins-test.txt" >&2

# A GPU serves far more than the CPU figures in the benchmark definition: ask for enough.
declare -A RATE=(
    [SingleStream]="--set single_stream_expected_latency_ns=2000000"
    [MultiStream]="--set multi_stream_expected_latency_ns=8000000"
    [Offline]="--set offline_expected_qps=4000 --plugin-set max_batch=64"
    [Server]="--set server_target_qps=1500 --set server_target_latency_ns=15000000 --plugin-set max_batch=16 --plugin-set workers=2"
)
{
    echo "| scenario | result | throughput | p99 latency | GPU power | compute at p99 | queue at p99 |"
    echo "|---|---|---|---|---|---|---|"
} > "$OUT/summary.md"
for scenario in SingleStream MultiStream Offline Server; do
    # shellcheck disable=SC2086 # RATE's words are separate flags
    "$HOST" run "${CUDA[@]}" --scenario "$scenario" ${RATE[$scenario]} "${SHORT[@]}" \
        --power nvml:0 --sample-timing on --out "$OUT/$scenario" -q
    .venv-gpu/bin/python - "$OUT/$scenario" "$scenario" >> "$OUT/summary.md" <<'EOF'
import json, sys
run, scenario = sys.argv[1], sys.argv[2]
result = json.load(open(f"{run}/result.json"))
perf = result["performance"]
valid = "VALID" if perf["validity"]["valid"] else "INVALID"
metric = f"{perf['samples_per_second']:.1f} samples/s"
p99 = next((ns for p, ns in perf["sample_latency"]["percentiles"] if p == 0.99), None)
sources = result.get("power", {}).get("sources", [])
watts = sources[0]["accounting"]["average_watts"] if sources else None
at99 = next((p for p in result.get("latency_breakdown", {}).get("percentiles", [])
             if p["percentile"] == 0.99), {})
ms = lambda ns: "" if ns is None else f"{ns / 1e6:.3f} ms"
print(f"| {scenario} | {valid} | {metric} | {ms(p99)} | {'' if watts is None else f'{watts:.1f} W'} "
      f"| {ms(at99.get('compute_ns'))} | {ms(at99.get('queue_ns'))} |")
EOF
done
cat "$OUT/summary.md"
