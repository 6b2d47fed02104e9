#!/usr/bin/env bash
# mlperf-host's LLM-serving client (`mlperf-host sweep`, the network plugin's OpenAI protocol)
# against two LLM benchmarking clients from PyPI, NVIDIA AIPerf 0.13.0 and GuideLLM 0.8.1
# (installed here, pinned, into .venv-peers), in two parts:
#   1. Same load, same real server: llama.cpp's OpenAI server serving SmolLM2-135M
#      (scripts/serve.sh llama smollm2, started here on a free port), the smollm2 benchmark's 256
#      prompts (configs/benchmarks/smollm2/prompts.json) as chat completions, streamed,
#      max_tokens 32, temperature 0, seed 0, every tool sending them in order from the first. Closed-loop concurrency POINTS, each point measured
#      for DURATION s after a WARMUP s warm-up; the tools take turns (mlperf-host, aiperf,
#      guidellm in round 1, aiperf first in round 2, guidellm first in round 3, ...) for ROUNDS
#      rounds. Per tool and point, the median over the
#      rounds of what each tool reports: requests/s, output tokens/s, TTFT p50 and p90, TPOT p50
#      (AIPerf's and GuideLLM's inter-token latency: (e2e - TTFT) / (tokens - 1) per request,
#      LoadGen's TPOT), and each peer's ratio to mlperf-host.
#   2. Client ceiling: plugins/network/examples/instant_sse.rs, an OpenAI server that answers at
#      once (CEILING_TOKENS tokens per request, one event each, RESPONDER_THREADS thread(s)),
#      driven by each client at closed-loop concurrency CEILING_CONCURRENCY for DURATION_CEILING
#      s after WARMUP_CEILING s: requests/s and tokens/s as the responder counted them, the CPU
#      time the client's whole process tree spent per streamed token (from /proc, over a window
#      inside the measured phase), and the cores the client and the responder used (a responder
#      near RESPONDER_THREADS cores was the limit, not the client). With taskset and enough
#      cores, the responder runs on core 0 (0..RESPONDER_THREADS-1) and the client on the next.
#   1b. Same load, a responder of known timing: instant_sse paced (--first-token-ms
#      PACED_FIRST_TOKEN_MS, --token-gap-ms PACED_TOKEN_GAP_MS, PACED_TOKENS tokens, the same for
#      every request however many are in flight), closed-loop PACED_POINTS, DURATION_PACED s
#      after WARMUP_PACED s, ROUNDS_PACED rounds: what part 1 compares, without a server whose
#      own speed drifts between runs, so that what is left is what each client measures.
# Markdown tables, with the exact commands run, go to stdout and to OUT.md; messages to stderr.
# The server and the clients share the machine's cores: run it on an otherwise idle machine.
# usage: bash scripts/bench-serving.sh [OUT.md]   (default /tmp/bench-serving.md)
# Environment (defaults): DURATION=60 WARMUP=5 POINTS="1 2" ROUNDS=3 DURATION_CEILING=20
#   WARMUP_CEILING=2 CEILING_CONCURRENCY=64 CEILING_TOKENS=16 ROUNDS_CEILING=$ROUNDS
#   RESPONDER_THREADS=1 PEERS_VENV=.venv-peers (where AIPerf and GuideLLM are installed)
#   AIPERF_ARGS="" (more AIPerf options for every run: with "--request-rate 1000
#   --arrival-pattern constant" its timing manager paces at 1 kHz instead of busy-polling a core
#   while every concurrency slot is taken, which starves a server on a small machine)
#   PIN_SERVER=1 runs part 1's server with one thread on core 1 and each client on core 0
#   (taskset), so that no client's CPU is taken from the server (unpinned, a busier client
#   slows the server it measures)
#   HANG_LIMIT=120: a part-1 run still going this many seconds after its point should have
#   ended is killed and run once more, and named in the report (GuideLLM 0.8.1 once hung after
#   its last request)
#   REQUESTS=N (0: off): part 1 measures each point over exactly N requests instead of DURATION
#   s: every tool sends the first N prompts in order, with no warm-up (the server is warmed
#   once before round 1 with WARMUP_REQUESTS=8 requests), so that every tool's percentiles are
#   over the same requests (DURATION is then the longest a point may take)
#   PARTS="llama paced ceiling": the parts run (1, 1b, 2); PACED_POINTS="1 8"
#   DURATION_PACED=20 WARMUP_PACED=2 ROUNDS_PACED=$ROUNDS PACED_TOKENS=16
#   PACED_FIRST_TOKEN_MS=100 PACED_TOKEN_GAP_MS=10
#   KEEP_TMP=1 keeps the temporary folder (each tool's output and log) instead of removing it.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
out_md="${1:-/tmp/bench-serving.md}"
DURATION="${DURATION:-60}"
HANG_LIMIT="${HANG_LIMIT:-120}"
REQUESTS="${REQUESTS:-0}"
PARTS="${PARTS:-llama paced ceiling}"
PACED_POINTS="${PACED_POINTS:-1 8}"
DURATION_PACED="${DURATION_PACED:-20}"
WARMUP_PACED="${WARMUP_PACED:-2}"
PACED_TOKENS="${PACED_TOKENS:-16}"
PACED_FIRST_TOKEN_MS="${PACED_FIRST_TOKEN_MS:-100}"
PACED_TOKEN_GAP_MS="${PACED_TOKEN_GAP_MS:-10}"
WARMUP_REQUESTS="${WARMUP_REQUESTS:-8}"
WARMUP="${WARMUP:-5}"
POINTS="${POINTS:-1 2}"
ROUNDS="${ROUNDS:-3}"
DURATION_CEILING="${DURATION_CEILING:-20}"
WARMUP_CEILING="${WARMUP_CEILING:-2}"
CEILING_CONCURRENCY="${CEILING_CONCURRENCY:-64}"
CEILING_TOKENS="${CEILING_TOKENS:-16}"
ROUNDS_CEILING="${ROUNDS_CEILING:-$ROUNDS}"
ROUNDS_PACED="${ROUNDS_PACED:-$ROUNDS}"
RESPONDER_THREADS="${RESPONDER_THREADS:-1}"
PIN_SERVER="${PIN_SERVER:-0}"
venv="${PEERS_VENV:-.venv-peers}"
PINS=(aiperf==0.13.0 guidellm==0.8.1)
MAX_TOKENS=32 # configs/benchmarks/smollm2.toml
TOOLS=(mlperf-host aiperf guidellm)
read -r -a aiperf_args <<<"${AIPERF_ARGS:-}"
[[ "$REQUESTS" =~ ^[0-9]+$ ]] || { echo "error: REQUESTS '$REQUESTS' is not a whole number" >&2; exit 2; }
for part in $PARTS; do
    [[ "$part" =~ ^(llama|paced|ceiling)$ ]] || { echo "error: PARTS: '$part' is not llama, paced or ceiling" >&2; exit 2; }
