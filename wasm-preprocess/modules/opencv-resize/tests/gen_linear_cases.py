#!/usr/bin/env python3
"""Reference digests of cv2.resize(..., INTER_LINEAR) for tests/differential.rs.

Sources are not stored: each is a pure function of (pattern, seed, w, h, cn)
that tests/differential.rs re-creates byte for byte (see `make_image`). Only the
sha256 of cv2's HWC output is kept, in tests/data/linear_cases.tsv. For every case the
resize is run three ways and must give identical bytes: default threads with IPP
on, cv2.setNumThreads(1), and IPP off; so the digests do not depend on threading
or IPP.

Run with the venv that has opencv-python-headless==5.0.0.93:
    /work/venvs/cv/bin/python gen_cases.py
A throw-away sweep of many random shapes (all paths, all channel counts; sides up
to 64 unless a maximum is given, half of the larger ones with letterbox targets):
    /work/venvs/cv/bin/python gen_cases.py --sweep 8000 /tmp/linear_sweep
    /work/venvs/cv/bin/python gen_cases.py --sweep 1500 /tmp/linear_sweep_large 1500
    LINEAR_CASES=/tmp/linear_sweep/resize.tsv cargo test --test linear_cases
"""

import hashlib
import os
import random
import sys

import cv2
import numpy as np

import cv2_cases
from cv2_cases import make_image

HERE = os.path.dirname(os.path.abspath(__file__))
# Keeps the test quick: random cases whose output would be larger are redrawn.
MAX_OUTPUT_PIXELS = 2_300_000
def letterbox_unpad(w, h, new=640):
    """new_unpad of ultralytics 8.4.190 LetterBox.get_params (scaleup=True)."""
    r = min(new / h, new / w)
    return max(round(w * r), 1), max(round(h * r), 1)


def reference(img, w, h):
    return cv2_cases.reference(img, w, h, cv2.INTER_LINEAR)


def explicit_cases():
    """(label, src_w, src_h, dst_w, dst_h, channels, pattern)."""
    c = []

    def add(label, sw, sh, dw, dh, cn=3, pattern="noise"):
        c.append((label, sw, sh, dw, dh, cn, pattern))

    # Exact 2x shrink on both axes: INTER_AREA's 2x2 blocks.
    add("half_640x480", 640, 480, 320, 240)
    add("half_cn1", 640, 480, 320, 240, 1)
    add("half_cn2", 640, 480, 320, 240, 2)
    add("half_cn4", 640, 480, 320, 240, 4)
    add("half_cn2_gradient", 64, 48, 32, 24, 2, "gradient")
    add("half_tiny", 2, 2, 1, 1)
    add("half_tiny_cn2", 2, 2, 1, 1, 2)
    add("half_1280x1280", 1280, 1280, 640, 640)
    add("half_bimodal", 1000, 750, 500, 375, 3, "bimodal")
    add("half_const255", 640, 480, 320, 240, 3, "const255")
    # 2x on one axis only, or not quite 2x: bilinear.
    add("half_width_only", 640, 480, 320, 480)
    add("half_height_only", 640, 480, 640, 240)
    add("near_half_odd", 641, 481, 320, 240)
    add("near_half_plus", 640, 480, 321, 241)
    # Other integer shrinks stay bilinear.
    add("third_600x450", 600, 450, 200, 150)
    add("third_cn1", 600, 450, 200, 150, 1)
    add("quarter_1024x768", 1024, 768, 256, 192)
    add("fifth_1280x960", 1280, 960, 256, 192, 4)
    # Non-integer shrinks.
    add("shrink_1280x960_to_640x480", 1280, 960, 640, 480)
    add("shrink_1000x750_to_640", 1000, 750, 640, 480)
    add("shrink_1500x1000_to_640", 1500, 1000, 640, 427)
    add("shrink_1500x1500_to_7x5", 1500, 1500, 7, 5)
    # Growth (COCO images below 640 on their long side).
    add("grow_500x375_to_640x480", 500, 375, 640, 480)
    add("grow_375x500_to_480x640", 375, 500, 480, 640)
    add("grow_320x240_x2", 320, 240, 640, 480)
    add("grow_213x160_x3", 213, 160, 639, 480)
    add("grow_100x75", 100, 75, 640, 480)
    add("grow_3x3", 3, 3, 640, 640)
    add("grow_2x2", 2, 2, 640, 640, 1)
    add("grow_cn1", 500, 375, 640, 480, 1)
    add("grow_cn2", 500, 375, 640, 480, 2)
    add("grow_cn4", 500, 375, 640, 480, 4)
    add("grow_const255", 500, 375, 640, 480, 3, "const255")
    add("grow_bimodal", 97, 61, 640, 403, 3, "bimodal")
    add("grow_gradient", 500, 375, 640, 480, 3, "gradient")
    # One axis grows, the other shrinks.
    add("mixed_300x900", 300, 900, 640, 450)
    add("mixed_900x300", 900, 300, 450, 640)
    add("mixed_1500x10", 1500, 10, 640, 64)
    add("mixed_10x1500", 10, 1500, 64, 640, 2)
    add("mixed_bimodal", 900, 300, 450, 640, 4, "bimodal")
    # 1-pixel images and 1-pixel targets.
    add("one_1x1_to_640", 1, 1, 640, 640)
    add("one_1x1_to_640_cn4", 1, 1, 640, 640, 4)
    add("one_wide_1x500", 1, 500, 1, 640)
    add("one_wide_grow", 1, 500, 2, 640)
    add("one_tall_500x1", 500, 1, 640, 1)
    add("one_tall_grow", 500, 1, 640, 2)
    add("one_wide_letterbox", 1, 1500, 1, 640, 3)
    add("one_tall_letterbox", 1500, 1, 640, 1, 3)
    add("to_1x1", 640, 480, 1, 1)
    add("to_1x1_cn2", 7, 5, 1, 1, 2)
    add("to_2x1", 640, 480, 2, 1)
    add("to_1x2", 333, 500, 1, 2)
    add("thin_target", 640, 480, 640, 1)
    # Same size: cv::resize copies.
    add("copy_640x480", 640, 480, 640, 480)
    add("copy_1x1", 1, 1, 1, 1, 1)
    add("copy_cn2", 33, 17, 33, 17, 2)
    return c


