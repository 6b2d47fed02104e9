"""Runs of `mlperf_host.loadgen` with Python SUTs: scenarios, modes, accuracy logs, tokens,
threads, aborts, callback errors and log options.

Every run is short (no minimum duration, few queries) and writes its logs into tmp_path.
"""

import ctypes
import json
import queue
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import (
    NO_AUDIT,
    NullSut,
    Qsl,
    complete,
    detail_errors,
    detail_values,
    make_log_settings,
    make_responses,
    make_settings,
    read_detail,
    read_logs,
    sample_bytes,
    start,
    summary_value,
)

# Settings under which a null SUT gets a VALID result quickly: enough queries for early
# stopping at the (lowered) target percentile, no minimum duration.
VALID_RUNS = {
    "SingleStream": dict(min_query_count=100),
    "MultiStream": dict(min_query_count=100, multi_stream_target_latency_percentile=0.9),
    "Server": dict(
        min_query_count=100, server_target_qps=5000, server_target_latency_percentile=0.9
    ),
    "Offline": dict(min_query_count=100),
}

# The headline result key each scenario writes to the detail log.
RESULT_KEYS = {
    "SingleStream": "result_qps_with_loadgen_overhead",
    "MultiStream": "result_99.00_percentile_per_query_latency_ns",
    "Server": "result_completed_samples_per_sec",
    "Offline": "result_samples_per_second",
}


def accuracy_hex(index):
    """How the accuracy log writes the bytes the test SUTs send for sample `index`."""
    return sample_bytes(index).hex().upper()


# --- scenarios ----------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", list(VALID_RUNS))
def test_performance_run_is_valid_and_issues_what_it_reports(lg, null_sut, qsl, tmp_path, scenario):
    settings = make_settings(lg, scenario, **VALID_RUNS[scenario])
    start(lg, null_sut, qsl, settings, tmp_path)

    summary, detail, accuracy = read_logs(tmp_path)
    values = detail_values(detail)
    assert summary_value(summary, "Result is") == "VALID"
    assert summary_value(summary, "Scenario") == scenario
    assert values["result_validity"] == "VALID"
    assert RESULT_KEYS[scenario] in values
    assert detail_errors(detail) == []
    # What the SUT saw is what the logs report.
    assert len(null_sut.queries) == values["result_query_count"]
    assert {len(q) for q in null_sut.queries} == {values["effective_samples_per_query"]}
    assert null_sut.flushes >= 1
    # Samples come from the one loaded set, which is loaded once and unloaded once.
    loaded = values["loaded_qsl_set"]
    assert qsl.loaded == [loaded]
    assert qsl.unloaded == [loaded]
    assert {index for _, index in null_sut.samples} <= set(loaded)
    # Each sample has its own id.
    ids = [sample_id for sample_id, _ in null_sut.samples]
    assert len(set(ids)) == len(ids)
    assert accuracy == []  # accuracy_log_probability 0: nothing logged


def test_multistream_queries_have_samples_per_query_samples(lg, null_sut, qsl, tmp_path):
    settings = make_settings(
        lg, "MultiStream", min_query_count=10, multi_stream_samples_per_query=3
    )
    start(lg, null_sut, qsl, settings, tmp_path)
    values = detail_values(read_detail(tmp_path / "mlperf_log_detail.txt"))
    assert values["effective_samples_per_query"] == 3
    assert len(null_sut.queries) >= 10
    assert all(len(query) == 3 for query in null_sut.queries)


def test_start_test_writes_logs_to_the_working_directory(lg, null_sut, qsl, tmp_path, monkeypatch):
    # StartTest (without log settings) uses LogSettings(): outdir '.'.
    monkeypatch.chdir(tmp_path)
    lg.StartTest(null_sut.handle, qsl.handle, make_settings(lg, "Offline"), NO_AUDIT)
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert summary_value(summary, "Scenario") == "Offline"
    assert (tmp_path / "mlperf_log_detail.txt").exists()


def test_the_same_handles_run_twice(lg, null_sut, qsl, tmp_path):
    for run in ("first", "second"):
        start(lg, null_sut, qsl, make_settings(lg, "SingleStream"), tmp_path / run)
    first = detail_values(read_detail(tmp_path / "first" / "mlperf_log_detail.txt"))
    second = detail_values(read_detail(tmp_path / "second" / "mlperf_log_detail.txt"))
    assert first["result_validity"] == second["result_validity"]
    assert len(null_sut.queries) == first["result_query_count"] + second["result_query_count"]


