#!/usr/bin/env python3
"""The Python binding side by side with the official wheel: the same null SUT in Python
(scripts/official_bench.py) through `mlperf_loadgen` 6.0.17 and through `mlperf_host.loadgen`
(switched in without an edit by host/python/alias on PYTHONPATH).

Prints one JSON line per measurement and a table: SingleStream queries/s (inline completion),
Offline samples/s (inline) and the highest VALID Server qps (completion from a worker thread,
10 ms p99 bound), found by bisection.

Usage:
    bench_python.py [--queries N] [--samples N] [--server-ms D] [--server-low Q] [--server-high Q]
                    [--steps K] [--only official|mlperf-host]
"""

import argparse
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OFFICIAL_BENCH = os.path.join(REPO, "scripts", "official_bench.py")
ALIAS = os.path.join(REPO, "host", "python", "alias")
SIDES = ("official", "mlperf-host")


def run_case(side, extra):
    """One official_bench.py case in a child process; its JSON report."""
    env = dict(os.environ)
    if side == "mlperf-host":
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [ALIAS, env.get("PYTHONPATH")]))
    else:
        env.pop("PYTHONPATH", None)
    command = [sys.executable, OFFICIAL_BENCH] + extra
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError("%s %s failed: %s" % (side, " ".join(extra), done.stderr[-2000:]))
    report = json.loads(lines[-1])
    if "error" in report:
        raise RuntimeError("%s %s failed: %s" % (side, " ".join(extra), report["error"]))
    report["side"] = side
    print(json.dumps(report), flush=True)
    return report


def highest_valid_server_qps(side, args):
    """Bisection on the Server target between --server-low (which must be VALID) and
    --server-high."""

    def valid(qps):
        report = run_case(side, ["--case", "server", "--completion", "worker",
                                 "--qps", repr(qps), "--duration-ms", str(args.server_ms)])
        return report["valid"]

    low, high = args.server_low, args.server_high
    if not valid(low):
        return None
    for _ in range(args.steps):
        if high / low < 1.03:
            break
        middle = (low + high) / 2
        if valid(middle):
            low = middle
        else:
            high = middle
    return low


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=200_000, help="SingleStream queries")
    parser.add_argument("--samples", type=int, default=2_000_000, help="Offline samples")
    parser.add_argument("--server-ms", type=int, default=10_000, help="Server run duration")
    parser.add_argument("--server-low", type=float, default=50_000.0)
    parser.add_argument("--server-high", type=float, default=800_000.0)
    parser.add_argument("--steps", type=int, default=8, help="Server bisection steps")
    parser.add_argument("--only", choices=SIDES)
    args = parser.parse_args()

    table = {}
    for side in [args.only] if args.only else SIDES:
        single = run_case(side, ["--case", "single-stream", "--queries", str(args.queries)])
        offline = run_case(side, ["--case", "offline", "--samples", str(args.samples)])
        table[side] = (single["throughput_per_s"], offline["throughput_per_s"],
                       highest_valid_server_qps(side, args))

    print("%-12s %22s %22s %24s" % ("", "SingleStream queries/s", "Offline samples/s",
                                    "Server highest VALID qps"))
    for side, (single, offline, server) in table.items():
        print("%-12s %22.0f %22.0f %24s" % (side, single, offline,
                                            "%.0f" % server if server else "none"))
    if len(table) == 2:
        ours, theirs = table["mlperf-host"], table["official"]
        ratios = [o / t if o and t else float("nan") for o, t in zip(ours, theirs)]
        print("%-12s %21.2fx %21.2fx %23.2fx" % ("ratio", *ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
