#!/usr/bin/env python3
"""Write the sha256 of cv2.resize(..., INTER_AREA)'s outputs for tests/area_cases.rs.

Sources are not stored: each is a pure function of (pattern, seed, w, h, cn)
that tests/common/mod.rs re-creates byte for byte (cv2_cases.make_image).
For every case this script also re-runs the resize with one thread and
with IPP disabled and fails if any output differs, so the references do
not depend on threading or IPP.

Writes data/area_cases.tsv (one case a line, cv2's output as sha256) beside this file.
Run with the venv that has opencv-python-headless==5.0.0.93:
    python tests/gen_area_cases.py
An extra, throw-away sweep of many small random shapes (all paths, all
channel counts) goes to another file:
    python tests/gen_area_cases.py --small-sweep 5000 /tmp/area_sweep.tsv
"""

import hashlib
import os
import random
import sys

import cv2
import numpy as np

import cv2_cases
from cv2_cases import make_image

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "area_cases.tsv")
# Keep references small: the short-side rule turns a 1200x3 image into a
# 102400x256 one, so random rule cases with a bigger output are redrawn.
MAX_RANDOM_OUTPUT_PIXELS = 2_000_000
def short_side_dims(w, h, short=256):
    """MLPerf resnet50 reference: resize_with_aspectratio(..., INTER_AREA)."""
    if h > w:
        return short, int(short * h / w)
    return int(short * w / h), short


def reference(img, w, h):
    return cv2_cases.reference(img, w, h, cv2.INTER_AREA)


def explicit_cases():
    """(label, src_w, src_h, dst_w, dst_h, channels, pattern)."""
    c = []
    def add(label, sw, sh, dw, dh, cn=3, pattern="noise"):
        c.append((label, sw, sh, dw, dh, cn, pattern))
    # Integer ratios on both axes (resizeAreaFast_).
    add("x2", 640, 480, 320, 240)
    add("x2_tiny", 2, 2, 1, 1)
    add("x2_tiny_row", 4, 2, 2, 1)
    add("x3", 600, 450, 200, 150)
    add("x3_999", 999, 999, 333, 333)
    add("x4", 1024, 768, 256, 192)
    add("x5", 1280, 1280, 256, 256)
    add("x4_by_x2", 1024, 512, 256, 256)
    add("x2_by_x3", 512, 768, 256, 256)
    add("x2_cn1", 640, 480, 320, 240, 1)
    add("x2_cn2", 640, 480, 320, 240, 2)
    add("x2_cn4", 640, 480, 320, 240, 4)
    add("x3_cn1", 600, 450, 200, 150, 1)
    add("x2_2048", 2048, 1536, 1024, 768)
    # Integer ratio on one axis only.
    add("x2_width_only", 500, 256, 250, 256)
    add("x2_height_only", 512, 300, 512, 150)
    add("x3_width_only", 768, 256, 256, 256)
    add("x2_width_only_cn2", 500, 256, 250, 256, 2)
    # Non-integer shrink (resizeArea_).
    add("ns_500x375", 500, 375, 341, 256)
    add("ns_375x500", 375, 500, 256, 341)
    add("ns_333x500", 333, 500, 256, 384)
    add("ns_640x427", 640, 427, 383, 256)
    add("ns_2048x1536", 2048, 1536, 341, 256)
    add("ns_4000x3000", 4000, 3000, 341, 256)
    add("ns_1000x1000_to_333", 1000, 1000, 333, 333)
    add("ns_257x256", 257, 256, 256, 255)
    add("ns_1200x1199", 1200, 1199, 256, 255)
    add("ns_width_only", 500, 256, 400, 256)
    add("ns_cn1", 500, 375, 341, 256, 1)
    add("ns_cn4", 500, 375, 341, 256, 4)
    add("ns_const255", 500, 375, 341, 256, 3, "const255")
    add("ns_bimodal", 500, 375, 341, 256, 3, "bimodal")
    add("ns_gradient", 500, 375, 341, 256, 3, "gradient")
    # Both axes grow (linear resizer, area coefficients).
    add("grow_100x80", 100, 80, 320, 256)
    add("grow_500x200", 500, 200, 640, 256)
    add("grow_200x100", 200, 100, 512, 256)
    add("grow_3x3", 3, 3, 256, 256)
    add("grow_1x1", 1, 1, 256, 256)
    add("grow_x2_integer", 128, 128, 256, 256)
    add("grow_171x128", 171, 128, 342, 256)
    add("grow_50x37", 50, 37, 345, 256)
    add("grow_200x900", 200, 900, 256, 1152)
    add("grow_900x200", 900, 200, 1152, 256)
    add("grow_cn1", 100, 80, 320, 256, 1)
    add("grow_cn2", 100, 80, 320, 256, 2)
    add("grow_cn4", 100, 80, 320, 256, 4)
    add("grow_const255", 100, 80, 320, 256, 3, "const255")
    add("grow_bimodal", 97, 61, 401, 256, 3, "bimodal")
    add("grow_gradient", 100, 80, 320, 256, 3, "gradient")
    # One axis grows, the other shrinks.
    add("mixed_300x600", 300, 600, 400, 200)
    add("mixed_900x200", 900, 200, 300, 256)
    add("mixed_200x900", 200, 900, 256, 300)
    add("mixed_1000x100", 1000, 100, 500, 256)
    add("mixed_100x1000", 100, 1000, 256, 500)
    add("mixed_400x300", 400, 300, 800, 150)
    add("mixed_const255", 900, 200, 300, 256, 3, "const255")
    add("mixed_bimodal", 900, 200, 300, 256, 3, "bimodal")
    # 1-pixel-wide / -tall sources.
    add("one_wide_shrink", 1, 500, 1, 256)
    add("one_wide_mixed", 1, 500, 3, 256)
    add("one_wide_rule", 1, 10, 256, 2560)
    add("one_wide_grow", 1, 2, 256, 512)
    add("one_tall_shrink", 500, 1, 256, 1)
    add("one_tall_rule", 10, 1, 2560, 256)
    add("one_wide_cn1", 1, 500, 1, 256, 1)
    # Tiny targets.
    add("tiny_500x375_1x1", 500, 375, 1, 1)
    add("tiny_7x5_1x1", 7, 5, 1, 1)
    add("tiny_1200x900_1x1", 1200, 900, 1, 1)
    add("tiny_640x480_2x1", 640, 480, 2, 1)
    add("tiny_333x500_1x2", 333, 500, 1, 2)
    add("tiny_copy_1x1", 1, 1, 1, 1)
    # Same size: cv::resize copies.
    add("copy_256", 256, 256, 256, 256)
    return c


