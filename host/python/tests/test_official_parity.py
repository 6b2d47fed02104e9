"""The official wheel's own usage, run unchanged against our module.

Harnesses written for ``mlperf_loadgen`` run twice, each in subprocesses: once as they are
(the official 6.0.17 wheel) and once with ``host/python/alias`` on ``PYTHONPATH``, which makes
``import mlperf_loadgen`` load ``mlperf_host.loadgen``. Nothing in either harness changes.

1. ``tests/differential/official_runner.py`` (the Rust differential test's runner, unchanged) on
   a fixed list of cases: all four scenarios; PerformanceOnly, AccuracyOnly, SubmissionRun;
   several seeds; a QSL over 65536 samples; MultiStream samples per query; Server QPS; issue
   unique / same; sample-count overrides. Per case, both sides must record the same
   LoadSamplesToRam / UnloadSamplesFromRam vectors, IssueQuery index lists, per-series query
   counts and (Server) scheduled offsets, the latter read from ``mlperf_log_trace.json``.
2. ``harness/lg_harness.py``, a harness in the style of the MLPerf reference implementations:
   ``ConstructSUT`` / ``ConstructQSL``, 4-byte payloads through ``QuerySampleResponse(id,
   address, size)``, completions inline or from worker threads, token runs with
   ``FirstTokenComplete`` and ``n_tokens``. Both sides must issue the same samples.
3. The logs our side writes in (2) must be what the log tests accept: strict JSON on every
   ``:::MLLOG`` line with the official fields; every detail-log key the official run wrote (but
   its timing-only logger warnings); the settings-derived values equal; the summary's line
   labels in the official order; the accuracy log valid JSON with the official entries.

Every setting keeps the issued query count independent of timing (min_duration_ms 0, so the
count is min_query_count or the Offline query size; Server durations only over the generated
schedule), as in ``host/tests/all/differential_official.rs``.

Skipped when ``mlperf_loadgen`` (the official wheel) cannot be imported; failed then if ``CI``
is set.
"""

import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
ALIAS = REPO / "host" / "python" / "alias"
RUNNER = REPO / "tests" / "differential" / "official_runner.py"
HARNESS = HERE / "harness" / "lg_harness.py"
PYTHON = sys.executable

OFFICIAL_NAME = "mlperf_loadgen"
OURS_NAME = "mlperf_host.loadgen"
SIDES = ("official", "ours")


