#!/usr/bin/env python3
"""Generate randomized COCOeval cases and pycocotools' answers for them.

Usage: gen_random.py OUT_DIR [N_CASES] [N_LOGS] [FIXTURE_DIR]

Writes OUT_DIR/eval/case_NNN/{gt.json, dt.json, img_ids.json, expected.json}:
small random datasets aimed at the corners of COCOeval (score ties,
boundary areas 32^2 and 96^2, IoU exactly at thresholds, crowds, >100
detections, categories absent from GT, images without GT or without
detections, an annotation id 0).

And OUT_DIR/logs/log_NNN/{mlperf_log_accuracy.json, stdout, coco-results.json,
expected.json}: random accuracy logs over the fixture's coco_safe, scored by
the reference accuracy-coco.py (FIXTURE_DIR/reference-src).
Everything is seeded by the case number (and GEN_SCALE, default 1).
"""
import contextlib
import io
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

COCO_IDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20,
            21, 22, 23, 24, 25, 27, 28, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
            41, 42, 43, 44, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58,
            59, 60, 61, 62, 63, 64, 65, 67, 70, 72, 73, 74, 75, 76, 77, 78, 79,
            80, 81, 82, 84, 85, 86, 87, 88, 89, 90]


def rbox(r, W, H):
    kind = r.random()
    if kind < 0.3:
        w, h = r.uniform(1, 31), r.uniform(1, 31)
    elif kind < 0.6:
        w, h = r.uniform(20, 100), r.uniform(20, 100)
    else:
        w, h = r.uniform(60, W), r.uniform(60, H)
    w, h = min(w, W), min(h, H)
    x, y = r.uniform(0, W - w), r.uniform(0, H - h)
    if r.random() < 0.3:  # integer boxes make exact IoU values possible
        x, y, w, h = float(int(x)), float(int(y)), float(max(1, int(w))), float(max(1, int(h)))
    return [x, y, w, h]


SCALE = int(os.environ.get("GEN_SCALE", "1"))


def gen_case(seed):
    """One random dataset; GEN_SCALE=n multiplies images and categories."""
    r = random.Random(seed * SCALE)
    n_img = r.randint(1, 8 * SCALE)
    img_ids = r.sample(range(1, 1_000_000), n_img)
    images = [{"id": i, "width": r.randint(64, 800), "height": r.randint(64, 800),
               "file_name": "%012d.jpg" % i} for i in img_ids]
    cats = r.sample(COCO_IDS, min(len(COCO_IDS), r.randint(1, 8 * SCALE)))
    categories = [{"id": c, "name": "c%d" % c} for c in cats]
    anns = []
    next_id = 0 if r.random() < 0.15 else r.randint(1, 1000)
    for im in images:
        for _ in range(r.choice([0, 0, 1, 2, 3, 5, 8, 12])):
            bb = rbox(r, im["width"], im["height"])
            u = r.random()
            if u < 0.08:
                bb = [float(r.randint(0, 50)), float(r.randint(0, 50)), 32.0, 32.0]
                area = 1024.0
            elif u < 0.14:
                bb = [float(r.randint(0, 50)), float(r.randint(0, 50)), 96.0, 96.0]
                area = 9216.0
            elif u < 0.5:
                area = bb[2] * bb[3]
            else:
                area = bb[2] * bb[3] * r.uniform(0.4, 1.0)
            cat = r.choice(cats) if r.random() > 0.05 else 999
            anns.append({"id": next_id, "image_id": im["id"], "category_id": cat,
                         "bbox": bb, "area": area,
                         "iscrowd": 1 if r.random() < 0.1 else 0,
                         "segmentation": []})
            next_id += 1
    tie_scores = r.random() < 0.5
    dets = []
    for im in images:
        n = r.choice([0, 1, 3, 10, 30, 60, 120])
        mine = [a for a in anns if a["image_id"] == im["id"]]
        for _ in range(n):
            u = r.random()
            if mine and u < 0.35:
                a = r.choice(mine)
                x, y, w, h = a["bbox"]
                j = r.choice([0.0, 0.0, 0.02, 0.1, 0.3])
                bb = [x + r.uniform(-j, j) * w, y + r.uniform(-j, j) * h,
                      w * (1 + r.uniform(-j, j)), h * (1 + r.uniform(-j, j))]
                cat = a["category_id"] if r.random() < 0.9 else r.choice(cats)
            elif mine and u < 0.5:
                # IoU exactly 0.5 / 0.75 / 0.6 with an integer-ish gt box
                a = r.choice(mine)
                x, y, w, h = a["bbox"]
                bb = [x, y, w, h * r.choice([0.5, 0.75, 0.6, 0.8, 0.9])]
                cat = a["category_id"]
            elif u < 0.55:
                s = r.choice([32.0, 96.0])
                bb = [float(r.randint(0, 40)), float(r.randint(0, 40)), s, s]
                cat = r.choice(cats)
            else:
                bb = rbox(r, im["width"], im["height"])
                cat = r.choice(cats) if r.random() > 0.1 else r.choice(COCO_IDS)
            if tie_scores:
                score = r.choice([0.1, 0.2, 0.3, 0.5, 0.5, 0.9])
            else:
                score = r.random()
            dets.append({"image_id": im["id"], "category_id": cat, "bbox": bb,
                         "score": score})
    if not dets:
        im = images[0]
        dets.append({"image_id": im["id"], "category_id": cats[0],
                     "bbox": rbox(r, im["width"], im["height"]), "score": 0.5})
    r.shuffle(dets) if r.random() < 0.5 else None
    k = r.randint(1, n_img)
    eval_ids = r.sample(img_ids, k)
    gt = {"images": images, "annotations": anns, "categories": categories}
    return gt, dets, eval_ids


