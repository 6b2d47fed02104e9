#!/usr/bin/env python3
"""Run differential-test cases through the official MLPerf LoadGen wheel (mlperf_loadgen).

Usage:
    official_runner.py CASES.json RESULTS.json [--jobs N] [--timeout S] [--keep DIR]

CASES.json is a list of objects
    {"name": str, "total": int, "psc": int,
     "settings": {<TestSettings field>: value, ..., "scenario": "Server", "mode": "PerformanceOnly"}}
(the field names are those of the C++/Rust TestSettings; `server_ttft_latency` and
`server_tpot_latency` are mapped to the Python binding's `ttft_latency` / `tpot_latency`).

For every case the wheel runs in its own subprocess (StartTest is not re-entrant and a crash must not
take the batch down) against a trivial SUT that completes every sample inline with a 4-byte
little-endian payload equal to the sample index. RESULTS.json is a list, in case order, of
    {"name": str,
     "loaded_sets":   [[idx, ...], ...],   # every LoadSamplesToRam vector, in order
     "unloaded_sets": [[idx, ...], ...],   # every UnloadSamplesFromRam vector, in order
     "issued":        [[idx, ...], ...],   # every IssueQuery call's sample indices, in order
     "series_query_counts": [n, ...],      # IssueQuery calls per series (one entry per FlushQueries)
     "scheduled_offsets_ns": [[ns, ...], ...] | null,  # Server only: per series, per issued query,
                                                        # scheduled time minus the series' first one
     "wall_s": float}
or {"name": str, "error": str} when the case failed.

The Server schedule is recovered from the `Sample` async-begin events ("ph":"b") of
mlperf_log_trace.json: for Server their `ts` is the query's scheduled time in microseconds printed
with exactly three decimals, i.e. an exact nanosecond count. The trace is not strict JSON, so it is
scanned line by line with a regular expression.
"""

import argparse
import array
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

# Python binding names that differ from the C++ field names.
FIELD_ALIASES = {
    "server_ttft_latency": "ttft_latency",
    "server_tpot_latency": "tpot_latency",
}

NO_AUDIT_CONFIG = "differential-no-such-audit.config"

SAMPLE_BEGIN_RE = re.compile(
    r'"name":"Sample".*?"ph":"b".*?"ts":(-?)(\d+)\.(\d+).*?'
    r'"sample_seq":(\d+),"query_seq":(\d+),"sample_idx":(\d+)'
)


# ----------------------------------------------------------------------------------------------
# Child side: one case, one process.
# ----------------------------------------------------------------------------------------------

def apply_settings(lg, ts, settings):
    for key, value in settings.items():
        attr = FIELD_ALIASES.get(key, key)
        if key == "scenario":
            ts.scenario = getattr(lg.TestScenario, value)
            continue
        if key == "mode":
            ts.mode = getattr(lg.TestMode, value)
            continue
        if not hasattr(ts, attr):
            raise KeyError("TestSettings has no field %r" % attr)
        current = getattr(ts, attr)
        if isinstance(current, bool):
            if isinstance(value, str):
                value = value.strip().lower() in ("1", "true", "yes")
            setattr(ts, attr, bool(value))
        elif isinstance(current, int):
            setattr(ts, attr, int(value))
        elif isinstance(current, float):
            setattr(ts, attr, float(value))
        else:
            raise TypeError("unsupported TestSettings field %r (%s)" % (attr, type(current).__name__))


def parse_trace_samples(path):
    """Return {query_seq: (scheduled_ns, [sample_idx, ...] in sample_seq order)}."""
    per_query = {}
    with open(path, "r", errors="replace") as f:
        for line in f:
            if '"Sample"' not in line or '"ph":"b"' not in line:
                continue
            m = SAMPLE_BEGIN_RE.search(line)
            if not m:
                raise ValueError("unparsable Sample event: %r" % line[:300])
            neg, ip, fp, sseq, qseq, sidx = m.groups()
            if len(fp) != 3:
                raise ValueError("trace ts without exactly 3 decimals: %r" % line[:300])
            ns = int(ip) * 1000 + int(fp)
            if neg:
                ns = -ns
            entry = per_query.setdefault(int(qseq), [None, []])
            if entry[0] is None:
                entry[0] = ns
            elif entry[0] != ns:
                raise ValueError("query %s has samples with different scheduled times" % qseq)
            entry[1].append((int(sseq), int(sidx)))
    return {q: (e[0], [i for _, i in sorted(e[1])]) for q, e in per_query.items()}


