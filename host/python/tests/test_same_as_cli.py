"""The module writes the logs `mlperf-host run` writes for the same settings.

Each case runs twice: `mlperf-host run` with its null plugin (which answers each sample with
its index as 4 little-endian bytes, inline) and a Python SUT through `mlperf_host.loadgen`
that answers the same way. Settings come the same way on both sides: the built-in
mlperf.conf and an empty user.conf, then the same overrides. The accuracy logs must be
byte-identical; the detail logs must carry the same keys in the same order (the SUT's own
description aside) with the same settings and validity; the summaries the same lines.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import read_detail

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CLI = os.path.join(REPO, "target", "release", "mlperf-host")
TOTAL, PERFORMANCE = 300, 120

CASES = {
    "offline-accuracy": ("Offline", "AccuracyOnly", {}),
    "offline-performance": ("Offline", "PerformanceOnly",
                            {"min_duration_ms": 0, "min_query_count": 1, "offline_expected_qps": 500}),
    "single-stream": ("SingleStream", "PerformanceOnly",
                      {"min_duration_ms": 0, "min_query_count": 400}),
    "multi-stream": ("MultiStream", "PerformanceOnly",
                     {"min_duration_ms": 0, "min_query_count": 300, "multi_stream_samples_per_query": 4}),
    "server-submission": ("Server", "SubmissionRun",
                          {"min_duration_ms": 0, "min_query_count": 300, "server_target_qps": 5000,
                           "accuracy_log_probability": 0.1}),
}

# Settings, validity and counts: the values that do not depend on timing.
COMPARED_PREFIXES = ("requested_", "effective_", "qsl_reported_", "generated_")
COMPARED_KEYS = {"result_validity", "loaded_qsl_set", "num_errors"}

# The SUT's name and the CLI's description of its plugin (`sut_*`) differ by design.
SUT_KEYS = {"sut_name", "get_sut_name_duration_ns"}

PYTHON_RUN = textwrap.dedent(
    """
    import array, sys
    import mlperf_host.loadgen as lg

    scenario, mode, outdir, user_conf, total, performance = sys.argv[1:7]
    overrides = eval(sys.argv[7])
    settings = lg.TestSettings()
    assert settings.FromConfig(user_conf, "resnet50", scenario) == 0
    settings.scenario = getattr(lg.TestScenario, scenario)
    settings.mode = getattr(lg.TestMode, mode)
    for key, value in overrides.items():
        setattr(settings, key, value)

    def issue(samples):
        payload = array.array("I", [s.index for s in samples])
        address = payload.buffer_info()[0]
        lg.QuerySamplesComplete([
            lg.QuerySampleResponse(s.id, address + 4 * i, 4) for i, s in enumerate(samples)
        ])

    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(int(total), int(performance), lambda _: None, lambda _: None)
    log = lg.LogSettings()
    log.log_output.outdir = outdir
    log.enable_trace = False
    log.write_result_json = True  # ours, off by default: the CLI writes it
    lg.StartTestWithLogSettings(sut, qsl, settings, log, outdir + "/no-audit.config")
    """
)


def summary_labels(path):
    with open(path) as summary:
        return [line.split(":")[0].strip() for line in summary if ":" in line]


def run_both(tmp_path, scenario, mode, overrides):
    assert os.path.exists(CLI), "build the CLI first: cargo build --release (%s)" % CLI
    user_conf = tmp_path / "user.conf"
    user_conf.write_text("")
    cli_dir, python_dir = tmp_path / "cli", tmp_path / "python"
    python_dir.mkdir()
    command = [CLI, "run", "--quiet", "--scenario", scenario, "--mode", mode,
               "--user-conf", str(user_conf), "--total-samples", str(TOTAL),
               "--performance-samples", str(PERFORMANCE), "--out", str(cli_dir)]
    for key, value in overrides.items():
        command += ["--set", "%s=%s" % (key, value)]
    subprocess.run(command, check=True, timeout=120)
    # A process of its own: FromConfig's user.conf count is per process.
    subprocess.run([sys.executable, "-c", PYTHON_RUN, scenario, mode, str(python_dir),
                    str(user_conf), str(TOTAL), str(PERFORMANCE), repr(overrides)],
                   check=True, timeout=120)
    return cli_dir, python_dir


@pytest.mark.parametrize("case", sorted(CASES))
def test_logs_match_the_cli(tmp_path, case):
    scenario, mode, overrides = CASES[case]
    cli_dir, python_dir = run_both(tmp_path, scenario, mode, overrides)

    accuracy = "mlperf_log_accuracy.json"
    cli_accuracy = (cli_dir / accuracy).read_bytes()
    assert (python_dir / accuracy).read_bytes() == cli_accuracy
    if mode != "PerformanceOnly":
        assert json.loads(cli_accuracy), "the accuracy log should not be empty"

    cli_detail = [e for e in read_detail(cli_dir / "mlperf_log_detail.txt")
                  if e["key"] not in SUT_KEYS and not e["key"].startswith("sut_")]
    python_detail = [e for e in read_detail(python_dir / "mlperf_log_detail.txt")
                     if e["key"] not in SUT_KEYS]
    assert [e["key"] for e in python_detail] == [e["key"] for e in cli_detail]
    for ours, theirs in zip(python_detail, cli_detail):
        assert set(ours) == set(theirs), ours["key"]
        if ours["key"].startswith(COMPARED_PREFIXES) or ours["key"] in COMPARED_KEYS:
            assert ours["value"] == theirs["value"], ours["key"]

    summary = "mlperf_log_summary.txt"
    assert summary_labels(python_dir / summary) == summary_labels(cli_dir / summary)
    names = [e["value"] for e in read_detail(python_dir / "mlperf_log_detail.txt")
             if e["key"] == "sut_name"]
    assert names == ["PySUT"]
    result = json.loads((python_dir / "result.json").read_text())
    cli_result = json.loads((cli_dir / "result.json").read_text())
    assert result["requested"] == cli_result["requested"]
    assert result["effective"] == cli_result["effective"]
