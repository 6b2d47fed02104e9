"""What the resize case generators share: the seeded source patterns (re-created byte for
byte by tests/common/mod.rs) and cv2's output checked to depend on neither the thread count
nor IPP. Run with opencv-python-headless==5.0.0.93."""

import sys

import cv2
import numpy as np

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15

def mix64(z):
    """splitmix64 finaliser on a uint64 array (wrapping arithmetic)."""
    z = z ^ (z >> np.uint64(30))
    z = z * np.uint64(0xBF58476D1CE4E5B9)
    z = z ^ (z >> np.uint64(27))
    z = z * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def make_image(pattern, seed, w, h, cn):
    n = w * h * cn
    index = np.arange(n, dtype=np.uint64)
    if pattern in ("noise", "bimodal"):
        z = mix64(index + np.uint64((seed * GOLDEN) & MASK64))
        flat = (z >> np.uint64(56)) if pattern == "noise" else (z >> np.uint64(63)) * np.uint64(255)
        flat = flat.astype(np.uint8)
    elif pattern == "const255":
        flat = np.full(n, 255, dtype=np.uint8)
    elif pattern == "gradient":
        idx = index.astype(np.int64)
        c = idx % cn
        x = (idx // cn) % w
        y = idx // (cn * w)
        flat = ((x * 3 + y * 5 + c * 85) % 256).astype(np.uint8)
    else:
        raise ValueError(pattern)
    return flat.reshape(h, w, cn)


def resize(img, w, h, interpolation):
    out = cv2.resize(img, (w, h), interpolation=interpolation)
    return out.reshape(h, w, img.shape[2])


def reference(img, w, h, interpolation):
    """cv2's output, the same with one thread and without IPP (else the script stops)."""
    cv2.setNumThreads(-1)
    cv2.ipp.setUseIPP(True)
    main = resize(img, w, h, interpolation)
    cv2.setNumThreads(1)
    single = resize(img, w, h, interpolation)
    cv2.ipp.setUseIPP(False)
    no_ipp = resize(img, w, h, interpolation)
    cv2.ipp.setUseIPP(True)
    cv2.setNumThreads(-1)
    if not (np.array_equal(main, single) and np.array_equal(main, no_ipp)):
        sys.exit(f"threads/IPP changed the output for {img.shape} -> {w}x{h}")
    return main
