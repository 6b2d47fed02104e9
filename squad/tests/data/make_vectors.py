"""Writes the vectors in this folder: the MLPerf bert reference's own functions, run on
seeded random and hand-picked strings, for mlperf-squad's unit tests.

Nothing of the reference is copied: its scripts are imported from a checkout of
mlcommons/inference `language/bert/` (b66003e1) given by --reference, and the tokenizers come
from transformers. The `tokenization` module the scripts import is transformers'
BasicTokenizer with Google's constructor (the fixture's `transformers` shim, see
tests/fixtures/squad/README.md).

    python make_vectors.py --reference DIR --vocab ../../../tests/fixtures/squad/vocab.txt

Characters assigned after Unicode 14.0 (Python 3.11's unicodedata) are left out: our Unicode
tables are newer, and such characters are Cn to the reference (README.md here).
"""
import argparse
import collections
import importlib.util
import json
import os
import random
import struct
import sys
import types
import unicodedata

from transformers import BertTokenizer
from transformers.models.bert.tokenization_bert import BasicTokenizer as HFBasic


def basic(do_lower_case=True):
    return HFBasic(do_lower_case=do_lower_case, never_split=None, tokenize_chinese_chars=True,
                   strip_accents=None, do_split_on_punc=True)


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ALPHABET = (
    list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") * 3
    + [" "] * 20 + list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") * 2
    + list("éèàçñüöäÉÀÇÑÜÖÄßſİıΣσςΟΔΥΕΑΩωŉǰﬁﬀＡＢＣａ１")
    + ["e\u0301", "a\u0308", "\u0301", "\u0308", "\u0345", "\u20dd", "\u0338", "=\u0338"]
    + list("日本語中文字\u3400\U00020000\U0002B820\uF900\U0002F800テキストカタカナ한국어")
    + list("ภาษาไทย\u0e31\u0e34പ്രവീണ്\u200dअनुच्छेद")
    + list("\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2007\u200a\u2028\u2029\u202f\u205f\u3000")
    + list("\x00\x01\x07\x1b\x7f\x9f\u00ad\u200b\u200c\u200e\u2060\ufeff\ufffd\ue000\U000F0000\u0378\uffff")
    + list("\u212a\u212b\u2126\u00b5\u1e9e\u0130\u03a3\u1fbc\u01c5\u2160\u24b6")
    + list("©°€™½²¾¹\u2013\u2014\u2018\u2019\u201c\u201d«»\u00bf\u00a1\u3001\u3002\uff0c\u2026")
    + list("😀🙂🎉\U0001F1EB\U0001F1F7")
    + ["[SEP]", "[UNK]", "[CLS]", "[PAD]", "[MASK]", "[sep]", "[Sep]", "##", "#", "[SE", "P]"]
)

HAND = [
    "", " ", "Hello, World!", "ΟΔΥΣΣΕΥΣ", "ὈΔΥΣΣΕΎΣ Σ ΣΑ ΑΣ. ΑΣ' ΑΣ\u0301", "İstanbul İ", "Straße ẞ",
    "cafe\u0301 café", "a[SEP]b [SEP] [sep] [UNK][UNK] [CLS]x [MASK]", "[SE\x00P]", "x" * 100, "x" * 101,
    "é" * 100 + "e\u0301", "10\u202f000 100\u00a0MB a\u3000b a\x1cb a\x1fb a\x85b a\u2028b a\u2029b",
    "日本語テキスト", "ภาษาไทย", "പ്രവീണ്‍", "\u212a\u212b\u2126", "ﬁle ＡＢＣ", "##ing #", "a\ue000b a\u0378b",
]

FLOATS = [0.0, -0.0, 1.0, 100.0, 0.1, 1e-4, 9.999999e-5, 1e-5, 1e16, 9999999999999998.0, 1e15,
          123456789012345.6, 76.92307692307692, 83.31196581196582, 5e-324, 1.7976931348623157e308,
          2.5, 1e22, 1e23, 1e-7, 0.30000000000000004,
          # two shortest candidates equally near: Python takes the even one
          99785313904536.625, -796829537996113.25, -72720682155205.625]