def side_env(side):
    """The environment of a subprocess: the same interpreter, ours through the alias."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the alias or harness folders
    if side == "ours":
        env["PYTHONPATH"] = str(ALIAS)  # absolute: the runner's children chdir
    return env


def probe(side):
    """`mlperf_loadgen.__name__` as `import mlperf_loadgen` gives it on `side`, or the error."""
    try:
        proc = subprocess.run(
            [PYTHON, "-c", "import mlperf_loadgen as m; print(m.__name__)"],
            env=side_env(side), cwd=str(REPO), capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as err:
        return None, repr(err)
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1:] or ["exit %d" % proc.returncode]
    return proc.stdout.strip(), None


_official_name, _official_error = probe("official")
if _official_name != OFFICIAL_NAME:
    _reason = (
        "the official wheel (mlperf_loadgen, mlcommons-loadgen==6.0.17) is not importable by %s "
        "(import gave %r, error %r); install it with `.venv/bin/pip install "
        "mlcommons-loadgen==6.0.17`" % (PYTHON, _official_name, _official_error))
    if os.environ.get("CI"):
        pytest.fail("CI is set: " + _reason, pytrace=False)
    pytest.skip(_reason, allow_module_level=True)


# ------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------


def first_difference(official, ours, path="$"):
    """Where two JSON-like values first differ, with a little context; None when equal."""
    if official == ours:
        return None
    if isinstance(official, list) and isinstance(ours, list):
        for k, (a, b) in enumerate(zip(official, ours)):
            if a != b:
                return first_difference(a, b, "%s[%d]" % (path, k))
        return "%s: official has %d elements, ours %d (first extra: %r)" % (
            path, len(official), len(ours),
            (official[len(ours)] if len(official) > len(ours) else ours[len(official)]))
    if isinstance(official, dict) and isinstance(ours, dict):
        for key in sorted(set(official) | set(ours), key=str):
            if official.get(key, "<missing>") != ours.get(key, "<missing>"):
                return first_difference(official.get(key, "<missing>"),
                                        ours.get(key, "<missing>"), "%s.%s" % (path, key))
    return "%s: official %.200r != ours %.200r" % (path, official, ours)


def strict_json(text):
    """json.loads that refuses NaN / Infinity, which strict JSON readers reject."""
    def refuse(name):
        raise ValueError("non-JSON constant %s" % name)
    return json.loads(text, parse_constant=refuse)


# ------------------------------------------------------------------------------------------
# Part 0: the switch itself
# ------------------------------------------------------------------------------------------


def test_the_alias_switches_mlperf_loadgen_to_ours():
    assert _official_name == OFFICIAL_NAME
    name, error = probe("ours")
    assert name == OURS_NAME, "with PYTHONPATH=%s, import mlperf_loadgen gave %r (%r)" % (
        ALIAS, name, error)


def test_the_harness_is_written_for_mlperf_loadgen_only():
    source = HARNESS.read_text()
    assert "import mlperf_loadgen as lg" in source
    assert "mlperf_host" not in source


# ------------------------------------------------------------------------------------------
# Part 1: tests/differential/official_runner.py, unchanged
# ------------------------------------------------------------------------------------------

SEEDS = [
    (0x1D6BC4B9A5F3E201, 0x9E3779B97F4A7C15, 0x00000000DEADBEEF),
    # The official v6.1 seeds (mlperf.conf).
    (2085463073848966840, 2747215439041700203, 16159082839903944936),
    (0xFFFFFFFFFFFFFFFF, 0, 1 << 32),
    (12345, 67890, 424242),
]


def _case(name, total, psc, seeds, **settings):
    q, s, c = SEEDS[seeds]
    settings.update(qsl_rng_seed=q, sample_index_rng_seed=s, schedule_rng_seed=c)
    return {"name": name, "total": total, "psc": psc, "settings": settings}


RUNNER_CASES = [
    _case("p00-SingleStream-Perf", 1000, 256, 0, scenario="SingleStream", mode="PerformanceOnly",
          min_duration_ms=0, min_query_count=300),
    _case("p01-SingleStream-Acc-accovr", 500, 100, 1, scenario="SingleStream", mode="AccuracyOnly",
          min_duration_ms=0, accuracy_sample_count_override=333),
    _case("p02-SingleStream-Sub-eq-accovr", 2000, 512, 2, scenario="SingleStream",
          mode="SubmissionRun", min_duration_ms=0, min_query_count=100,
          sample_concatenate_permutation=True, accuracy_sample_count_override=700),
    # QSL over 65536 samples, loaded set over 65536, issue-unique.
    _case("p03-SingleStream-Perf-large-unique-ovr", 70000, 100, 3, scenario="SingleStream",
          mode="PerformanceOnly", min_duration_ms=0, min_query_count=200,
          performance_issue_unique=True, performance_sample_count_override=65540),
    _case("p04-SingleStream-Perf-maxq", 300, 10, 0, scenario="SingleStream",
          mode="PerformanceOnly", min_duration_ms=0, min_query_count=50, max_query_count=20),
    _case("p05-MultiStream-Perf-spq8", 700, 300, 1, scenario="MultiStream",
          mode="PerformanceOnly", min_duration_ms=0, min_query_count=100,
          multi_stream_samples_per_query=8),
    _case("p06-MultiStream-Acc-spq5", 250, 64, 2, scenario="MultiStream", mode="AccuracyOnly",
          min_duration_ms=0, multi_stream_samples_per_query=5),
    _case("p07-MultiStream-Sub-same-spq16", 3000, 1024, 3, scenario="MultiStream",
          mode="SubmissionRun", min_duration_ms=0, min_query_count=50,
          multi_stream_samples_per_query=16, performance_issue_same=True,
          performance_issue_same_index=17, accuracy_sample_count_override=900),
    _case("p08-MultiStream-Perf-ovr-gt-total", 20, 20, 0, scenario="MultiStream",
          mode="PerformanceOnly", min_duration_ms=0, min_query_count=30,
          performance_sample_count_override=33, multi_stream_samples_per_query=5),
    _case("p09-Server-Perf", 1000, 200, 1, scenario="Server", mode="PerformanceOnly",
          min_duration_ms=0, min_query_count=400, server_target_qps=5000.0),
    _case("p10-Server-Acc", 600, 150, 2, scenario="Server", mode="AccuracyOnly",
          min_duration_ms=0, server_target_qps=20000.0),
    _case("p11-Server-Sub-unique", 800, 400, 3, scenario="Server", mode="SubmissionRun",
          min_duration_ms=0, min_query_count=300, server_target_qps=10000.0,
          performance_issue_unique=True),
    # The generated schedule covers min_duration: 40 ms at 3000 QPS outnumber 10 queries.
    _case("p12-Server-Perf-duration", 500, 50, 0, scenario="Server", mode="PerformanceOnly",
          min_duration_ms=40, min_query_count=10, server_target_qps=3000.0),
    _case("p13-Server-Perf-qps1e9", 100, 50, 1, scenario="Server", mode="PerformanceOnly",
          min_duration_ms=0, min_query_count=500, server_target_qps=1e9),
    # 1.1 * 9.2 s * 25 QPS = 253, but the official evaluation order gives 252.
    _case("p14-Offline-Perf-round-9200ms-25qps", 1000, 300, 2, scenario="Offline",
          mode="PerformanceOnly", min_duration_ms=9200, min_query_count=1,
          offline_expected_qps=25.0),
    _case("p15-Offline-Acc-eq", 300, 70, 3, scenario="Offline", mode="AccuracyOnly",
          min_duration_ms=0, sample_concatenate_permutation=True),
    _case("p16-Offline-Sub-large", 66000, 65600, 0, scenario="Offline", mode="SubmissionRun",
          min_duration_ms=0, min_query_count=5000, offline_expected_qps=1000.0,
          accuracy_sample_count_override=3000),
    _case("p17-Offline-Perf-ovr-gt-total", 30, 10, 1, scenario="Offline",
          mode="PerformanceOnly", min_duration_ms=0, min_query_count=5,
          performance_sample_count_override=45),
]

RUNNER_FIELDS = ("loaded_sets", "unloaded_sets", "issued", "series_query_counts",
                 "scheduled_offsets_ns")


@pytest.fixture(scope="module")
def runner_results(tmp_path_factory):
    """{side: {case name: result}} from official_runner.py run once per side."""
    work = tmp_path_factory.mktemp("official-runner")
    cases_path = work / "CASES.json"
    cases_path.write_text(json.dumps(RUNNER_CASES, indent=1))

    def run(side):
        results_path = work / ("RESULTS-%s.json" % side)
        proc = subprocess.run(
            [PYTHON, str(RUNNER), str(cases_path), str(results_path), "--jobs", "2",
             "--timeout", "120"],
            env=side_env(side), cwd=str(work), capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0 and results_path.exists(), (
            "official_runner.py (%s) exited %d:\n%s" % (side, proc.returncode, proc.stderr[-3000:]))
        results = json.loads(results_path.read_text())
        assert [r["name"] for r in results] == [c["name"] for c in RUNNER_CASES]
        return {r["name"]: r for r in results}

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {side: pool.submit(run, side) for side in SIDES}
        return {side: fut.result() for side, fut in futures.items()}


@pytest.mark.parametrize("case", RUNNER_CASES, ids=[c["name"] for c in RUNNER_CASES])
def test_official_runner_case_matches(runner_results, case):
    name = case["name"]
    official = runner_results["official"][name]
    ours = runner_results["ours"][name]
    assert "error" not in official, "the official side failed:\n%s" % official["error"]
    if "error" in ours:
        hint = ""
        if "different scheduled times" in ours["error"]:
            hint = ("\nHINT: our mlperf_log_trace.json numbers `query_seq` from 0 again in every "
                    "series (each accuracy set, then the performance run), while the official "
                    "LoadGen numbers queries across the whole test, so the runner sees one "
                    "query_seq with several scheduled times.")
        pytest.fail("our side failed on case %s:\n%s%s\ncase: %s" % (
            name, ours["error"][-2500:], hint, json.dumps(case)), pytrace=False)
    problems = []
    for field in RUNNER_FIELDS:
        diff = first_difference(official[field], ours[field], field)
        if diff:
            problems.append(diff)
    assert not problems, "case %s (%s):\n  %s" % (name, json.dumps(case), "\n  ".join(problems))
    assert sum(official["series_query_counts"]) == len(official["issued"]) > 0


# ------------------------------------------------------------------------------------------
# Part 2: harness/lg_harness.py on both modules
# ------------------------------------------------------------------------------------------


def _combo(cid, scenario, mode, completion, tokens=False, total=1000, psc=256, seeds=0,
           **settings):
    q, s, c = SEEDS[seeds]
    argv = ["--scenario", scenario, "--mode", mode, "--completion", completion,
            "--total", str(total), "--psc", str(psc),
            "--set", "qsl_rng_seed=%d" % q, "--set", "sample_index_rng_seed=%d" % s,
            "--set", "schedule_rng_seed=%d" % c]
    if tokens:
        argv.append("--tokens")
    for key, value in settings.items():
        argv += ["--set", "%s=%s" % (key, json.dumps(value))]
    return {"id": cid, "scenario": scenario, "mode": mode, "completion": completion,
            "tokens": tokens, "argv": argv}


HARNESS_COMBOS = [
    _combo("SingleStream-Perf-inline", "SingleStream", "PerformanceOnly", "inline", seeds=0),
    _combo("SingleStream-Acc-worker", "SingleStream", "AccuracyOnly", "worker", total=500,
           psc=128, seeds=1),
    _combo("SingleStream-Sub-inline-eq", "SingleStream", "SubmissionRun", "inline", total=400,
           psc=150, seeds=2, sample_concatenate_permutation=True, min_query_count=120),
    _combo("MultiStream-Perf-worker", "MultiStream", "PerformanceOnly", "worker", total=700,
           psc=300, seeds=1),
    _combo("MultiStream-Acc-inline", "MultiStream", "AccuracyOnly", "inline", total=250, psc=64,
           seeds=2, multi_stream_samples_per_query=5),
    _combo("MultiStream-Sub-worker", "MultiStream", "SubmissionRun", "worker", total=600,
           psc=200, seeds=3, multi_stream_samples_per_query=4, accuracy_sample_count_override=200),
    _combo("Server-Perf-worker", "Server", "PerformanceOnly", "worker", seeds=3),
    _combo("Server-Acc-inline", "Server", "AccuracyOnly", "inline", total=400, psc=100, seeds=0,
           server_target_qps=8000.0),
    _combo("Server-Sub-worker-unique", "Server", "SubmissionRun", "worker", total=400, psc=200,
           seeds=1, server_target_qps=8000.0, min_query_count=200, performance_issue_unique=True),
    _combo("Offline-Perf-worker", "Offline", "PerformanceOnly", "worker", seeds=2),
    _combo("Offline-Acc-inline-eq", "Offline", "AccuracyOnly", "inline", total=500, psc=128,
           seeds=3, sample_concatenate_permutation=True),
    _combo("Offline-Sub-worker", "Offline", "SubmissionRun", "worker", total=600, psc=256,
           seeds=0, min_query_count=300),
    _combo("SingleStream-Perf-worker-tokens", "SingleStream", "PerformanceOnly", "worker",
           tokens=True, seeds=1, min_query_count=100),
    _combo("Server-Perf-inline-tokens", "Server", "PerformanceOnly", "inline", tokens=True,
           seeds=2, min_query_count=200),
    _combo("Offline-Acc-worker-tokens", "Offline", "AccuracyOnly", "worker", tokens=True,
           total=300, psc=100, seeds=3),
]
COMBO_IDS = [c["id"] for c in HARNESS_COMBOS]
COMBOS = {c["id"]: c for c in HARNESS_COMBOS}


class HarnessRun:
    def __init__(self, side, outdir, proc):
        self.side = side
        self.outdir = outdir
        self.returncode = proc.returncode
        self.output = (proc.stdout + proc.stderr)[-3000:]
        record = outdir / "harness.json"
        self.record = json.loads(record.read_text()) if record.exists() else None

    def file(self, name):
        return self.outdir / name

    def describe(self):
        return "%s harness exited %d; output tail:\n%s" % (self.side, self.returncode, self.output)


@pytest.fixture(scope="module")
def harness_runs(tmp_path_factory):
    """{combo id: {side: HarnessRun}}: every combination run by both modules."""
    work = tmp_path_factory.mktemp("lg-harness")

    def run(combo, side):
        outdir = work / side / combo["id"]
        argv = [PYTHON, str(HARNESS)] + combo["argv"] + ["--outdir", str(outdir)]
        try:
            proc = subprocess.run(argv, env=side_env(side), cwd=str(work), capture_output=True,
                                  text=True, timeout=180)
        except subprocess.TimeoutExpired as err:
            proc = subprocess.CompletedProcess(argv, -1, "", "timed out: %s" % err)
        return HarnessRun(side, outdir, proc)

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {(c["id"], side): pool.submit(run, c, side)
                   for c in HARNESS_COMBOS for side in SIDES}
        runs = collections.defaultdict(dict)
        for (cid, side), fut in futures.items():
            runs[cid][side] = fut.result()
    return dict(runs)


def both_ran(harness_runs, cid):
    runs = harness_runs[cid]
    for side in SIDES:
        run = runs[side]
        assert run.returncode == 0 and run.record is not None, run.describe()
        assert not run.record["errors"], "%s: completions raised %r" % (side, run.record["errors"])
    return runs["official"], runs["ours"]


@pytest.mark.parametrize("cid", COMBO_IDS)
def test_harness_issues_the_same_samples(harness_runs, cid):
    combo = COMBOS[cid]
    official, ours = both_ran(harness_runs, cid)
    assert official.record["module"] == OFFICIAL_NAME
    assert ours.record["module"] == OURS_NAME
    problems = []
    for field in ("loaded_sets", "unloaded_sets", "issued", "flushes", "completed_samples",
                  "first_tokens"):
        diff = first_difference(official.record[field], ours.record[field], field)
        if diff:
            problems.append(diff)
    assert not problems, "%s (%s):\n  %s" % (cid, " ".join(combo["argv"]), "\n  ".join(problems))
    # Every issued sample was answered (and, in token runs, its first token reported).
    issued = sum(len(q) for q in ours.record["issued"])
    assert issued > 0 and ours.record["completed_samples"] == issued
    assert ours.record["first_tokens"] == (issued if combo["tokens"] else 0)


# ------------------------------------------------------------------------------------------
# Part 3: the logs of part 2, ours against the official
# ------------------------------------------------------------------------------------------

MLLOG = ":::MLLOG "
ENTRY_FIELDS = {"key", "value", "time_ms", "namespace", "event_type", "metadata"}
# The official logger's own timing-dependent warnings (log_files.rs leaves them out too).
ALLOCATION_WARNING = "Logging allocation detected"
# The official LoadGen compares its two clocks over the run, and a run of a few milliseconds on a
# loaded machine can fail that by chance (seen once in CI: "pc_sc_ratio: 0.857143" over 42 ms):
# a fact about the machine's timing, not the harness, so it is not compared.
CLOCK_RATIO_ERROR = "PerfClock and system_clock differ by more than 1%"
ERRORS_FOOTER = "ERROR encountered. See detailed log."
NO_ERRORS_FOOTER = "No errors encountered during test."
# Detail-log values that follow from the settings and the seeds alone.
DETERMINISTIC_PREFIXES = ("requested_", "effective_", "qsl_reported_")
DETERMINISTIC_KEYS = ("generated_query_count", "generated_samples_per_query", "loaded_qsl_set",
                      "result_query_count", "sut_name", "qsl_name")
WARNINGS_FOOTER = re.compile(
    r"^(?:No warnings encountered during test\.|(\d+) warnings? encountered\. See detailed log\.)$")


def detail_entries(path):
    """Every `:::MLLOG` line of a detail log, parsed strictly; raises on a bad line."""
    entries = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.startswith(MLLOG):
            continue
        try:
            entry = strict_json(line[len(MLLOG):])
        except ValueError as err:
            raise AssertionError("%s:%d is not strict JSON (%s): %.300s" % (path, number, err, line))
        entries.append(entry)
    return entries


def is_timing_warning(entry):
    """A timing-only entry: the logger's allocation warning, or the clock-ratio error."""
    value = entry.get("value")
    return isinstance(value, str) and (value.startswith(ALLOCATION_WARNING)
                                       or value.startswith(CLOCK_RATIO_ERROR))