done
has_part() { [[ " $PARTS " == *" $1 "* ]]; }
for n in "$PACED_FIRST_TOKEN_MS" "$PACED_TOKEN_GAP_MS"; do
    [[ "$n" =~ ^[0-9]+$ ]] || { echo "error: '$n' is not a whole number of ms" >&2; exit 2; }
done
for n in $PACED_POINTS "$DURATION_PACED" "$WARMUP_PACED" "$ROUNDS_PACED" "$PACED_TOKENS" \
    "$WARMUP_REQUESTS" "$DURATION" "$WARMUP" "$ROUNDS" "$HANG_LIMIT" "$DURATION_CEILING" "$WARMUP_CEILING" \
    "$CEILING_CONCURRENCY" "$CEILING_TOKENS" "$ROUNDS_CEILING" "$RESPONDER_THREADS" $POINTS; do
    [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "error: '$n' is not a whole number of at least 1" >&2; exit 2; }
done
# The window the client-ceiling CPU is read over starts 0.5 s into the measured phase and ends
# 0.5 s before its end.
[ "$DURATION_CEILING" -ge 2 ] || { echo "error: DURATION_CEILING must be at least 2" >&2; exit 2; }
log() { echo "bench-serving: $*" >&2; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/bench-serving.XXXXXX")"
# What the tools leave in the temporary folder (AIPerf's memory-mapped data sets) goes with it.
export TMPDIR="$tmp"
servers=()
cleanup() {
    for pid in "${servers[@]}"; do
        kill -- -"$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
    done
    if [ "${KEEP_TMP:-0}" = 1 ]; then
        log "kept $tmp"
    else
        rm -rf "$tmp"
    fi
}
trap cleanup EXIT

# --- AIPerf and GuideLLM, pinned, in their own environment (idempotent) ---
has_pins() {
    "$venv/bin/python" - "${PINS[@]}" 2>/dev/null <<'PY'
import importlib.metadata as m, sys
sys.exit(any(m.version(n) != v for n, v in (p.split("==") for p in sys.argv[1:])))
PY
}
if has_pins; then
    log "$venv ready (${PINS[*]})"
else
    log "installing ${PINS[*]} into $venv from PyPI (GuideLLM needs torch: several GB)"
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${PINS[@]}" >&2
    has_pins || { echo "error: $venv lacks ${PINS[*]}" >&2; exit 1; }
fi

# --- mlperf-host, the network plugin, the instant responder, the benchmark's data ---
export "$(bash scripts/setup-official-engine.sh | tail -n 1)"
# The example first: building it can rebuild the plugin's library with the example's
# dependencies' features; the plain build after it leaves the plugin as `run` and `sweep` load it.
cargo build --release -p mlperf-plugin-network --example instant_sse >&2
cargo build --release -p mlperf-host -p mlperf-plugin-network >&2
bash scripts/benchmarks/prepare.sh smollm2 >&2
exe="$root/target/release/mlperf-host"
responder="$root/target/release/examples/instant_sse"

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# Waits for GET /v1/models on the port while the server's process lives.
wait_ready() {
    local port="$1" pid="$2" log_file="$3"
    for _ in $(seq 480); do
        curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null && return 0
        kill -0 "$pid" 2>/dev/null || { cat "$log_file" >&2; exit 1; }
        sleep 0.5
    done
    echo "error: no answer on 127.0.0.1:$port/v1/models" >&2
    cat "$log_file" >&2
    exit 1
}

# --- The helpers: inputs, the ceiling's measurement, parsing each tool's output, the report ---
cat >"$tmp/helper.py" <<'PY'
"""bench-serving.sh's helper: inputs, the client-ceiling measurement, each tool's figures, the
report. Standard library only."""
import json, math, os, statistics, subprocess, sys, time, urllib.request


def inputs(prompts_json, out, rows):
    """The prompts as AIPerf (single_turn JSONL, "text") and GuideLLM (JSONL, a "messages" column,
    sent as is: a "prompt" column would become a list of content parts, which llama.cpp's chat
    template rejects) read them; GuideLLM's file repeats them, as it stops when its data runs out."""
    prompts = json.load(open(prompts_json))
    with open(f"{out}/prompts-aiperf.jsonl", "w") as f:
        for p in prompts:
            f.write(json.dumps({"text": p}) + "\n")
    with open(f"{out}/prompts-guidellm.jsonl", "w") as f:
        for _ in range(max(1, math.ceil(rows / len(prompts)))):
            for p in prompts:
                f.write(json.dumps({"messages": [{"role": "user", "content": p}]}) + "\n")


class Client:
    """A client's process: os.wait4 reaps it, for its CPU time with its reaped children's."""

    def __init__(self, command):
        # A session of its own: a client that hangs is killed with every process it started.
        self.pid = subprocess.Popen(command, start_new_session=True).pid
        self.done = None

    def running(self):
        if self.done is None:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG)
            if pid:
                self.done = (status, usage)
        return self.done is None

    def wait(self):
        """Its exit code and CPU seconds (user + system, its descendants' included)."""
        if self.done is None:
            _, status, usage = os.wait4(self.pid, 0)
            self.done = (status, usage)
        status, usage = self.done
        return os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime


def stats(url):
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def tree_cpu(root):
    """CPU seconds (user + system, with reaped children's) of a process and its descendants."""
    children, cpu = {}, {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(name))
        cpu[int(name)] = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0)
        todo += children.get(pid, [])
    return total / os.sysconf("SC_CLK_TCK")


def own_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    fields = text[text.rindex(")") + 2:].split()
    return sum(int(x) for x in fields[11:13]) / os.sysconf("SC_CLK_TCK")


