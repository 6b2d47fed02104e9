#!/usr/bin/env python3
"""The official side of `mlperf-host bench`: the same null-SUT cases through the official LoadGen.

Runs SingleStream, Offline and Server with the TestSettings of host/src/engine_bench/mod.rs against the
official `mlperf_loadgen` wheel and a null SUT written in Python, and prints one JSON object per
case with the field names of `mlperf-host bench --json`, plus `"sut": "python"` and the official
LoadGen's own `result_*` figures under `"official"`.

The SUT is Python, so every query pays for the GIL and for Python objects; the figures are an
upper bound on the official LoadGen's overhead, not what it reaches with a C++ SUT.

Usage:
    official_bench.py [--case all|single-stream|offline|server] [--queries N] [--samples N]
                      [--qps Q] [--duration-ms D] [--completion inline|worker] [--qsl-samples N]
                      [--keep-logs DIR]
"""

import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time

# The defaults are smaller than mlperf-host's: a Python SUT is 10-100x slower per query.
DEFAULT_QUERIES = 200_000
DEFAULT_SAMPLES = 2_000_000
DEFAULT_QPS = 20_000.0
DEFAULT_DURATION_MS = 10_000

# Same batch bound as the Rust worker SUT, so both sides make comparable completion calls.
BATCH = 4096

# What `--case all` runs, as `mlperf-host bench` does.
ALL_CASES = [("single-stream", "inline"), ("offline", "inline"), ("server", "worker")]

now_ns = time.perf_counter_ns  # CLOCK_MONOTONIC: comparable across threads


def peak_rss_bytes():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def settings_for(lg, case, args):
    """The TestSettings of bench.rs (single_stream_settings, offline_settings, server_settings)."""
    ts = lg.TestSettings()
    ts.mode = lg.TestMode.PerformanceOnly
    if case == "single-stream":
        ts.scenario = lg.TestScenario.SingleStream
        ts.min_query_count = args.queries
        ts.min_duration_ms = 0
        # Tiny expected latency, so the query count alone sizes the run.
        ts.single_stream_expected_latency_ns = 1_000
    elif case == "offline":
        ts.scenario = lg.TestScenario.Offline
        ts.min_query_count = args.samples
        ts.min_duration_ms = 0
        ts.offline_expected_qps = 1.0
    elif case == "server":
        ts.scenario = lg.TestScenario.Server
        ts.server_target_qps = args.qps
        ts.server_target_latency_ns = 10_000_000
        ts.min_duration_ms = args.duration_ms
        ts.min_query_count = 100
    else:
        raise ValueError("unknown case %r" % case)
    return ts


class NullSut:
    """Completes every sample with an empty response, inline or from one worker thread."""

    def __init__(self, lg, completion):
        self.lg = lg
        self.first_issue = None
        self.last_issue = None
        self.last_completion = None
        self.queries = 0
        self.samples = 0
        self.pending = None
        self.worker = None
        if completion == "worker":
            # SimpleQueue is C-implemented and lock-light: the Python analogue of the Rust channel.
            self.pending = queue.SimpleQueue()
            self.worker = threading.Thread(target=self._work, name="null-sut-worker", daemon=True)
            self.worker.start()

    def issue_query(self, samples):
        t = now_ns()
        if self.first_issue is None:
            self.first_issue = t
        self.last_issue = t
        self.queries += 1
        self.samples += len(samples)
        if self.pending is not None:
            self.pending.put([s.id for s in samples])
            return
        responses = [self.lg.QuerySampleResponse(s.id, 0, 0) for s in samples]
        # LoadGen timestamps a completion when the call starts, so take ours just before it.
        self.last_completion = now_ns()
        self.lg.QuerySamplesComplete(responses)

    def flush_queries(self):
        pass

    def _work(self):
        lg, pending = self.lg, self.pending
        stop = False
        while not stop:
            ids = pending.get()
            if ids is None:
                break
            # Drain what else is queued so one completion call serves many queries.
            while len(ids) < BATCH:
                try:
                    more = pending.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                ids.extend(more)
            responses = [lg.QuerySampleResponse(i, 0, 0) for i in ids]
            self.last_completion = now_ns()
            lg.QuerySamplesComplete(responses)

    def shut_down(self):
        if self.worker is not None:
            self.pending.put(None)
            self.worker.join()


def read_detail_log(path):
    """The `:::MLLOG {json}` entries of mlperf_log_detail.txt as {key: value} (last one wins)."""
    entries = {}
    with open(path, errors="replace") as log:
        for line in log:
            if not line.startswith(":::MLLOG "):
                continue
            try:
                entry = json.loads(line[len(":::MLLOG "):])
            except ValueError:
                continue
            entries[entry.get("key")] = entry.get("value")
    return entries


