"""smollm2: an LLM benchmark on SmolLM2-135M-Instruct served by llama.cpp's OpenAI server.

The prompts (configs/benchmarks/smollm2/prompts.json, written for the project) and the greedy
answers the model gives them (references.json there, made by smollm2_reference.py) are
committed; the model itself is the server's (scripts/serve.sh llama smollm2). Writes into
data/smollm2/ (or --out DIR):
  prompts.npy     uint8 [256, 128]: each prompt's UTF-8 text, padded with NUL bytes (the
                  network plugin's `prompt = "text"` strips them)
  reference.json  what was written, with the sha256 of everything it was made from
"""

import argparse
import json

import common  # first: sets the BLAS thread count before numpy loads

import numpy as np

FOLDER = common.REPO / "configs" / "benchmarks" / "smollm2"
PROMPT_BYTES = 128


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=common.default_out("smollm2"), help="output folder (default: data/smollm2)")
    args = ap.parse_args()

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
        common.write_json(
            tmp / "reference.json",
            {
                "metric": "rouge",
                "samples": len(prompts),
                "prompts_sha256": common.sha256(tmp / "prompts.npy"),
                "prompts_json_sha256": common.sha256(FOLDER / "prompts.json"),
                "references_sha256": common.sha256(FOLDER / "references.json"),
                "generator_sha256": common.generator_sha256(__file__),
            },
        )
    common.log(f"smollm2: {len(prompts)} prompts of at most {PROMPT_BYTES} bytes")


if __name__ == "__main__":
    main()
