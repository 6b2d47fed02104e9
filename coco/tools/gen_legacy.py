#!/usr/bin/env python3
"""Score the fixture logs with a numpy 1.x interpreter (legacy promotion).

Usage: NP1_PYTHON=/path/to/python gen_legacy.py OUT_DIR [FIXTURE_DIR]

For each FIXTURE_DIR/logs/<name>/ runs the reference accuracy-coco.py with
NP1_PYTHON (a venv with numpy<2 and pycocotools==2.0.11) and writes
OUT_DIR/<name>/{stdout, rc, coco-results.json, stats.json}; stats.json comes
from the fixture's coco_stats.py run by the same interpreter.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    out = os.path.abspath(sys.argv[1])
    fixture = sys.argv[2] if len(sys.argv) > 2 else "/work/fixtures/coco"
    py = os.environ["NP1_PYTHON"]
    ann = os.path.join(fixture, "coco_safe", "annotations", "instances_val2017.json")
    with open(ann) as f:
        images = json.load(f)["images"]
    logs = os.path.join(fixture, "logs")
    for name in sorted(os.listdir(logs)):
        log = os.path.join(logs, name, "mlperf_log_accuracy.json")
        if not os.path.exists(log):
            continue
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            os.symlink(os.path.join(fixture, "coco_safe"), os.path.join(tmp, "coco_safe"))
            p = subprocess.run([py, os.path.join(fixture, "reference-src", "accuracy-coco.py"),
                                "--mlperf-accuracy-file", log, "--coco-dir", "coco_safe"],
                               cwd=tmp, capture_output=True, text=True)
            with open(os.path.join(d, "stdout"), "w") as f:
                f.write(p.stdout)
            with open(os.path.join(d, "rc"), "w") as f:
                f.write("%d\n" % p.returncode)
            if p.returncode != 0:
                continue
            res = os.path.join(d, "coco-results.json")
            shutil.copy(os.path.join(tmp, "coco-results.json"), res)
            with open(log) as f:
                ids = sorted({images[e["qsl_idx"]]["id"] for e in json.load(f)})
            s = subprocess.run([py, os.path.join(fixture, "coco_stats.py"), ann, res]
                               + [str(i) for i in ids], capture_output=True, text=True, check=True)
            with open(os.path.join(d, "stats.json"), "w") as f:
                f.write(s.stdout)
        print(name, [l for l in p.stdout.splitlines() if l.startswith("mAP")])


if __name__ == "__main__":
    main()
