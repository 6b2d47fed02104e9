"""How much each libjpeg setting matters: decode the fixture with Debian's libturbojpeg
(ctypes) under non-default flags and count files whose pixels differ from cv2.imread.

Run: /work/venvs/imagenet/bin/python tools/sensitivity.py /work/fixtures/imagenet
Only 3-component and grayscale files without EXIF rotation (and none of the hand-made
exif_* files) are compared: the point is the pixel maths, not orientation/CMYK handling."""
import ctypes, os, sys
import numpy as np
from PIL import Image

fx = sys.argv[1]
lib = ctypes.CDLL("libturbojpeg.so.0")
lib.tjInitDecompress.restype = ctypes.c_void_p
lib.tjDecompress2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p,
                              ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
h = lib.tjInitDecompress()
FLAGS = {"default (0)": 0, "TJFLAG_FASTUPSAMPLE": 256, "TJFLAG_FASTDCT": 2048}
files = []
for line in open(os.path.join(fx, "raw/val_map.txt")):
    name = line.split()[0]
    files.append((os.path.join(fx, "raw", name), os.path.join(fx, "decoded", name + ".npy")))
for line in list(open(os.path.join(fx, "decode-extra/MANIFEST.tsv")))[1:]:
    name = line.split("\t")[0]
    g = os.path.join(fx, "decode-extra", name + ".npy")
    if os.path.exists(g):
        files.append((os.path.join(fx, "decode-extra", name), g))
for label, flags in FLAGS.items():
    n = diff = 0
    for path, golden in files:
        im = Image.open(path)
        if im.mode not in ("RGB", "L") or im.getexif().get(0x0112, 1) != 1 \
                or os.path.basename(path).startswith("exif_"):
            continue
        ref = np.load(golden)
        hh, ww = ref.shape[:2]
        out = np.zeros((hh, ww, 3), np.uint8)
        data = open(path, "rb").read()
        lib.tjDecompress2(h, data, len(data), out.ctypes.data, ww, ww * 3, hh, 1, flags)
        n += 1
        d = not np.array_equal(out, ref)
        diff += d
        if d and flags == 0:
            print("   differs:", os.path.basename(path))
    print("%-22s %2d of %2d files differ from cv2.imread" % (label, diff, n))
# Pillow's own decoder (its bundled libjpeg-turbo, same defaults) for comparison.
n = diff = 0
for path, golden in files:
    im = Image.open(path)
    if im.mode not in ("RGB", "L") or im.getexif().get(0x0112, 1) != 1 \
            or os.path.basename(path).startswith("exif_"):
        continue
    try:
        a = np.asarray(im.convert("RGB"))[:, :, ::-1]
    except OSError:
        continue
    ref = np.load(golden)
    n += 1
    diff += a.shape != ref.shape or not np.array_equal(a, ref)
print("%-22s %2d of %2d files differ from cv2.imread" % ("Pillow decode", diff, n))