# --- accuracy log and response_cb ---------------------------------------------------------


@pytest.mark.parametrize("scenario", ["SingleStream", "Server", "Offline"])
def test_accuracy_log_has_each_sample_once_with_the_bytes_the_sut_sent(lg, tmp_path, scenario):
    sut, library = NullSut(lg), Qsl(lg, total=10)
    try:
        settings = make_settings(lg, scenario, "AccuracyOnly", server_target_qps=5000)
        start(lg, sut, library, settings, tmp_path)
    finally:
        sut.destroy()
        library.destroy()
    _, detail, accuracy = read_logs(tmp_path)
    assert sorted(entry["qsl_idx"] for entry in accuracy) == list(range(10))
    for entry in accuracy:
        assert entry["data"] == accuracy_hex(entry["qsl_idx"])
    assert len({entry["seq_id"] for entry in accuracy}) == 10
    assert detail_errors(detail) == []


class RecordingCallback:
    """A response_cb that records each response's id and the bytes at data/size."""

    def __init__(self):
        self.seen = []

    def __call__(self, response):
        self.seen.append((response.id, ctypes.string_at(response.data, response.size)))


@pytest.mark.parametrize(
    "mode, probability, expect_all",
    [("AccuracyOnly", 0.0, True), ("PerformanceOnly", 0.0, False), ("PerformanceOnly", 1.0, True)],
)
def test_response_cb_is_called_for_exactly_the_accuracy_logged_responses(
    lg, qsl, tmp_path, mode, probability, expect_all
):
    callback = RecordingCallback()
    sut = NullSut(lg, response_cb=callback)
    try:
        settings = make_settings(lg, "SingleStream", mode, accuracy_log_probability=probability)
        start(lg, sut, qsl, settings, tmp_path)
    finally:
        sut.destroy()
    _, _, accuracy = read_logs(tmp_path)
    index_of = dict(sut.samples)
    assert len(callback.seen) == len(accuracy)
    if expect_all:
        assert sorted(i for i, _ in callback.seen) == sorted(index_of)
    else:
        assert callback.seen == []
    # The callback sees the bytes the SUT sent, before they are copied.
    for sample_id, data in callback.seen:
        assert data == sample_bytes(index_of[sample_id])


def test_exception_in_response_cb_is_raised_by_query_samples_complete(lg, qsl, tmp_path):
    raised = []

    def failing_cb(response):
        raise KeyError("from response_cb")

    def issue(samples):
        try:
            complete(lg, samples, response_cb=failing_cb)
        except KeyError as err:
            raised.append(err)

    sut = lg.ConstructSUT(issue, lambda: None)
    try:
        start(lg, sut, qsl, make_settings(lg, "SingleStream", "AccuracyOnly"), tmp_path)
    finally:
        lg.DestroySUT(sut)
    assert len(raised) == 16  # every query's completion call raised it
    # The samples were still completed and logged.
    _, _, accuracy = read_logs(tmp_path)
    assert sorted(entry["qsl_idx"] for entry in accuracy) == list(range(16))


@pytest.mark.parametrize("container", ["list", "tuple", "VectorQuerySampleResponse", "generator"])
def test_query_samples_complete_accepts_any_sequence_of_responses(lg, qsl, tmp_path, container):
    def issue(samples):
        responses, buffers = make_responses(lg, [(s.id, s.index) for s in samples])
        wrap = {
            "list": list,
            "tuple": tuple,
            "VectorQuerySampleResponse": lg.VectorQuerySampleResponse,
            "generator": lambda items: (item for item in items),
        }[container]
        lg.QuerySamplesComplete(wrap(responses))
        del buffers

    sut = lg.ConstructSUT(issue, lambda: None)
    try:
        start(lg, sut, qsl, make_settings(lg, "Offline", "AccuracyOnly"), tmp_path)
    finally:
        lg.DestroySUT(sut)
    _, detail, accuracy = read_logs(tmp_path)
    assert sorted(entry["qsl_idx"] for entry in accuracy) == list(range(16))
    assert all(entry["data"] == accuracy_hex(entry["qsl_idx"]) for entry in accuracy)
    assert detail_errors(detail) == []


# --- completions from other threads -------------------------------------------------------


