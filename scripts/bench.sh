#!/usr/bin/env bash
# Benchmarks the LoadGen engine against an in-process null SUT (SingleStream, Offline, Server),
# each case in its own process. With BENCH_OFFICIAL=1 the official LoadGen wheel runs the same
# cases side by side (installed into .venv) and the ratios are printed.
#
# Options go to `mlperf-host bench` (see --help); --queries, --samples, --qps, --duration-ms,
# --qsl-samples, --case and --completion also go to the official side. Where not given, the
# official side runs smaller defaults (its SUT is Python): 200,000 SingleStream queries,
# 2,000,000 Offline samples, Server at 20,000 qps for 10 s.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p mlperf-host
if [[ "${BENCH_OFFICIAL:-0}" != 1 ]]; then
    exec ./target/release/mlperf-host bench "$@"
fi

ours_json=$(mktemp)
official_json=$(mktemp)
trap 'rm -f "$ours_json" "$official_json"' EXIT

# The comparison needs our JSON; add --json unless it was asked for already.
json_flag=(--json)
for arg in "$@"; do [[ $arg == --json ]] && json_flag=(); done
echo "== ours: mlperf-host bench $(printf '%s ' "$@" "${json_flag[@]}")"
./target/release/mlperf-host bench "$@" "${json_flag[@]}" | tee "$ours_json"

# Pass the sizes (and case choice) given to us on to the official side.
official_args=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    case ${args[i]} in
        --queries | --samples | --qps | --duration-ms | --qsl-samples | --case | --completion)
            official_args+=("${args[i]}" "${args[i + 1]:-}")
            i=$((i + 1))
            ;;
        --queries=* | --samples=* | --qps=* | --duration-ms=* | --qsl-samples=* | --case=* | --completion=*)
            official_args+=("${args[i]}")
            ;;
    esac
done

echo
bash scripts/setup-official-loadgen.sh
echo "== official: .venv/bin/python scripts/official_bench.py ${official_args[*]}"
official_rc=0
.venv/bin/python scripts/official_bench.py "${official_args[@]}" | tee "$official_json" || official_rc=$?
[[ $official_rc == 0 ]] || echo "warning: the official side failed (exit $official_rc); its rows are missing" >&2

echo
python3 - "$ours_json" "$official_json" <<'EOF'
import json
import sys


def load(path):
    reports = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                report = json.loads(line)
                reports[(report["case"], report.get("completion", "").lower())] = report
    return reports


ours, official = load(sys.argv[1]), load(sys.argv[2])


def num(x, unit=""):
    if x is None:
        return "-"
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return "%.3g%s%s" % (x / scale, suffix, unit)
    return "%.3g%s" % (x, unit)


def ratio(a, b):
    return "%.2fx" % (a / b) if a is not None and b else "-"


def size(report):
    if report is None:
        return "-"
    if report["case"] == "offline":
        return "%s samples" % format(report["samples"], ",")
    return "%s queries" % format(report["queries"], ",")


print("== comparison: ours (mlperf-host, Rust null SUT) vs official (mlcommons-loadgen 6.0.17, Python null SUT)")
print("   ratio > 1 means ours is better: throughput ours/official; start-up, end of run, bytes/sample official/ours")
row = "%-22s %-16s %12s %12s %10s"
different_sizes = False
for key in sorted(set(ours) | set(official), key=lambda k: ["single-stream", "offline", "server"].index(k[0])):
    o, f = ours.get(key), official.get(key)
    error = f.get("error") if f is not None else None
    if error is not None:
        f = None
    print()
    print("%s (%s): ours %s, official %s" % (key[0], key[1], size(o), size(f)))
    if error is not None:
        print("  official side failed: %s" % (error.strip().splitlines() or ["?"])[-1])
    if o is not None and f is not None and (o["queries"], o["samples"]) != (f["queries"], f["samples"]):
        different_sizes = True
    get = lambda r, field: None if r is None else r.get(field)
    print(row % ("", "metric", "ours", "official", "ratio"))
    throughput_ratio = ratio(get(o, "throughput_per_s"), get(f, "throughput_per_s"))
    if key[0] == "server" and o is not None and f is not None and o["queries"] != f["queries"]:
        throughput_ratio = "n/a"  # a Server run completes its target rate: unequal targets
    print(row % ("", "throughput /s", num(get(o, "throughput_per_s")), num(get(f, "throughput_per_s")),
                 throughput_ratio))
    print(row % ("", "start-up ms", num(get(o, "startup_ms")), num(get(f, "startup_ms")),
                 ratio(get(f, "startup_ms"), get(o, "startup_ms"))))
    print(row % ("", "end of run ms", num(get(o, "end_of_run_ms")), num(get(f, "end_of_run_ms")),
                 ratio(get(f, "end_of_run_ms"), get(o, "end_of_run_ms"))))
    print(row % ("", "bytes/sample", num(get(o, "bytes_per_sample")), num(get(f, "bytes_per_sample")),
                 ratio(get(f, "bytes_per_sample"), get(o, "bytes_per_sample"))))
    print(row % ("", "B/sample, whole", num(get(o, "process_bytes_per_sample")),
                 num(get(f, "process_bytes_per_sample")),
                 ratio(get(f, "process_bytes_per_sample"), get(o, "process_bytes_per_sample"))))
    print(row % ("", "peak RSS", num(get(o, "peak_rss_bytes"), "B"), num(get(f, "peak_rss_bytes"), "B"),
                 ratio(get(f, "peak_rss_bytes"), get(o, "peak_rss_bytes"))))
    print(row % ("", "p99 latency ns", num(get(o, "p99_latency_ns")), num(get(f, "p99_latency_ns")), ""))
    valid = lambda r: "-" if r is None else ("VALID" if r.get("valid") else "INVALID")
    print(row % ("", "result", valid(o), valid(f), ""))
