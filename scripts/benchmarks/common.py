"""Helpers shared by the benchmark generators (digits.py, fmnist.py, resnet50.py).

Each generator writes its files into a fresh temporary folder beside data/<name>/ and renames it
into place only once everything is written, so data/<name>/ is either complete or absent.
"""

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path


# Training and export use at most 2 BLAS/OpenMP threads unless the caller says otherwise: the
# figures in reference.json were obtained that way on the project's 2-core machines. This must
# run before numpy is imported, so every generator imports this module first.
THREADS = os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", THREADS)
os.environ.setdefault("MKL_NUM_THREADS", THREADS)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def default_out(name):
    """data/<name>/ at the repository root, whatever the current directory."""
    return REPO / "data" / name


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def generator_sha256(script):
    """sha256 of the generator script followed by this file: prepare.sh regenerates data/<name>/
    when it changes (the same hash is computed there with `cat script common.py | sha256sum`)."""
    h = hashlib.sha256()
    for p in (Path(script).resolve(), Path(__file__).resolve()):
        h.update(p.read_bytes())
    return h.hexdigest()


def versions():
    import importlib.metadata as m

    names = ["numpy", "scikit-learn", "skl2onnx", "onnx", "onnxruntime"]
    return {n: m.version(n) for n in names}


def ort_session(model_path):
    """An ONNX Runtime CPU session with one intra- and one inter-op thread, as reference.json's
    onnxruntime figures are computed."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    return ort.InferenceSession(str(model_path), so, providers=["CPUExecutionProvider"])


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


class Staging:
    """`with Staging(out) as tmp:` write into tmp; on success tmp replaces out."""

    def __init__(self, out):
        self.out = Path(out).resolve()

    def __enter__(self):
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.", dir=self.out.parent))
        return self.tmp

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            return False
        old = None
        if self.out.exists():
            old = self.out.with_name(f".{self.out.name}.old.{os.getpid()}")
            self.out.rename(old)
        self.tmp.chmod(0o755)
        self.tmp.rename(self.out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return False


def log(msg):
    print(msg, flush=True)


def export_classifier(clf, n_features, out_dir, x_test, y_test, script, extra):
    """Exports a fitted scikit-learn classifier to out_dir/model.onnx (input "input" float32
    [N, n_features]; outputs "label" int64 [N] and "probabilities" float32 [N, classes]), saves
    x_test/y_test as inputs.npy/labels.npy, scores both scikit-learn and ONNX Runtime on them and
    writes reference.json. Returns the reference dict."""
    import numpy as np
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import FloatTensorType

    assert x_test.dtype == np.float32 and x_test.shape[1:] == (n_features,)
    assert y_test.dtype == np.int64 and y_test.shape == x_test.shape[:1]
    onx = to_onnx(
        clf,
        initial_types=[("input", FloatTensorType([None, n_features]))],
        options={id(clf): {"zipmap": False}},
        target_opset=17,
    )
    # skl2onnx lists the opsets from a Python set, so their order (and the file's bytes, not its
    # meaning) would change with the interpreter's hash seed: sort them for a stable sha256.
    opsets = sorted((o.domain, o.version) for o in onx.opset_import)
    del onx.opset_import[:]
    for domain, version in opsets:
        onx.opset_import.add(domain=domain, version=version)
    model = out_dir / "model.onnx"
    model.write_bytes(onx.SerializeToString())
    np.save(out_dir / "inputs.npy", x_test)
    np.save(out_dir / "labels.npy", y_test)

    sklearn_top1 = float((clf.predict(x_test) == y_test).mean())
    sess = ort_session(model)
    outputs = [o.name for o in sess.get_outputs()]
    assert outputs == ["label", "probabilities"], outputs
    label, prob = sess.run(None, {"input": x_test})
    assert label.dtype == np.int64 and label.shape == y_test.shape, (label.dtype, label.shape)
    assert prob.dtype == np.float32 and prob.shape == (len(y_test), 10), (prob.dtype, prob.shape)
    ort_top1 = float((label == y_test).mean())
    ref = {
        "metric": "top1",
        "samples": int(len(y_test)),
        "sklearn_top1": sklearn_top1,
        "onnxruntime_top1": ort_top1,
        "onnxruntime_version": versions()["onnxruntime"],
        "model_sha256": sha256(model),
        "input": {"name": "input", "dtype": "float32", "shape": [None, n_features]},
        "outputs": {
            "label": {"dtype": "int64", "shape": [None]},
            "probabilities": {"dtype": "float32", "shape": [None, 10]},
        },
        **extra,
        "train_threads": THREADS,
        "versions": versions(),
        "generator_sha256": generator_sha256(script),
    }
    write_json(out_dir / "reference.json", ref)
    return ref
