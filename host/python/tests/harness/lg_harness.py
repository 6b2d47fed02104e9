#!/usr/bin/env python3
"""A small MLPerf LoadGen harness written against the official ``mlperf_loadgen`` API only.

It is the kind of harness the official wheel's users write: a SUT built with ``ConstructSUT``,
a QSL built with ``ConstructQSL``, every sample answered with a 4-byte payload (the sample
index, little-endian) through ``QuerySampleResponse(id, address, size)`` on an ``array.array``
buffer, either inline in the issue callback or from worker threads fed by a queue. Token runs
(``--tokens``, ``use_token_latencies``) report ``FirstTokenComplete`` first and then
``QuerySamplesComplete`` with ``n_tokens``.

Usage:
    lg_harness.py --scenario Server --mode PerformanceOnly --completion worker [--tokens]
                  --outdir DIR [--total N] [--psc N] [--workers N] [--set FIELD=VALUE ...]

The LoadGen logs go to DIR, and DIR/harness.json gets
    {"module": <mlperf_loadgen.__name__ as imported>,
     "loaded_sets": [[idx, ...], ...], "unloaded_sets": [[idx, ...], ...],
     "issued": [[idx, ...], ...],            # every IssueQuery call's sample indices, in order
     "flushes": n, "completed_samples": n, "first_tokens": n, "settings": {...}}

Which module serves ``import mlperf_loadgen`` is up to the environment (PYTHONPATH); this file
does not care.
"""

import argparse
import array
import json
import os
import queue
import sys
import threading

import mlperf_loadgen as lg

SCENARIOS = ("SingleStream", "MultiStream", "Server", "Offline")
MODES = ("PerformanceOnly", "AccuracyOnly", "SubmissionRun")

# Per-scenario settings that keep the issued query count independent of timing
# (min_duration_ms 0: the count is min_query_count, or the Offline query size).
SCENARIO_DEFAULTS = {
    "SingleStream": {"min_duration_ms": 0, "min_query_count": 200,
                     "single_stream_expected_latency_ns": 100000},
    "MultiStream": {"min_duration_ms": 0, "min_query_count": 80,
                    "multi_stream_samples_per_query": 8,
                    "multi_stream_expected_latency_ns": 100000},
    "Server": {"min_duration_ms": 0, "min_query_count": 300, "server_target_qps": 4000.0},
    "Offline": {"min_duration_ms": 0, "min_query_count": 400, "offline_expected_qps": 1000.0},
}

# Samples handed to a worker at a time (a query may be completed in several calls).
CHUNK = 32