def measure(url, responder, warmup, duration, out, *command):
    """Runs a client against the instant responder. Its load starts with the responder's first
    token; the window runs from 0.5 s after its warm-up to 0.5 s before its end. Over the window:
    the responder's requests and tokens, the client tree's and the responder's CPU."""
    base = stats(url)["tokens"]
    started = time.monotonic()
    client = Client(command)
    load = None
    while client.running():
        if stats(url)["tokens"] > base:
            load = time.monotonic()
            break
        time.sleep(0.02)
    result = {"steady": False}
    if load is not None:
        def snapshot():
            s = stats(url)
            return (time.monotonic(), s["requests"], s["tokens"], tree_cpu(client.pid),
                    own_cpu(responder))
        time.sleep(max(0.0, load + warmup + 0.5 - time.monotonic()))
        a = snapshot()
        time.sleep(max(0.0, load + warmup + duration - 0.5 - time.monotonic()))
        b = snapshot()
        time.sleep(0.2)
        still = client.running() and stats(url)["tokens"] > b[2]
        seconds = b[0] - a[0]
        result = {"window_s": seconds, "requests": b[1] - a[1], "tokens": b[2] - a[2],
                  "client_cpu_s": b[3] - a[3], "responder_cpu_s": b[4] - a[4],
                  "steady": still, "load_to_window_s": a[0] - load}
    rc, cpu = client.wait()
    result.update(rc=rc, wall_s=time.monotonic() - started, client_total_cpu_s=cpu)
    json.dump(result, open(out, "w"))
    sys.exit(result["rc"])


def run(out, limit_s, *command):
    """Runs a client, sampling its process tree's CPU time 4 times a second; one still running
    after limit_s seconds is killed with its processes (exit code 124)."""
    started = time.time()
    client = Client(command)
    series = []
    hung = False
    while client.running():
        if time.time() - started > float(limit_s):
            hung = True
            try:
                os.killpg(client.pid, 9)
            except ProcessLookupError:
                pass
            break
        series.append((time.time(), tree_cpu(client.pid)))
        time.sleep(0.25)
    rc, cpu = client.wait()
    rc = 124 if hung else rc
    series.append((time.time(), cpu))
    result = {"rc": rc, "start": started, "end": series[-1][0], "client_total_cpu_s": cpu,
              "series": series}
    json.dump(result, open(out, "w"))
    sys.exit(result["rc"])


def cpu_at(series, t):
    """The sampled CPU time at wall time t, interpolated."""
    for (t0, c0), (t1, c1) in zip(series, series[1:]):
        if t0 <= t <= t1:
            return c0 + (c1 - c0) * (t - t0) / (t1 - t0) if t1 > t0 else c1
    return None


def rank(values, p):
    """LoadGen's percentile (mlperf-host's): element floor(p * n) of the sorted values."""
    v = sorted(values)
    return v[min(len(v) - 1, int(p * len(v)))] if v else None


def per_request(tool, folder):
    """The TTFTs and TPOTs (ms) of the requests a tool's figures count (answered, in its
    measured phase), from its per-request export."""
    if tool == "mlperf-host":
        rows = [json.loads(line) for line in open(f"{folder}/point-1-requests.jsonl")]
        rows = [r for r in rows if r["in_window"] and not r["failed"] and r["e2e_ns"] is not None]
        ttft = [r["ttft_ns"] / 1e6 for r in rows if r["ttft_ns"] is not None]
        tpot = [r["tpot_ns"] / 1e6 for r in rows if r["tpot_ns"] is not None]
    elif tool == "aiperf":
        rows = [json.loads(line) for line in open(f"{folder}/profile_export.jsonl")]
        rows = [r["metrics"] for r in rows
                if r["metadata"]["benchmark_phase"] == "profiling" and not r.get("error")]
        ttft = [m["time_to_first_token"]["value"] for m in rows if "time_to_first_token" in m]
        tpot = [m["inter_token_latency"]["value"] for m in rows if "inter_token_latency" in m]
    else:
        b = json.load(open(f"{folder}/benchmarks.json"))["benchmarks"][0]
        # Its list holds its warm-up's requests too; it counts those ending after its start.
        rows = [q for q in b["requests"]["successful"] if q["request_end_time"] >= b["start_time"]]
        ttft = [q["time_to_first_token_ms"] for q in rows if q.get("time_to_first_token_ms") is not None]
        tpot = [q["inter_token_latency_ms"] for q in rows if q.get("inter_token_latency_ms") is not None]
    return ttft, tpot


def parse(tool, folder, expected_s, warmup_s, series_path, requests="0"):
    """What a tool reports for its one point: requests/s, output tokens/s, tokens per request,
    TTFT p50/p90 and TPOT p50 (ms), and the completed requests and the seconds they count over;
    beside them (*_rank, part 1), the same percentiles recomputed by one rule from each
    request's figures as the tool exported them."""
    sampled = json.load(open(series_path)) if series_path != "-" else None
    if tool == "mlperf-host":
        p = json.load(open(f"{folder}/sweep.json"))["points"][0]
        # It loads from its first second on: its measured phase starts WARMUP s later.
        window = (sampled["start"] + float(warmup_s) + 0.5,
                  sampled["start"] + float(warmup_s) + p["window_s"] - 0.5) if sampled else None
        if window and window[1] <= window[0]:
            window = None  # too short to read its CPU over
        r = {"rps": p["requests_per_s"], "tps": p["output_tokens_per_s"],
             "tok_per_req": p["output_tokens"]["mean"], "ttft_p50": p["ttft_ns"]["p50"] / 1e6,
             "ttft_p90": p["ttft_ns"]["p90"] / 1e6, "tpot_p50": p["tpot_ns"]["p50"] / 1e6,
             "completed": p["completed"], "seconds": p["window_s"], "verdict": p["result"]}
    elif tool == "aiperf":
        a = json.load(open(f"{folder}/profile_export_aiperf.json"))
        from datetime import datetime  # its start and end are local times
        window = (datetime.fromisoformat(a["start_time"]).timestamp(),
                  datetime.fromisoformat(a["end_time"]).timestamp())
        r = {"rps": a["request_throughput"]["avg"], "tps": a["output_token_throughput"]["avg"],
             "tok_per_req": a["output_sequence_length"]["avg"],
             "ttft_p50": a["time_to_first_token"]["p50"],
             "ttft_p90": a["time_to_first_token"]["p90"],
             "tpot_p50": a["inter_token_latency"]["p50"],
             "completed": a["request_count"]["avg"], "seconds": a["benchmark_duration"]["avg"],
             "errors": a.get("error_summary") or []}
    else:
        b = json.load(open(f"{folder}/benchmarks.json"))["benchmarks"][0]
        m = b["metrics"]
        window = (b["start_time"], b["end_time"])
        ok = lambda name: m[name]["successful"]
        r = {"rps": ok("requests_per_second")["mean"], "tps": ok("output_tokens_per_second")["mean"],
             "tok_per_req": ok("output_token_count")["mean"],
             "ttft_p50": ok("time_to_first_token_ms")["percentiles"]["p50"],
             "ttft_p90": ok("time_to_first_token_ms")["percentiles"]["p90"],
             "tpot_p50": ok("inter_token_latency_ms")["percentiles"]["p50"],
             "completed": m["request_totals"]["successful"], "seconds": b["duration"],
             "errors": m["request_totals"]["errored"]}
    # The client's process tree's CPU over its own measured phase, in cores.
    if sampled and window:
        lo, hi = (cpu_at(sampled["series"], t) for t in window)
        r["client_cores"] = (hi - lo) / (window[1] - window[0]) if None not in (lo, hi) else None
        r["client_total_cpu_s"] = sampled["client_total_cpu_s"]
        r["wall_s"] = sampled["end"] - sampled["start"]
    if not r["completed"]:
        r.update(rps=None, tps=None, tok_per_req=None, ttft_p50=None, ttft_p90=None,
                 tpot_p50=None)
    if r.get("verdict", "VALID") != "VALID":
        print(f"warning: {tool}'s point is {r['verdict']} (in {folder})", file=sys.stderr)
    if series_path != "-":
        ttft, tpot = per_request(tool, folder)
        r.update(ttft_p50_rank=rank(ttft, 0.5), ttft_p90_rank=rank(ttft, 0.9),
                 tpot_p50_rank=rank(tpot, 0.5), counted_rank=len(ttft))
    if int(requests):
        if r["completed"] != int(requests):
            print(f"warning: {tool} counted {r['completed']} requests of {requests} "
                  f"(in {folder})", file=sys.stderr)
    elif r["seconds"] < 0.9 * float(expected_s):
        print(f"warning: {tool} measured {r['seconds']:.1f} s of {expected_s} s "
              f"(in {folder})", file=sys.stderr)
    if r.get("errors"):
        print(f"warning: {tool} had errors: {r['errors']} (in {folder})", file=sys.stderr)
    print(json.dumps(r))