def first_values(entries):
    """The submission checker's reading: the first occurrence of a key wins."""
    view = {}
    for entry in entries:
        view.setdefault(entry["key"], entry["value"])
    return view


@pytest.mark.parametrize("cid", COMBO_IDS)
def test_our_detail_log_is_well_formed(harness_runs, cid):
    _, ours = both_ran(harness_runs, cid)
    path = ours.file("mlperf_log_detail.txt")
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    assert lines, "%s is empty" % path
    others = [line for line in lines if not line.startswith(MLLOG)]
    assert not others, "%s has lines that are not :::MLLOG entries: %r" % (path, others[:3])
    for entry in detail_entries(path):
        assert isinstance(entry, dict) and ENTRY_FIELDS <= set(entry), entry
        assert isinstance(entry["key"], str) and entry["key"], entry
        assert isinstance(entry["time_ms"], (int, float)), entry
        assert entry["namespace"] == "mlperf::logging", entry
        assert entry["event_type"] == "POINT_IN_TIME", entry
        assert isinstance(entry["metadata"], dict), entry
        for field in ("is_error", "is_warning", "file", "line_no", "pid", "tid"):
            assert field in entry["metadata"], (field, entry)


@pytest.mark.parametrize("cid", COMBO_IDS)
def test_our_detail_log_has_every_official_key(harness_runs, cid):
    official, ours = both_ran(harness_runs, cid)
    official_keys = {e["key"] for e in detail_entries(official.file("mlperf_log_detail.txt"))
                     if not is_timing_warning(e)}
    our_keys = {e["key"] for e in detail_entries(ours.file("mlperf_log_detail.txt"))}
    missing = sorted(official_keys - our_keys)
    assert not missing, "%s: official detail-log keys missing in ours: %s" % (cid, missing)


