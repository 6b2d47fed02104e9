"""Driver of scripts/bench-isolated.sh: runs `mlperf-host bench` with the null plugin
in-process and isolated, alternating, and prints medians, ranges and ratios."""

import argparse
import json
import statistics
import subprocess
import sys

EXE = "./target/release/mlperf-host"
PLUGIN = "target/release/libmlperf_plugin_null.so"


def bench(case, isolated, extra):
    command = [EXE, "bench", "--case", case, "--plugin", PLUGIN, "--json", *extra]
    if isolated:
        command.append("--isolated")
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def highest_valid_server_qps(isolated, duration_ms, low, high):
    """Bisects the Server target qps between `low` (assumed VALID) and `high`."""
    for _ in range(7):
        qps = (low + high) / 2
        report = bench("server", isolated, ["--qps", str(qps), "--duration-ms", str(duration_ms)])
        if report["valid"]:
            low = qps
        else:
            high = qps
    return low


def summary(values):
    return statistics.median(values), min(values), max(values)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=500_000)
    parser.add_argument("--samples", type=int, default=5_000_000)
    parser.add_argument("--server-ms", type=int, default=2_000)
    parser.add_argument("--server-high", type=float, default=2_000_000.0)
    args = parser.parse_args()

    rows = {}
    for round_ in range(args.rounds):
        for isolated in (False, True):
            mode = "isolated" if isolated else "in-process"
            ss = bench("single-stream", isolated, ["--queries", str(args.queries)])
            off = bench("offline", isolated, ["--samples", str(args.samples)])
            rows.setdefault(("SingleStream queries/s", mode), []).append(ss["throughput_per_s"])
            rows.setdefault(("Offline samples/s", mode), []).append(off["throughput_per_s"])
            print(f"round {round_ + 1} {mode}: SingleStream {ss['throughput_per_s']:,.0f}/s, "
                  f"Offline {off['throughput_per_s']:,.0f}/s", file=sys.stderr)
    for isolated in (False, True):
        mode = "isolated" if isolated else "in-process"
        qps = highest_valid_server_qps(isolated, args.server_ms, 1_000.0, args.server_high)
        rows[("Server highest VALID qps", mode)] = [qps]
        print(f"server {mode}: {qps:,.0f}", file=sys.stderr)

    print(f"\n{'case':<26} {'in-process':>16} {'isolated':>16} {'isolated/in-process':>20} {'added ns/sample':>16}")
    for case in ("SingleStream queries/s", "Offline samples/s", "Server highest VALID qps"):
        inproc = summary(rows[(case, "in-process")])
        iso = summary(rows[(case, "isolated")])
        added = 1e9 / iso[0] - 1e9 / inproc[0]
        print(f"{case:<26} {inproc[0]:>16,.0f} {iso[0]:>16,.0f} {iso[0] / inproc[0]:>19.1%} {added:>16,.0f}")
        if args.rounds > 1 and case != "Server highest VALID qps":
            print(f"{'  range':<26} {inproc[1]:>7,.0f}–{inproc[2]:<8,.0f} {iso[1]:>7,.0f}–{iso[2]:<8,.0f}")


if __name__ == "__main__":
    main()
