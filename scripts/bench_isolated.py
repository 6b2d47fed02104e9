"""Driver of scripts/bench-isolated.sh: runs `mlperf-host bench` with the null plugin
in-process and isolated, alternating, and prints medians, ranges and ratios.

An isolated SingleStream query crosses cores twice, so on a virtual machine its rate follows
where the hypervisor places the two vCPUs. Each isolated round is bracketed by a measured
cross-core round trip (`bench --case round-trip`); rounds whose two brackets agree are also
reported by placement (fast: a round trip under 250 ns)."""

import argparse
import json
import statistics
import subprocess
import sys

EXE = "./target/release/mlperf-host"
PLUGIN = "target/release/libmlperf_plugin_null.so"
FAST_ROUND_TRIPS_PER_S = 4_000_000


def bench(case, isolated, extra):
    command = [EXE, "bench", "--case", case, "--json", *extra]
    if case != "round-trip":
        command += ["--plugin", PLUGIN]
    if isolated:
        command.append("--isolated")
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def round_trips_per_s():
    return bench("round-trip", False, ["--queries", "2000000"])["throughput_per_s"]


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
    parser.add_argument("--server-high", type=float, default=8_000_000.0)
    args = parser.parse_args()

    rows = {}
    by_placement = {}
    for round_ in range(args.rounds):
        for isolated in (False, True):
            mode = "isolated" if isolated else "in-process"
            before = round_trips_per_s() if isolated else None
            ss = bench("single-stream", isolated, ["--queries", str(args.queries)])
            off = bench("offline", isolated, ["--samples", str(args.samples)])
            rows.setdefault(("SingleStream queries/s", mode), []).append(ss["throughput_per_s"])
            rows.setdefault(("Offline samples/s", mode), []).append(off["throughput_per_s"])
            line = (f"round {round_ + 1} {mode}: SingleStream {ss['throughput_per_s']:,.0f}/s, "
                    f"Offline {off['throughput_per_s']:,.0f}/s")
            if isolated:
                after = round_trips_per_s()
                fast = [trips >= FAST_ROUND_TRIPS_PER_S for trips in (before, after)]
                placement = {(True, True): "fast", (False, False): "slow"}.get(tuple(fast))
                if placement:
                    by_placement.setdefault(placement, []).append(
                        (ss["throughput_per_s"], off["throughput_per_s"]))
                line += (f" (cross-core round trips {before:,.0f}/s before, {after:,.0f}/s after: "
                         f"{placement or 'placement changed'})")
            print(line, file=sys.stderr)
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

    for placement, runs in sorted(by_placement.items()):
        ss = summary([run[0] for run in runs])
        off = summary([run[1] for run in runs])
        print(f"isolated, {placement} vCPU placement ({len(runs)} rounds): SingleStream "
              f"{ss[0]:,.0f}/s ({ss[1]:,.0f}–{ss[2]:,.0f}), Offline {off[0]:,.0f}/s "
              f"({off[1]:,.0f}–{off[2]:,.0f})")


if __name__ == "__main__":
    main()