def fmt(value, digits=None):
    if value is None:
        return "n/a"
    if digits is None:
        digits = 0 if abs(value) >= 1000 else 1 if abs(value) >= 100 else 2 if abs(value) >= 1 else 3
    return f"{value:,.{digits}f}"


def median(rows, key):
    values = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(values) if values else None


def report(results_path, settings_path, commands_path):
    s = json.load(open(settings_path))
    rows = [json.loads(line) for line in open(results_path)]
    tools = ["mlperf-host", "aiperf", "guidellm"]
    names = {"mlperf-host": "mlperf-host", "aiperf": f"AIPerf {s['aiperf']}",
             "guidellm": f"GuideLLM {s['guidellm']}"}
    out = ["# LLM-serving clients: mlperf-host, AIPerf, GuideLLM", ""]
    out.append(f"Host: {s['host']}; load average {s['load_before']} before, "
               f"{s['load_after']} after. mlperf-host {s['commit']}.")
    out.append("")
    def latency_tables(part, points):
        """The medians of each tool's figures per point, each peer's ratio to mlperf-host's, and
        the same percentiles recomputed by one rule."""
        lines = [
                "| concurrency | client | requests/s | output tokens/s | tokens/request | "
                "TTFT p50 ms | TTFT p90 ms | TPOT p50 ms | client cores | runs |",
                "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        keys = ["rps", "tps", "tok_per_req", "ttft_p50", "ttft_p90", "tpot_p50"]
        rank_keys = ["ttft_p50_rank", "ttft_p90_rank", "tpot_p50_rank"]
        # Each tool's medians per point, over its rounds, for all three tables.
        medians, counts = {}, {}
        for point in points:
            for tool in tools:
                runs = [r for r in part if r["tool"] == tool and r["point"] == point]
                if runs:
                    medians[(point, tool)] = {
                        k: median(runs, k)
                        for k in keys + rank_keys + ["client_cores", "counted_rank"]}
                    counts[(point, tool)] = len(runs)
        for point in points:
            for tool in tools:
                med = medians.get((point, tool))
                if not med:
                    continue
                lines.append(f"| {point} | {names[tool]} | " + " | ".join(fmt(med[k]) for k in keys)
                           + f" | {fmt(med['client_cores'], 2)} | {counts[(point, tool)]} |")
        lines += ["", "Ratio of each peer's median to mlperf-host's (1.00: the same):", "",
                "| concurrency | client | requests/s | output tokens/s | tokens/request | "
                "TTFT p50 | TTFT p90 | TPOT p50 |", "|---:|---|---:|---:|---:|---:|---:|---:|"]
        for point in points:
            base = medians.get((point, "mlperf-host"))
            for tool in tools[1:]:
                med = medians.get((point, tool))
                if not base or not med:
                    continue
                ratios = [fmt(med[k] / base[k], 2) if med[k] and base[k] else "n/a" for k in keys]
                lines.append(f"| {point} | {names[tool]} | " + " | ".join(ratios) + " |")
        lines += ["", "The same percentiles recomputed by one rule, LoadGen's (element floor(p * n) of "
                "the sorted values), from each request's figures as the tool exported them "
                "(mlperf-host: point-1-requests.jsonl of --export-requests; AIPerf: "
                "profile_export.jsonl, its profiling phase; GuideLLM: benchmarks.json's successful "
                "requests ending after its start), so that the tools' own percentile rules "
                "(interpolating or not) do not count in the comparison; medians over the rounds, "
                "and each peer's ratio to mlperf-host:", "",
                "| concurrency | client | requests counted | TTFT p50 ms | TTFT p90 ms | TPOT p50 ms "
                "| ratio TTFT p50 | ratio TTFT p90 | ratio TPOT p50 |",
                "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
        for point in points:
            base = medians.get((point, "mlperf-host"))
            for tool in tools:
                med = medians.get((point, tool))
                if not med:
                    continue
                ratios = [fmt(med[k] / base[k], 2) if base and med[k] and base[k] else "n/a"
                          for k in rank_keys]
                lines.append(f"| {point} | {names[tool]} | {fmt(med['counted_rank'], 0)} | "
                           + " | ".join(fmt(med[k]) for k in rank_keys) + " | "
                           + " | ".join(ratios) + " |")
        return lines

    def every_run(part):
        lines = ["", "Every run: requests/s, TTFT p50 and TPOT p50 (ms), the requests the tool "
                "counted and over how many seconds, the client's CPU time over its whole run "
                "(start-up included) and that run's wall time:", "", "```"]
        for r in part:
            lines.append(f"round {r['round']} c={r['point']:<3} {r['tool']:<11} {fmt(r['rps']):>7} "
                       f"req/s  TTFT {fmt(r['ttft_p50']):>7}  TPOT {fmt(r['tpot_p50']):>6}  "
                       f"{r['completed']:.0f} req / {r['seconds']:.1f} s  "
                       f"CPU {r.get('client_total_cpu_s', 0):.1f} s / {r.get('wall_s', 0):.0f} s")
        lines.append("```")
        return lines

    part1 = [r for r in rows if r["part"] == 1]
    if part1:
        out += [f"## 1. Same load on llama.cpp's server (SmolLM2-135M), median of {s['rounds']} "
                f"round(s)", "",
                f"llama-cpp-python {s['llama']} on 127.0.0.1 ({s['server_pinning']}). The 256 prompts of configs/benchmarks/smollm2/prompts.json, chat "
                f"completions streamed, max_tokens {s['max_tokens']}, temperature 0, seed 0; "
                + (f"closed loop, each point exactly {s['requests']} requests, the file's first "
                   f"{s['requests']} prompts, with no warm-up (the server was warmed once before "
                   f"round 1 with {s['warmup_requests']} requests); the "
                   if s["requests"] else
                   f"closed loop, each point {s['duration']} s after a {s['warmup']} s warm-up; the ")
                + "tools take turns within each round. Each figure is the tool's own (requests/s: "
                "its completed requests over its measured seconds). TPOT: mlperf-host's TPOT, "
                "AIPerf's and GuideLLM's inter-token latency (each (e2e - TTFT) / (tokens - 1) per "
                "request). Client cores: the CPU time of the client's whole process tree over the "
                "tool's measured phase (sampled 4 times a second from /proc), per second (unpinned: "
                "CPU the server, on the same 2 cores, did not get).", ""]
        out += latency_tables(part1, s["points"])
        if s["hung"]:
            out += ["", f"Killed and run again, having outlived the point by more than "
                    f"{s['hang_limit']} s (the tool hung after its last request): "
                    + "; ".join(s["hung"]) + "."]
        out += every_run(part1)

    part3 = [r for r in rows if r["part"] == 3]
    if part3:
        out += ["", f"## 1b. Same load on a responder of known timing, median of "
                f"{s['rounds_paced']} round(s)", "",
                f"plugins/network/examples/instant_sse.rs paced (--first-token-ms "
                f"{s['paced_first_token_ms']} --token-gap-ms {s['paced_token_gap_ms']}): each "
                f"request's first token {s['paced_first_token_ms']} ms after the responder read "
                f"it, each later one {s['paced_token_gap_ms']} ms after the one before, "
                f"{s['paced_tokens']} tokens, the same however many are in flight. {s['pinning']} "
                f"Closed loop, each point {s['duration_paced']} s after a {s['warmup_paced']} s "
                "warm-up; the tools take turns, a different one first in each round. The "
                "server's timing is fixed, so what differs between the tools is what each "
                "measures of it: its own overhead (sending, reading the stream, its clock) and "
                "its rules. Token counts from the responder's usage (AIPerf: "
                "--use-server-token-count; GuideLLM counts one per event).", ""]
        out += latency_tables(part3, s["paced_points"])
        out += every_run(part3)

    part2 = [r for r in rows if r["part"] == 2]
    if part2:
        out += ["", f"## 2. Client ceiling: an instant responder, median of {s['rounds_ceiling']} "
                f"round(s)", "",
                f"plugins/network/examples/instant_sse.rs ({s['responder_threads']} thread(s)) answers "
                f"every request at once: {s['ceiling_tokens']} tokens, one SSE event each (written "
                f"one by one), usage last. Closed loop at concurrency {s['ceiling_concurrency']}, "
                f"{s['duration_ceiling']} s after a {s['warmup_ceiling']} s warm-up. {s['pinning']} "
                "Requests/s and tokens/s are the responder's counts over a window inside each measured "
                "phase (from 0.5 s after its start to 0.5 s before its end); CPU is the client's whole "
                "process tree (every worker process) and the responder's, from /proc over the same "
                "window; cores = CPU seconds per second. All three clients take the token counts from "
                "the responder's usage (AIPerf: --use-server-token-count), none tokenizes the answers.",
                "", "| client | requests/s | streamed tokens/s | client CPU µs/token | client cores | "
                "responder cores | client's own requests/s | client CPU s, whole run | runs |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for tool in tools:
            runs = [r for r in part2 if r["tool"] == tool and r.get("window_s")]
            if not runs:
                continue
            for r in runs:
                w = r["window_s"]
                r.update(w_rps=r["requests"] / w, w_tps=r["tokens"] / w,
                         us_per_token=1e6 * r["client_cpu_s"] / r["tokens"] if r["tokens"] else None,
                         client_cores=r["client_cpu_s"] / w, responder_cores=r["responder_cpu_s"] / w)
            cols = ["w_rps", "w_tps", "us_per_token", "client_cores", "responder_cores", "rps",
                    "client_total_cpu_s"]
            med = {k: median(runs, k) for k in cols}
            steady = "" if all(r["steady"] for r in runs) else " (load had stopped before a window's end)"
            out.append(f"| {names[tool]} | " + " | ".join(
                fmt(med[k], 2 if k.endswith("cores") else None) for k in cols)
                + f" | {len(runs)}{steady} |")
    out += ["", "## How the tools count", "",
            "- Output tokens on llama.cpp (whose streams carry no usage): mlperf-host and AIPerf "
            "encode each answer's text with the model's tokenizer (data/smollm2/tokenizer.json; "
            "AIPerf loads it as local/smollm2); GuideLLM counts one token per streamed event "
            "with text. On the responder all three take its usage event.",
            "- max_tokens: sent as `max_tokens` by all three (AIPerf: --extra-inputs; GuideLLM: "
            "extras.body), since llama-cpp-python 0.3.36 ignores the `max_completion_tokens` "
            "that AIPerf's --osl and GuideLLM's max_tokens send.",
            "- Measured phase: mlperf-host counts the requests that complete in its window; "
            "AIPerf stops sending after --benchmark-duration and counts the requests still in "
            "flight that end within its grace period (its duration includes them); GuideLLM's "
            "max_duration includes its warm-up, and it cancels, without counting, the requests "
            "in flight at its end. AIPerf waits for its warm-up's requests before measuring."
            + (" This run's points were request counts instead: mlperf-host --max-requests "
               "(its window then lasts until the last answer), AIPerf --request-count, "
               "GuideLLM's max_requests constraint; each counts every request it sent."
               if s["requests"] else ""),
            "- AIPerf 0.13.0's timing manager polls in a loop while every concurrency slot is "
            "taken (closed loop, no --request-rate): about one core for as long as requests are "
            "in flight, counted in its client cores; AIPERF_ARGS=\"--request-rate 1000 "
            "--arrival-pattern constant\" paces it instead." + (
                f" This run's AIPerf options: {s['aiperf_args']}." if s["aiperf_args"] else ""),
            "- GuideLLM stops when its data runs out, so its prompts file repeats the 256 "
            "prompts; each chat message is sent as a plain string by all three.",
            "- Prompt order: all three send the prompts in the file's order from the first, "
            "warm-up included (AIPerf: --dataset-sampling-strategy sequential; its default for "
            "this data set shuffles), so each point's requests are the same ones for every tool.",
            "", "## Commands", "",
            "Round 1's, as run ($T: the run's temporary folder, removed at the end; "
            "prompts-aiperf.jsonl: {\"text\": prompt} per line; prompts-guidellm.jsonl: "
            "{\"messages\": [{\"role\": \"user\", \"content\": prompt}]} per line, the 256 "
            "prompts repeated; HF_HUB_CACHE=$T/hf/hub holds the tokenizer as local/smollm2, "
            "HF_HUB_OFFLINE=1):", "", "```sh"]
    out += [line.rstrip("\n").replace(s["tmp"], "$T").replace(s["root"] + "/", "./")
            for line in open(commands_path)]
    out += ["```", ""]
    print("\n".join(out))


if __name__ == "__main__":
    {"inputs": lambda a: inputs(a[0], a[1], int(a[2])),
     "measure": lambda a: measure(a[0], int(a[1]), float(a[2]), float(a[3]), a[4], *a[5:]),
     "run": lambda a: run(a[0], a[1], *a[2:]),
     "parse": lambda a: parse(*a),
     "report": lambda a: report(*a)}[sys.argv[1]](sys.argv[2:])
PY
helper() { python3 "$tmp/helper.py" "$@"; }

# GuideLLM's prompts run out after one pass: enough rows for 2000 requests/s.
rows=$((2000 * (WARMUP_CEILING + DURATION_CEILING) > 100 * (WARMUP + DURATION) ?
    2000 * (WARMUP_CEILING + DURATION_CEILING) : 100 * (WARMUP + DURATION)))
helper inputs configs/benchmarks/smollm2/prompts.json "$tmp" "$rows"
# The model's tokenizer (prepare.sh reads it from the GGUF) as a Hugging Face cache entry,
# local/smollm2: AIPerf 0.13.0 loads a local folder only online, and with HF_HUB_OFFLINE=1 only
# from the cache.
snapshot="$tmp/hf/hub/models--local--smollm2/snapshots/0000000000000000000000000000000000000000"
mkdir -p "$snapshot" "$tmp/hf/hub/models--local--smollm2/refs"
cp data/smollm2/tokenizer.json "$snapshot/"
echo '{"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|im_end|>", "model_max_length": 8192}' \
    >"$snapshot/tokenizer_config.json"
printf '%s' 0000000000000000000000000000000000000000 >"$tmp/hf/hub/models--local--smollm2/refs/main"
export HF_HOME="$tmp/hf" HF_HUB_CACHE="$tmp/hf/hub" HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1
results="$tmp/results.jsonl"
commands="$tmp/commands.sh"
: >"$results"
: >"$commands"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"

# Adds a command to the report's (round 1's only).
record() {
    local round="$1"
    shift
    if [ "$round" = 1 ]; then
        python3 -c 'import shlex, sys; print(shlex.join(sys.argv[1:]))' "$@" >>"$commands"
    fi
}
# Runs a command, its output in LOG; on failure, shows the log's end and stops.
run_tool() {
    local log_file="$1"
    shift
    if ! "$@" >"$log_file" 2>&1; then
        echo "error: failed ($log_file):" >&2
        printf '%q ' "$@" >&2
        echo >&2
        tail -n 40 "$log_file" >&2
        exit 1
    fi
}

# The command each tool runs for one point: URL, concurrency, max_tokens, warm-up, duration,
# output folder; KIND: 0 llama.cpp's server, 1 the instant responder (the ceiling), 2 the paced
# responder; REQS (0: none) makes the point exactly that many requests, with no warm-up,
# DURATION its longest.
tool_command() {
    local tool="$1" port="$2" c="$3" tokens="$4" warm="$5" secs="$6" dir="$7" ceiling="$8"
    local reqs="${9:-0}"
    case "$tool" in
        mlperf-host)
            if [ "$ceiling" != 0 ]; then
                cmd=("$exe" sweep --plugin network --plugin-set "endpoints=[\"127.0.0.1:$port\"]"
                    --plugin-set 'protocol="openai"' --plugin-set 'api="chat"'
                    --plugin-set 'model="smollm2"' --plugin-set "max_tokens=$tokens"
                    --plugin-set temperature=0.0 --plugin-set seed=0 --plugin-set "concurrency=$c"
                    --dataset data/smollm2/prompts.npy)
            else
                cmd=("$exe" sweep --benchmark smollm2 --plugin-set "endpoints=[\"127.0.0.1:$port\"]"
                    --plugin-set "concurrency=$c")
            fi
            cmd+=(--concurrency "$c" --duration "${secs}s" --warmup "${warm}s" --out "$dir")
            if [ "$reqs" != 0 ]; then
                cmd+=(--max-requests "$reqs")
            fi
            if [ "$ceiling" != 1 ]; then
                cmd+=(--export-requests)
            fi
            ;;
        aiperf)
            cmd=("$venv/bin/aiperf" profile --model smollm2 --url "http://127.0.0.1:$port"
                --endpoint-type chat --streaming --input-file "$tmp/prompts-aiperf.jsonl"
                --custom-dataset-type single_turn --dataset-sampling-strategy sequential
                --extra-inputs "max_tokens:$tokens"
                --extra-inputs temperature:0 --extra-inputs seed:0 --tokenizer local/smollm2
                --concurrency "$c" --artifact-dir "$dir" --ui none --no-server-metrics
                --no-gpu-telemetry)
            if [ "$reqs" != 0 ]; then
                cmd+=(--request-count "$reqs")
            else
                cmd+=(--warmup-duration "$warm" --benchmark-duration "$secs")
            fi
            if [ "$ceiling" != 0 ]; then
                cmd+=(--use-server-token-count)
            fi
            cmd+=("${aiperf_args[@]}")
            ;;
        guidellm)
            mkdir -p "$dir"
            cmd=("$venv/bin/guidellm" run
                --backend "kind=openai_http,target=http://127.0.0.1:$port,model=smollm2,request_format=/v1/chat/completions,api_routes./health=v1/models,extras.body.max_tokens=$tokens,extras.body.temperature=0,extras.body.seed=0"
                --tokenizer kind=huggingface_auto,model=local/smollm2
                --data "kind=json_file,path=$tmp/prompts-guidellm.jsonl"
                --output "kind=json,path=$dir/benchmarks.json" --disable-console-interactive)
            if [ "$reqs" != 0 ]; then
                cmd+=(--profile "kind=concurrent,streams=$c"
                    --constraint "kind=max_requests,count=$reqs")
            else
                cmd+=(--profile "kind=concurrent,streams=$c,warmup=$warm"
                    --constraint "kind=max_duration,seconds=$((warm + secs))")
            fi
            ;;
    esac
}