class WorkerSut:
    """A SUT whose issue callback only queues samples; `workers` threads complete them."""

    def __init__(self, lg, workers=2, batch=3):
        self.lg = lg
        self.batch = batch
        self.pending = queue.Queue()
        self.completed_by = set()
        self.handle = lg.ConstructSUT(self.issue, lambda: None)
        self.threads = [threading.Thread(target=self.work, daemon=True) for _ in range(workers)]
        for thread in self.threads:
            thread.start()

    def issue(self, samples):
        for i in range(0, len(samples), self.batch):
            self.pending.put(samples[i : i + self.batch])

    def work(self):
        while (samples := self.pending.get()) is not None:
            complete(self.lg, samples)
            self.completed_by.add(threading.get_ident())

    def stop(self):
        for _ in self.threads:
            self.pending.put(None)
        for thread in self.threads:
            thread.join(timeout=10)
        self.lg.DestroySUT(self.handle)


def test_completions_from_worker_threads_in_offline_accuracy_mode(lg, tmp_path):
    sut, library = WorkerSut(lg), Qsl(lg, total=64)
    try:
        start(lg, sut, library, make_settings(lg, "Offline", "AccuracyOnly"), tmp_path)
    finally:
        sut.stop()
        library.destroy()
    _, detail, accuracy = read_logs(tmp_path)
    assert sorted(entry["qsl_idx"] for entry in accuracy) == list(range(64))
    assert all(entry["data"] == accuracy_hex(entry["qsl_idx"]) for entry in accuracy)
    assert detail_errors(detail) == []
    assert threading.get_ident() not in sut.completed_by


def test_completions_from_a_worker_thread_in_server_performance_mode(lg, qsl, tmp_path):
    sut = WorkerSut(lg, workers=1, batch=1)
    try:
        settings = make_settings(lg, "Server", min_query_count=200, server_target_qps=2000)
        start(lg, sut, qsl, settings, tmp_path)
    finally:
        sut.stop()
    summary, detail, _ = read_logs(tmp_path)
    values = detail_values(detail)
    assert values["result_query_count"] >= 200
    assert summary_value(summary, "Min queries satisfied") == "Yes"
    assert values["result_perf_constraints_met"] is True
    assert detail_errors(detail) == []


# --- FastSUT and QDL ----------------------------------------------------------------------


@pytest.mark.parametrize("scenario", ["SingleStream", "Offline"])
def test_fast_sut_issue_callback_gets_id_and_index_lists(lg, tmp_path, scenario):
    calls = []

    def fast_issue(ids, indices):
        calls.append((ids, indices))
        responses, buffers = make_responses(lg, list(zip(ids, indices)))
        lg.QuerySamplesComplete(responses)
        del buffers

    sut = lg.ConstructFastSUT(fast_issue, lambda: None)
    library = Qsl(lg, total=12)
    try:
        start(lg, sut, library, make_settings(lg, scenario, "AccuracyOnly"), tmp_path)
    finally:
        lg.DestroyFastSUT(sut)
        library.destroy()
    for ids, indices in calls:
        assert type(ids) is list and type(indices) is list
        assert len(ids) == len(indices) > 0
        assert all(type(x) is int for x in ids + indices)
    assert sorted(i for _, indices in calls for i in indices) == list(range(12))
    # The accuracy log pairs each id with its index, so the two lists lined up.
    _, detail, accuracy = read_logs(tmp_path)
    assert all(entry["data"] == accuracy_hex(entry["qsl_idx"]) for entry in accuracy)
    assert len(accuracy) == 12
    assert detail_values(detail)["sut_name"] == "PyFastSUT"


def test_qdl_name_callback_names_the_sut_in_the_logs(lg, qsl, tmp_path):
    def issue(samples):
        complete(lg, samples)

    qdl = lg.ConstructQDL(issue, lambda: None, lambda: "qdl-under-test")
    try:
        start(lg, qdl, qsl, make_settings(lg, "SingleStream"), tmp_path)
    finally:
        lg.DestroyQDL(qdl)
    summary, detail, _ = read_logs(tmp_path)
    assert detail_values(detail)["sut_name"] == "qdl-under-test"
    assert summary_value(summary, "SUT name") == "qdl-under-test"


def test_plain_sut_is_named_pysut(lg, null_sut, qsl, tmp_path):
    start(lg, null_sut, qsl, make_settings(lg, "Offline"), tmp_path)
    values = detail_values(read_detail(tmp_path / "mlperf_log_detail.txt"))
    assert (values["sut_name"], values["qsl_name"]) == ("PySUT", "PyQSL")
    assert values["qsl_reported_total_count"] == 16
    assert values["qsl_reported_performance_count"] == 16


