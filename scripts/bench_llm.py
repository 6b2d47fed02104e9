#!/usr/bin/env python3
"""Does mlperf-host change what it measures on an LLM server? The same prompts at the same
request rate go to llama.cpp's OpenAI server twice: from a plain streaming client (this file,
Python's standard library, Poisson arrivals like LoadGen's Server scenario) and from
`mlperf-host run --benchmark smollm2 --scenario Server` (the network plugin). Reported: each
side's median TTFT and TPOT (TPOT of a sample: (latency - TTFT) / (tokens - 1), as LoadGen
computes it), their ratio, and the CPU time each client spent per streamed token.

Usage (bash scripts/bench-llm.sh wraps it, starting the server):
    .venv/bin/python scripts/bench_llm.py --port PORT [--qps 1.5] [--seconds 60] [--rounds 1]
"""

import argparse
import http.client
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXE = REPO / "target" / "release" / "mlperf-host"
PROMPTS = json.loads((REPO / "configs" / "benchmarks" / "smollm2" / "prompts.json").read_text())
MAX_TOKENS = 32  # configs/benchmarks/smollm2.toml


def stream_one(port, prompt):
    """(TTFT s, total latency s, tokens) of one streamed chat completion."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    body = json.dumps({
        "model": "smollm2", "messages": [{"role": "user", "content": prompt}],
        "max_tokens": MAX_TOKENS, "temperature": 0.0, "seed": 0, "stream": True,
    })
    connection.request("POST", "/v1/chat/completions", body, {"content-type": "application/json"})
    answer = connection.getresponse()
    first, tokens = None, 0
    for raw in answer:
        line = raw.strip()
        if not line.startswith(b"data:"):
            continue
        data = line[5:].strip()
        if data == b"[DONE]":
            break
        choice = json.loads(data)["choices"][0]
        content = choice.get("delta", {}).get("content")
        if content is None or (choice.get("finish_reason") and not content):
            continue
        if first is None:
            first = time.perf_counter() - started
        tokens += 1
    connection.close()
    return first, time.perf_counter() - started, tokens


def plain_client(port, qps, seconds, seed):
    """Poisson arrivals at `qps` for `seconds`, prompts drawn at random; every request on its
    own thread, as an open-loop load generator must."""
    rng = random.Random(seed)
    results, threads = [], []
    lock = threading.Lock()

    def run(prompt):
        result = stream_one(port, prompt)
        with lock:
            results.append(result)

    cpu = time.process_time()
    start = time.perf_counter()
    due = 0.0
    while due < seconds:
        wait = start + due - time.perf_counter()
        if wait > 0:
            time.sleep(wait)
        thread = threading.Thread(target=run, args=(rng.choice(PROMPTS),))
        thread.start()
        threads.append(thread)
        due += rng.expovariate(qps)
    for thread in threads:
        thread.join()
    cpu = time.process_time() - cpu
    ttft = [r[0] for r in results]
    tpot = [(r[1] - r[0]) / (r[2] - 1) for r in results if r[2] > 1]
    tokens = sum(r[2] for r in results)
    return {"ttft_ms": 1e3 * statistics.median(ttft), "tpot_ms": 1e3 * statistics.median(tpot),
            "requests": len(results), "tokens": tokens, "cpu_us_per_token": 1e6 * cpu / tokens}


def summary_value(summary, label):
    for line in summary.splitlines():
        if line.startswith(label):
            return float(line.split(":", 1)[1])
    raise SystemExit("no %r in the summary:\n%s" % (label, summary))


def mlperf_host(port, qps, seconds):
    out = Path(tempfile.mkdtemp(prefix="bench-llm-"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [str(EXE), "run", "--benchmark", "smollm2", "--scenario", "Server",
         "--plugin-set", 'endpoints=["127.0.0.1:%d"]' % port,
         "--set", "server_target_qps=%s" % qps, "--set", "min_duration_ms=%d" % (seconds * 1000),
         "--set", "min_query_count=1", "--set", "sample_concatenate_permutation=0",
         "--issue-spin", "0", "--out", str(out)],
        check=True, stdout=subprocess.DEVNULL, cwd=str(REPO))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = (out / "mlperf_log_summary.txt").read_text()
    detail = {}
    for line in (out / "mlperf_log_detail.txt").read_text().splitlines():
        if line.startswith(":::MLLOG "):
            entry = json.loads(line[9:])
            detail.setdefault(entry["key"], entry["value"])
    queries = detail["result_query_count"]
    seconds_run = queries / detail["result_completed_samples_per_sec"]
    tokens = detail["result_completed_tokens_per_second"] * seconds_run
    return {"ttft_ms": summary_value(summary, "50.00 percentile first token latency (ns)") / 1e6,
            "tpot_ms": summary_value(summary, "50.00 percentile time to output token (ns)") / 1e6,
            "requests": queries, "tokens": round(tokens),
            "cpu_us_per_token": 1e6 * cpu / tokens}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--qps", type=float, default=1.5)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    if not EXE.is_file():
        raise SystemExit("%s is missing: cargo build --release" % EXE)
    rows = []
    for round_ in range(args.rounds):
        # Alternate who goes first, so that a drifting machine favours neither.
        order = ["plain", "mlperf-host"] if round_ % 2 == 0 else ["mlperf-host", "plain"]
        for side in order:
            print("round %d: %s, %.2f qps for %d s" % (round_ + 1, side, args.qps, args.seconds),
                  file=sys.stderr)
            if side == "plain":
                result = plain_client(args.port, args.qps, args.seconds, seed=round_)
            else:
                result = mlperf_host(args.port, args.qps, args.seconds)
            rows.append((side, result))
    print("| client | requests | tokens | median TTFT (ms) | median TPOT (ms) | client CPU per token (us) |")
    print("|---|---:|---:|---:|---:|---:|")
    for side, r in rows:
        print("| %s | %d | %d | %.1f | %.2f | %.0f |" % (
            side, r["requests"], r["tokens"], r["ttft_ms"], r["tpot_ms"], r["cpu_us_per_token"]))
    median = lambda side, key: statistics.median(r[key] for s, r in rows if s == side)
    for key in ("ttft_ms", "tpot_ms"):
        ratio = median("mlperf-host", key) / median("plain", key)
        print("%s: mlperf-host / plain = %.3f (%s)" % (
            key, ratio, "within 5 %" if abs(ratio - 1) <= 0.05 else "NOT within 5 %"))


if __name__ == "__main__":
    main()
