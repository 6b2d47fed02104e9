"""digits: scikit-learn's bundled UCI digits (1797 images of 8x8, pixels 0..16) and a small MLP.

Seconds to set up; for fast tests. Writes into data/digits/ (or --out DIR):
  model.onnx      input "input" float32 [N, 64] (pixels / 16); outputs "label" int64 [N],
                  "probabilities" float32 [N, 10]
  inputs.npy      float32 [899, 64]: the test half, exactly what the model gets
  labels.npy      int64 [899]
  reference.json  top-1 of scikit-learn and of ONNX Runtime (1 thread) on inputs.npy
"""

import argparse
import time

import common  # first: sets the BLAS thread count before numpy loads

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=common.default_out("digits"), help="output folder (default: data/digits)")
    args = ap.parse_args()

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)  # pixels 0..16 -> 0..1
    y = y.astype(np.int64)
    # A fixed, stratified half/half split: 898 to train, 899 to test.
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.5, random_state=0, stratify=y)

    t0 = time.perf_counter()
    clf = MLPClassifier(hidden_layer_sizes=(64,), max_iter=500, random_state=0)
    clf.fit(x_train, y_train)
    train_s = time.perf_counter() - t0

    with common.Staging(args.out) as tmp:
        ref = common.export_classifier(
            clf, 64, tmp, x_test, y_test, __file__,
            {
                "dataset": "sklearn.datasets.load_digits, test half of train_test_split(test_size=0.5, random_state=0, stratify=y)",
                "preprocessing": "pixels (0..16) / 16.0 as float32",
                "classifier": "MLPClassifier(hidden_layer_sizes=(64,), max_iter=500, random_state=0)",
                "train_samples": int(len(y_train)),
                "train_seconds": round(train_s, 2),
            },
        )
    common.log(
        f"digits: {ref['samples']} test samples, top-1 sklearn {ref['sklearn_top1']:.4f}, "
        f"onnxruntime {ref['onnxruntime_top1']:.4f} (trained in {train_s:.1f} s) -> {args.out}"
    )


if __name__ == "__main__":
    main()