def test_exception_in_qdl_name_callback_is_raised_by_start_test(lg, qsl, tmp_path):
    def name():
        raise LookupError("no name")

    qdl = lg.ConstructQDL(lambda samples: None, lambda: None, name)
    try:
        with pytest.raises(LookupError):
            start(lg, qdl, qsl, make_settings(lg, "Offline"), tmp_path)
    finally:
        lg.DestroyQDL(qdl)
    assert qsl.loaded == []  # the test never started


# --- tokens -------------------------------------------------------------------------------

N_TOKENS = 5


class TokenSut:
    """Reports the first token of each sample, then completes it with N_TOKENS tokens."""

    def __init__(self, lg):
        self.lg = lg
        self.handle = lg.ConstructSUT(self.issue, lambda: None)

    def issue(self, samples):
        complete(self.lg, samples, first_token=True)
        complete(self.lg, samples, n_tokens=N_TOKENS)

    def destroy(self):
        self.lg.DestroySUT(self.handle)


@pytest.fixture
def token_sut(lg):
    sut = TokenSut(lg)
    yield sut
    sut.destroy()


def test_server_token_run_reports_ttft_and_tpot(lg, token_sut, qsl, tmp_path):
    settings = make_settings(
        lg, "Server", min_query_count=100, server_target_qps=2000, use_token_latencies=True
    )
    start(lg, token_sut, qsl, settings, tmp_path)
    summary, detail, _ = read_logs(tmp_path)
    values = detail_values(detail)
    assert detail_errors(detail) == []  # no "n_tokens" or "first token" errors
    assert values["requested_use_token_latencies"] is True
    for key in (
        "result_first_token_mean_latency_ns",
        "result_first_token_99.00_percentile_latency_ns",
        "result_time_per_output_token_99.00_percentile_ns",
        "result_completed_tokens_per_second",
    ):
        assert key in values, key
    # The first token comes before the end of the sample.
    assert 0 < values["result_first_token_mean_latency_ns"] <= values["result_mean_latency_ns"]
    assert values["result_time_to_output_token_min"] >= 0
    assert "Completed tokens per second" in summary
    assert "TTFT Early Stopping Result:" in summary
    assert "TPOT Early Stopping Result:" in summary


def test_offline_token_throughput_is_samples_throughput_times_n_tokens(
    lg, token_sut, qsl, tmp_path
):
    settings = make_settings(lg, "Offline", min_query_count=100, use_token_latencies=True)
    start(lg, token_sut, qsl, settings, tmp_path)
    summary, detail, _ = read_logs(tmp_path)
    values = detail_values(detail)
    assert detail_errors(detail) == []
    # Both are counts over the same max latency (6 significant digits in the log).
    ratio = values["result_tokens_per_second"] / values["result_samples_per_second"]
    assert ratio == pytest.approx(N_TOKENS, rel=1e-4)
    assert float(summary_value(summary, "Tokens per second")) > 0


@pytest.mark.parametrize("scenario", ["Server", "Offline"])
def test_token_accuracy_log_has_token_count(lg, token_sut, qsl, tmp_path, scenario):
    settings = make_settings(
        lg, scenario, "AccuracyOnly", server_target_qps=2000, use_token_latencies=True
    )
    start(lg, token_sut, qsl, settings, tmp_path)
    _, detail, accuracy = read_logs(tmp_path)
    assert detail_errors(detail) == []
    assert len(accuracy) == 16
    for entry in accuracy:
        assert entry["token_count"] == N_TOKENS
        if scenario == "Server":  # the first-token response is logged too
            assert entry["token_data"] == accuracy_hex(entry["qsl_idx"])
        else:
            assert "token_data" not in entry


# --- AbortTest ----------------------------------------------------------------------------


def long_server_settings(lg):
    # 50 queries per second for at least a minute: only an abort or an error ends it early.
    return make_settings(lg, "Server", min_duration_ms=60000, server_target_qps=50)


