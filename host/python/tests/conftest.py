"""Shared helpers for the tests of `mlperf_host.loadgen`.

Tests run in the interpreter that has both the official wheel (`mlperf_loadgen`) and ours
installed, so parity tests can compare the two live.
"""

import array
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

OURS = "mlperf_host.loadgen"
OFFICIAL = "mlperf_loadgen"

# A path that never exists: passed as `audit_config_filename` so that an audit.config
# lying in the working directory cannot change a test's settings.
NO_AUDIT = "/nonexistent/mlperf-host-tests/audit.config"


@pytest.fixture(scope="session")
def lg():
    """Our module."""
    import mlperf_host.loadgen

    return mlperf_host.loadgen


# --- settings -------------------------------------------------------------------------------


def make_settings(lg, scenario="SingleStream", mode="PerformanceOnly", **fields):
    """A `TestSettings` for a short run: scenario and mode by name, other fields as given."""
    settings = lg.TestSettings()
    settings.scenario = getattr(lg.TestScenario, scenario)
    settings.mode = getattr(lg.TestMode, mode)
    # Short by default: no minimum duration, few queries.
    settings.min_duration_ms = fields.pop("min_duration_ms", 0)
    settings.min_query_count = fields.pop("min_query_count", 16)
    for name, value in fields.items():
        setattr(settings, name, value)
    return settings


def make_log_settings(lg, outdir, enable_trace=False, **output_fields):
    """`LogSettings` writing into `outdir`; `output_fields` set on `log_output`."""
    log_settings = lg.LogSettings()
    log_settings.log_output.outdir = str(outdir)
    log_settings.enable_trace = enable_trace
    for name, value in output_fields.items():
        setattr(log_settings.log_output, name, value)
    return log_settings


def start(lg, sut, qsl, settings, outdir, **output_fields):
    """Runs one test with its logs in `outdir` (created) and no audit.config.

    `sut` and `qsl` are handles or objects with a `handle` (NullSut, Qsl).
    """
    Path(outdir).mkdir(parents=True, exist_ok=True)
    log_settings = make_log_settings(lg, outdir, **output_fields)
    sut, qsl = getattr(sut, "handle", sut), getattr(qsl, "handle", qsl)
    lg.StartTestWithLogSettings(sut, qsl, settings, log_settings, NO_AUDIT)


# --- SUT / QSL ------------------------------------------------------------------------------


def sample_bytes(index):
    """The response a test SUT sends for sample `index`: 3 bytes that name the index."""
    return bytes([index % 256, (index * 7 + 1) % 256, 0xA5])


class NullSut:
    """A SUT that answers each sample at once, inline, with `sample_bytes(index)`.

    Records every issued query (the list of (id, index) pairs) in `queries`.
    """

    def __init__(self, lg, response_cb=None, n_tokens=None):
        self.lg = lg
        self.queries = []
        self.flushes = 0
        self.response_cb = response_cb
        self.n_tokens = n_tokens
        self.handle = lg.ConstructSUT(self.issue, self.flush)

    def issue(self, samples):
        self.queries.append([(s.id, s.index) for s in samples])
        complete(self.lg, samples, response_cb=self.response_cb, n_tokens=self.n_tokens)

    def flush(self):
        self.flushes += 1

    @property
    def samples(self):
        return [sample for query in self.queries for sample in query]

    def destroy(self):
        self.lg.DestroySUT(self.handle)


def make_responses(lg, pairs, n_tokens=None):
    """Responses carrying `sample_bytes(index)` for `(id, index)` pairs, and the buffers
    they point into: keep those alive until QuerySamplesComplete returns."""
    buffers = [array.array("B", sample_bytes(index)) for _, index in pairs]
    responses = []
    for (sample_id, _), buffer in zip(pairs, buffers):
        address, length = buffer.buffer_info()
        if n_tokens is None:
            responses.append(lg.QuerySampleResponse(sample_id, address, length))
        else:
            responses.append(lg.QuerySampleResponse(sample_id, address, length, n_tokens))
    return responses, buffers


def complete(lg, samples, response_cb=None, n_tokens=None, first_token=False):
    """Completes `samples` with `sample_bytes(index)` each (or reports their first token)."""
    responses, buffers = make_responses(lg, [(s.id, s.index) for s in samples], n_tokens)
    if first_token:
        lg.FirstTokenComplete(responses)
    elif response_cb is None:
        lg.QuerySamplesComplete(responses)
    else:
        lg.QuerySamplesComplete(responses, response_cb)
    del buffers  # alive until here


class Qsl:
    """A QSL of `total` samples that records what it was asked to load and unload."""

    def __init__(self, lg, total=16, performance=None, load=None):
        self.lg = lg
        self.loaded = []
        self.unloaded = []
        self._load = load
        self.handle = lg.ConstructQSL(
            total, total if performance is None else performance, self.load, self.unload
        )

    def load(self, indices):
        self.loaded.append(list(indices))
        if self._load is not None:
            self._load(indices)

    def unload(self, indices):
        self.unloaded.append(list(indices))

    def destroy(self):
        self.lg.DestroyQSL(self.handle)


@pytest.fixture
def null_sut(lg):
    sut = NullSut(lg)
    yield sut
    sut.destroy()


@pytest.fixture
def qsl(lg):
    library = Qsl(lg)
    yield library
    library.destroy()


# --- logs -----------------------------------------------------------------------------------


def read_detail(path):
    """The entries of a detail log (`:::MLLOG {json}` lines), as dicts, in file order."""
    entries = []
    for line in Path(path).read_text().splitlines():
        if line.startswith(":::MLLOG "):
            entries.append(json.loads(line[len(":::MLLOG ") :]))
    return entries


def detail_values(entries):
    """key -> value of a detail log; the first occurrence wins, as the submission checker."""
    values = {}
    for entry in entries:
        values.setdefault(entry["key"], entry["value"])
    return values


def detail_errors(entries):
    return [entry for entry in entries if entry["metadata"]["is_error"]]


def read_logs(outdir, prefix="mlperf_log_", suffix=""):
    """(summary text, detail entries, accuracy entries) of the default-named logs in `outdir`."""
    outdir = Path(outdir)
    summary = (outdir / f"{prefix}summary{suffix}.txt").read_text()
    detail = read_detail(outdir / f"{prefix}detail{suffix}.txt")
    accuracy = json.loads((outdir / f"{prefix}accuracy{suffix}.json").read_text())
    return summary, detail, accuracy


def summary_value(summary, label):
    """The text after `label :` on the summary line that starts (after indentation) with
    `label`."""
    for line in summary.splitlines():
        if line.strip().startswith(label):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"no line {label!r} in the summary:\n{summary}")


# --- subprocesses ---------------------------------------------------------------------------


def run_python(module, code, cwd=None, timeout=60):
    """Runs `code` in a fresh interpreter with `lg` = `module` imported.

    For what depends on process-wide state (FromConfig's user.conf counter). The code prints
    one JSON document as its last stdout line; that document is returned.
    """
    prelude = (
        "import importlib, json, sys\n"
        f"lg = importlib.import_module({module!r})\n"
        f"NO_AUDIT = {NO_AUDIT!r}\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
    )
    assert proc.returncode == 0, f"{module} subprocess failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])