def parse_value(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


def apply_settings(ts, settings):
    for key, value in settings.items():
        if key == "scenario":
            ts.scenario = getattr(lg.TestScenario, value)
        elif key == "mode":
            ts.mode = getattr(lg.TestMode, value)
        else:
            current = getattr(ts, key)  # AttributeError for a field the API does not have
            if isinstance(current, bool):
                setattr(ts, key, bool(value))
            elif isinstance(current, int):
                setattr(ts, key, int(value))
            else:
                setattr(ts, key, float(value))


def n_tokens_for(index):
    return 2 + index % 7


class Harness:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.loaded = []
        self.unloaded = []
        self.issued = []
        self.flushes = 0
        self.completed = 0
        self.first_tokens = 0
        self.work = queue.Queue()
        self.workers = []
        self.errors = []

    # -- completing -----------------------------------------------------------------------

    def complete(self, pairs):
        """Answers (id, index) pairs: the index as a 4-byte little-endian payload."""
        payload = array.array("I", [index & 0xFFFFFFFF for _, index in pairs])
        assert payload.itemsize == 4 and sys.byteorder == "little"
        base, _ = payload.buffer_info()
        if self.args.tokens:
            for k, (sid, index) in enumerate(pairs):
                address = base + 4 * k
                lg.FirstTokenComplete([lg.QuerySampleResponse(sid, address, 4)])
                lg.QuerySamplesComplete(
                    [lg.QuerySampleResponse(sid, address, 4, n_tokens_for(index))])
            first = len(pairs)
        else:
            responses = [lg.QuerySampleResponse(sid, base + 4 * k, 4)
                         for k, (sid, _) in enumerate(pairs)]
            lg.QuerySamplesComplete(responses)
            first = 0
        with self.lock:
            self.completed += len(pairs)
            self.first_tokens += first

    def worker(self):
        while True:
            item = self.work.get()
            if item is None:
                return
            try:
                self.complete(item)
            except BaseException as err:  # keep going: a lost sample would hang the test
                self.errors.append(repr(err))

    # -- LoadGen callbacks ----------------------------------------------------------------

    def issue_query(self, samples):
        pairs = [(s.id, s.index) for s in samples]
        with self.lock:
            self.issued.append([index for _, index in pairs])
        if self.args.completion == "inline":
            self.complete(pairs)
        else:
            for start in range(0, len(pairs), CHUNK):
                self.work.put(pairs[start:start + CHUNK])

    def flush_queries(self):
        with self.lock:
            self.flushes += 1

    def load_samples(self, indices):
        self.loaded.append([int(i) for i in indices])

    def unload_samples(self, indices):
        self.unloaded.append([int(i) for i in indices])

    # -- the run ---------------------------------------------------------------------------

    def run(self, settings):
        args = self.args
        if args.completion == "worker":
            for k in range(args.workers):
                t = threading.Thread(target=self.worker, name="completer-%d" % k, daemon=True)
                t.start()
                self.workers.append(t)

        ts = lg.TestSettings()
        apply_settings(ts, settings)
        sut = lg.ConstructSUT(self.issue_query, self.flush_queries)
        qsl = lg.ConstructQSL(args.total, args.psc, self.load_samples, self.unload_samples)
        log = lg.LogSettings()
        log.log_output.outdir = args.outdir
        log.log_output.copy_summary_to_stdout = False
        log.enable_trace = False
        try:
            # No audit.config can be found: the run directory is the (fresh) outdir.
            lg.StartTestWithLogSettings(sut, qsl, ts, log, "harness-no-such-audit.config")
        finally:
            for _ in self.workers:
                self.work.put(None)
            for t in self.workers:
                t.join()
            lg.DestroyQSL(qsl)
            lg.DestroySUT(sut)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", required=True, choices=SCENARIOS)
    ap.add_argument("--mode", default="PerformanceOnly", choices=MODES)
    ap.add_argument("--completion", default="inline", choices=("inline", "worker"))
    ap.add_argument("--tokens", action="store_true", help="use_token_latencies run")
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--total", type=int, default=1000, help="QSL total sample count")
    ap.add_argument("--psc", type=int, default=256, help="QSL performance sample count")
    ap.add_argument("--workers", type=int, default=3, help="completion threads (worker mode)")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                    help="a TestSettings field (value parsed as JSON when it is)")
    args = ap.parse_args(argv)

    settings = {"scenario": args.scenario, "mode": args.mode}
    settings.update(SCENARIO_DEFAULTS[args.scenario])
    if args.tokens:
        settings["use_token_latencies"] = True
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            ap.error("--set wants FIELD=VALUE, got %r" % item)
        settings[key.strip()] = parse_value(value.strip())

    os.makedirs(args.outdir, exist_ok=True)
    args.outdir = os.path.abspath(args.outdir)
    os.chdir(args.outdir)

    harness = Harness(args)
    harness.run(settings)
    record = {
        "module": lg.__name__,
        "settings": settings,
        "loaded_sets": harness.loaded,
        "unloaded_sets": harness.unloaded,
        "issued": harness.issued,
        "flushes": harness.flushes,
        "completed_samples": harness.completed,
        "first_tokens": harness.first_tokens,
        "errors": harness.errors,
    }
    with open(os.path.join(args.outdir, "harness.json"), "w") as f:
        json.dump(record, f, separators=(",", ":"))
    return 1 if harness.errors else 0


if __name__ == "__main__":
    sys.exit(main())