def test_abort_test_from_another_thread_ends_a_long_run_invalid(lg, qsl, tmp_path):
    issued = threading.Event()

    def issue(samples):
        issued.set()
        complete(lg, samples)

    def abort_soon():
        issued.wait(timeout=10)
        time.sleep(0.2)
        lg.AbortTest()

    sut = lg.ConstructSUT(issue, lambda: None)
    aborter = threading.Thread(target=abort_soon)
    aborter.start()
    began = time.monotonic()
    try:
        start(lg, sut, qsl, long_server_settings(lg), tmp_path)
    finally:
        elapsed = time.monotonic() - began
        aborter.join()
        lg.DestroySUT(sut)
    assert elapsed < 5
    summary, detail, _ = read_logs(tmp_path)
    assert summary_value(summary, "Result is") == "INVALID"
    assert detail_values(detail)["result_validity"] == "INVALID"
    assert detail_errors(detail)  # the abort is reported


def test_abort_test_without_a_running_test_does_not_affect_the_next_one(
    lg, null_sut, qsl, tmp_path
):
    lg.AbortTest()
    settings = make_settings(lg, "SingleStream", min_query_count=100)
    start(lg, null_sut, qsl, settings, tmp_path)
    summary, detail, _ = read_logs(tmp_path)
    assert summary_value(summary, "Result is") == "VALID"
    assert detail_errors(detail) == []


# --- exceptions in callbacks --------------------------------------------------------------


class IssueFailed(Exception):
    pass


def run_expecting(lg, exception, sut, library, settings, outdir, limit_s=5):
    """Runs a test that must raise `exception` within `limit_s`; returns the seconds taken."""
    began = time.monotonic()
    with pytest.raises(exception):
        start(lg, sut, library, settings, outdir)
    elapsed = time.monotonic() - began
    assert elapsed < limit_s
    return elapsed


def test_exception_in_issue_callback_is_raised_by_start_test_after_the_run(lg, qsl, tmp_path):
    queries = []

    def issue(samples):
        queries.append(samples)
        if len(queries) == 3:
            raise IssueFailed("third query")
        complete(lg, samples)

    sut = lg.ConstructSUT(issue, lambda: None)
    try:
        run_expecting(lg, IssueFailed, sut, qsl, long_server_settings(lg), tmp_path)
    finally:
        lg.DestroySUT(sut)
    summary, detail, _ = read_logs(tmp_path)
    assert summary_value(summary, "Result is") == "INVALID"
    assert detail_errors(detail)
    assert len(queries) == 3  # nothing more was issued after the failure


def test_exception_before_completing_the_only_offline_query_does_not_hang(lg, qsl, tmp_path):
    # Offline issues one query; its samples never complete.
    def issue(samples):
        raise IssueFailed("nothing completed")

    sut = lg.ConstructSUT(issue, lambda: None)
    try:
        run_expecting(lg, IssueFailed, sut, qsl, make_settings(lg, "Offline"), tmp_path)
    finally:
        lg.DestroySUT(sut)
    assert (tmp_path / "mlperf_log_summary.txt").exists()
    assert (tmp_path / "mlperf_log_detail.txt").exists()


def test_exception_in_flush_callback_is_raised_by_start_test(lg, qsl, tmp_path):
    def flush():
        raise IssueFailed("flush")

    sut = lg.ConstructSUT(lambda samples: complete(lg, samples), flush)
    try:
        run_expecting(lg, IssueFailed, sut, qsl, make_settings(lg, "Offline"), tmp_path)
    finally:
        lg.DestroySUT(sut)
    assert (tmp_path / "mlperf_log_detail.txt").exists()


def test_exception_in_qsl_load_callback_is_raised_by_start_test(lg, null_sut, tmp_path):
    def load(indices):
        raise MemoryError("cannot load")

    library = Qsl(lg, load=load)
    try:
        settings = make_settings(lg, "Offline")
        run_expecting(lg, MemoryError, null_sut, library, settings, tmp_path)
    finally:
        library.destroy()
    assert null_sut.queries == []  # nothing was issued without loaded samples


def test_a_run_after_a_failed_run_is_valid(lg, null_sut, qsl, tmp_path):
    failing = lg.ConstructSUT(lambda samples: 1 / 0, lambda: None)
    try:
        settings = make_settings(lg, "Offline")
        run_expecting(lg, ZeroDivisionError, failing, qsl, settings, tmp_path / "a")
    finally:
        lg.DestroySUT(failing)
    start(lg, null_sut, qsl, make_settings(lg, "Offline"), tmp_path / "b")
    summary, detail, _ = read_logs(tmp_path / "b")
    assert summary_value(summary, "Result is") == "VALID"
    assert detail_errors(detail) == []


# --- GIL ----------------------------------------------------------------------------------