@pytest.mark.parametrize("cid", COMBO_IDS)
def test_our_detail_log_settings_values_match(harness_runs, cid):
    official, ours = both_ran(harness_runs, cid)
    off = first_values(detail_entries(official.file("mlperf_log_detail.txt")))
    our = first_values(detail_entries(ours.file("mlperf_log_detail.txt")))
    differing = []
    for key, value in off.items():
        if not (key.startswith(DETERMINISTIC_PREFIXES) or key in DETERMINISTIC_KEYS):
            continue
        if key in our and our[key] != value:
            differing.append("%s: official %.120r, ours %.120r" % (key, value, our[key]))
    assert not differing, "%s:\n  %s" % (cid, "\n  ".join(differing))


def summary_labels(path, uncounted_warnings=0, uncounted_errors=False):
    """Each line's label (the text before ':'); lines without one with their numbers masked.
    The warnings footer becomes its count less `uncounted_warnings`; the errors footer reads
    as none when `uncounted_errors` (every error was timing-only)."""
    labels = []
    for line in path.read_text().splitlines():
        footer = WARNINGS_FOOTER.match(line.strip())
        if uncounted_errors and line.strip().endswith(ERRORS_FOOTER):
            labels.append(NO_ERRORS_FOOTER)
        elif footer:
            labels.append("<%d warnings>" % (int(footer.group(1) or 0) - uncounted_warnings))
        elif ":" in line:
            labels.append(line.split(":", 1)[0].rstrip())
        else:
            labels.append(re.sub(r"\d+(?:\.\d+)?", "#", line.rstrip()))
    return labels


