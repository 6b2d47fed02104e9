#!/usr/bin/env python3
"""Reference digests for tests/letterbox.rs: ultralytics 8.4.190's YOLO input pipeline.

`letterbox_reference` below is a numpy/cv2 re-implementation written from reading
ultralytics/data/augment.py (LetterBox.get_params / apply_image, lines 1776-1857)
and ultralytics/engine/predictor.py (pre_transform 224-243, preprocess 183-204):

    r = min(new_h / h, new_w / w); new_unpad = (max(round(w * r), 1), max(round(h * r), 1))
    dw, dh = new_w - new_unpad[0], new_h - new_unpad[1]; auto: np.mod(., stride); halve
    top, bottom = round(dh - 0.1), round(dh + 0.1); left, right likewise
    cv2.resize(INTER_LINEAR) only if the size changes; cv2.copyMakeBorder(114)
    HWC -> CHW, BGR -> RGB, float32, / 255

torch is not installed, so the last step is done in numpy both ways torch does it:
`x / 255` (torch CPU, and numpy: IEEE float32 division) and `x * (1/255)` in float32
(torch CUDA multiplies by the reciprocal of a CPU scalar divisor).

When the downloaded wheel is unpacked under wheel/ (pip download ultralytics==8.4.190
--no-deps; unzip), the script also executes the wheel's own LetterBox class and
scale_boxes function (extracted with ast, with numpy/cv2 and stubs for their
torch-only helpers) and requires that they agree with the re-implementation on every
image and every geometry case.

Writes tests/data/letterbox.tsv (images: sha256 of the padded BGR u8 image and of both
float32 tensors, little-endian CHW bytes) and tests/data/letterbox_geometry.tsv (sizes,
paddings, and the f64 bit patterns of ratio and scale_boxes' gains).
    /work/venvs/cv/bin/python letterbox_ref.py
"""

import __future__
import ast
import hashlib
import math
import os
import random
import struct
import sys
from typing import Any

import cv2
import numpy as np

from cv2_cases import make_image

HERE = os.path.dirname(os.path.abspath(__file__))
WHEEL = os.path.join(HERE, "wheel", "ultralytics")


def letterbox_params(w, h, new_shape=(640, 640), auto=False, scale_fill=False, scaleup=True,
                     center=True, stride=32):
    """LetterBox.get_params, re-written: returns the resize size and the paddings."""
    new_h, new_w = new_shape
    r = min(new_h / h, new_w / w)
    if not scaleup:
        r = min(r, 1.0)
    ratio = (r, r)
    unpad_w, unpad_h = max(round(w * r), 1), max(round(h * r), 1)
    dw, dh = new_w - unpad_w, new_h - unpad_h
    if auto:
        dw, dh = np.mod(dw, stride), np.mod(dh, stride)
    elif scale_fill:
        dw, dh = 0.0, 0.0
        unpad_w, unpad_h = new_w, new_h
        ratio = (new_w / w, new_h / h)
    if center:
        dw /= 2
        dh /= 2
    top = round(dh - 0.1) if center else 0
    bottom = round(dh + 0.1)
    left = round(dw - 0.1) if center else 0
    right = round(dw + 0.1)
    return ratio, (unpad_w, unpad_h), (int(top), int(bottom), int(left), int(right))


def letterbox_reference(img, auto):
    """BGR u8 HWC -> (padded BGR u8 image, CHW RGB float32 divided, ... reciprocal)."""
    h, w = img.shape[:2]
    _, (unpad_w, unpad_h), (top, bottom, left, right) = letterbox_params(w, h, auto=auto)
    if (w, h) != (unpad_w, unpad_h):
        img = cv2.resize(img, (unpad_w, unpad_h), interpolation=cv2.INTER_LINEAR)
    img = cv2.copyMakeBorder(img, top, bottom, left, right, cv2.BORDER_CONSTANT, value=(114, 114, 114))
    chw_rgb = np.ascontiguousarray(img.transpose(2, 0, 1)[::-1])
    divided = chw_rgb.astype(np.float32) / 255
    reciprocal = chw_rgb.astype(np.float32) * (np.float32(1.0) / np.float32(255.0))
    assert divided.dtype == np.float32 and reciprocal.dtype == np.float32
    return img, divided, reciprocal