def test_start_test_releases_the_gil(lg, qsl, tmp_path):
    counter = [0]
    stop = threading.Event()
    at_issue = []

    def count():
        while not stop.is_set():
            counter[0] += 1

    def issue(samples):
        at_issue.append((time.monotonic(), counter[0]))
        complete(lg, samples)

    sut = lg.ConstructSUT(issue, lambda: None)
    counting = threading.Thread(target=count)
    counting.start()
    try:
        # About one second of a sparse Server schedule.
        settings = make_settings(
            lg, "Server", min_duration_ms=800, min_query_count=1, server_target_qps=20
        )
        start(lg, sut, qsl, settings, tmp_path)
    finally:
        stop.set()
        counting.join()
        lg.DestroySUT(sut)
    (first_time, first_count), (last_time, last_count) = at_issue[0], at_issue[-1]
    assert last_time - first_time > 0.5
    # Between the first and last query the counter thread ran: the GIL was free while the
    # engine waited for the next scheduled query.
    assert last_count - first_count > 10000


# --- QuerySamplesComplete edge cases ------------------------------------------------------


def test_query_samples_complete_rejects_non_responses_and_completes_nothing(lg, qsl, tmp_path):
    errors = []

    def issue(samples):
        good = lg.QuerySampleResponse(samples[0].id, 0, 0)
        for bad in ([object()], [good, 5], [good, None], 7):
            try:
                lg.QuerySamplesComplete(bad)
            except TypeError as err:
                errors.append(err)
        complete(lg, samples)  # the real completion; a partial one above would be a duplicate

    sut = lg.ConstructSUT(issue, lambda: None)
    try:
        start(lg, sut, qsl, make_settings(lg, "SingleStream", min_query_count=100), tmp_path)
    finally:
        lg.DestroySUT(sut)
    summary, detail, _ = read_logs(tmp_path)
    assert len(errors) == 4 * detail_values(detail)["result_query_count"]
    assert detail_errors(detail) == []  # no duplicate completions
    assert summary_value(summary, "Result is") == "VALID"


def test_query_samples_complete_without_a_running_test_does_nothing(lg, null_sut, qsl, tmp_path):
    lg.QuerySamplesComplete([lg.QuerySampleResponse(1, 0, 0)])
    lg.FirstTokenComplete([lg.QuerySampleResponse(1, 0, 0)])
    settings = make_settings(lg, "SingleStream", min_query_count=100)
    start(lg, null_sut, qsl, settings, tmp_path / "run")
    # After the test: the ids of the finished test are gone, nothing happens.
    lg.QuerySamplesComplete([lg.QuerySampleResponse(null_sut.samples[0][0], 0, 0)])
    summary, detail, _ = read_logs(tmp_path / "run")
    assert summary_value(summary, "Result is") == "VALID"
    assert detail_errors(detail) == []


def test_query_samples_complete_rejects_non_responses_without_a_running_test(lg):
    # As the official module: the argument is checked before anything else.
    with pytest.raises(TypeError):
        lg.QuerySamplesComplete([object()])
    with pytest.raises(TypeError):
        lg.QuerySamplesComplete(None)


def test_start_test_inside_a_running_test_raises_runtime_error(lg, qsl, tmp_path):
    nested = []

    def issue(samples):
        if not nested:
            try:
                lg.StartTest(sut, qsl.handle, make_settings(lg, "Offline"), NO_AUDIT)
            except RuntimeError as err:
                nested.append(err)
        complete(lg, samples)

    sut = lg.ConstructSUT(issue, lambda: None)
    try:
        start(lg, sut, qsl, make_settings(lg, "SingleStream"), tmp_path)
    finally:
        lg.DestroySUT(sut)
    assert len(nested) == 1


# --- log output options -------------------------------------------------------------------


def test_copy_summary_to_stdout_prints_the_summary(lg, null_sut, qsl, tmp_path, capfd):
    settings = make_settings(lg, "Offline")
    start(lg, null_sut, qsl, settings, tmp_path, copy_summary_to_stdout=True)
    out = capfd.readouterr().out
    assert "MLPerf Results Summary" in out
    assert "Result is : VALID" in out
    assert ":::MLLOG" not in out
    assert out.strip() in (tmp_path / "mlperf_log_summary.txt").read_text()


def test_copy_detail_to_stdout_prints_the_detail_log(lg, null_sut, qsl, tmp_path, capfd):
    settings = make_settings(lg, "Offline")
    start(lg, null_sut, qsl, settings, tmp_path, copy_detail_to_stdout=True)
    out = capfd.readouterr().out
    printed = [line for line in out.splitlines() if line.startswith(":::MLLOG")]
    assert len(printed) == len(read_detail(tmp_path / "mlperf_log_detail.txt"))
    assert "MLPerf Results Summary" not in out


