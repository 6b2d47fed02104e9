#!/usr/bin/env bash
# llama3.1-8b's accuracy scoring, mlperf-host's native evaluation.py against the reference's
# own evaluation.py, on the same machine and the same accuracy log:
#   - the data: N (default 13,368, the datacenter set's size) CNN-DailyMail-shaped records made
#     from the cnndm fixture's 12 (tests/fixtures/cnndm/cnn_eval.json, cycled), each answer
#     LEN (default 185) token ids cut from the record's own tok_input at a seeded offset, so
#     that the answers are real text of CNN-DailyMail length (about 600 characters);
#   - native: `mlperf-host accuracy --benchmark llama3.1-8b` (decode, Punkt, rouge_score,
#     numpy's mean) on that log, wall seconds;
#   - reference (when INFERENCE=<mlcommons/inference checkout> and REF_PYTHON=<a Python with
#     evaluation.py's packages: transformers, nltk + punkt_tab, evaluate, rouge_score,
#     numpy < 2> are given): the same command with `--reference-script`, which runs
#     language/llama3.1-8b/evaluation.py on the log and checks that its line equals the native
#     one; its wall seconds less the native run's are the script's. Offline, the script needs
#     the shims of tests/fixtures/cnndm/README.md in the environment (PYTHONPATH with the torch
#     stub, NLTK_DATA, HF_*_OFFLINE=1, USE_TORCH=0) and ./rouge/rouge.py in its folder.
# Usage: bash scripts/bench-cnndm.sh [N=13368 LEN=185 INFERENCE=… REF_PYTHON=…]
# (needs a release build and `bash scripts/benchmarks/prepare.sh punkt`)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${N:-13368}
len=${LEN:-185}
host=./target/release/mlperf-host
[ -x "$host" ] || { echo "error: build first: cargo build --release" >&2; exit 1; }
[ -d data/punkt/english ] || bash scripts/benchmarks/prepare.sh punkt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$n" "$len" "$work" <<'PY'
import json, random, struct, sys
n, length, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
records = json.load(open("tests/fixtures/cnndm/cnn_eval.json"))
rng = random.Random(42)
out, log = [], []
for i in range(n):
    record = records[i % len(records)]
    ids = record["tok_input"]
    start = rng.randrange(0, max(1, len(ids) - length))
    answer = ids[start:start + length]
    out.append(record)
    data = struct.pack(f"<{len(answer)}i", *answer).hex().upper()
    log.append({"seq_id": i, "qsl_idx": i, "data": data})
json.dump(out, open(f"{work}/cnn_eval.json", "w"))
json.dump(log, open(f"{work}/mlperf_log_accuracy.json", "w"))
PY
echo "# $n answers of $len token ids each in $work" >&2
args=(accuracy --benchmark llama3.1-8b --dataset-dir "$work" --log "$work/mlperf_log_accuracy.json")

. scripts/bench-scorer.sh
time_scorers "{'rouge1'" evaluation.py