@pytest.mark.parametrize("cid", COMBO_IDS)
def test_our_summary_has_the_official_lines(harness_runs, cid):
    official, ours = both_ran(harness_runs, cid)
    entries = detail_entries(official.file("mlperf_log_detail.txt"))
    timing_warnings = sum(1 for e in entries
                          if is_timing_warning(e) and not e["metadata"].get("is_error"))
    errors = [e for e in entries if e["metadata"].get("is_error")]
    timing_errors_only = bool(errors) and all(is_timing_warning(e) for e in errors)
    off = summary_labels(official.file("mlperf_log_summary.txt"), timing_warnings,
                         timing_errors_only)
    our = summary_labels(ours.file("mlperf_log_summary.txt"))
    if off != our:
        import difflib
        diff = "\n".join(difflib.unified_diff(off, our, "official", "ours", lineterm=""))
        pytest.fail("%s: summary line labels differ:\n%s" % (cid, diff), pytrace=False)


def accuracy_entries(path):
    entries = strict_json(path.read_text())
    assert isinstance(entries, list), "%s is not a JSON list" % path
    for entry in entries:
        assert isinstance(entry, dict) and {"seq_id", "qsl_idx", "data"} <= set(entry), (
            path, entry)
    return entries


@pytest.mark.parametrize("cid", COMBO_IDS)
def test_our_accuracy_log_matches(harness_runs, cid):
    combo = COMBOS[cid]
    official, ours = both_ran(harness_runs, cid)
    off = accuracy_entries(official.file("mlperf_log_accuracy.json"))
    our = accuracy_entries(ours.file("mlperf_log_accuracy.json"))
    pairs = lambda entries: collections.Counter((e["qsl_idx"], e["data"]) for e in entries)
    assert pairs(our) == pairs(off), "%s: (qsl_idx, data) multisets differ: %s" % (
        cid, first_difference(sorted(pairs(off).items()), sorted(pairs(our).items())))
    if combo["mode"] == "PerformanceOnly":
        assert our == [], "%s: a performance run logged accuracy entries" % cid
    else:
        assert our, "%s: an accuracy run logged nothing" % cid
        for entry in our:
            assert entry["data"] == (entry["qsl_idx"] & 0xFFFFFFFF).to_bytes(4, "little").hex().upper()
    # Entry for entry, with the same fields (seq_id, token_count, ...).
    by_seq = lambda entries: sorted(entries, key=lambda e: e["seq_id"])
    diff = first_difference(by_seq(off), by_seq(our), "entries by seq_id")
    assert diff is None, "%s: %s" % (cid, diff)


