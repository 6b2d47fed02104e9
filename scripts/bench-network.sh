#!/usr/bin/env bash
# Is mlperf-host the bottleneck of a network run? MLServer serves data/digits/model.onnx
# (scripts/serve.sh) over HTTP; then, at the same concurrency:
#   wrk        posts the v2 JSON infer request of one digits sample as fast as the server
#              answers (closed loop), for DURATION seconds: the server's throughput;
#   mlperf-host  the Server scenario through the network plugin (JSON over HTTP): the highest
#              target qps that is VALID, found by bisection between 50 % and 110 % of wrk's
#              figure, each run DURATION seconds long with a latency bound of BOUND_MS.
# Prints both and their ratio (the target: mlperf-host reaches >= 95 % of wrk). The host, the
# server and wrk share this machine's cores, so mlperf-host runs with --issue-spin $ISSUE_SPIN
# (default 0: the issuing thread sleeps to each query's time instead of spinning the last
# 200 µs, leaving the core to the server).
# usage: [ISSUE_SPIN=200us] bash scripts/bench-network.sh [CONCURRENCY [DURATION [BOUND_MS]]]
#        (default 8 10 100)
# Needs wrk (Debian's package; installed here with apt-get when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
concurrency="${1:-8}" duration="${2:-10}" bound_ms="${3:-100}"
port_http=18780 port_grpc=18781 port_metrics=18782
out="$(mktemp -d)"
trap 'kill -- -$server_pid 2>/dev/null || true; rm -rf "$out"' EXIT

command -v wrk >/dev/null || apt-get install -y -q wrk >&2
bash scripts/setup-servers.sh
bash scripts/benchmarks/prepare.sh digits
cargo build --release --quiet -p mlperf-host -p mlperf-plugin-network

# The server in its own process group, so the trap stops all of it.
SERVE_DIR="$out/mlserver" setsid bash scripts/serve.sh mlserver digits \
    "$port_http" "$port_grpc" "$port_metrics" > "$out/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 240); do
    curl -sf "http://127.0.0.1:$port_http/v2/models/digits/ready" > /dev/null && break
    sleep 0.5
done
curl -sf "http://127.0.0.1:$port_http/v2/models/digits/ready" > /dev/null \
    || { cat "$out/server.log" >&2; echo "error: MLServer did not start" >&2; exit 1; }

# wrk's request: the first digits sample, as the network plugin sends it.
.venv/bin/python - "$out/post.lua" <<'PY'
import json, sys
import numpy as np
sample = np.load("data/digits/inputs.npy")[0].astype(np.float32)
body = json.dumps({"inputs": [{"name": "input", "shape": [1, 64], "datatype": "FP32",
                               "data": [float(v) for v in sample]}],
                   "outputs": [{"name": "label"}]}, separators=(",", ":"))
open(sys.argv[1], "w").write(
    'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
    f"wrk.body = {json.dumps(body)}\n")
PY

echo "== wrk: $concurrency connections, ${duration} s" >&2
wrk_rps=$(wrk -t1 -c"$concurrency" -d"${duration}s" -s "$out/post.lua" \
    "http://127.0.0.1:$port_http/v2/models/digits/infer" | tee /dev/stderr \
    | awk '/^Requests\/sec:/ { print $2 }')

# One Server run at $1 qps; prints VALID or INVALID.
server_run() {
    ./target/release/mlperf-host run --benchmark digits --scenario Server --plugin network \
        --plugin-set "endpoints=[\"127.0.0.1:$port_http\"]" --plugin-set 'model="digits"' \
        --plugin-set "concurrency=$concurrency" --set "server_target_qps=$1" \
        --issue-spin "${ISSUE_SPIN:-0}" \
        --set "min_duration_ms=$((duration * 1000))" --set min_query_count=100 \
        --set "server_target_latency_ns=$((bound_ms * 1000000))" --out "$out/run" 2> /dev/null \
        | awk '/^Result is/ { print $4 }'
}

lo=$(awk -v r="$wrk_rps" 'BEGIN { printf "%d", r * 0.5 }')
hi=$(awk -v r="$wrk_rps" 'BEGIN { printf "%d", r * 1.1 }')
[ "$(server_run "$lo")" = VALID ] || { echo "error: not VALID even at $lo qps" >&2; exit 1; }
while [ $((hi - lo)) -gt $((lo / 50 + 1)) ]; do
    mid=$(((lo + hi) / 2))
    result=$(server_run "$mid")
    echo "== mlperf-host Server at $mid qps: $result" >&2
    if [ "$result" = VALID ]; then lo=$mid; else hi=$mid; fi
done
printf 'wrk (closed loop, %s connections): %s requests/s\n' "$concurrency" "$wrk_rps"
printf 'mlperf-host Server, highest VALID target (concurrency %s, p99 bound %s ms, --issue-spin %s): %s qps\n' \
    "$concurrency" "$bound_ms" "${ISSUE_SPIN:-0}" "$lo"
awk -v a="$lo" -v b="$wrk_rps" 'BEGIN { printf "ratio: %.1f %%\n", 100 * a / b }'