def small_sweep_cases(count):
    rng = random.Random(7)
    cases = []
    for i in range(count):
        sw, sh, dw, dh = (rng.randint(1, 48) for _ in range(4))
        if rng.random() < 0.3:  # exact integer ratios
            dw, dh = max(1, sw // rng.randint(1, 5)), max(1, sh // rng.randint(1, 5))
            sw, sh = dw * rng.randint(1, 5), dh * rng.randint(1, 5)
        cn = rng.randint(1, 4)
        pattern = rng.choice(["noise", "noise", "bimodal", "gradient", "const255"])
        cases.append((f"sweep_{i:05d}", pattern, 100000 + i, cn, sw, sh, dw, dh, 0))
    return cases


def write_cases(path, cases):
    with open(path, "w") as manifest:
        manifest.write(
            "# cv2.resize(make_image(pattern, seed, src_w, src_h, channels), (dst_w, dst_h), interpolation=cv2.INTER_AREA)\n"
            "# with opencv-python-headless 5.0.0.93 (x86_64): sha256 of the output's HWC bytes. Written by\n"
            "# tests/gen_area_cases.py; the sources are a pure function of the first columns (tests/common/mod.rs).\n"
            "# name\tpattern\tseed\tchannels\tsrc_w\tsrc_h\tdst_w\tdst_h\tshort_side_rule\tsha256\n"
        )
        for (name, pattern, case_seed, cn, sw, sh, dw, dh, rule) in cases:
            out = reference(make_image(pattern, case_seed, sw, sh, cn), dw, dh)
            digest = hashlib.sha256(np.ascontiguousarray(out).tobytes()).hexdigest()
            manifest.write(f"{name}\t{pattern}\t{case_seed}\t{cn}\t{sw}\t{sh}\t{dw}\t{dh}\t{rule}\t{digest}\n")
    print(f"wrote {len(cases)} cases to {path} "
          f"(each checked: default threads == 1 thread == IPP off), cv2 {cv2.__version__}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--small-sweep":
        write_cases(sys.argv[3], small_sweep_cases(int(sys.argv[2])))
        return
    rng = random.Random(20240605)
    cases = []  # (name, pattern, seed, cn, sw, sh, dw, dh, rule)
    seed = 1
    for (label, sw, sh, dw, dh, cn, pattern) in explicit_cases():
        cases.append((label, pattern, seed, cn, sw, sh, dw, dh, 0))
        seed += 1
    # The brief's main population: short side to 256, 3 channels.
    for i in range(300):
        while True:
            sw, sh = rng.randint(1, 1200), rng.randint(1, 1200)
            dw, dh = short_side_dims(sw, sh)
            if dw * dh <= MAX_RANDOM_OUTPUT_PIXELS:
                break
        pattern = "noise" if i % 10 else rng.choice(["bimodal", "gradient", "const255"])
        cases.append((f"rule_{i:03d}", pattern, seed, 3, sw, sh, dw, dh, 1))
        seed += 1
    # Free-form sizes: every path, grow/shrink mixes, all channel counts.
    for i in range(200):
        sw, sh = rng.randint(1, 600), rng.randint(1, 600)
        dw, dh = rng.randint(1, 600), rng.randint(1, 600)
        cn = rng.choice([1, 2, 3, 3, 4])
        pattern = rng.choice(["noise", "noise", "noise", "bimodal", "gradient"])
        cases.append((f"free_{i:03d}", pattern, seed, cn, sw, sh, dw, dh, 0))
        seed += 1
    # Integer-ratio shrinks at random sizes (both axes, 1x..6x).
    for i in range(60):
        kx, ky = rng.randint(1, 6), rng.randint(1, 6)
        dw, dh = rng.randint(1, 200), rng.randint(1, 200)
        cn = rng.choice([1, 2, 3, 4])
        cases.append((f"int_{i:03d}", "noise", seed, cn, dw * kx, dh * ky, dw, dh, 0))
        seed += 1

    write_cases(OUT, cases)


if __name__ == "__main__":
    main()