def run_case(case, completion, args):
    """One StartTest, measured; call in a process of its own so VmHWM belongs to this case."""
    import mlperf_loadgen as lg

    settings = settings_for(lg, case, args)
    sut = NullSut(lg, completion)
    sut_handle = lg.ConstructSUT(sut.issue_query, sut.flush_queries)
    qsl_handle = lg.ConstructQSL(args.qsl_samples, args.qsl_samples, lambda _: None, lambda _: None)

    logdir_holder = None
    if args.keep_logs:
        logdir = os.path.join(os.path.abspath(args.keep_logs), case)
        os.makedirs(logdir, exist_ok=True)
    else:
        logdir_holder = tempfile.TemporaryDirectory(prefix="official-bench-")
        logdir = logdir_holder.name
    log_settings = lg.LogSettings()
    log_settings.log_output.outdir = logdir
    log_settings.enable_trace = False
    # A path that does not exist: no stray audit.config in the working directory may apply.
    no_audit = os.path.join(logdir, "no-audit.config")

    rss_before = peak_rss_bytes()
    started = now_ns()
    lg.StartTestWithLogSettings(sut_handle, qsl_handle, settings, log_settings, no_audit)
    returned = now_ns()
    sut.shut_down()
    peak = peak_rss_bytes()

    log = read_detail_log(os.path.join(logdir, "mlperf_log_detail.txt"))
    lg.DestroyQSL(qsl_handle)
    lg.DestroySUT(sut_handle)
    if logdir_holder is not None:
        logdir_holder.cleanup()

    first_issue = sut.first_issue if sut.first_issue is not None else started
    last_completion = sut.last_completion if sut.last_completion is not None else returned
    # Throughput as the SUT sees it: SingleStream over the issue phase (first to last
    # IssueQuery), Offline from the IssueQuery callback to the completion call.
    if case == "single-stream":
        sut_span_s = (sut.last_issue - first_issue) / 1e9 if sut.last_issue else 0.0
        sut_throughput = sut.queries / sut_span_s if sut_span_s > 0 else 0.0
    elif case == "offline":
        sut_span_s = (last_completion - first_issue) / 1e9
        sut_throughput = sut.samples / sut_span_s if sut_span_s > 0 else 0.0
    else:
        sut_throughput = None
    throughput = sut_throughput
    if case == "offline" and log.get("result_max_latency_ns"):
        # bench.rs divides by the query's latency as LoadGen timed it (from its issue, which
        # precedes the callback by the binding's conversion of every sample to Python).
        throughput = sut.samples / (log["result_max_latency_ns"] / 1e9)
    elif case == "server":
        throughput = float(log.get("result_completed_samples_per_sec") or 0.0)

    p99 = log.get("result_99.00_percentile_latency_ns")
    official = {k: v for k, v in sorted(log.items()) if k and k.startswith("result_")}
    return {
        "case": case,
        # Capitalised like the Rust side's serde output.
        "completion": completion.capitalize(),
        "valid": log.get("result_validity") == "VALID",
        "queries": sut.queries,
        "samples": sut.samples,
        "throughput_per_s": throughput,
        "startup_ms": (first_issue - started) / 1e6,
        "end_of_run_ms": max(returned - last_completion, 0) / 1e6,
        "total_ms": (returned - started) / 1e6,
        "peak_rss_bytes": peak,
        "bytes_per_sample": max(peak - rss_before, 0) / max(sut.samples, 1),
        "process_bytes_per_sample": peak / max(sut.samples, 1),
        "p99_latency_ns": int(p99) if p99 is not None else None,
        "sut": "python",
        "sut_measured_throughput_per_s": sut_throughput,
        "loadgen_version": log.get("loadgen_version"),
        "official": official,
    }


def run_child(case, completion, args):
    """Runs one case in a fresh interpreter and returns its report (or an error report)."""
    command = [
        sys.executable, os.path.abspath(__file__), "--child",
        "--case", case, "--completion", completion,
        "--queries", str(args.queries), "--samples", str(args.samples),
        "--qps", repr(args.qps), "--duration-ms", str(args.duration_ms),
        "--qsl-samples", str(args.qsl_samples),
    ]
    if args.keep_logs:
        command += ["--keep-logs", args.keep_logs]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"case": case, "completion": completion.capitalize(), "sut": "python",
                "error": "exit %d: %s" % (done.returncode, done.stderr.strip()[-2000:])}
    return json.loads(lines[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", default="all",
                        choices=["all", "single-stream", "offline", "server"])
    parser.add_argument("--queries", type=int, default=DEFAULT_QUERIES,
                        help="SingleStream: queries to issue")
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES,
                        help="Offline: samples in the one query")
    parser.add_argument("--qps", type=float, default=DEFAULT_QPS, help="Server: target qps")
    parser.add_argument("--duration-ms", type=int, default=DEFAULT_DURATION_MS,
                        help="Server: minimum duration in ms")
    parser.add_argument("--completion", default="inline", choices=["inline", "worker"],
                        help="how the null SUT completes samples (single cases only)")
    parser.add_argument("--qsl-samples", type=int, default=1024, help="samples in the QSL")
    parser.add_argument("--keep-logs", metavar="DIR",
                        help="keep the LoadGen logs under DIR/<case> instead of a temp dir")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        print(json.dumps(run_case(args.case, args.completion, args)), flush=True)
        return 0

    print("official side (Python SUT): SingleStream %d queries, Offline %d samples, "
          "Server %g qps for %d ms" % (args.queries, args.samples, args.qps, args.duration_ms),
          file=sys.stderr)
    cases = ALL_CASES if args.case == "all" else [(args.case, args.completion)]
    failed = False
    for case, completion in cases:
        report = run_child(case, completion, args)
        failed |= "error" in report
        print(json.dumps(report), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