def write(path, entries):
    with open(path, "w", encoding="ascii") as f:
        f.write("[\n" + ",\n".join(json.dumps(e, ensure_ascii=True) for e in entries) + "\n]\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reference", required=True, help="mlcommons/inference language/bert checkout")
    parser.add_argument("--vocab", required=True)
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--seed", type=int, default=20261202)
    args = parser.parse_args()

    shim = types.ModuleType("tokenization")
    shim.BasicTokenizer = basic
    shim.whitespace_tokenize = lambda text: text.strip().split() if text.strip() else []
    shim.printable_text = lambda text: text
    sys.modules["tokenization"] = shim
    sys.argv = [sys.argv[0]]
    squad_data = load("create_squad_data", os.path.join(args.reference, "create_squad_data.py"))
    accuracy = load("accuracy_squad", os.path.join(args.reference, "accuracy-squad.py"))
    evaluate = load("evaluate_v1_1", os.path.join(args.reference, "evaluate_v1.1.py"))

    rng = random.Random(args.seed)
    with open(args.vocab, encoding="utf-8") as f:
        words = [w.rstrip("\n").replace("##", "") for w in f]
    words = [w for w in words if len(w) > 1 and not w.startswith("[")]

    def text(n=None):
        n = rng.randint(0, 40) if n is None else n
        parts = []
        for _ in range(n):
            r = rng.random()
            parts.append(rng.choice(words) if r < 0.35 else " " if r < 0.45 else rng.choice(ALPHABET))
        if rng.random() < 0.03:
            parts.append("x" * rng.choice([99, 100, 101, 150]))
        return "".join(parts)

    tokenizer = BertTokenizer(args.vocab)
    texts = HAND + [text() for _ in range(600)]
    write(os.path.join(args.out, "tokenizer.json"),
          [{"text": t, "ids": tokenizer.convert_tokens_to_ids(tokenizer.tokenize(t)),
            "basic": basic().tokenize(t)} for t in texts])

    final = []
    for _ in range(1000):
        orig_text = " ".join(w for w in text(rng.randint(1, 10)).split(" ") if w) or "x"
        pieces = tokenizer.tokenize(orig_text)
        r = rng.random()
        if pieces and r < 0.8:  # as write_predictions builds tok_text from a piece span
            a = rng.randrange(len(pieces))
            b = rng.randrange(a, len(pieces))
            pred = " ".join(pieces[a:b + 1]).replace(" ##", "").replace("##", "")
            pred = " ".join(pred.strip().split())
        elif r < 0.9:
            pred = text(rng.randint(0, 3))
        else:
            pred = " ".join(" ".join(basic().tokenize(orig_text)).split()[: rng.randint(0, 3)])
        final.append({"pred_text": pred, "orig_text": orig_text,
                      "final_text": accuracy.get_final_text(pred, orig_text, True)})
    write(os.path.join(args.out, "final_text.json"), final)

    answers = ALPHABET + ["the", "a", "an", "The", "A", "AN", "theatre", "_the", "a_", "an\u0301", "thé"]
    scored = []
    for _ in range(1000):
        def answer():
            return "".join(rng.choice(answers + [" "] * 10 + words[:50]) for _ in range(rng.randint(0, 12)))
        p, g = answer(), answer()
        if rng.random() < 0.2:
            g = p
        scored.append({"prediction": p, "ground_truth": g, "normalized": evaluate.normalize_answer(p),
                       "exact_match": bool(evaluate.exact_match_score(p, g)),
                       "f1": float(evaluate.f1_score(p, g)), "split": p.split()})
    write(os.path.join(args.out, "evaluate.json"), scored)

    floats = list(FLOATS)
    while len(floats) < 600:
        k = rng.random()
        if k < 0.3:
            x = 100.0 * rng.randint(0, 10570) / 10570
        elif k < 0.6:
            x = rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30)
        else:
            x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if x == x and abs(x) != float("inf"):
            floats.append(x)
    write(os.path.join(args.out, "floats.json"),
          [{"bits": struct.unpack("<Q", struct.pack("<d", x))[0], "json": json.dumps(x)} for x in floats])

    DocSpan = collections.namedtuple("DocSpan", ["start", "length"])
    spans_cases = []
    while len(spans_cases) < 150:
        n, most, stride = rng.randint(1, 2000), rng.randint(1, 400), rng.randint(1, 200)
        spans, start = [], 0
        while start < n:
            length = min(n - start, most)
            spans.append(DocSpan(start, length))
            if start + length == n:
                break
            start += min(length, stride)
        if len(spans) > 40:
            continue
        positions = [rng.randrange(n) for _ in range(5)]
        spans_cases.append({"spans": [list(s) for s in spans], "positions": positions,
                            "max_span": [[i for i in range(len(spans)) if squad_data._check_is_max_context(spans, i, p)][0]
                                         for p in positions]})
    write(os.path.join(args.out, "max_context.json"), spans_cases)

    best = []
    for _ in range(200):
        logits = [rng.choice([0.0, 1.0, -1.0, 0.125, rng.uniform(-5, 5)]) for _ in range(rng.randint(0, 60))]
        best.append({"logits": logits, "best": accuracy._get_best_indexes(logits, 20)})
    write(os.path.join(args.out, "best_indexes.json"), best)

    import transformers
    print("python", sys.version.split()[0], "unicodedata", unicodedata.unidata_version,
          "transformers", transformers.__version__)


if __name__ == "__main__":
    main()