def run_one(case, outdir):
    import mlperf_loadgen as lg

    settings = dict(case["settings"])
    scenario = settings.get("scenario", "SingleStream")
    ts = lg.TestSettings()
    apply_settings(lg, ts, settings)

    loaded, unloaded, issued, flush_marks = [], [], [], []

    def issue_query(samples):
        idx = [s.index for s in samples]
        issued.append(idx)
        payload = array.array("I", [i & 0xFFFFFFFF for i in idx])
        assert payload.itemsize == 4 and sys.byteorder == "little"
        base, _ = payload.buffer_info()
        responses = [lg.QuerySampleResponse(s.id, base + 4 * k, 4) for k, s in enumerate(samples)]
        lg.QuerySamplesComplete(responses)

    def flush_queries():
        flush_marks.append(len(issued))

    def load(indices):
        loaded.append([int(i) for i in indices])

    def unload(indices):
        unloaded.append([int(i) for i in indices])

    sut = lg.ConstructSUT(issue_query, flush_queries)
    qsl = lg.ConstructQSL(int(case["total"]), int(case["psc"]), load, unload)
    log = lg.LogSettings()
    log.log_output.outdir = outdir
    log.enable_trace = scenario == "Server"
    t0 = time.time()
    lg.StartTestWithLogSettings(sut, qsl, ts, log, NO_AUDIT_CONFIG)
    wall = time.time() - t0
    lg.DestroyQSL(qsl)
    lg.DestroySUT(sut)

    counts, prev = [], 0
    for mark in flush_marks:
        counts.append(mark - prev)
        prev = mark
    if prev != len(issued):
        raise RuntimeError("IssueQuery calls after the last FlushQueries: %d" % (len(issued) - prev))

    offsets = None
    if scenario == "Server":
        if settings.get("server_coalesce_queries"):
            raise RuntimeError("schedule recovery does not support server_coalesce_queries")
        per_query = parse_trace_samples(os.path.join(outdir, "mlperf_log_trace.json"))
        seqs = sorted(per_query)
        if len(seqs) != len(issued):
            raise RuntimeError("trace has %d queries with Sample events, SUT saw %d IssueQuery calls"
                               % (len(seqs), len(issued)))
        # Every generated Server query is issued, in query-sequence order (no coalescing).
        for k, q in enumerate(seqs):
            if per_query[q][1] != issued[k]:
                raise RuntimeError("trace query_seq %d samples %r != issued[%d] %r"
                                   % (q, per_query[q][1][:8], k, issued[k][:8]))
        offsets, pos = [], 0
        for n in counts:
            times = [per_query[q][0] for q in seqs[pos:pos + n]]
            offsets.append([t - times[0] for t in times] if times else [])
            pos += n

    return {
        "name": case["name"],
        "loaded_sets": loaded,
        "unloaded_sets": unloaded,
        "issued": issued,
        "series_query_counts": counts,
        "scheduled_offsets_ns": offsets,
        "wall_s": round(wall, 3),
    }


def child_main(case_path, result_path):
    with open(case_path) as f:
        case = json.load(f)
    outdir = os.path.dirname(os.path.abspath(result_path))
    os.chdir(outdir)  # so that a relative audit config name cannot be found by accident
    try:
        result = run_one(case, outdir)
    except Exception:
        result = {"name": case.get("name"), "error": traceback.format_exc()}
    with open(result_path, "w") as f:
        json.dump(result, f, separators=(",", ":"))


# ----------------------------------------------------------------------------------------------
# Parent side: batch of cases.
# ----------------------------------------------------------------------------------------------

def run_case_subprocess(case, workdir, timeout):
    name = case.get("name", "?")
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:80] or "case"
    casedir = tempfile.mkdtemp(prefix=safe + "-", dir=workdir)
    case_path = os.path.join(casedir, "case.json")
    result_path = os.path.join(casedir, "result.json")
    with open(case_path, "w") as f:
        json.dump(case, f)
    cmd = [sys.executable, os.path.abspath(__file__), "--one", case_path, result_path]
    try:
        proc = subprocess.run(cmd, cwd=casedir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=timeout)
    except subprocess.TimeoutExpired as e:
        tail = (e.output or b"")[-2000:].decode(errors="replace")
        return {"name": name, "error": "timed out after %ss; output tail:\n%s" % (timeout, tail)}
    if not os.path.exists(result_path):
        tail = proc.stdout[-3000:].decode(errors="replace")
        return {"name": name,
                "error": "runner subprocess exited with %d and no result; output tail:\n%s"
                         % (proc.returncode, tail)}
    with open(result_path) as f:
        result = json.load(f)
    if proc.returncode != 0 and "error" not in result:
        result = {"name": name, "error": "runner subprocess exited with %d" % proc.returncode}
    return result


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--one":
        child_main(sys.argv[2], sys.argv[3])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases")
    ap.add_argument("results")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=600.0, help="per-case timeout in seconds")
    ap.add_argument("--keep", default=None, help="keep the per-case output directories here")
    a = ap.parse_args()

    import mlperf_loadgen  # noqa: F401  (fail fast if the wheel is missing)

    with open(a.cases) as f:
        cases = json.load(f)
    workdir = a.keep or tempfile.mkdtemp(prefix="mlperf-official-")
    os.makedirs(workdir, exist_ok=True)
    t0 = time.time()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            futures = [pool.submit(run_case_subprocess, c, workdir, a.timeout) for c in cases]
            results = [fut.result() for fut in futures]
    finally:
        if not a.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    with open(a.results, "w") as f:
        json.dump(results, f, separators=(",", ":"))
    failed = sum(1 for r in results if "error" in r)
    print("official_runner: %d cases, %d errors, %.1f s" % (len(results), failed, time.time() - t0),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