# --- Part 1: the same load on llama.cpp's server ---
server_pinning="not run"
if has_part llama; then
bash scripts/setup-llm.sh
if [ "$PIN_SERVER" = 1 ]; then
    command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ] ||
        { echo "error: PIN_SERVER=1 needs taskset and 2 cores" >&2; exit 2; }
    pin_server=(env LLAMA_THREADS=1 taskset -c 1) pin_part1=(taskset -c 0)
    server_pinning="1 thread pinned to core 1, each client pinned to core 0 (taskset), so no client takes CPU from the server"
else
    pin_server=() pin_part1=()
    server_pinning="2 threads, unpinned, sharing the cores with the client"
fi
port="$(free_port)"
setsid "${pin_server[@]}" bash scripts/serve.sh llama smollm2 "$port" >"$tmp/llama.log" 2>&1 &
servers+=($!)
wait_ready "$port" "$!" "$tmp/llama.log"
echo "# 1. llama.cpp's server on 127.0.0.1:$port (${pin_server[*]} scripts/serve.sh llama smollm2 $port)" >>"$commands"
point_warmup="$WARMUP"
if [ "$REQUESTS" != 0 ]; then
    # No tool warms up: the server is warmed once here, with prompts of the same file.
    point_warmup=0
    log "warming the server with $WARMUP_REQUESTS requests"
    "${pin_part1[@]}" "$exe" sweep --benchmark smollm2 \
        --plugin-set "endpoints=[\"127.0.0.1:$port\"]" --concurrency 1 --warmup 0s \
        --duration "${DURATION}s" --max-requests "$WARMUP_REQUESTS" --out "$tmp/server-warmup" \
        >"$tmp/server-warmup.log" 2>&1 || { tail -n 20 "$tmp/server-warmup.log" >&2; exit 1; }
