#!/usr/bin/env python3
"""An LLM harness written against the official ``mlperf_loadgen`` API only, in the style of
MLPerf's LLM reference implementations: each sample's prompt goes to an OpenAI-compatible
server (``/v1/chat/completions``, streamed), the first streamed token is reported with
``FirstTokenComplete`` as it arrives, and the whole answer (its UTF-8 text) with
``QuerySamplesComplete`` and ``n_tokens``. Python's standard library only, besides LoadGen.

Usage:
    llm_harness.py --port PORT --outdir DIR [--scenario SingleStream] [--mode PerformanceOnly]
                   [--total N] [--max-tokens N] [--set FIELD=VALUE ...]

The prompts are the first N of configs/benchmarks/smollm2/prompts.json. The LoadGen logs go to
DIR, and DIR/harness.json gets {"module": <mlperf_loadgen.__name__>, "completed": n,
"first_tokens": n, "tokens": n}. Which module serves ``import mlperf_loadgen`` is up to the
environment (PYTHONPATH); this file does not care.
"""

import argparse
import array
import http.client
import json
import os
import queue
import threading
import traceback
from pathlib import Path

import mlperf_loadgen as lg

PROMPTS = Path(__file__).resolve().parents[4] / "configs" / "benchmarks" / "smollm2" / "prompts.json"
WORKERS = 2


class Harness:
    def __init__(self, port, prompts, max_tokens):
        self.port = port
        self.prompts = prompts
        self.max_tokens = max_tokens
        self.work = queue.Queue()
        self.lock = threading.Lock()
        self.counts = {"completed": 0, "first_tokens": 0, "tokens": 0}
        self.threads = [threading.Thread(target=self.serve, daemon=True) for _ in range(WORKERS)]
        for thread in self.threads:
            thread.start()

    def issue(self, samples):
        for sample in samples:
            self.work.put((sample.id, sample.index))

    def flush(self):
        pass

    def serve(self):
        while True:
            item = self.work.get()
            if item is None:
                return
            try:
                self.generate(*item)
            except Exception:  # a sample never completed would hang LoadGen: end here
                traceback.print_exc()
                os._exit(1)

    def generate(self, sample_id, index):
        # A connection per request: servers close idle keep-alive connections (uvicorn after
        # 5 s), which a worker idle through a slow query would find closed.
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        body = json.dumps({
            "model": "smollm2",
            "messages": [{"role": "user", "content": self.prompts[index]}],
            "max_tokens": self.max_tokens, "temperature": 0.0, "seed": 0, "stream": True,
        })
        connection.request("POST", "/v1/chat/completions", body,
                           {"content-type": "application/json"})
        answer = connection.getresponse()
        if answer.status != 200:
            raise RuntimeError("sample %d: %d %s" % (index, answer.status, answer.read()))
        text, tokens = b"", 0
        for raw in answer:
            line = raw.decode().strip()
            if not line.startswith("data:"):
                continue
            data = line[len("data:"):].strip()
            if data == "[DONE]":
                break
            choice = json.loads(data)["choices"][0]
            content = choice.get("delta", {}).get("content")
            if content is None or (choice.get("finish_reason") and not content):
                continue
            piece = content.encode()
            if tokens == 0:
                self.respond(lg.FirstTokenComplete, sample_id, piece)
                with self.lock:
                    self.counts["first_tokens"] += 1
            tokens += 1
            text += piece
        connection.close()
        self.respond(lg.QuerySamplesComplete, sample_id, text, tokens)
        with self.lock:
            self.counts["completed"] += 1
            self.counts["tokens"] += tokens

    @staticmethod
    def respond(call, sample_id, payload, n_tokens=None):
        buffer = array.array("B", payload or b"\0")
        address, length = buffer.buffer_info()
        if n_tokens is None:
            response = lg.QuerySampleResponse(sample_id, address, length)
        else:
            response = lg.QuerySampleResponse(sample_id, address, length, n_tokens)
        call([response])

    def stop(self):
        for _ in self.threads:
            self.work.put(None)
        for thread in self.threads:
            thread.join()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--outdir", required=True)
    parser.add_argument("--scenario", default="SingleStream")
    parser.add_argument("--mode", default="PerformanceOnly")
    parser.add_argument("--total", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    args = parser.parse_args()

    prompts = json.loads(PROMPTS.read_text())[: args.total]
    settings = lg.TestSettings()
    settings.scenario = getattr(lg.TestScenario, args.scenario)
    settings.mode = getattr(lg.TestMode, args.mode)
    settings.use_token_latencies = True
    settings.min_duration_ms = 0
    settings.min_query_count = 8
    settings.single_stream_expected_latency_ns = 300_000_000
    settings.offline_expected_qps = 2.0
    for assignment in args.set:
        field, value = assignment.split("=", 1)
        setattr(settings, field, type(getattr(settings, field))(value))
    log_settings = lg.LogSettings()
    log_settings.log_output.outdir = args.outdir
    Path(args.outdir).mkdir(parents=True, exist_ok=True)

    harness = Harness(args.port, prompts, args.max_tokens)
    sut = lg.ConstructSUT(harness.issue, harness.flush)
    qsl = lg.ConstructQSL(len(prompts), len(prompts), lambda indices: None, lambda indices: None)
    lg.StartTestWithLogSettings(sut, qsl, settings, log_settings,
                                "/nonexistent/llm-harness/audit.config")
    harness.stop()
    lg.DestroyQSL(qsl)
    lg.DestroySUT(sut)
    report = dict(harness.counts, module=lg.__name__)
    (Path(args.outdir) / "harness.json").write_text(json.dumps(report))


if __name__ == "__main__":
    main()
