"""whisper: openai-whisper's British-American spelling map (whisper/normalizers/english.json),
which EnglishTextNormalizer applies before accuracy_eval.py counts word errors. It is not ours to
ship, so it is read from openai-whisper 20250625's PyPI sdist (MIT; pinned by sha256, nothing of
it executed). Writes into data/whisper/ (or --out):
  english.json    the spelling map, byte for byte
  reference.json  the sdist's and the map's sha256, and the generator's
A submitter who installed openai-whisper for the reference's accuracy script points the
benchmark at site-packages/whisper/normalizers/english.json instead.
"""

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import common

SDIST = "openai-whisper==20250625"
SDIST_FILE = "openai_whisper-20250625.tar.gz"
SDIST_SHA256 = "37a91a3921809d9f44748ffc73c0a55c9f366c85a3ef5c2ae0cc09540432eb96"
MEMBER = "openai_whisper-20250625/whisper/normalizers/english.json"
MAP_SHA256 = "6607f948be9824d2e1b2fa2223cd94c06c45afa4e05ea0e3d5e1f2bdffde2465"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=common.default_out("whisper"), help="output folder (default: data/whisper)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work, common.Staging(args.out) as tmp:
        work = Path(work)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
             "--no-deps", "--no-binary", ":all:", SDIST, "-d", str(work)],
            check=True,
        )
        sdist = work / SDIST_FILE
        if common.sha256(sdist) != SDIST_SHA256:
            sys.exit(f"error: {sdist.name} is not the sdist this generator was written for (sha256)")
        with tarfile.open(sdist) as tar, tar.extractfile(MEMBER) as member, open(tmp / "english.json", "wb") as out:
            shutil.copyfileobj(member, out)
        if common.sha256(tmp / "english.json") != MAP_SHA256:
            sys.exit(f"error: {MEMBER} is not the spelling map this generator was written for (sha256)")
        common.write_json(tmp / "reference.json", {
            "sdist": SDIST,
            "sdist_sha256": SDIST_SHA256,
            "english_json_sha256": MAP_SHA256,
            "generator_sha256": common.generator_sha256(__file__),
        })
        common.log(f"whisper: english.json -> {args.out}")


if __name__ == "__main__":
    main()