fi
for round in $(seq "$ROUNDS"); do
    # Each round starts with the next tool, so that a server drifting within a round does
    # not always favour the same one.
    shift_by=$(((round - 1) % ${#TOOLS[@]}))
    order=("${TOOLS[@]:shift_by}" "${TOOLS[@]:0:shift_by}")
    for c in $POINTS; do
        for tool in "${order[@]}"; do
            dir="$tmp/part1/r$round-c$c-$tool"
            if [ "$REQUESTS" != 0 ]; then
                log "round $round/$ROUNDS, concurrency $c: $tool ($REQUESTS requests)"
            else
                log "round $round/$ROUNDS, concurrency $c: $tool (${WARMUP} s warm-up + ${DURATION} s)"
            fi
            tool_command "$tool" "$port" "$c" "$MAX_TOKENS" "$point_warmup" "$DURATION" "$dir" 0 \
                "$REQUESTS"
            record "$round" "${pin_part1[@]}" "${cmd[@]}"
            # GuideLLM 0.8.1 has hung after its last request: a run that outlives the point by
            # HANG_LIMIT s is killed and run once more (and named in the report).
            for attempt in 1 2; do
                rc=0
                python3 "$tmp/helper.py" run "$tmp/part1-r$round-c$c-$tool.json" \
                    "$((point_warmup + DURATION + HANG_LIMIT))" "${pin_part1[@]}" "${cmd[@]}" \
                    >"$tmp/part1-r$round-c$c-$tool.log" 2>&1 || rc=$?
                if [ "$rc" = 124 ] && [ "$attempt" = 1 ]; then
                    log "$tool hung (round $round, concurrency $c): killed, run once more"
                    echo "$tool, round $round, concurrency $c" >>"$tmp/hung.txt"
                    mv "$tmp/part1-r$round-c$c-$tool.log" "$tmp/part1-r$round-c$c-$tool.hung.log"
                    rm -rf "$dir" && mkdir -p "$dir"
                    continue
                fi
                if [ "$rc" != 0 ]; then
                    echo "error: $tool failed (exit $rc, $tmp/part1-r$round-c$c-$tool.log):" >&2
                    tail -n 40 "$tmp/part1-r$round-c$c-$tool.log" >&2
                    exit 1
                fi
                break
            done
            figures="$(helper parse "$tool" "$dir" "$DURATION" "$point_warmup" \
                "$tmp/part1-r$round-c$c-$tool.json" "$REQUESTS")"
            python3 -c 'import json, sys; r = json.loads(sys.argv[1]); r.update(part=1, tool=sys.argv[2], point=int(sys.argv[3]), round=int(sys.argv[4])); print(json.dumps(r))' \
                "$figures" "$tool" "$c" "$round" >>"$results"
        done
    done
done
kill -- -"${servers[0]}" 2>/dev/null || true
wait "${servers[0]}" 2>/dev/null || true
fi

# --- The responders' pinning (parts 1b and 2) ---
# The responder on cores 0..RESPONDER_THREADS-1, the client on the next one.
if command -v taskset >/dev/null && [ "$(nproc)" -gt "$RESPONDER_THREADS" ]; then
    cores="0-$((RESPONDER_THREADS - 1))"
    pin_responder=(taskset -c "$cores") pin_client=(taskset -c "$RESPONDER_THREADS")
    pinning="Responder pinned to core(s) $cores, client to core $RESPONDER_THREADS (taskset)."
else
    pin_responder=() pin_client=()
    pinning="Not pinned (no taskset, or too few cores): responder and client share the cores."
fi

# --- Part 1b: the same load on a responder of known timing ---
if has_part paced; then
port="$(free_port)"
paced=(--first-token-ms "$PACED_FIRST_TOKEN_MS" --token-gap-ms "$PACED_TOKEN_GAP_MS")
"${pin_responder[@]}" "$responder" --port "$port" --threads 1 "${paced[@]}" \
    >"$tmp/paced.log" 2>&1 &
paced_pid=$!
servers+=("$paced_pid")
wait_ready "$port" "$paced_pid" "$tmp/paced.log"
echo "# 1b. the paced responder on 127.0.0.1:$port" >>"$commands"
record 1 "${pin_responder[@]}" "$responder" --port "$port" --threads 1 "${paced[@]}"
for round in $(seq "$ROUNDS_PACED"); do
    shift_by=$(((round - 1) % ${#TOOLS[@]}))
    order=("${TOOLS[@]:shift_by}" "${TOOLS[@]:0:shift_by}")
    for c in $PACED_POINTS; do
        for tool in "${order[@]}"; do
            dir="$tmp/paced/r$round-c$c-$tool"
            log "paced round $round/$ROUNDS_PACED, concurrency $c: $tool" \
                "(${WARMUP_PACED} s warm-up + ${DURATION_PACED} s)"
            tool_command "$tool" "$port" "$c" "$PACED_TOKENS" "$WARMUP_PACED" "$DURATION_PACED" \
                "$dir" 2
            record "$round" "${pin_client[@]}" "${cmd[@]}"
            run_tool "$tmp/paced-r$round-c$c-$tool.log" python3 "$tmp/helper.py" run \
                "$tmp/paced-r$round-c$c-$tool.json" \
                "$((WARMUP_PACED + DURATION_PACED + HANG_LIMIT))" "${pin_client[@]}" "${cmd[@]}"
            figures="$(helper parse "$tool" "$dir" "$DURATION_PACED" "$WARMUP_PACED" \
                "$tmp/paced-r$round-c$c-$tool.json" 0)"
            python3 -c 'import json, sys; r = json.loads(sys.argv[1]); r.update(part=3, tool=sys.argv[2], point=int(sys.argv[3]), round=int(sys.argv[4])); print(json.dumps(r))' \
                "$figures" "$tool" "$c" "$round" >>"$results"
        done
    done
done
kill "$paced_pid" 2>/dev/null || true
fi

# --- Part 2: the client ceiling on the instant responder ---
if has_part ceiling; then
port="$(free_port)"
# taskset execs the responder: $! is its process.
"${pin_responder[@]}" "$responder" --port "$port" --threads "$RESPONDER_THREADS" \
    >"$tmp/responder.log" 2>&1 &
responder_pid=$!
servers+=("$responder_pid")
wait_ready "$port" "$responder_pid" "$tmp/responder.log"
echo "# 2. the instant responder on 127.0.0.1:$port" >>"$commands"
record 1 "${pin_responder[@]}" "$responder" --port "$port" --threads "$RESPONDER_THREADS"
for round in $(seq "$ROUNDS_CEILING"); do
    for tool in "${TOOLS[@]}"; do
        dir="$tmp/part2/r$round-$tool"
        log "ceiling round $round/$ROUNDS_CEILING: $tool at concurrency $CEILING_CONCURRENCY" \
            "(${WARMUP_CEILING} s warm-up + ${DURATION_CEILING} s)"
        tool_command "$tool" "$port" "$CEILING_CONCURRENCY" "$CEILING_TOKENS" "$WARMUP_CEILING" \
            "$DURATION_CEILING" "$dir" 1
        record "$round" "${pin_client[@]}" "${cmd[@]}"
        run_tool "$tmp/part2-r$round-$tool.log" python3 "$tmp/helper.py" measure \
            "http://127.0.0.1:$port/stats" "$responder_pid" "$WARMUP_CEILING" "$DURATION_CEILING" \
            "$tmp/part2-r$round-$tool.json" "${pin_client[@]}" "${cmd[@]}"
        figures="$(helper parse "$tool" "$dir" "$DURATION_CEILING" "$WARMUP_CEILING" -)"
        python3 -c 'import json, sys; r = json.loads(sys.argv[1]); r.update(json.load(open(sys.argv[2]))); r.update(part=2, tool=sys.argv[3], round=int(sys.argv[4])); print(json.dumps(r))' \
            "$figures" "$tmp/part2-r$round-$tool.json" "$tool" "$round" >>"$results"
    done
done
kill "$responder_pid" 2>/dev/null || true
fi

# --- The report ---
cpu_model="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
git diff --quiet HEAD 2>/dev/null || commit="$commit (with local changes)"
S_HOST="$(nproc) cores, ${cpu_model:-unknown CPU}" S_LOAD_BEFORE="$load_before" \
    S_LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)" S_COMMIT="$commit" S_PINNING="$pinning" \
    S_SERVER_PINNING="$server_pinning" \
    S_HUNG="$(cat "$tmp/hung.txt" 2>/dev/null || true)" S_HANG_LIMIT="$HANG_LIMIT" \
    S_POINTS="$POINTS" S_PACED_POINTS="$PACED_POINTS" S_TMP="$tmp" S_ROOT="$root" S_AIPERF_ARGS="${AIPERF_ARGS:-}" \
    python3 - "$tmp/settings.json" \
    "$ROUNDS" "$MAX_TOKENS" "$DURATION" "$WARMUP" "$ROUNDS_CEILING" "$DURATION_CEILING" \
    "$WARMUP_CEILING" "$CEILING_CONCURRENCY" "$CEILING_TOKENS" "$RESPONDER_THREADS" \
    "$REQUESTS" "$WARMUP_REQUESTS" "$ROUNDS_PACED" "$DURATION_PACED" "$WARMUP_PACED" \
    "$PACED_TOKENS" "$PACED_FIRST_TOKEN_MS" "$PACED_TOKEN_GAP_MS" <<'PY'
import json, os, sys
keys = ["rounds", "max_tokens", "duration", "warmup", "rounds_ceiling", "duration_ceiling",
        "warmup_ceiling", "ceiling_concurrency", "ceiling_tokens", "responder_threads",
        "requests", "warmup_requests", "rounds_paced", "duration_paced", "warmup_paced",
        "paced_tokens", "paced_first_token_ms", "paced_token_gap_ms"]
settings = dict(zip(keys, map(int, sys.argv[2:])))
env = os.environ
settings.update(aiperf="0.13.0", guidellm="0.8.1", llama="0.3.36", host=env["S_HOST"],
                load_before=env["S_LOAD_BEFORE"], load_after=env["S_LOAD_AFTER"],
                commit=env["S_COMMIT"], pinning=env["S_PINNING"], tmp=env["S_TMP"],
                server_pinning=env["S_SERVER_PINNING"],
                root=env["S_ROOT"], aiperf_args=env["S_AIPERF_ARGS"],
                hung=env["S_HUNG"].splitlines(), hang_limit=int(env["S_HANG_LIMIT"]),
                points=[int(p) for p in env["S_POINTS"].split()],
                paced_points=[int(p) for p in env["S_PACED_POINTS"].split()])
json.dump(settings, open(sys.argv[1], "w"))
PY
helper report "$results" "$tmp/settings.json" "$commands" >"$out_md"
cat "$out_md"
log "report written to $out_md"
