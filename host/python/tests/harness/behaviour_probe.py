"""What a harness can observe of `mlperf_loadgen` beside the logs' contents, printed as JSON.

Run as a subprocess on either module (the official wheel, or ours through the alias):

    behaviour_probe.py threads SCENARIO OUTDIR     where each callback runs, and what it sees
    behaviour_probe.py files OUTDIR                 the files left in log directories
    behaviour_probe.py config CASE_JSON             FromConfig's return code and settings

Written against the official API only: nothing here knows which module it runs on.
"""

import json
import os
import sys
import threading
import warnings

import mlperf_loadgen as lg

NO_AUDIT = "/nonexistent/mlperf-host-probe/audit.config"


def settings_for(scenario):
    settings = lg.TestSettings()
    settings.scenario = getattr(lg.TestScenario, scenario)
    settings.mode = lg.TestMode.PerformanceOnly
    settings.min_duration_ms = 0
    settings.min_query_count = 16
    settings.server_target_qps = 2000
    settings.offline_expected_qps = 16
    return settings


def log_settings(outdir, **output):
    log = lg.LogSettings()
    log.log_output.outdir = outdir
    for name, value in output.items():
        setattr(log.log_output, name, value)
    return log


def run(outdir, scenario="SingleStream", on_issue=None, log=None, callbacks=None):
    callbacks = callbacks or {}

    def issue(samples):
        if on_issue:
            on_issue()
        lg.QuerySamplesComplete([lg.QuerySampleResponse(s.id, 0, 0) for s in samples])

    sut = lg.ConstructSUT(issue, callbacks.get("flush", lambda: None))
    qsl = lg.ConstructQSL(16, 16, callbacks.get("load", lambda _: None),
                          callbacks.get("unload", lambda _: None))
    os.makedirs(outdir, exist_ok=True)
    lg.StartTestWithLogSettings(sut, qsl, settings_for(scenario), log or log_settings(outdir),
                                NO_AUDIT)
    lg.DestroyQSL(qsl)
    lg.DestroySUT(sut)


def threads(scenario, outdir):
    """Per callback: on the main thread? the caller's thread-local value? a thread it starts:
    a daemon?"""
    local = threading.local()
    local.value = "set by the caller"
    facts = {}

    def record(name):
        if name in facts:
            return
        started = threading.Thread(target=lambda: None)
        facts[name] = {
            "main_thread": threading.current_thread() is threading.main_thread(),
            "same_thread_as_caller": threading.get_ident() == caller,
            "thread_local": getattr(local, "value", None),
            "started_thread_is_daemon": started.daemon,
        }

    caller = threading.get_ident()
    run(outdir, scenario, on_issue=lambda: record("issue_query"), callbacks={
        "flush": lambda: record("flush_queries"),
        "load": lambda _: record("load_samples"),
        "unload": lambda _: record("unload_samples"),
    })
    return facts


def files(outdir):
    """The files each log directory holds after: a default run; two runs with prefixes runA_
    and runB_ and one suffix in one folder; a run with the trace off."""
    layouts = {
        "default": [{}],
        "prefixes": [{"prefix": "runA_", "suffix": "_s"}, {"prefix": "runB_", "suffix": "_s"}],
    }
    found = {}
    for name, runs in layouts.items():
        folder = os.path.join(outdir, name)
        for output in runs:
            run(folder, log=log_settings(folder, **output))
        found[name] = sorted(os.listdir(folder))
    folder = os.path.join(outdir, "trace_off")
    log = log_settings(folder)
    log.enable_trace = False
    run(folder, log=log)
    found["trace_off"] = {f: os.path.getsize(os.path.join(folder, f)) == 0
                          for f in sorted(os.listdir(folder))}
    return found


def plain(value):
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return getattr(value, "name", repr(value))


def config(case):
    """FromConfig(path, model, scenario, conf_type) on fresh settings: its return code and every
    setting after."""
    settings = lg.TestSettings()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ours warns about what the official drops silently
        code = settings.FromConfig(case["path"], case["model"], case["scenario"],
                                   case["conf_type"])
    fields = {name: plain(getattr(settings, name)) for name in dir(settings)
              if not name.startswith("_") and not callable(getattr(settings, name))}
    return {"code": code, "settings": fields}


def main():
    what = sys.argv[1]
    if what == "threads":
        result = threads(sys.argv[2], sys.argv[3])
    elif what == "files":
        result = files(sys.argv[2])
    elif what == "config":
        result = config(json.loads(sys.argv[2]))
    else:
        raise SystemExit("unknown probe %r" % what)
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
