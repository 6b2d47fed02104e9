"""Driver of `scripts/bench.sh --official`: the engine against the official C++ LoadGen.

Every case runs through three engines, alternating round by round, each run in a process of
its own (`mlperf-host bench --engine E --json`):
  native        this project's engine with the Rust null SUT;
  official      the official LoadGen 6.0.17 C++ library (built from the PyPI sdist by
                scripts/setup-official-engine.sh) with the same Rust null SUT;
  official-cpp  the official library with its null SUT written in C++ (the same design: inline,
                or one worker thread fed through a mutex and condition variable).
The ratio that compares engines is native / official (identical SUT code); native /
official-cpp is printed beside it. Figures are medians over the rounds with their ranges, and
the range of the per-round ratios. Server is the highest target qps that ran VALID, found by
bisection in each round for each engine, each step decided by the majority of three 10 s runs
(one noisy run neither passes nor fails a rate on its own)."""

import argparse
import json
import statistics
import subprocess
import sys

EXE = "./target/release/mlperf-host"
ENGINES = ("native", "official", "official-cpp")
# The Server bisection's upper end by completion, above every engine's capacity on the
# development machine but not far: a run far above it drains its backlog for long.
SERVER_HIGH = {"worker": 3_200_000.0, "inline": 6_400_000.0}


def bench(engine, case, completion, extra):
    command = [EXE, "bench", "--engine", engine, "--case", case, "--completion", completion,
               "--json", *extra]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{run.stderr}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def valid_at(engine, completion, duration_ms, qps, repeats):
    """Whether `qps` runs VALID in most of `repeats` runs; stops once the majority is known, so
    one noisy run neither passes nor fails a rate on its own."""
    needed = repeats // 2 + 1
    valid = invalid = 0
    while valid < needed and invalid < needed:
        report = bench(engine, "server", completion,
                       ["--qps", f"{qps:.0f}", "--duration-ms", str(duration_ms)])
        if report["valid"]:
            valid += 1
        else:
            invalid += 1
    print(f"  {engine} {completion} {qps:,.0f} qps: {valid} VALID, {invalid} INVALID",
          file=sys.stderr)
    return valid >= needed


def highest_valid_server_qps(engine, completion, duration_ms, low, high, steps, repeats):
    """Bisects the target qps between `low` (assumed VALID) and `high`, geometrically, each
    step decided by the majority of `repeats` runs."""
    for _ in range(steps):
        qps = (low * high) ** 0.5
        if valid_at(engine, completion, duration_ms, qps, repeats):
            low = qps
        else:
            high = qps
    return low


def spread(values):
    return statistics.median(values), min(values), max(values)


def number(x):
    for scale, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{suffix}"
    return f"{x:.3g}"


def cell(values):
    median, low, high = spread(values)
    if len(values) == 1:
        return number(median)
    return f"{number(median)} ({number(low)}–{number(high)})"


