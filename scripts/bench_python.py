#!/usr/bin/env python3
"""The Python binding side by side with the official wheel: the same null SUT in Python
(scripts/official_bench.py) through `mlperf_loadgen` 6.0.17 and through `mlperf_host.loadgen`
(switched in without an edit by host/python/alias on PYTHONPATH).

Prints one JSON line per measurement and a table: SingleStream queries/s (inline completion)
and Offline samples/s (inline), each the median of --rounds rounds that alternate the two
sides, with its range, and the highest VALID Server qps (completion from a worker thread,
10 ms p99 bound), found by bisection on each side. The ratios are mlperf-host over official:
of the medians, and the range of the per-round ratios. --markdown prints the table as
docs/performance.md holds it.

Usage:
    bench_python.py [--queries N] [--samples N] [--rounds R] [--server-ms D] [--server-low Q]
                    [--server-high Q] [--steps K] [--no-server] [--markdown]
"""

import argparse
import json
import os
import statistics
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


def spread(values):
    """'median (low-high)' of positive figures, as whole numbers."""
    return "%s (%s-%s)" % tuple(format(round(v), ",") for v in
                                (statistics.median(values), min(values), max(values)))


def ratio_text(ours, theirs):
    """The ratio of the medians and the range of the per-round ratios."""
    rounds = [o / t for o, t in zip(ours, theirs)]
    return "%.2fx (%.2f-%.2f)" % (statistics.median(ours) / statistics.median(theirs),
                                  min(rounds), max(rounds))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=200_000, help="SingleStream queries")
    parser.add_argument("--samples", type=int, default=2_000_000, help="Offline samples")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds of the two")
    parser.add_argument("--server-ms", type=int, default=10_000, help="Server run duration")
    parser.add_argument("--server-low", type=float, default=50_000.0)
    parser.add_argument("--server-high", type=float, default=800_000.0)
    parser.add_argument("--steps", type=int, default=8, help="Server bisection steps")
    parser.add_argument("--no-server", action="store_true", help="skip the Server bisection")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()

    single = {side: [] for side in SIDES}
    offline = {side: [] for side in SIDES}
    for round_number in range(args.rounds):
        # Alternate which side goes first, so that neither always runs on a warmer machine.
        order = SIDES if round_number % 2 == 0 else tuple(reversed(SIDES))
        for side in order:
            single[side].append(run_case(
                side, ["--case", "single-stream", "--queries", str(args.queries)])["throughput_per_s"])
            offline[side].append(run_case(
                side, ["--case", "offline", "--samples", str(args.samples)])["throughput_per_s"])
    server = {side: None if args.no_server else highest_valid_server_qps(side, args)
              for side in SIDES}

    def server_text(qps):
        return "not run" if args.no_server else ("none" if qps is None else format(round(qps), ","))

    server_ratio = ("%.2fx" % (server["mlperf-host"] / server["official"])
                    if server["mlperf-host"] and server["official"] else "-")
    rows = [(side, spread(single[side]), spread(offline[side]), server_text(server[side]))
            for side in ("official", "mlperf-host")]
    rows.append(("ratio", ratio_text(single["mlperf-host"], single["official"]),
                 ratio_text(offline["mlperf-host"], offline["official"]), server_ratio))
    header = ("", "SingleStream queries/s", "Offline samples/s", "Server highest VALID qps")
    if args.markdown:
        names = {"official": "official wheel", "mlperf-host": "mlperf_host", "ratio": "ratio"}
        print("| " + " | ".join(header) + " |")
        print("|---|---:|---:|---:|")
        for row in rows:
            print("| " + " | ".join((names[row[0]],) + row[1:]) + " |")
    else:
        print("%-12s %30s %30s %26s" % header)
        for row in rows:
            print("%-12s %30s %30s %26s" % row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
