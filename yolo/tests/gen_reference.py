#!/usr/bin/env python3
"""Generate the crate's reference data with the real Python stack.

Builds synthetic raw YOLO outputs (float32, shape (1, 4 + 80, N)), runs ultralytics 8.4.190's own
`non_max_suppression` with the arguments `DetectionPredictor.postprocess` passes for
`predict(conf=0.001)`, its `scale_boxes` (which clips), wraps the rows in a `Results` like
`construct_result`, and packs them the way `yolo_loadgen.py`'s `Runner.enqueue` does.

Usage: python tests/gen_reference.py tests/data
       python tests/gen_reference.py --check tests/data   # recompute, compare with the files

File formats (all little-endian):
  <case>.in : u32 N, u32 S, 4*N f32 (cx, cy, w, h channels, channel-major),
              S x (u32 anchor, u32 class, f32 score); every other class score is 0.0.
  <case>.out: the harness payload (7 f32 per detection).
  cases.txt : one line per case: name N h1 w1 h0 w0 qsl_idx ndet
  sort_ties.bin: u32 K, then K x (u32 n, n f32 keys, n u32 torch.argsort(descending=True)).
"""
import struct
import sys
from pathlib import Path

import numpy as np
import torch
import torchvision  # noqa: F401  (ultralytics uses torchvision.ops.nms only when it is imported)
from ultralytics.engine.results import Results
from ultralytics.utils import nms, ops

NC = 80
CONF, IOU, MAX_DET = 0.001, 0.7, 300  # predict(conf=0.001); cfg/default.yaml iou, max_det

# The harness's table (yolo_loadgen.py), used here as data.
COCO_80_TO_91 = [
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 27, 28, 31, 32, 33, 34,
    35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
    64, 65, 67, 70, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 84, 85, 86, 87, 88, 89, 90
]
F = np.float32
T001 = F(0.001)
ABOVE = np.nextafter(T001, F(1))
BELOW = np.nextafter(T001, F(0))


class Case:
    def __init__(self, name, n, letterboxed, original, qsl_idx):
        self.name, self.n, self.lb, self.orig, self.qsl = name, n, letterboxed, original, qsl_idx
        self.boxes = np.zeros((4, n), F)
        self.sparse = {}  # (anchor, class) -> score

    def box(self, a, cx, cy, w, h):
        self.boxes[:, a] = np.array([cx, cy, w, h], F)

    def score(self, a, c, s):
        self.sparse[(int(a), int(c))] = F(s)

    def dense(self):
        raw = np.zeros((4 + NC, self.n), F)
        raw[:4] = self.boxes
        for (a, c), s in self.sparse.items():
            raw[4 + c, a] = s
        return raw

    def encode_input(self):
        items = sorted(self.sparse.items())
        b = struct.pack("<II", self.n, len(items)) + self.boxes.astype("<f4").tobytes()
        for (a, c), s in items:
            b += struct.pack("<IIf", a, c, s)
        return b


def reference_payload(case):
    """ultralytics NMS + scale_boxes + Results, then the harness's packing."""
    assert "torchvision" in sys.modules
    raw = torch.from_numpy(case.dense())[None]  # (1, 84, N) float32
    pred = nms.non_max_suppression(
        raw, CONF, IOU, None, False, max_det=MAX_DET, nc=0, end2end=False, rotated=False, return_idxs=False
    )[0]
    h0, w0 = case.orig
    orig_img = np.zeros((h0, w0, 3), np.uint8)
    pred[:, :4] = ops.scale_boxes(case.lb, pred[:, :4], orig_img.shape)
    results = Results(orig_img, path="synthetic.jpg", names={i: str(i) for i in range(NC)}, boxes=pred[:, :6])

    # As Runner.enqueue in yolo_loadgen.py.
    h, w = results.orig_shape
    payload = b""
    if len(results.boxes) > 0:
        boxes = results.boxes.xyxy.cpu().numpy()
        scores = results.boxes.conf.cpu().numpy()
        classes = results.boxes.cls.cpu().numpy().astype(int)
        for box, score, cls in zip(boxes, scores, classes):
            category_id = COCO_80_TO_91[cls]
            payload += struct.pack(
                "7f", float(case.qsl), float(box[1] / h), float(box[0] / w), float(box[3] / h), float(box[2] / w),
                float(score), float(category_id),
            )
    return payload, len(results.boxes)


