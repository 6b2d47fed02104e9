#!/usr/bin/env bash
# mlperf-host against a plain streaming client on the same LLM server (llama.cpp's OpenAI server
# serving smollm2, started here on a free port): the same prompts at the same Poisson request
# rate, median TTFT and TPOT of each and the CPU each spends per streamed token. See
# scripts/bench_llm.py. The server needs the cores it shares with the clients: run it on an
# otherwise idle machine.
# usage: bash scripts/bench-llm.sh [QPS [SECONDS [ROUNDS]]]   (default 1.5 60 1)
set -euo pipefail
cd "$(dirname "$0")/.."
qps="${1:-1.5}" seconds="${2:-60}" rounds="${3:-1}"
bash scripts/setup-llm.sh
bash scripts/benchmarks/prepare.sh smollm2 >&2
[ -x target/release/mlperf-host ] || cargo build --release -p mlperf-host -p mlperf-plugin-network
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
log="$(mktemp)"
setsid bash scripts/serve.sh llama smollm2 "$port" >"$log" 2>&1 &
server=$!
trap 'kill -- -"$server" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 240); do
    curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null && break
    kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.5
done
python3 scripts/bench_llm.py --port "$port" --qps "$qps" --seconds "$seconds" --rounds "$rounds"