def ratio_cell(ours, theirs):
    per_round = [a / b for a, b in zip(ours, theirs) if b]
    if not per_round:
        return "-"
    median = statistics.median(ours) / statistics.median(theirs)
    if len(per_round) == 1:
        return f"{median:.2f}x"
    return f"{median:.2f}x ({min(per_round):.2f}–{max(per_round):.2f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=2_000_000,
                        help="SingleStream queries (default 2,000,000)")
    parser.add_argument("--samples", type=int, default=10_000_000,
                        help="Offline samples in the one query (default 10,000,000)")
    parser.add_argument("--server-rounds", type=int, default=2)
    parser.add_argument("--server-ms", type=int, default=10_000,
                        help="duration of each Server run of the bisection (default 10,000)")
    parser.add_argument("--server-steps", type=int, default=6)
    parser.add_argument("--server-repeats", type=int, default=3,
                        help="runs that decide each bisection step, by majority (default 3)")
    parser.add_argument("--server-low", type=float, default=100_000.0,
                        help="the bisection's lower end, assumed VALID (default 100,000)")
    parser.add_argument("--server-high", type=float,
                        help="the bisection's upper end (default 3,200,000 with the worker, "
                             "6,400,000 inline; a run far above capacity drains its backlog "
                             "for long, so keep it near)")
    parser.add_argument("--no-server", action="store_true")
    parser.add_argument("--server-only", action="store_true",
                        help="only the Server rows (they take the longest)")
    parser.add_argument("--server-completions", default="worker,inline",
                        help="the Server rows, by completion (default worker,inline)")
    args = parser.parse_args()

    # (label, case, completion, options, figure)
    cases = [
        ("SingleStream queries/s, inline", "single-stream", "inline",
         ["--queries", str(args.queries)], "throughput_per_s"),
        ("SingleStream queries/s, worker", "single-stream", "worker",
         ["--queries", str(args.queries // 4)], "throughput_per_s"),
        ("Offline samples/s absorbed, inline", "offline", "inline",
         ["--samples", str(args.samples)], "throughput_per_s"),
        ("Offline samples/s absorbed, worker", "offline", "worker",
         ["--samples", str(args.samples)], "throughput_per_s"),
    ]
    rows = {}
    extras = {}
    if args.server_only:
        cases = []
    for round_ in range(0 if args.server_only else args.rounds):
        for label, case, completion, options, figure in cases:
            for engine in ENGINES:
                report = bench(engine, case, completion, options)
                rows.setdefault((label, engine), []).append(report[figure])
                if completion == "inline":
                    for key in ("startup_ms", "end_of_run_ms", "process_bytes_per_sample"):
                        extras.setdefault((case, key, engine), []).append(report[key])
                print(f"round {round_ + 1} {label} {engine}: {report[figure]:,.0f}"
                      f"{'' if report['valid'] else ' (INVALID)'}", file=sys.stderr)
    if not args.no_server:
        for completion in args.server_completions.split(","):
            label = f"Server highest VALID qps, {completion}"
            for round_ in range(args.server_rounds):
                for engine in ENGINES:
                    high = args.server_high or SERVER_HIGH[completion]
                    qps = highest_valid_server_qps(engine, completion, args.server_ms,
                                                   args.server_low, high,
                                                   args.server_steps, args.server_repeats)
                    rows.setdefault((label, engine), []).append(qps)
                    print(f"round {round_ + 1} {label} {engine}: {qps:,.0f}", file=sys.stderr)
            cases.append((label, "server", completion, [], None))

    print("| case | mlperf-host | official C++, same SUT | official C++, C++ SUT "
          "| vs official, same SUT | vs official, C++ SUT |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, *_ in cases:
        native, official, cpp = (rows[(label, engine)] for engine in ENGINES)
        print(f"| {label} | {cell(native)} | {cell(official)} | {cell(cpp)} "
              f"| {ratio_cell(native, official)} | {ratio_cell(native, cpp)} |")
    labels = {"startup_ms": "start-up (ms)", "end_of_run_ms": "end of run (ms)",
              "process_bytes_per_sample": "peak RSS of the process per sample (bytes)"}
    for case in ("single-stream", "offline"):
        for key, label in labels.items():
            values = [extras.get((case, key, engine)) for engine in ENGINES]
            if None in values:
                continue
            print(f"| {case} inline, {label} | " + " | ".join(cell(v) for v in values) + " | | |")
    highs = " or ".join(f"{args.server_high or SERVER_HIGH[c]:,.0f}"
                        for c in args.server_completions.split(","))
    server = (f"Server: {args.server_rounds} rounds, {args.server_steps} bisection steps between "
              f"{args.server_low:,.0f} and {highs} qps, each decided by the "
              f"majority of {args.server_repeats} runs of {args.server_ms:,} ms")
    others = (f"{args.rounds} rounds; SingleStream {args.queries:,} queries inline, "
              f"{args.queries // 4:,} with the worker; Offline {args.samples:,} samples")
    parts = [others] * (not args.server_only) + [server] * (not args.no_server)
    print(f"\n{'. '.join(parts)}. Medians (ranges); ratios of the medians (range of the "
          "per-round ratios).")


if __name__ == "__main__":
    main()
