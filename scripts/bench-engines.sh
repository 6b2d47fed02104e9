#!/usr/bin/env bash
# The official engine's cost, measured in one binary with the same null SUT logic: each case
# through the official LoadGen 6.0.17 with a null SUT written in C++ against its own interfaces
# (official-cpp, the baseline), with mlperf-host's Rust null SUT (official), with the null
# plugin through the plugin ABI (official+plugin), and through the native engine (native).
# Rounds alternate the engines; the table gives each one's median and range, and the median
# ratio to the baseline.
#   ROUNDS=5 bash scripts/bench-engines.sh
# Server runs a ladder of target rates (SERVER_QPS, 5 s each) with a worker-thread SUT; a rate
# counts as reached when the run is VALID.
set -euo pipefail
cd "$(dirname "$0")/.."
export "$(bash scripts/setup-official-engine.sh | tail -n1)"
cargo build --release --quiet -p mlperf-host -p mlperf-plugin-null
ROUNDS="${ROUNDS:-3}"
SERVER_QPS="${SERVER_QPS:-200000 400000 600000 800000}"
B=./target/release/mlperf-host
PLUGIN="$PWD/target/release/libmlperf_plugin_null.so"
results="$(mktemp)"
trap 'rm -f "$results"' EXIT

# One case through one variant; appends a JSON line tagged with the variant's name.
measure() {
    local variant=$1 label=$2
    shift 2
    local engine=$variant extra=()
    if [[ $variant == official+plugin ]]; then engine=official; extra=(--plugin "$PLUGIN"); fi
    "$B" bench --json --engine "$engine" "${extra[@]}" "$@" |
        python3 -c 'import json,sys; r=json.loads(sys.stdin.read().splitlines()[-1]); r["variant"]=sys.argv[1]; r["label"]=sys.argv[2]; print(json.dumps(r))' "$variant" "$label" >>"$results"
}

variants=(official-cpp official official+plugin native)
for round in $(seq "$ROUNDS"); do
    echo "round $round/$ROUNDS" >&2
    for v in "${variants[@]}"; do
        measure "$v" "SingleStream, 1 M queries, inline" --case single-stream --queries 1000000
        measure "$v" "Offline, 5 M samples, inline" --case offline --samples 5000000
        for qps in $SERVER_QPS; do
            [[ $v == native ]] && continue
            measure "$v" "Server $qps qps, worker, 5 s" --case server --completion worker \
                --qps "$qps" --duration-ms 5000
        done
    done
done

python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
labels = list(dict.fromkeys(r["label"] for r in rows))
variants = list(dict.fromkeys(r["variant"] for r in rows))
print(f"{'case':<38} {'variant':<16} {'median':>12} {'range':>25} {'vs official-cpp':>16} valid")
for label in labels:
    base = [r["throughput_per_s"] for r in rows if r["label"] == label and r["variant"] == "official-cpp"]
    for variant in variants:
        got = [r for r in rows if r["label"] == label and r["variant"] == variant]
        if not got:
            continue
        values = [r["throughput_per_s"] for r in got]
        median = statistics.median(values)
        ratio = f"{median / statistics.median(base):.2f}x" if base else "-"
        valid = f"{sum(r['valid'] for r in got)}/{len(got)}"
        unit = "samples/s" if label.startswith("Offline") else "q/s"
        print(f"{label:<38} {variant:<16} {median:>12,.0f} {min(values):>11,.0f}-{max(values):>11,.0f} {ratio:>16} {valid} {unit}")
PY