if different_sizes:
    print("\nnote: the two sides ran different sizes; start-up, end of run and memory grow with the run")
    print("      and a Server run completes its own target rate, so compare at equal sizes")
    print("      (pass --queries/--samples/--qps/--duration-ms; they go to both sides).")

# The official LoadGen with a C++ SUT, as reported in the project's issue (fixed reference figures).
print()
print("== against the C++ bar (official LoadGen + C++ SUT, figures from the project's issue)")
print("   ratio > 1 means ours is better; sizes differ, so start-up, memory and end of run are per query")
bar_row = "%-25s %-34s %-24s %s"
print(bar_row % ("figure", "C++ bar", "ours", "ratio"))
ss = ours.get(("single-stream", "inline")) or ours.get(("single-stream", "worker"))
off = ours.get(("offline", "inline")) or ours.get(("offline", "worker"))
if ss:
    print(bar_row % ("SingleStream throughput", "1.1M queries/s", num(ss["throughput_per_s"], "/s"),
                     ratio(ss["throughput_per_s"], 1.1e6)))
if off:
    print(bar_row % ("Offline throughput", "5M samples/s", num(off["throughput_per_s"], "/s"),
                     ratio(off["throughput_per_s"], 5e6)))
for completion, bar, low, high in (("worker", "470k qps", 470e3, 470e3), ("inline", "100-170k qps", 100e3, 170e3)):
    server = ours.get(("server", completion))
    if not server:
        continue
    # A fixed-rate run shows capacity only if it ran VALID at (about) the bar's rate or above.
    completed = server["throughput_per_s"]
    verdict = ("%s-%s" % (ratio(completed, high), ratio(completed, low))
               if low != high else ratio(completed, low))
    if not server["valid"] or completed < 0.9 * low:
        verdict = "n/a (a VALID run at --qps >= %s is needed)" % num(low)
    print(bar_row % ("Server %s" % completion, bar, num(server["throughput_per_s"], " qps") +
                     (" VALID" if server["valid"] else " INVALID"), verdict))
if ss and ss["queries"]:
    n = ss["queries"]
    per_query = lambda ms: ms * 1e6 / n  # ns per query
    # 20-28 s at 10-15 M queries: 1.33-2.8 us per query.
    print(bar_row % ("SingleStream start-up", "20-28 s @ 10-15M q (1.3-2.8 us/q)",
                     "%s ms (%.3g ns/q)" % (num(ss["startup_ms"]), per_query(ss["startup_ms"])),
                     "%s-%s" % (ratio(20e9 / 15e6, per_query(ss["startup_ms"])),
                                ratio(28e9 / 10e6, per_query(ss["startup_ms"])))))
    # 8.8 GB at 10-15 M queries: 587-880 bytes per query.
    print(bar_row % ("SingleStream memory", "8.8 GB @ 10-15M q (587-880 B/q)",
                     "%s (%.3g B/q)" % (num(ss["peak_rss_bytes"], "B"), ss["bytes_per_sample"]),
                     "%s-%s" % (ratio(8.8e9 / 15e6, ss["bytes_per_sample"]),
                                ratio(8.8e9 / 10e6, ss["bytes_per_sample"]))))
    # 2-16 s at 5-15 M queries: 0.4-1.07 us per query.
    print(bar_row % ("SingleStream end of run", "2-16 s @ 5-15M q (0.4-1.07 us/q)",
                     "%s ms (%.3g ns/q)" % (num(ss["end_of_run_ms"]), per_query(ss["end_of_run_ms"])),
                     "%s-%s" % (ratio(2e9 / 5e6, per_query(ss["end_of_run_ms"])),
                                ratio(16e9 / 15e6, per_query(ss["end_of_run_ms"])))))
EOF
exit "$official_rc"
