#!/usr/bin/env bash
# whisper's accuracy scoring, mlperf-host's native accuracy_eval.py against the reference's own
# accuracy_eval.py, on the same machine, manifest and accuracy log:
#   - the data: N (default 1,633, the data set's size) clips, each transcript WORDS (default 80,
#     about 30 s of LibriSpeech) words drawn, seeded, from the librispeech fixture's transcripts
#     and from number words, and each answer that transcript with seeded whisper-like changes
#     (digits for number words, American spellings, words split, joined, dropped and replaced),
#     logged as int64 label indices; the clips' audio is the fixture's (the scorer reads none);
#   - native: `mlperf-host accuracy --benchmark whisper` on that log, wall seconds;
#   - reference (when INFERENCE=<mlcommons/inference checkout> and REF_PYTHON=<a Python with
#     openai-whisper's normaliser importable> are given): the same command with
#     `--reference-script`, which runs speech2text/accuracy_eval.py on the log and checks that
#     its line equals the native one; its wall seconds less the native run's are the script's.
#     openai-whisper's package __init__ imports torch: a PYTHONPATH with a stub `whisper`
#     package linking the sdist's normalizers will do (tests/fixtures/librispeech/README.md).
# Usage: bash scripts/bench-whisper.sh [N=1633 WORDS=80 INFERENCE=… REF_PYTHON=…]
# (needs a release build and `bash scripts/benchmarks/prepare.sh whisper`)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${N:-1633}
words=${WORDS:-80}
host=./target/release/mlperf-host
[ -x "$host" ] || { echo "error: build first: cargo build --release" >&2; exit 1; }
[ -f data/whisper/english.json ] || bash scripts/benchmarks/prepare.sh whisper
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$n" "$words" "$work" <<'PY'
import array, json, os, random, sys
n, length, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
fixture = os.path.abspath("tests/fixtures/librispeech")
clips = json.load(open(f"{fixture}/data/dev-all-repack.json"))
vocabulary = " ".join(c["transcript"] for c in clips).split()
numbers = ["twenty", "five", "one", "hundred", "and", "fifty", "nineteen", "sixty", "point", "percent"]
digits = {"twenty": "20", "five": "5", "fifty": "50", "sixty": "60", "percent": "%"}
american = {"colour": "color", "grey": "gray", "neighbour's": "neighbor's"}
labels = " abcdefghijklmnopqrstuvwxyz'0123456789$%+-"
rng = random.Random(1633)
manifest, log = [], []
for i in range(n):
    words = [rng.choice(vocabulary if rng.random() < 0.8 else numbers) for _ in range(length)]
    answer = []
    for word in words:
        roll = rng.random()
        if roll < 0.03:
            continue
        if roll < 0.06:
            answer.append(rng.choice(vocabulary))
        elif roll < 0.08 and len(word) > 3:
            answer += [word[:2], word[2:]]
        else:
            answer.append(digits.get(word, american.get(word, word)) if rng.random() < 0.3 else word)
    clip = dict(clips[i % len(clips)])
    clip["files"] = [dict(clip["files"][0], fname=os.path.join(fixture, clip["files"][0]["fname"]))]
    clip["transcript"] = " ".join(words)
    manifest.append(clip)
    text = " ".join(answer)
    data = array.array("q", [labels.index(c) for c in text if c in labels]).tobytes().hex().upper()
    log.append({"seq_id": i, "qsl_idx": i, "data": data})
os.makedirs(f"{work}/data")
json.dump(manifest, open(f"{work}/data/dev-all-repack.json", "w"))
json.dump(log, open(f"{work}/mlperf_log_accuracy.json", "w"))
PY
echo "# $n clips of $words words each in $work" >&2
args=(accuracy --benchmark whisper --dataset-dir "$work" --log "$work/mlperf_log_accuracy.json")

. scripts/bench-scorer.sh
time_scorers "Word Error Rate" accuracy_eval.py
