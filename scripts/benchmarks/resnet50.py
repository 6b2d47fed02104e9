"""resnet50: the MLPerf ResNet-50 v1.5 topology with random weights, for performance only.

Built with the onnx helper API (no deep-learning framework). v1.5 puts the stride of each
down-sampling bottleneck on its 3x3 convolution (v1 has it on the first 1x1). Batch
normalisation is folded into the convolutions (a Conv with bias), as inference runtimes do anyway.
Weights: He-normal from a fixed numpy seed; the last convolution of each residual branch is
scaled by 0.2 so that activations stay of order 1 through the 16 blocks (no overflow, no
denormals) -- the arithmetic is that of ResNet-50 whatever the values.
Writes into data/resnet50/ (or --out DIR):
  model.onnx      input "input" float32 [N, 3, 224, 224] (NCHW, normalised); outputs "logits"
                  float32 [N, 1000] and "label" int64 [N] (argmax), opset 17; about 102 MB
  inputs.npy      float32 [64, 3, 224, 224]: random uint8 images, normalised with the ImageNet
                  mean and standard deviation, from a fixed seed
  reference.json  {"accuracy": null, "note": "random weights: performance only", ...}
"""

import argparse
import time

import common  # first: sets the BLAS thread count before numpy loads

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8  # the IR version that goes with opset 17
SEED = 0
SAMPLES = 64
CHECK_BATCH = 4