def anchors(h1, w1):
    return sum((h1 // s) * (w1 // s) for s in (8, 16, 32))


def scene(case, rng, n_objects, per_object, n_scatter, score_values=None, border=False):
    """Clusters of overlapping boxes (several classes per cluster) plus scattered small boxes."""
    h1, w1 = case.lb
    a = 0
    order = rng.permutation(case.n)
    for _ in range(n_objects):
        cx, cy = rng.uniform(0, w1), rng.uniform(0, h1)
        bw, bh = rng.uniform(8, 300), rng.uniform(8, 300)
        if border and rng.random() < 0.3:
            cx = rng.choice([rng.uniform(-20, 15), rng.uniform(w1 - 15, w1 + 20)])
        main = rng.integers(NC)
        for _ in range(per_object):
            if a >= case.n:
                return
            an = order[a]
            a += 1
            j = rng.normal(0, 0.06, 4)
            case.box(an, cx + j[0] * bw, cy + j[1] * bh, bw * (1 + j[2]), bh * (1 + j[3]))
            c = main if rng.random() < 0.8 else rng.integers(NC)
            s = rng.choice(score_values) if score_values is not None else rng.beta(0.6, 3)
            case.score(an, c, s)
            if rng.random() < 0.3:  # a second class, lower
                case.score(an, rng.integers(NC), F(s) * F(0.5))
    for _ in range(n_scatter):
        if a >= case.n:
            return
        an = order[a]
        a += 1
        case.box(an, rng.uniform(-10, w1 + 10), rng.uniform(-10, h1 + 10), rng.uniform(2, 12), rng.uniform(2, 12))
        s = rng.choice(score_values) if score_values is not None else rng.uniform(0.0009, 0.3)
        case.score(an, rng.integers(NC), s)
    # Everything else: random boxes with sub-threshold scores, some exactly at the threshold.
    for an in order[a:]:
        case.box(an, rng.uniform(0, w1), rng.uniform(0, h1), rng.uniform(1, 200), rng.uniform(1, 200))
        r = rng.random()
        if r < 0.05:
            case.score(an, rng.integers(NC), T001)
        elif r < 0.2:
            case.score(an, rng.integers(NC), rng.uniform(0, 0.001))


def build_cases():
    cases = []
    rng = np.random.default_rng(20250601)

    c = Case("dense_8400_landscape", 8400, (640, 640), (480, 640), 0)
    scene(c, rng, 60, 40, 900)
    cases.append(c)

    c = Case("dense_8400_portrait_border", 8400, (640, 640), (640, 427), 4951)
    scene(c, rng, 50, 30, 500, border=True)
    cases.append(c)

    c = Case("rect_auto_480x640", anchors(480, 640), (480, 640), (480, 640), 17)
    scene(c, rng, 40, 30, 200, border=True)
    cases.append(c)

    # > 30000 candidates (max_nms), heavy score ties across the cut.
    c = Case("max_nms_40000_small_orig", 40000, (640, 640), (100, 150), 16777217)
    vals = np.array([0.5, 0.25, 0.125, 0.0625, 0.03125, 0.0078125, 0.00390625, 0.002], F)
    scene(c, rng, 300, 40, 22000, score_values=vals)
    cases.append(c)

    # Heavy ties with overlapping boxes: NMS visit order of equal scores decides what survives.
    c = Case("ties_2000_odd", 2000, (640, 640), (333, 517), 123456)
    scene(c, rng, 80, 15, 400, score_values=np.array([0.9, 0.6, 0.6, 0.3, 0.05], F))
    cases.append(c)

    c = Case("ties_small_40", 40, (640, 640), (1000, 37), 3)
    for i in range(40):  # all the same class, shifted copies: chains of IoU > 0.7
        c.box(i, 100 + 2.0 * (i % 10), 100 + 40.0 * (i // 10), 50, 30)
        c.score(i, 7, [0.5, 0.5, 0.25, 0.5][i % 4])
    cases.append(c)

    c = Case("empty_all_at_or_below", 64, (640, 640), (480, 640), 9)
    for i in range(64):
        c.box(i, 320, 320, 100, 100)
        c.score(i, i % NC, [T001, BELOW, 0.0, T001][i % 4])
    cases.append(c)

    c = Case("strict_conf", 8, (640, 640), (640, 640), 10)
    for i, (s, cls) in enumerate([(T001, 0), (ABOVE, 1), (BELOW, 2), (ABOVE, 3), (T001, 4), (0.5, 5), (ABOVE, 6),
                                  (0.0011, 7)]):
        c.box(i, 50 + 70 * i, 300, 40, 40)
        c.score(i, cls, s)
    cases.append(c)

    # N must not be 6: ultralytics treats a last dimension of 6 as end-to-end output.
    c = Case("class_argmax_ties", 7, (640, 640), (640, 640), 11)
    for i in range(7):
        c.box(i, 60 + 90 * i, 200, 30, 30)
    c.score(0, 3, 0.4); c.score(0, 9, 0.4)
    c.score(1, 79, 0.7); c.score(1, 0, 0.7); c.score(1, 40, 0.7)
    c.score(2, 5, 0.2); c.score(2, 6, 0.3); c.score(2, 7, 0.3)
    c.score(3, 1, T001); c.score(3, 2, ABOVE)
    c.score(4, 12, 0.9)
    c.score(5, 50, 0.6); c.score(5, 51, 0.6)
    cases.append(c)

    # IoU right at the threshold: A=[0,0,10,10]-like boxes against B with inter/union near 0.7,
    # for class 0 (no offset) and classes whose offset changes the float32 rounding.
    c = Case("iou_boundary", 60, (640, 640), (640, 640), 12)
    a = 0
    for k, cls in enumerate([0, 1, 3, 17, 79]):
        for t, hh in enumerate([7.0, 7.000001, 6.999999, 7.0000005, 6.9999995, 7.000002]):
            x0 = 20 + 110 * k + 15 * t  # y starts at 0 so the corners are exact before the offset
            hh = F(hh)
            c.box(a, x0 + 5, 5, 10, 10); c.score(a, cls, 0.9); a += 1
            c.box(a, x0 + 5, hh / F(2), 10, hh); c.score(a, cls, 0.8); a += 1
    cases.append(c)

    c = Case("class_aware_same_boxes", 30, (640, 640), (427, 640), 13)
    for i in range(30):  # ten identical boxes x three classes: one survivor per class
        c.box(i, 200, 200, 120, 80)
        c.score(i, [2, 5, 2, 60][i % 4], 0.1 + 0.02 * i)
    cases.append(c)

    c = Case("clip_border", 12, (640, 640), (427, 640), 14)
    for i, (cx, cy, w, h) in enumerate([(-5, 100, 40, 40), (630, 100, 60, 40), (320, 5, 40, 300), (320, 620, 40, 100),
                                        (0, 0, 30, 30), (640, 640, 30, 30), (320, 320, 900, 900), (-50, -50, 20, 20),
                                        (700, 300, 20, 20), (320, 106, 10, 10), (320, 534, 10, 10), (1, 320, 2, 2)]):
        c.box(i, cx, cy, w, h)
        c.score(i, i, 0.3 + 0.01 * i)
    cases.append(c)

    c = Case("max_det_cut_upscaled", 1500, (640, 640), (100, 150), 15)
    for i in range(1500):  # 1500 disjoint tiny boxes, more than max_det survive NMS
        c.box(i, 4 + 16 * (i % 40), 4 + 16 * (i // 40), 6, 6)
        c.score(i, i % NC, rng.choice(np.array([0.01, 0.02, 0.02, 0.3, 0.5], F)) if i % 3 else rng.uniform(0.001, 1))
    cases.append(c)

    c = Case("odd_shape_641x479", 300, (640, 640), (641, 479), 16)
    scene(c, rng, 10, 20, 60, border=True)
    cases.append(c)

    c = Case("rect_auto_portrait_640x448", anchors(640, 448), (640, 448), (640, 427), 18)
    scene(c, rng, 20, 25, 100, border=True)
    cases.append(c)

    return cases


def sort_vectors(rng):
    out = []
    for n in [1, 2, 15, 16, 17, 18, 33, 64, 100, 257, 1000, 5000]:
        for vals in (np.array([0.5, 0.25], F), np.array([0.1, 0.2, 0.3, 0.5, 0.9], F), None):
            k = rng.choice(vals, n) if vals is not None else rng.integers(0, max(2, n // 3), n).astype(F) / F(8)
            idx = torch.from_numpy(k).argsort(descending=True).numpy()
            idx2 = torch.from_numpy(k).sort(0, True)[1].numpy()
            assert (idx == idx2).all()
            out.append((k, idx))
    # already sorted / reversed inputs with ties
    for n in [50, 500]:
        k = np.sort(rng.choice(np.array([1, 2, 3], F), n))
        for kk in (k, k[::-1].copy()):
            out.append((kk, torch.from_numpy(kk).argsort(descending=True).numpy()))
    b = struct.pack("<I", len(out))
    for k, idx in out:
        b += struct.pack("<I", len(k)) + k.astype("<f4").tobytes() + idx.astype("<u4").tobytes()
    return b


def main():
    args = sys.argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    outdir = Path(args[0] if args else Path(__file__).parent / "data")
    outdir.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    files = {}
    lines = []
    for case in build_cases():
        payload, ndet = reference_payload(case)
        files[f"{case.name}.in"] = case.encode_input()
        files[f"{case.name}.out"] = payload
        lines.append(f"{case.name} {case.n} {case.lb[0]} {case.lb[1]} {case.orig[0]} {case.orig[1]} {case.qsl} {ndet}")
        print(lines[-1], file=sys.stderr)
    files["cases.txt"] = ("\n".join(lines) + "\n").encode()
    files["sort_ties.bin"] = sort_vectors(np.random.default_rng(7))
    bad = 0
    for name, data in files.items():
        p = outdir / name
        if check:
            if p.read_bytes() != data:
                print(f"MISMATCH {name}", file=sys.stderr)
                bad += 1
        else:
            p.write_bytes(data)
    print(f"{'checked' if check else 'wrote'} {len(files)} files, {bad} mismatches", file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