def test_nothing_is_printed_by_default(lg, null_sut, qsl, tmp_path, capfd):
    start(lg, null_sut, qsl, make_settings(lg, "Offline"), tmp_path)
    out = capfd.readouterr().out
    assert "MLPerf Results Summary" not in out
    assert ":::MLLOG" not in out


def test_prefix_and_suffix_name_the_log_files(lg, null_sut, qsl, tmp_path):
    settings = make_settings(lg, "Offline")
    start(lg, null_sut, qsl, settings, tmp_path, prefix="run7_", suffix="_b")
    summary, detail, accuracy = read_logs(tmp_path, prefix="run7_", suffix="_b")
    assert summary_value(summary, "Result is") == "VALID"
    assert detail_values(detail)["result_validity"] == "VALID"
    assert accuracy == []
    assert not (tmp_path / "mlperf_log_summary.txt").exists()


def test_prefix_with_datetime_starts_the_file_names_with_the_date(lg, null_sut, qsl, tmp_path):
    settings = make_settings(lg, "Offline")
    start(lg, null_sut, qsl, settings, tmp_path, prefix_with_datetime=True)
    # As upstream: prefix, then the UTC date and time, then the log's name.
    pattern = re.compile(r"mlperf_log_\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ_(summary|detail)\.txt")
    names = sorted(p.name for p in tmp_path.iterdir() if pattern.fullmatch(p.name))
    assert [pattern.fullmatch(n).group(1) for n in names] == ["detail", "summary"]
    assert not (tmp_path / "mlperf_log_summary.txt").exists()


def test_missing_outdir_raises_runtime_error_without_running(lg, null_sut, qsl, tmp_path):
    # The official module prints errors, runs without logs and aborts the process at exit.
    log_settings = make_log_settings(lg, tmp_path / "missing" / "dir")
    with pytest.raises(RuntimeError):
        lg.StartTestWithLogSettings(
            null_sut.handle, qsl.handle, make_settings(lg, "Offline"), log_settings, NO_AUDIT
        )
    assert null_sut.queries == []
    assert not (tmp_path / "missing").exists()


def test_enable_trace_writes_a_trace_file(lg, null_sut, qsl, tmp_path):
    log_settings = make_log_settings(lg, tmp_path, enable_trace=True)
    settings = make_settings(lg, "SingleStream")
    lg.StartTestWithLogSettings(null_sut.handle, qsl.handle, settings, log_settings, NO_AUDIT)
    trace = json.loads((tmp_path / "mlperf_log_trace.json").read_text())
    assert trace  # a non-empty JSON document


CTRL_C_RUN = """
import signal
import sys
import mlperf_host.loadgen as lg

# Started from a background job, this process inherits SIGINT ignored, and Python then leaves
# it ignored; the test is about a program that Ctrl-C reaches.
signal.signal(signal.SIGINT, signal.default_int_handler)

answer = sys.argv[2] == "Server"

def issue(samples):
    # Offline: the one query is never answered; the test waits for it (no drain timeout).
    if answer:
        lg.QuerySamplesComplete([lg.QuerySampleResponse(s.id, 0, 0) for s in samples])
    print("issued", flush=True)

settings = lg.TestSettings()
settings.scenario = getattr(lg.TestScenario, sys.argv[2])
settings.server_target_qps = 100
settings.min_duration_ms = 60000
sut = lg.ConstructSUT(issue, lambda: None)
qsl = lg.ConstructQSL(16, 16, lambda _: None, lambda _: None)
log = lg.LogSettings()
log.log_output.outdir = sys.argv[1]
try:
    lg.StartTestWithLogSettings(sut, qsl, settings, log, sys.argv[1] + "/no-audit.config")
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


@pytest.mark.parametrize("scenario", ["Server", "Offline"])
def test_ctrl_c_aborts_the_test_and_raises_keyboard_interrupt(tmp_path, scenario):
    # Server: Ctrl-C while Python runs issue_query on the caller's thread; Offline: while the
    # test waits in the engine for a query the SUT never answers.
    child = subprocess.Popen([sys.executable, "-c", CTRL_C_RUN, str(tmp_path), scenario],
                             stdout=subprocess.PIPE, text=True)
    # Interrupt only once queries flow, so the test is really running.
    assert child.stdout.readline().strip() == "issued"
    began = time.monotonic()
    child.send_signal(signal.SIGINT)
    output, _ = child.communicate(timeout=30)
    assert time.monotonic() - began < 10
    assert child.returncode == 0
    assert "interrupted" in output.splitlines()
    summary, detail, _ = read_logs(tmp_path)
    assert summary_value(summary, "Result is") == "INVALID"


# --- no give-up where the official waits; no file the official does not write -------------


def answered_late(lg, tmp_path, delay_s, **log_fields):
    """An Offline test whose one query a worker thread answers `delay_s` after it is issued;
    the detail log's values."""
    workers = []

    def issue(samples):
        def answer():
            time.sleep(delay_s)
            complete(lg, samples)
        workers.append(threading.Thread(target=answer))
        workers[-1].start()

    sut = lg.ConstructSUT(issue, lambda: None)
    library = lg.ConstructQSL(16, 16, lambda _: None, lambda _: None)
    log_settings = make_log_settings(lg, tmp_path)
    for name, value in log_fields.items():
        setattr(log_settings, name, value)
    settings = make_settings(lg, "Offline", offline_expected_qps=16)
    try:
        lg.StartTestWithLogSettings(sut, library, settings, log_settings, NO_AUDIT)
    finally:
        for worker in workers:
            worker.join()
        lg.DestroySUT(sut)
        lg.DestroyQSL(library)
    _, detail, _ = read_logs(tmp_path)
    return detail