class Builder:
    """Accumulates nodes and initialisers; weights come from one seeded generator, in build order."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []
        self.params = 0

    def weight(self, name, array):
        array = np.ascontiguousarray(array, dtype=np.float32)
        self.inits.append(numpy_helper.from_array(array, name))
        self.params += array.size
        return name

    def conv(self, name, x, cin, cout, k, stride=1, relu=True, scale=1.0):
        """Conv (BN folded: weight and bias) [+ Relu]; He-normal weights, small random bias."""
        std = np.sqrt(2.0 / (cin * k * k)) * scale
        w = self.weight(f"{name}.weight", self.rng.standard_normal((cout, cin, k, k)) * std)
        b = self.weight(f"{name}.bias", self.rng.standard_normal(cout) * 0.01)
        pad = k // 2
        out = f"{name}.out"
        self.nodes.append(
            helper.make_node(
                "Conv", [x, w, b], [out], name=name,
                kernel_shape=[k, k], strides=[stride, stride], pads=[pad, pad, pad, pad],
            )
        )
        if not relu:
            return out
        self.nodes.append(helper.make_node("Relu", [out], [f"{name}.relu"], name=f"{name}.relu"))
        return f"{name}.relu"

    def bottleneck(self, name, x, cin, width, stride):
        """1x1 (width) -> 3x3 (width, stride: v1.5) -> 1x1 (4 width), plus the shortcut
        (a strided 1x1 projection when the shape changes), then Relu."""
        cout = 4 * width
        y = self.conv(f"{name}.conv1", x, cin, width, 1)
        y = self.conv(f"{name}.conv2", y, width, width, 3, stride=stride)
        y = self.conv(f"{name}.conv3", y, width, cout, 1, relu=False, scale=0.2)
        if stride != 1 or cin != cout:
            x = self.conv(f"{name}.downsample", x, cin, cout, 1, stride=stride, relu=False)
        self.nodes.append(helper.make_node("Add", [y, x], [f"{name}.add"], name=f"{name}.add"))
        self.nodes.append(helper.make_node("Relu", [f"{name}.add"], [f"{name}.out"], name=f"{name}.relu"))
        return f"{name}.out", cout


def build():
    b = Builder(SEED)
    x = b.conv("conv1", "input", 3, 64, 7, stride=2)
    b.nodes.append(
        helper.make_node("MaxPool", [x], ["pool1"], name="pool1", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    )
    x, c = "pool1", 64
    # (blocks, width, stride of the first block): 3 + 4 + 6 + 3 = 16 bottlenecks.
    for stage, (blocks, width, stride) in enumerate([(3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)], start=1):
        for i in range(blocks):
            x, c = b.bottleneck(f"layer{stage}.{i}", x, c, width, stride if i == 0 else 1)
    b.nodes.append(helper.make_node("GlobalAveragePool", [x], ["avgpool"], name="avgpool"))
    b.nodes.append(helper.make_node("Flatten", ["avgpool"], ["flatten"], name="flatten", axis=1))
    fc_w = b.weight("fc.weight", b.rng.standard_normal((1000, c)) * np.sqrt(1.0 / c))
    fc_b = b.weight("fc.bias", np.zeros(1000))
    b.nodes.append(helper.make_node("Gemm", ["flatten", fc_w, fc_b], ["logits"], name="fc", transB=1))
    b.nodes.append(helper.make_node("ArgMax", ["logits"], ["label"], name="argmax", axis=1, keepdims=0))

    graph = helper.make_graph(
        b.nodes,
        "resnet50_v1.5_random",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, 224, 224])],
        [
            helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 1000]),
            helper.make_tensor_value_info("label", TensorProto.INT64, ["N"]),
        ],
        b.inits,
    )
    model = helper.make_model(
        graph,
        producer_name="mlperf-host scripts/benchmarks/resnet50.py",
        opset_imports=[helper.make_opsetid("", OPSET)],
        ir_version=IR_VERSION,
    )
    return model, b.params


def make_inputs():
    """Random uint8 RGB images, scaled to 0..1 and normalised per channel (ImageNet mean/std)."""
    rng = np.random.default_rng(SEED + 1)
    pixels = rng.integers(0, 256, size=(SAMPLES, 3, 224, 224), dtype=np.uint8)
    mean = np.array([0.485, 0.456, 0.406], np.float32).reshape(1, 3, 1, 1)
    std = np.array([0.229, 0.224, 0.225], np.float32).reshape(1, 3, 1, 1)
    return ((pixels.astype(np.float32) / 255 - mean) / std).astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=common.default_out("resnet50"), help="output folder (default: data/resnet50)")
    args = ap.parse_args()

    model, params = build()
    onnx.checker.check_model(model, full_check=True)
    inputs = make_inputs()

    with common.Staging(args.out) as tmp:
        path = tmp / "model.onnx"
        path.write_bytes(model.SerializeToString())
        np.save(tmp / "inputs.npy", inputs)

        # One batch through ONNX Runtime: shapes, types, finite values.
        sess = common.ort_session(path)
        t0 = time.perf_counter()
        logits, label = sess.run(["logits", "label"], {"input": inputs[:CHECK_BATCH]})
        check_s = time.perf_counter() - t0
        assert logits.dtype == np.float32 and logits.shape == (CHECK_BATCH, 1000), (logits.dtype, logits.shape)
        assert label.dtype == np.int64 and label.shape == (CHECK_BATCH,), (label.dtype, label.shape)
        assert np.isfinite(logits).all(), "non-finite logits"
        assert (label == logits.argmax(1)).all()

        common.write_json(
            tmp / "reference.json",
            {
                "accuracy": None,
                "note": "random weights: performance only",
                "samples": SAMPLES,
                "onnxruntime_version": common.versions()["onnxruntime"],
                "model_sha256": common.sha256(path),
                "parameters": int(params),
                "input": {"name": "input", "dtype": "float32", "shape": ["N", 3, 224, 224]},
                "outputs": {
                    "logits": {"dtype": "float32", "shape": ["N", 1000]},
                    "label": {"dtype": "int64", "shape": ["N"]},
                },
                "check": {
                    "batch": CHECK_BATCH,
                    "label": label.tolist(),
                    "logits_std": round(float(logits.std()), 4),
                    "first_run_seconds_1_thread": round(check_s, 3),
                },
                "seed": SEED,
                "versions": common.versions(),
                "generator_sha256": common.generator_sha256(__file__),
            },
        )
        size = path.stat().st_size
    common.log(
        f"resnet50: {params / 1e6:.1f} M parameters, model {size / 1e6:.1f} MB, {SAMPLES} inputs; "
        f"batch {CHECK_BATCH} on 1 thread {check_s:.2f} s -> {args.out}"
    )


if __name__ == "__main__":
    main()
