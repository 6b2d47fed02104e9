#!/usr/bin/env bash
# ImageNet preprocessing, mlperf-host against the reference's Python + OpenCV, on the same
# machine, the same images and one core each:
#   - images/s: `mlperf-host dataset preprocess --benchmark resnet` (JPEG decoded by
#     libjpeg-turbo in the host, pre_process_vgg's arithmetic in the WASM sandbox, each
#     tensor written as a .npy) against cv2.imread + cv2.cvtColor + cv2.resize(INTER_AREA) +
#     crop + float32 - means + transpose + np.save (what the reference's imagenet.py does
#     for each image it caches), opencv-python-headless 5.0.0.93 with cv2.setNumThreads(1);
#     both pinned to core 0 (taskset), ROUNDS rounds, medians;
#   - memory: the peak RSS of a load of 1,024 samples (`run --plugin null`, Offline), against
#     the samples' bytes (1,024 x 602,112) and the same run on 13 samples.
# The images: the ImageNet fixture's 13 photographs repeated to N (default 1024) files.
# Usage: bash scripts/bench-preprocess.sh   (N=1024 ROUNDS=3; needs a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${N:-1024}
rounds=${ROUNDS:-3}
host=./target/release/mlperf-host
[ -x "$host" ] || { echo "error: build first: cargo build --release" >&2; exit 1; }
bash scripts/setup-jpeg.sh >/dev/null
venv=.venv-bench-cv2
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet opencv-python-headless==5.0.0.93 "numpy<3"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
images="$work/images"
mkdir -p "$images"
mapfile -t lines <tests/fixtures/imagenet/raw/val_map.txt
for ((i = 0; i < n; i++)); do
    read -r name label <<<"${lines[i % ${#lines[@]}]}"
    file=$(printf 'ILSVRC2012_val_%08d.JPEG' $((i + 1)))
    cp "tests/fixtures/imagenet/raw/$name" "$images/$file"
    echo "$file $label" >>"$images/val_map.txt"
done
cat >"$work/reference.py" <<'PY'
import os, sys, time
import cv2, numpy as np
cv2.setNumThreads(1)
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
names = [line.split()[0] for line in open(os.path.join(src, "val_map.txt"))]
means = np.array([123.68, 116.78, 103.94], dtype=np.float32)
start = time.perf_counter()
for name in names:
    img = cv2.cvtColor(cv2.imread(os.path.join(src, name)), cv2.COLOR_BGR2RGB)
    h, w, _ = img.shape
    size = (256, int(256 * h / w)) if h > w else (int(256 * w / h), 256)
    img = cv2.resize(img, size, interpolation=cv2.INTER_AREA)
    h, w, _ = img.shape
    top, left = int((h - 224) / 2), int((w - 224) / 2)
    img = np.asarray(img[top:top + 224, left:left + 224], dtype="float32")
    img -= means
    np.save(os.path.join(out, name), img.transpose([2, 0, 1]))
print(len(names) / (time.perf_counter() - start))
PY
ours=() theirs=()
for ((r = 1; r <= rounds; r++)); do
    rm -rf "$work/ours" "$work/theirs"
    start=$(date +%s.%N)
    taskset -c 0 "$host" dataset preprocess --benchmark resnet --dataset-dir "$images" --out "$work/ours" >/dev/null
    ours+=("$(echo "$n / ($(date +%s.%N) - $start)" | bc -l)")
    theirs+=("$(taskset -c 0 "$venv/bin/python" "$work/reference.py" "$images" "$work/theirs")")
done
# The two caches hold the same tensors (the headers may differ in padding only).
for file in "$work/theirs"/*.npy; do
    cmp -s <(tail -c 602112 "$file") <(tail -c 602112 "$work/ours/$(basename "$file")") ||
        { echo "error: $(basename "$file") differs from the reference's" >&2; exit 1; }
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
m_ours=$(median "${ours[@]}") m_theirs=$(median "${theirs[@]}")
printf 'preprocessing %d images on one core, median of %d rounds:\n' "$n" "$rounds"
printf '  mlperf-host dataset preprocess   %8.1f images/s\n' "$m_ours"
printf '  Python + OpenCV 5.0.0.93         %8.1f images/s\n' "$m_theirs"
printf '  ratio                            %8.2fx (every tensor identical)\n' "$(echo "$m_ours / $m_theirs" | bc -l)"
peak() {
    /usr/bin/time -f '%M' "$host" run --benchmark resnet --dataset-dir "$1" --plugin null \
        --plugin-postprocesses --scenario Offline --mode PerformanceOnly \
        --set "performance_sample_count_override=$2" --set min_duration_ms=0 \
        --set min_query_count=1 --set offline_expected_qps=1 --out "$work/run-$2" -q \
        2>&1 >/dev/null | tail -n 1
}
small=$(peak tests/fixtures/imagenet/raw 13)
large=$(peak "$images" "$n")
printf 'peak RSS of a load: %d samples %.1f MiB, 13 samples %.1f MiB; the %d samples are %.1f MiB\n' \
    "$n" "$(echo "$large / 1024" | bc -l)" "$(echo "$small / 1024" | bc -l)" "$n" \
    "$(echo "$n * 602112 / 1048576" | bc -l)"