def evaluate(gt, dets, eval_ids):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        cg = COCO()
        cg.dataset = json.loads(json.dumps(gt))
        cg.createIndex()
        cd = cg.loadRes(json.loads(json.dumps(dets)))
        ev = COCOeval(cg, cd, iouType="bbox")
        ev.params.imgIds = list(eval_ids)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    lines = [l for l in buf.getvalue().splitlines() if l.startswith(" Average")]
    return {"stats": [repr(float(s)) for s in ev.stats], "lines": lines}


def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)
        f.write("\n")


def gen_log(seed, images, anns):
    """A random accuracy log over the fixture images (7-float payloads):
    jittered ground-truth boxes mixed with random ones."""
    r = random.Random(10_000 + seed)
    n = len(images)
    order = [r.randrange(n) for _ in range(r.randint(1, 2 * n))]
    if r.random() < 0.7:
        order = list(range(n)) + order[: r.randint(0, 4)]
        r.shuffle(order)
    parts = []
    for seq, q in enumerate(order):
        dets = b""
        im = images[q]
        W, H = im["width"], im["height"]
        mine = [a for a in anns if a["image_id"] == im["id"]]
        for _ in range(r.choice([0, 1, 5, 20, 80, 150])):
            s = r.choice([0.25, 0.5, 0.75]) if r.random() < 0.3 else r.uniform(0.001, 1.0)
            if mine and r.random() < 0.5:
                a = r.choice(mine)
                x, y, w, h = a["bbox"]
                j = r.choice([0.0, 0.03, 0.1, 0.3])
                x0 = (x + r.uniform(-j, j) * w) / W
                y0 = (y + r.uniform(-j, j) * h) / H
                x1 = x0 + w * (1 + r.uniform(-j, j)) / W
                y1 = y0 + h * (1 + r.uniform(-j, j)) / H
                c = a["category_id"]
            else:
                y0, x0 = r.random(), r.random()
                y1 = min(1.0, y0 + r.random() * 0.6) if r.random() > 0.03 else y0 - 0.1
                x1 = min(1.0, x0 + r.random() * 0.6)
                c = r.choice(COCO_IDS[:20] + [44, 47, 50, 51])
            dets += struct.pack("7f", float(q), y0, x0, y1, x1, s, float(c))
        parts.append('{ "seq_id" : %d, "qsl_idx" : %d, "data" : "%s" }'
                     % (seq, q, dets.hex().upper()))
    return "[\n" + ",\n".join(parts) + "\n]\n"


def main():
    out = os.path.abspath(sys.argv[1])
    n_cases = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    n_logs = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    fixture = sys.argv[4] if len(sys.argv) > 4 else "/work/fixtures/coco"
    for i in range(n_cases):
        d = os.path.join(out, "eval", "case_%03d" % i)
        os.makedirs(d, exist_ok=True)
        gt, dets, ids = gen_case(i)
        write(os.path.join(d, "gt.json"), gt)
        write(os.path.join(d, "dt.json"), dets)
        write(os.path.join(d, "img_ids.json"), ids)
        write(os.path.join(d, "expected.json"), evaluate(gt, dets, ids))
    ann = os.path.join(fixture, "coco_safe", "annotations", "instances_val2017.json")
    with open(ann) as f:
        gt_all = json.load(f)
    images, anns = gt_all["images"], gt_all["annotations"]
    ref = os.path.join(fixture, "reference-src", "accuracy-coco.py")
    for i in range(n_logs):
        d = os.path.join(out, "logs", "log_%03d" % i)
        os.makedirs(d, exist_ok=True)
        log = os.path.join(d, "mlperf_log_accuracy.json")
        with open(log, "w") as f:
            f.write(gen_log(i, images, anns))
        with tempfile.TemporaryDirectory() as tmp:
            os.symlink(os.path.join(fixture, "coco_safe"), os.path.join(tmp, "coco_safe"))
            p = subprocess.run([sys.executable, ref, "--mlperf-accuracy-file", log,
                                "--coco-dir", "coco_safe", "--verbose"],
                               cwd=tmp, capture_output=True, text=True)
            with open(os.path.join(d, "stdout"), "w") as f:
                f.write(p.stdout)
            with open(os.path.join(d, "rc"), "w") as f:
                f.write("%d\n" % p.returncode)
            res = os.path.join(tmp, "coco-results.json")
            if p.returncode == 0:
                with open(res) as f:
                    dets = json.load(f)
                with open(os.path.join(d, "coco-results.json"), "w") as f:
                    json.dump(dets, f)
                with open(log) as f:
                    ids = sorted({images[e["qsl_idx"]]["id"] for e in json.load(f)})
                with open(ann) as f:
                    gt = json.load(f)
                write(os.path.join(d, "expected.json"), evaluate(gt, dets, ids))
    print("wrote", n_cases, "cases and", n_logs, "logs to", out)


if __name__ == "__main__":
    main()