# ------------------------------------------------------------------------------------------
# Part 4: what a harness sees beside the logs (harness/behaviour_probe.py on both modules):
# the thread of each callback, threads started in them, the files in the log directory,
# FromConfig's return codes and the settings it leaves
# ------------------------------------------------------------------------------------------

PROBE = HERE / "harness" / "behaviour_probe.py"


def probe_both(tmp_path, *args):
    """The probe's JSON from each side, run with `args` (a `{dir}` in one becomes a folder of
    that side's own)."""
    results = {}
    for side in SIDES:
        folder = tmp_path / side
        folder.mkdir(exist_ok=True)
        argv = [str(a).replace("{dir}", str(folder)) for a in args]
        proc = subprocess.run([PYTHON, str(PROBE), *argv], env=side_env(side), cwd=str(folder),
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, "%s: probe %s failed:\n%s" % (side, argv, proc.stderr[-3000:])
        results[side] = json.loads(proc.stdout.strip().splitlines()[-1])
    return results["official"], results["ours"]


@pytest.mark.parametrize("scenario", ["SingleStream", "MultiStream", "Server", "Offline"])
def test_callbacks_run_where_the_officials_do(tmp_path, scenario):
    official, ours = probe_both(tmp_path, "threads", scenario, "{dir}")
    # The official runs every callback on the caller's (main) thread: a thread started there
    # is no daemon, and a threading.local set by the caller is seen.
    assert official["issue_query"]["main_thread"], official
    diff = first_difference(official, ours)
    assert diff is None, "%s: %s" % (scenario, diff)


def test_the_log_directory_holds_the_officials_files(tmp_path):
    official, ours = probe_both(tmp_path, "files", "{dir}")
    # With the trace off the official still writes an empty trace file.
    assert official["trace_off"]["mlperf_log_trace.json"] is True, official
    diff = first_difference(official, ours)
    assert diff is None, diff


CONFIG_CASES = {
    # A name that is no scenario's: the keys of every scenario, the model's and the
    # scenario-specific ones apply.
    "unknown scenario": ("*.*.min_query_count = 7\nm.*.max_query_count = 9\n"
                         "*.Server.target_qps = 5\n*.Foo.min_duration = 123\n", "m", "Foo", 1),
    "unknown key": ("m.SingleStream.not_a_key = 3\nm.SingleStream.min_query_count = 11\n",
                    "m", "SingleStream", 1),
    "bad value": ("m.SingleStream.min_query_count = abc\nm.SingleStream.max_query_count = 5\n",
                  "m", "SingleStream", 1),
    "missing file": (None, "m", "Offline", 1),
    "audit.config": ("*.*.mode = 2\nm.*.min_query_count = 3\n*.*.accuracy_log_sampling_target = 64\n",
                     "m", "Server", 2),
    "mlperf.conf": ("", "resnet50", "Server", 0),
    "other conf_type": ("m.Offline.min_query_count = 12\n", "m", "Offline", 5),
}


@pytest.mark.parametrize("case", sorted(CONFIG_CASES))
def test_from_config_returns_and_applies_what_the_official_does(tmp_path, case):
    text, model, scenario, conf_type = CONFIG_CASES[case]
    path = tmp_path / "user.conf"
    if text is not None:
        path.write_text(text)
    spec = json.dumps({"path": str(path), "model": model, "scenario": scenario,
                       "conf_type": conf_type})
    official, ours = probe_both(tmp_path, "config", spec)
    # Every setting the official module has, with the official's value.
    missing = sorted(set(official["settings"]) - set(ours["settings"]))
    assert not missing, "%s: settings the official has and ours lacks: %s" % (case, missing)
    ours["settings"] = {k: v for k, v in ours["settings"].items() if k in official["settings"]}
    diff = first_difference(official, ours)
    assert diff is None, "%s: %s" % (case, diff)
