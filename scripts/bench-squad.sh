#!/usr/bin/env bash
# bert's accuracy scoring at SQuAD v1.1 dev's scale, mlperf-host's native accuracy-squad.py
# against the reference's own accuracy-squad.py, on the same machine, data set and accuracy log:
#   - the data: the squad fixture's paragraphs repeated (ids made unique) to the real dev set's
#     10,570 questions and 10,833 features (129 questions of the 3-feature paragraph, one of
#     the 6-feature one, the rest single-feature ones), with the fixture's vocab.txt; the log
#     holds seeded normal float32 [384, 2] logits for every feature, in a shuffled order;
#   - native: `mlperf-host accuracy --benchmark bert-99` on that folder and log, wall seconds
#     (it makes the features from dev-v1.1.json, as the script does);
#   - reference (when INFERENCE=<mlcommons/inference checkout> and REF_PYTHON=<a Python with
#     transformers 4.57.6's slow BertTokenizer> are given, with PYTHONPATH naming a folder
#     that holds the `tokenization` module it imports, tests/fixtures/squad/README.md): the same
#     command with `--reference-script`, which runs language/bert/accuracy-squad.py (its feature
#     conversion, n-best post-processing and evaluate_v1.1.py) and checks that its line equals
#     the native one; its wall seconds less the native run's are the script's.
# Usage: bash scripts/bench-squad.sh [INFERENCE=… REF_PYTHON=… PYTHONPATH=…]
# (needs a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
host=./target/release/mlperf-host
[ -x "$host" ] || { echo "error: build first: cargo build --release" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import array, collections, copy, json, random, sys
work = sys.argv[1]
fixture = "tests/fixtures/squad"
QUESTIONS, FEATURES, SEQ = 10_570, 10_833, 384
dev = json.load(open(f"{fixture}/dev-v1.1.json"))
# Features per question, from the reference's own conversion of the fixture (a question's
# features depend on it and its context alone, so each copy has as many).
counts = collections.Counter(f["example_index"] for f in json.load(open(f"{fixture}/reference_features.json")))
paragraphs, index = [], 0
for article in dev["data"]:
    for paragraph in article["paragraphs"]:
        per = {counts[index + i] for i in range(len(paragraph["qas"]))}
        assert len(per) == 1, "a paragraph whose questions differ in features"
        paragraphs.append((paragraph, per.pop()))
        index += len(paragraph["qas"])
by_count = collections.defaultdict(list)
for paragraph, per in paragraphs:
    by_count[per].append(paragraph)
# 129 x 2 + 1 x 5 features beyond one per question: the real set's 263.
chosen, questions, features = [], 0, 0
for per, wanted in [(3, 129), (6, 1), (1, QUESTIONS - 130)]:
    pool = by_count[per]
    while wanted:
        paragraph = copy.deepcopy(pool[len(chosen) % len(pool)])
        paragraph["qas"] = paragraph["qas"][:wanted]
        for qa in paragraph["qas"]:
            qa["id"] = f'{qa["id"]}-{len(chosen)}'
        questions += len(paragraph["qas"])
        features += len(paragraph["qas"]) * per
        wanted -= len(paragraph["qas"])
        chosen.append(paragraph)
assert (questions, features) == (QUESTIONS, FEATURES), (questions, features)
json.dump({"version": "1.1", "data": [{"title": "scale", "paragraphs": chosen}]},
          open(f"{work}/dev-v1.1.json", "w"))
open(f"{work}/vocab.txt", "w").write(open(f"{fixture}/vocab.txt").read())
rng = random.Random(10833)
order = list(range(FEATURES))
rng.shuffle(order)
log = []
for seq, feature in enumerate(order):
    logits = array.array("f", (rng.gauss(0.0, 2.0) for _ in range(2 * SEQ)))
    log.append({"seq_id": seq, "qsl_idx": feature, "data": logits.tobytes().hex().upper()})
json.dump(log, open(f"{work}/mlperf_log_accuracy.json", "w"))
print(f"# {questions} questions, {features} features in {work}", file=sys.stderr)
PY
args=(accuracy --benchmark bert-99 --dataset-dir "$work" --log "$work/mlperf_log_accuracy.json")

. scripts/bench-scorer.sh
time_scorers '{"exact_match"' accuracy-squad.py