def scale_boxes_params(img1_shape, img0_shape):
    """ultralytics.utils.ops.scale_boxes' gain and padding (ratio_pad=None), re-written."""
    gain = min(img1_shape[0] / img0_shape[0], img1_shape[1] / img0_shape[1])
    new_h, new_w = (max(round(x * gain), 1) for x in img0_shape[:2])
    gain_y, gain_x = new_h / img0_shape[0], new_w / img0_shape[1]
    pad_x = round((img1_shape[1] - new_w) / 2 - 0.1)
    pad_y = round((img1_shape[0] - new_h) / 2 - 0.1)
    return gain_x, gain_y, pad_x, pad_y


# ---- the wheel's own code, for cross-checking -------------------------------------------

def load_from_wheel(relative, name, namespace):
    path = os.path.join(WHEEL, relative)
    tree = ast.parse(open(path).read(), path)
    node = next(n for n in tree.body if getattr(n, "name", None) == name)
    code = compile(ast.Module(body=[node], type_ignores=[]), path, "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    exec(code, namespace)
    return namespace[name]


class Recorder:
    """Stands in for a box coordinate: records what scale_boxes subtracts and divides by."""

    def __init__(self, ops=()):
        self.ops = tuple(ops)

    def __sub__(self, other):
        return Recorder(self.ops + (("sub", other),))

    def __truediv__(self, other):
        return Recorder(self.ops + (("div", other),))


def wheel_checks():
    if not os.path.isdir(WHEEL):
        print("wheel/ultralytics not found: skipping the cross-check against the wheel's code")
        return None
    letterbox_cls = load_from_wheel("data/augment.py", "LetterBox",
                                    {"np": np, "cv2": cv2, "Any": Any, "BaseTransform": object})
    scale_boxes = load_from_wheel("utils/ops.py", "scale_boxes",
                                  {"np": np, "math": math, "clip_boxes": lambda boxes, shape: boxes})

    def wheel_scale_boxes(img1_shape, img0_shape):
        boxes = np.empty((1, 4), dtype=object)
        for i in range(4):
            boxes[0, i] = Recorder()
        scale_boxes(img1_shape, boxes, img0_shape)
        (_, pad_x), (_, gain_x) = boxes[0, 0].ops
        (_, pad_y), (_, gain_y) = boxes[0, 1].ops
        assert boxes[0, 2].ops == boxes[0, 0].ops and boxes[0, 3].ops == boxes[0, 1].ops
        return gain_x, gain_y, pad_x, pad_y

    return letterbox_cls, wheel_scale_boxes


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def sha(array):
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()


def image_cases():
    """(name, pattern, seed, w, h, auto): COCO-like sizes, upscales, shrinks, thin images."""
    rng = random.Random(640)
    fixed = [(640, 480), (480, 640), (640, 427), (427, 640), (500, 375), (375, 500), (1, 1), (3, 1),
             (1280, 960), (1920, 1080), (333, 500), (320, 320)]
    cases = []
    seed = 5000
    for i in range(24):
        if i < len(fixed):
            w, h = fixed[i]
        else:
            w, h = rng.randint(1, 1500), rng.randint(1, 1500)
        pattern = "noise" if i % 6 else "gradient"
        for auto in (False, True):
            cases.append((f"lb_{i:02d}_{'auto' if auto else 'full'}", pattern, seed, w, h, auto))
        seed += 1
    return cases


def geometry_cases():
    """(w, h, auto, scale_fill, scaleup, center, stride, new_h, new_w)."""
    rng = random.Random(32)
    sizes = [(1, 1), (1, 100000), (100000, 1), (640, 640), (641, 640), (640, 641), (639, 1), (1, 639),
             (1279, 1), (1281, 3), (2, 1281), (5000, 3751), (319, 241), (6000, 4000)]
    sizes += [(rng.randint(1, 5000), rng.randint(1, 5000)) for _ in range(1500)]
    sizes += [(rng.randint(1, 700), rng.randint(1, 700)) for _ in range(1500)]
    cases = []
    for (w, h) in sizes:
        for auto in (False, True):
            cases.append((w, h, auto, False, True, True, 32, 640, 640))
    for _ in range(500):  # other LetterBox settings, for completeness
        w, h = rng.randint(1, 3000), rng.randint(1, 3000)
        new_h, new_w = rng.choice([(640, 640), (480, 640), (1280, 1280), (320, 416)])
        cases.append((w, h, rng.random() < 0.5, rng.random() < 0.3, rng.random() < 0.7,
                      rng.random() < 0.7, rng.choice([32, 64]), new_h, new_w))
    return cases


def main():
    wheel = wheel_checks()
    os.makedirs(os.path.join(HERE, "data"), exist_ok=True)

    with open(os.path.join(HERE, "data", "letterbox.tsv"), "w") as out:
        out.write("# ultralytics 8.4.190 LetterBox(640, stride 32) + predictor.preprocess, re-implemented\n"
                  f"# in letterbox_ref.py with opencv-python-headless {cv2.version.opencv_version}, "
                  f"numpy {np.__version__}; sources: make_image(pattern, seed, w, h, 3) as BGR.\n"
                  "# image = padded BGR u8 HWC; divide = float32 CHW RGB x / 255; "
                  "reciprocal = x * (1.0f / 255.0f)\n"
                  "# name\tpattern\tseed\tw\th\tauto\tresized_w\tresized_h\ttop\tbottom\tleft\tright"
                  "\tout_w\tout_h\tsha256_image\tsha256_divide\tsha256_reciprocal\n")
        for (name, pattern, seed, w, h, auto) in image_cases():
            img = make_image(pattern, seed, w, h, 3)
            padded, divided, reciprocal = letterbox_reference(img, auto)
            _, (unpad_w, unpad_h), (top, bottom, left, right) = letterbox_params(w, h, auto=auto)
            if wheel:
                theirs = wheel[0](new_shape=640, auto=auto, stride=32)(image=img.copy())
                if not np.array_equal(theirs, padded):
                    sys.exit(f"{name}: the wheel's LetterBox gives a different image")
            out_h, out_w = padded.shape[:2]
            out.write(f"{name}\t{pattern}\t{seed}\t{w}\t{h}\t{int(auto)}\t{unpad_w}\t{unpad_h}\t{top}\t{bottom}"
                      f"\t{left}\t{right}\t{out_w}\t{out_h}\t{sha(padded)}\t{sha(divided)}\t{sha(reciprocal)}\n")

    geometry = geometry_cases()
    with open(os.path.join(HERE, "data", "letterbox_geometry.tsv"), "w") as out:
        out.write("# LetterBox.get_params and scale_boxes(letterboxed shape, boxes, original shape) "
                  "of ultralytics 8.4.190, re-implemented in letterbox_ref.py;\n"
                  "# floats as the decimal u64 of their f64 bits.\n"
                  "# w\th\tauto\tscale_fill\tscaleup\tcenter\tstride\tnew_h\tnew_w\tresized_w\tresized_h"
                  "\ttop\tbottom\tleft\tright\tratio_w_bits\tratio_h_bits\tgain_x_bits\tgain_y_bits\tpad_x\tpad_y\n")
        for (w, h, auto, scale_fill, scaleup, center, stride, new_h, new_w) in geometry:
            kwargs = dict(new_shape=(new_h, new_w), auto=auto, scale_fill=scale_fill, scaleup=scaleup,
                          center=center, stride=stride)
            ratio, (unpad_w, unpad_h), (top, bottom, left, right) = letterbox_params(w, h, **kwargs)
            out_h, out_w = unpad_h + top + bottom, unpad_w + left + right
            gains = scale_boxes_params((out_h, out_w), (h, w))
            if wheel:
                dummy = np.broadcast_to(np.uint8(0), (h, w, 3))
                p = wheel[0](**kwargs).get_params({"img": dummy})
                theirs = (p["ratio"], p["new_unpad"], (p["top"], p["bottom"], p["left"], p["right"]))
                if theirs != (ratio, (unpad_w, unpad_h), (top, bottom, left, right)):
                    sys.exit(f"get_params differs for {w}x{h} {kwargs}: {theirs}")
                if wheel[1]((out_h, out_w), (h, w)) != gains:
                    sys.exit(f"scale_boxes differs for {w}x{h} {kwargs}")
            gain_x, gain_y, pad_x, pad_y = gains
            flags = "\t".join(str(int(v)) for v in (auto, scale_fill, scaleup, center))
            out.write(f"{w}\t{h}\t{flags}\t{stride}\t{new_h}\t{new_w}\t{unpad_w}\t{unpad_h}\t{top}\t{bottom}"
                      f"\t{left}\t{right}\t{f64_bits(ratio[0])}\t{f64_bits(ratio[1])}\t{f64_bits(gain_x)}"
                      f"\t{f64_bits(gain_y)}\t{pad_x}\t{pad_y}\n")
    checked = "each also checked against the wheel's own LetterBox/scale_boxes" if wheel else "wheel not checked"
    print(f"wrote {len(image_cases())} letterbox images and {len(geometry)} geometry cases ({checked})")


if __name__ == "__main__":
    main()