def main_cases():
    rng = random.Random(20260701)
    cases = []  # (name, pattern, seed, cn, sw, sh, dw, dh, kind)
    seed = 1
    for (label, sw, sh, dw, dh, cn, pattern) in explicit_cases():
        cases.append((label, pattern, seed, cn, sw, sh, dw, dh, "explicit"))
        seed += 1

    def draw(kind, count, make):
        nonlocal seed
        for i in range(count):
            while True:
                case = make(i)
                if case[4] * case[5] <= MAX_OUTPUT_PIXELS:
                    break
            pattern, cn, sw, sh, dw, dh = case
            cases.append((f"{kind}_{i:03d}", pattern, seed, cn, sw, sh, dw, dh, kind))
            seed += 1

    def pattern_for(i):
        return "noise" if i % 10 else rng.choice(["bimodal", "gradient", "const255"])

    # YOLO's own targets: new_unpad of LetterBox for imgsz 640, 3 channels.
    def letterbox(i):
        sw, sh = rng.randint(1, 1500), rng.randint(1, 1500)
        dw, dh = letterbox_unpad(sw, sh)
        return (pattern_for(i), 3, sw, sh, dw, dh)

    # The same rule with 1-4 channels.
    def letterbox_cn(i):
        sw, sh = rng.randint(1, 1500), rng.randint(1, 1500)
        dw, dh = letterbox_unpad(sw, sh)
        return (pattern_for(i), rng.choice([1, 2, 4]), sw, sh, dw, dh)

    # Free-form targets, 1-4 channels.
    def free(i):
        sw, sh, dw, dh = (rng.randint(1, 1500) for _ in range(4))
        return (pattern_for(i), rng.choice([1, 2, 3, 3, 4]), sw, sh, dw, dh)

    # Exact halvings at random sizes (the INTER_AREA switch), 1-4 channels.
    def half(i):
        dw, dh = rng.randint(1, 750), rng.randint(1, 750)
        return (pattern_for(i), rng.choice([1, 2, 3, 4]), 2 * dw, 2 * dh, dw, dh)

    # Small shapes, where the clamped edges are a large share of the output.
    def small(i):
        sw, sh, dw, dh = (rng.randint(1, 24) for _ in range(4))
        return (pattern_for(i), rng.choice([1, 2, 3, 4]), sw, sh, dw, dh)

    draw("letterbox", 250, letterbox)
    draw("letterbox_cn", 50, letterbox_cn)
    draw("free", 200, free)
    draw("half", 40, half)
    draw("small", 100, small)
    return cases


def sweep_cases(count, max_side):
    rng = random.Random(7 + max_side)
    cases = []
    for i in range(count):
        sw, sh, dw, dh = (rng.randint(1, max_side) for _ in range(4))
        if rng.random() < 0.15:
            sw, sh = 2 * dw, 2 * dh
        elif max_side > 64 and rng.random() < 0.5:
            dw, dh = letterbox_unpad(sw, sh)
        cn = rng.randint(1, 4)
        pattern = rng.choice(["noise", "noise", "bimodal", "gradient", "const255"])
        cases.append((f"sweep_{i:05d}", pattern, 100000 + i, cn, sw, sh, dw, dh, "sweep"))
    return cases


def write_cases(path, cases):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as manifest:
        manifest.write(
            "# sha256 of cv2.resize(make_image(pattern, seed, src_w, src_h, channels), (dst_w, dst_h),\n"
            f"# interpolation=cv2.INTER_LINEAR) HWC bytes, opencv-python-headless {cv2.version.opencv_version} x86_64;\n"
            "# each identical with default threads, setNumThreads(1) and IPP off. Written by gen_cases.py.\n"
            "# name\tpattern\tseed\tchannels\tsrc_w\tsrc_h\tdst_w\tdst_h\tkind\tsha256\n"
        )
        for (name, pattern, case_seed, cn, sw, sh, dw, dh, kind) in cases:
            out = reference(make_image(pattern, case_seed, sw, sh, cn), dw, dh)
            digest = hashlib.sha256(np.ascontiguousarray(out).tobytes()).hexdigest()
            manifest.write(f"{name}\t{pattern}\t{case_seed}\t{cn}\t{sw}\t{sh}\t{dw}\t{dh}\t{kind}\t{digest}\n")
    print(f"wrote {len(cases)} cases to {path} (each: default threads == 1 thread == IPP off); "
          f"cv2 {cv2.__version__}, useIPP={cv2.ipp.useIPP()}, useIPP_NotExact={cv2.ipp.useIPP_NotExact()}")


def main():
    if len(sys.argv) in (4, 5) and sys.argv[1] == "--sweep":
        max_side = int(sys.argv[4]) if len(sys.argv) == 5 else 64
        write_cases(os.path.join(sys.argv[3], "resize.tsv"), sweep_cases(int(sys.argv[2]), max_side))
        return
    write_cases(os.path.join(HERE, "data", "linear_cases.tsv"), main_cases())


if __name__ == "__main__":
    main()
