#!/usr/bin/env bash
# mlperf-host with the ONNX Runtime plugin against ONNX Runtime driven directly
# (plugins/onnxruntime/examples/direct.rs: the same library, model, .npy data and threads),
# alternating the two ROUNDS times so that a noisy machine hits both alike:
#   fmnist   Offline samples/s (2 workers, batches of 256) and SingleStream p50/p90 latency;
#   resnet50 Offline samples/s (inline, batches of 8, 2 intra-op threads) and SingleStream
#            p50/p90 (2 intra-op threads).
# Both sides read the same float32 inputs (data/<name>/inputs.npy; the host's benchmark
# preprocessing is turned off for them), and each host run writes a folder of its own and is
# read from its result.json.
# Direct Offline is every sample over the total time of all its passes, in order (no gather)
# and, for fmnist, also --shuffled (each batch gathered from samples in a random order);
# direct SingleStream goes through the samples in order and, for fmnist, also --shuffled (in a
# random order, as LoadGen issues them: a sample is then less often in cache).
# Prints each measurement, then the medians and the median of the rounds' host/direct ratios.
# usage: bash scripts/bench-onnxruntime.sh [ROUNDS] (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-5}"

export "$(bash scripts/setup-onnxruntime.sh | tail -n1)"
bash scripts/benchmarks/prepare.sh fmnist resnet50 >&2
cargo build --release --quiet -p mlperf-host -p mlperf-plugin-onnxruntime --example direct
direct=target/release/examples/direct
host=target/release/mlperf-host
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# Offline samples/s over all timed passes; SingleStream "p50 p90" in µs.
direct_offline() { "$direct" --mode offline "$@" | awk '/^pass/ {n += $3; t += $3 / $(NF-1)} END {printf "%.1f", n / t}'; }
direct_single() { "$direct" --mode single-stream "$@" | sed -n 's/.*p50 \([^,]*\), p90 \([^,]*\),.*/\1 \2/p' | awk '{print us($1), us($2)} function us(d) {return d ~ /ms$/ ? d * 1000 : d ~ /µs$/ ? d + 0 : d / 1000}'; }
# A host run in a folder of its own (no earlier run's files to read by mistake); prints the
# path of its result.json, or fails.
host_run() {
    local dir
    dir="$(mktemp -d -p "$out")"
    "$host" run --out "$dir" "$@" > "$dir/stdout" || { cat "$dir/stdout" >&2; return 1; }
    echo "$dir/result.json"
}
host_offline() {
    local result
    result="$(host_run --scenario Offline "$@")"
    python3 -c 'import json, sys; print("%.1f" % json.load(open(sys.argv[1]))["performance"]["samples_per_second"])' "$result"
}
host_single() {
    local result
    result="$(host_run --scenario SingleStream "$@")"
    python3 -c '
import json, sys
percentiles = dict(json.load(open(sys.argv[1]))["performance"]["sample_latency"]["percentiles"])
print(percentiles[0.5] / 1000, percentiles[0.9] / 1000)' "$result"
}

fm=(--model data/fmnist/model.onnx --inputs data/fmnist/inputs.npy --output label)
r50=(--model data/resnet50/model.onnx --inputs data/resnet50/inputs.npy --intra 2)
# The host reads the very inputs the direct runs read: the benchmark's own data set (photo
# crops, preprocessed at load) is set aside for resnet50's generated float32 inputs.
r50_host=(--benchmark resnet50-topology --dataset data/resnet50/inputs.npy --preprocess none)
for round in $(seq "$rounds"); do
    # Each figure is taken before it is printed, so a failed run stops the script.
    v="$(direct_offline "${fm[@]}" --batch 256 --workers 2 --passes 800)"; echo "fmnist-offline-direct $v"
    v="$(host_offline --benchmark fmnist --dataset data/fmnist/inputs.npy --preprocess none --set min_duration_ms=3000)"; echo "fmnist-offline-host $v"
    v="$(direct_offline "${fm[@]}" --batch 256 --workers 2 --passes 800 --shuffled)"; echo "fmnist-offline-direct-shuffled $v"
    v="$(direct_single "${fm[@]}" --passes 30)"; echo "fmnist-single-direct $v"
    v="$(host_single --benchmark fmnist --dataset data/fmnist/inputs.npy --preprocess none --set min_duration_ms=3000)"; echo "fmnist-single-host $v"
    v="$(direct_single "${fm[@]}" --passes 30 --shuffled)"; echo "fmnist-single-direct-shuffled $v"
    v="$(direct_offline "${r50[@]}" --batch 8 --workers 1 --passes 8)"; echo "resnet50-offline-direct $v"
    v="$(host_offline "${r50_host[@]}" --set min_duration_ms=8000 --set min_query_count=1)"; echo "resnet50-offline-host $v"
    v="$(direct_single "${r50[@]}" --passes 3)"; echo "resnet50-single-direct $v"
    v="$(host_single "${r50_host[@]}" --set min_duration_ms=4000 --set min_query_count=1)"; echo "resnet50-single-host $v"
    echo "round $round of $rounds done" >&2
done | tee "$out/all"

python3 - "$out/all" <<'PY'
import statistics, sys
values = {}
for line in open(sys.argv[1]):
    name, *numbers = line.split()
    values.setdefault(name, []).append([float(n) for n in numbers])
def line(label, name, k, unit):
    direct = [v[k] for v in values[f"{name}-direct"]]
    host = [v[k] for v in values[f"{name}-host"]]
    # Rounds alternate the two, so a round's ratio is the least disturbed by drift.
    ratio = statistics.median(h / d for h, d in zip(host, direct))
    print(f"{label}: direct {statistics.median(direct):,.2f}, mlperf-host "
          f"{statistics.median(host):,.2f} {unit} (medians); host/direct by round: "
          f"median {ratio - 1:+.1%}")
print()
for bench in ("fmnist", "resnet50"):
    line(f"{bench} Offline", f"{bench}-offline", 0, "samples/s")
    line(f"{bench} SingleStream p50", f"{bench}-single", 0, "µs")
    line(f"{bench} SingleStream p90", f"{bench}-single", 1, "µs")
shuffled = statistics.median(v[0] for v in values["fmnist-offline-direct-shuffled"])
print(f"fmnist Offline, direct gathering random batches: {shuffled:,.2f} samples/s")
p50, p90 = (statistics.median(v[k] for v in values["fmnist-single-direct-shuffled"]) for k in (0, 1))
print(f"fmnist SingleStream, direct in a random order: p50 {p50:,.2f} µs, p90 {p90:,.2f} µs")
PY