def test_samples_answered_late_are_waited_for_as_the_official_does(lg, tmp_path):
    detail = answered_late(lg, tmp_path, 1.5)
    assert detail_values(detail)["result_validity"] == "VALID"
    assert detail_errors(detail) == []


def test_a_drain_timeout_asked_for_gives_up_and_says_the_sut_keeps_the_samples(lg, tmp_path):
    detail = answered_late(lg, tmp_path, 2.0, drain_timeout_s=0.3)
    assert detail_values(detail)["result_validity"] == "INVALID"
    errors = " ".join(str(e["value"]) for e in detail_errors(detail))
    assert "16 samples never completed: gave up after 300ms" in errors, errors
    assert "its threads are neither waited for nor stopped" in errors, errors


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), float("inf")])
def test_a_drain_timeout_must_be_positive_seconds(lg, value):
    with pytest.raises(ValueError, match="drain_timeout_s"):
        lg.LogSettings().drain_timeout_s = value


def test_result_json_is_written_only_when_asked_and_named_like_the_logs(lg, null_sut, qsl, tmp_path):
    settings = make_settings(lg, "Offline")
    start(lg, null_sut, qsl, settings, tmp_path / "default")
    assert not (tmp_path / "default" / "result.json").exists()
    for prefix, name in [("mlperf_log_", "result_s.json"), ("runA_", "runA_result_s.json")]:
        log_settings = make_log_settings(lg, tmp_path / "asked", prefix=prefix, suffix="_s")
        log_settings.write_result_json = True
        (tmp_path / "asked").mkdir(exist_ok=True)
        lg.StartTestWithLogSettings(null_sut.handle, qsl.handle, settings, log_settings, NO_AUDIT)
        result = json.loads((tmp_path / "asked" / name).read_text())
        assert result["effective"]["scenario"] == "Offline"
    assert sorted(p.name for p in (tmp_path / "asked").glob("*result*")) == [
        "result_s.json", "runA_result_s.json"]


def test_from_config_warns_of_a_name_that_is_no_scenario_and_applies_the_rest(lg, tmp_path):
    conf = tmp_path / "user.conf"
    conf.write_text("*.*.min_query_count = 7\n")
    settings = lg.TestSettings()
    with pytest.warns(UserWarning, match="is not a scenario"):
        assert settings.FromConfig(str(conf), "m", "Foo", 2) == 0
    assert settings.min_query_count == 7


def test_from_config_returns_0_on_a_typo_as_the_official_and_warns_what_was_meant(lg, tmp_path):
    conf = tmp_path / "user.conf"
    conf.write_text("m.Offline.min_querycount = 7\n")
    settings = lg.TestSettings()
    with pytest.warns(UserWarning, match=r"did you mean 'min_query_count'\?"):
        assert settings.FromConfig(str(conf), "m", "Offline", 2) == 0
    assert settings.min_query_count == lg.TestSettings().min_query_count
