"""resnet: a small model with the inputs and outputs of MLPerf's ResNet-50 v1.5
(Zenodo resnet50_v1.onnx), random weights, for the `resnet` benchmark's tests and examples.

The real model takes `input_tensor:0` float32 [N, 3, 224, 224] (NCHW, RGB minus the means
123.68/116.78/103.94, no scaling) and answers `softmax_tensor:0` float32 [N, 1001] (class 0 is
the background class) and `ArgMax:0` int64 [N]. This one has the same names, types and shapes
and a few layers (a strided convolution, global average pooling, a fully connected layer),
so that a run of `resnet` exercises everything the real model does at the host's side; its
answers depend on each image but are no classification. Writes into data/resnet/ (or --out):
  model.onnx      opset 17, about 100 KB
  reference.json  {"accuracy": null, ...}: no reference accuracy (random weights)
A submitter runs the real model: `--model-file resnet50_v1.onnx`.
"""

import argparse

import common  # first: sets the BLAS thread count before numpy loads

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8
SEED = 50
CLASSES = 1001


def build():
    rng = np.random.default_rng(SEED)
    init = []

    def weight(name, array):
        init.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype=np.float32), name))
        return name

    conv_w = weight("conv.weight", rng.standard_normal((16, 3, 8, 8)) * 0.02)
    conv_b = weight("conv.bias", rng.standard_normal(16) * 0.1)
    fc_w = weight("fc.weight", rng.standard_normal((CLASSES, 16)) * 0.5)
    fc_b = weight("fc.bias", rng.standard_normal(CLASSES) * 0.1)
    nodes = [
        helper.make_node("Conv", ["input_tensor:0", conv_w, conv_b], ["conv"], kernel_shape=[8, 8], strides=[8, 8]),
        helper.make_node("Relu", ["conv"], ["relu"]),
        helper.make_node("GlobalAveragePool", ["relu"], ["pool"]),
        helper.make_node("Flatten", ["pool"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", fc_w, fc_b], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["softmax_tensor:0"], axis=1),
        helper.make_node("ArgMax", ["logits"], ["ArgMax:0"], axis=1, keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "resnet50_v1_io",
        [helper.make_tensor_value_info("input_tensor:0", TensorProto.FLOAT, ["N", 3, 224, 224])],
        [
            helper.make_tensor_value_info("ArgMax:0", TensorProto.INT64, ["N"]),
            helper.make_tensor_value_info("softmax_tensor:0", TensorProto.FLOAT, ["N", CLASSES]),
        ],
        init,
    )
    return helper.make_model(
        graph,
        producer_name="mlperf-host scripts/benchmarks/resnet.py",
        opset_imports=[helper.make_opsetid("", OPSET)],
        ir_version=IR_VERSION,
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=common.default_out("resnet"), help="output folder (default: data/resnet)")
    args = ap.parse_args()
    model = build()
    onnx.checker.check_model(model, full_check=True)
    with common.Staging(args.out) as tmp:
        path = tmp / "model.onnx"
        path.write_bytes(model.SerializeToString())
        sess = common.ort_session(path)
        x = np.random.default_rng(SEED + 1).uniform(-120, 140, (4, 3, 224, 224)).astype(np.float32)
        label, probabilities = sess.run(["ArgMax:0", "softmax_tensor:0"], {"input_tensor:0": x})
        assert label.dtype == np.int64 and label.shape == (4,), (label.dtype, label.shape)
        assert probabilities.shape == (4, CLASSES) and (label == probabilities.argmax(1)).all()
        common.write_json(
            tmp / "reference.json",
            {
                "accuracy": None,
                "note": "random weights with resnet50_v1.onnx's inputs and outputs: no classification",
                "onnxruntime_version": common.versions()["onnxruntime"],
                "model_sha256": common.sha256(path),
                "check": {"label": label.tolist()},
                "seed": SEED,
                "versions": common.versions(),
                "generator_sha256": common.generator_sha256(__file__),
            },
        )
    common.log(f"resnet: model with resnet50_v1.onnx's inputs and outputs -> {args.out}")


if __name__ == "__main__":
    main()
