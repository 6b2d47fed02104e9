"""fmnist: Fashion-MNIST (70,000 labelled 28x28 grey images of 10 clothing classes) and an MLP.

Reads the gzipped IDX files of Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist,
or --source DIR), trains MLPClassifier((128,)) on the 60,000 training images for 20 epochs
(10-20 s on 2 cores) and writes into data/fmnist/ (or --out DIR):
  model.onnx      input "input" float32 [N, 784] (pixels / 255); outputs "label" int64 [N],
                  "probabilities" float32 [N, 10]
  inputs.npy      float32 [10000, 784]: the test set, exactly what the model gets
  inputs_u8.npy   uint8 [10000, 28, 28]: the same images, raw pixels (for preprocessing in the host)
  labels.npy      int64 [10000]
  reference.json  top-1 of scikit-learn and of ONNX Runtime (1 thread) on inputs.npy
"""

import argparse
import gzip
import time
import warnings
from pathlib import Path

import common  # first: sets the BLAS thread count before numpy loads

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier

DEFAULT_SOURCE = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    """An IDX file (gzipped) as a numpy array: 2 zero bytes, a type code (0x08: uint8), the number
    of dimensions, each dimension as a big-endian uint32, then the data."""
    with gzip.open(path, "rb") as f:
        b = f.read()
    if len(b) < 4 or b[0:2] != b"\0\0" or b[2] != 0x08:
        raise SystemExit(f"{path}: not an unsigned-byte IDX file (header {b[:4].hex()})")
    ndim = b[3]
    dims = tuple(int.from_bytes(b[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    offset = 4 + 4 * ndim
    if len(b) - offset != int(np.prod(dims)):
        raise SystemExit(f"{path}: {len(b) - offset} data bytes, header says {dims}")
    return np.frombuffer(b, np.uint8, offset=offset).reshape(dims)


def load(source, split):
    images = read_idx(source / f"{split}-images-idx3-ubyte.gz")
    labels = read_idx(source / f"{split}-labels-idx1-ubyte.gz").astype(np.int64)
    assert images.shape[1:] == (28, 28) and labels.shape == images.shape[:1], (images.shape, labels.shape)
    return images, labels


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", default=DEFAULT_SOURCE, help=f"folder of the IDX files (default: {DEFAULT_SOURCE})")
    ap.add_argument("--out", default=common.default_out("fmnist"), help="output folder (default: data/fmnist)")
    args = ap.parse_args()
    source = Path(args.source)

    train_u8, y_train = load(source, "train")
    test_u8, y_test = load(source, "t10k")
    assert len(y_train) == 60000 and len(y_test) == 10000, (len(y_train), len(y_test))
    x_train = train_u8.reshape(-1, 784).astype(np.float32) / 255
    x_test = test_u8.reshape(-1, 784).astype(np.float32) / 255

    t0 = time.perf_counter()
    clf = MLPClassifier(hidden_layer_sizes=(128,), max_iter=20, random_state=0)
    with warnings.catch_warnings():
        # 20 epochs is deliberately short of convergence: accuracy is close to its plateau.
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(x_train, y_train)
    train_s = time.perf_counter() - t0

    with common.Staging(args.out) as tmp:
        np.save(tmp / "inputs_u8.npy", np.ascontiguousarray(test_u8))
        ref = common.export_classifier(
            clf, 784, tmp, x_test, y_test, __file__,
            {
                "dataset": f"Fashion-MNIST t10k (10,000 test images) from {source}",
                "preprocessing": "pixels (uint8) / 255 as float32, flattened row-major to 784",
                "inputs_u8": "inputs_u8.npy: uint8 [10000, 28, 28], the raw test pixels",
                "classifier": "MLPClassifier(hidden_layer_sizes=(128,), max_iter=20, random_state=0)",
                "train_samples": int(len(y_train)),
                "train_seconds": round(train_s, 2),
            },
        )
    common.log(
        f"fmnist: {ref['samples']} test samples, top-1 sklearn {ref['sklearn_top1']:.4f}, "
        f"onnxruntime {ref['onnxruntime_top1']:.4f} (trained in {train_s:.1f} s) -> {args.out}"
    )


if __name__ == "__main__":
    main()
