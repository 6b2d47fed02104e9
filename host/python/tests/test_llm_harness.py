"""An LLM harness written for ``mlperf_loadgen`` (``harness/llm_harness.py``), streaming from a
real LLM server (llama.cpp's OpenAI server serving SmolLM2-135M-Instruct, started here), runs
unchanged on the official wheel and on ours through the alias: ``FirstTokenComplete`` then
``QuerySamplesComplete`` with ``n_tokens``. Both sides end with token metrics and no errors,
and in accuracy mode both log the same answers, the committed greedy references.

Skipped when the official wheel or .venv-llama (scripts/setup-llm.sh) is missing; failed then if
``CI`` is set.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
ALIAS = REPO / "host" / "python" / "alias"
HARNESS = HERE / "harness" / "llm_harness.py"
REFERENCES = REPO / "configs" / "benchmarks" / "smollm2" / "references.json"


def missing():
    if not (REPO / ".venv-llama" / "bin" / "python").exists():
        return ".venv-llama is missing: run `bash scripts/setup-llm.sh`"
    probe = subprocess.run([sys.executable, "-c", "import mlperf_loadgen"], capture_output=True)
    if probe.returncode != 0:
        return "the official wheel (mlperf_loadgen) is not importable"
    return None


_missing = missing()
if _missing:
    if os.environ.get("CI"):
        pytest.fail("CI is set: " + _missing, pytrace=False)
    pytest.skip(_missing, allow_module_level=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server_port(tmp_path_factory):
    port = free_port()
    log = open(tmp_path_factory.mktemp("llama") / "server.log", "w")
    server = subprocess.Popen(
        ["bash", str(REPO / "scripts" / "serve.sh"), "llama", "smollm2", str(port)],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, "the server exited: see %s" % log.name
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/v1/models" % port, timeout=2):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the server is not up after 120 s"
                time.sleep(0.25)
        yield port
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
        log.close()


def run_harness(side, port, outdir, *args):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if side == "ours":
        env["PYTHONPATH"] = str(ALIAS)
    proc = subprocess.run(
        [sys.executable, str(HARNESS), "--port", str(port), "--outdir", str(outdir), *args],
        env=env, cwd=str(REPO), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, "%s: %s\n%s" % (side, proc.stdout, proc.stderr)
    return json.loads((Path(outdir) / "harness.json").read_text())


def test_the_harness_is_written_for_mlperf_loadgen_only():
    source = HARNESS.read_text()
    assert "import mlperf_loadgen as lg" in source
    assert "mlperf_host" not in source


@pytest.mark.parametrize("side", ["official", "ours"])
def test_a_streaming_llm_harness_reports_first_tokens_and_token_counts(side, server_port, tmp_path):
    report = run_harness(side, server_port, tmp_path)
    assert report["module"] == ("mlperf_loadgen" if side == "official" else "mlperf_host.loadgen")
    assert report["completed"] >= 8 and report["first_tokens"] == report["completed"], report
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert "first token" in summary and "time to output token" in summary, summary
    assert "No errors encountered during test." in summary, summary


def accuracy_answers(outdir):
    records = json.loads((Path(outdir) / "mlperf_log_accuracy.json").read_text())
    return {r["qsl_idx"]: bytes.fromhex(r["data"]).decode() for r in records}


def test_both_modules_log_the_same_greedy_answers(server_port, tmp_path):
    answers = {}
    for side in ("official", "ours"):
        run_harness(side, server_port, tmp_path / side, "--mode", "AccuracyOnly", "--total", "8")
        answers[side] = accuracy_answers(tmp_path / side)
    assert answers["official"] == answers["ours"]
    references = json.loads(REFERENCES.read_text())["samples"]
    assert answers["ours"] == {i: references[i]["output"] for i in range(8)}
