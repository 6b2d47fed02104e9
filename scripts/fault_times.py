"""Measures how long each fault of plugins/faulty takes to end a run, in-process and with
`--isolate process`, and what the run says: its exit status, the summary's result and the
cause it names. The figures of docs/failures.md's closing notes come from here.

    cargo build --release -p mlperf-host -p mlperf-plugin-faulty
    python3 scripts/fault_times.py [--stall-timeout S] [--markdown]

Each run is a SingleStream run of 200,000 queries (well under a second when nothing goes
wrong) whose fault strikes at sample 50; a signal is sent to a run of 10^8 queries half a
second after its detail log appears. The time is from the start (from the signal) to exit."""

import argparse
import json
import os
import signal
import subprocess
import tempfile
import time

EXE = os.path.abspath("target/release/mlperf-host")
PLUGIN = os.path.abspath("target/release/libmlperf_faulty.so")

# (name, --plugin-set fault=..., signal to send, where it applies)
CASES = [
    ("segfault", "segfault", None, ("process",)),
    ("abort", "abort", None, ("process",)),
    ("exit(0)", "exit", None, ("process",)),
    ("SIGKILL (as the OOM killer)", "kill", None, ("process",)),
    ("issue_query never returns", "hang_issue", None, ("none", "process")),
    ("flush_queries never returns", "hang_flush", None, ("none", "process")),
    ("destroy never returns", "hang_destroy", None, ("none", "process")),
    ("no sample completes (hold)", "hold", None, ("none", "process")),
    ("issue_query returns an error", "fail_issue", None, ("none", "process")),
    ("response of 2^64-1 bytes", "huge_response", None, ("none", "process")),
    ("a sample completed twice, an unknown id", "garbage_response", None, ("none", "process")),
    ("SIGTERM to the host", "none", signal.SIGTERM, ("none", "process")),
    ("SIGINT to the host", "none", signal.SIGINT, ("none", "process")),
]


def run(fault, sig, isolate, stall_timeout, out):
    # A signal needs a run still going: 10^8 queries.
    queries = 100_000_000 if sig is not None else 200_000
    command = [
        EXE, "run", "--plugin", PLUGIN, "--isolate", isolate,
        "--plugin-set", f"fault={fault}", "--plugin-set", "at_sample=50",
        "--stall-timeout", str(stall_timeout), "--drain-timeout", "2",
        "--set", "min_duration_ms=0", "--set", f"min_query_count={queries}",
        "--set", "single_stream_expected_latency_ns=1000", "--out", out,
    ]
    started = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if sig is not None:
        detail = os.path.join(out, "mlperf_log_detail.txt")
        while not (os.path.exists(detail) and os.path.getsize(detail) > 0):
            time.sleep(0.005)
        time.sleep(0.5)
        started = time.monotonic()
        child.send_signal(sig)
    try:
        child.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return time.monotonic() - started, "killed after 120 s", "-", "-"
    took = time.monotonic() - started
    summary_path = os.path.join(out, "mlperf_log_summary.txt")
    result = "no summary"
    if os.path.exists(summary_path):
        for line in open(summary_path):
            if line.startswith("Result is"):
                result = line.split(":", 1)[1].strip()
    cause = "-"
    result_path = os.path.join(out, "result.json")
    if os.path.exists(result_path):
        document = json.load(open(result_path))
        # The first error the run logged: the cause (later ones follow from it).
        errors = [d["message"] for d in document.get("diagnostics") or []
                  if d.get("severity") == "Error"]
        cause = (document.get("abandoned") or document.get("aborted")
                 or (errors[0] if errors else "-"))[:100]
    return took, str(child.returncode), result, cause


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stall-timeout", type=float, default=1.0)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, fault, sig, modes in CASES:
            for isolate in modes:
                out = os.path.join(scratch, f"{fault}-{isolate}-{sig or 0}")
                took, status, result, cause = run(fault, sig, isolate, args.stall_timeout, out)
                rows.append((name, isolate, took, status, result, cause))
                print(f"{name:<42} {isolate:<8} {took:6.2f} s  exit {status:<4} {result:<8} {cause}",
                      flush=True)
    if args.markdown:
        print(f"\n| fault | isolate | time to end | exit | result | cause named |")
        print("|---|---|---:|---:|---|---|")
        for name, isolate, took, status, result, cause in rows:
            print(f"| {name} | {isolate} | {took:.2f} s | {status} | {result} | {cause} |")


if __name__ == "__main__":
    main()
