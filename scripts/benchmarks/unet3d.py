"""unet3d: a small model with the inputs and outputs of MLPerf's 3D-UNet for KiTS19
(`3dunet_kits19_128x128x128_dynbatch.onnx`), seeded weights, for the `3d-unet-99` and
`3d-unet-99.9` benchmarks' tests and examples.

The real model takes `input` float32 [N, 1, 128, 128, 128] (one preprocessed 128^3 window per
batch row, any N) and answers `output` float32 [N, 3, 128, 128, 128]: per voxel the logits of
background, kidney and tumour, which the sliding window weights, adds up and argmaxes. This one
has the same names, types and (dynamic-batch) shapes and two layers: a 3x3x3 convolution to
four intensity ramps (ReLUs at thresholds within the preprocessed HU range, their kernels a
mean filter with seeded noise) and a 1x1x1 convolution to the three logits, so that its labels
follow the tissue (tumour-like, kidney-like, other intensities) and differ from window to
window at their edges, where the padding zeros enter. Writes into data/unet3d/ (or --out):
  model.onnx      opset 17, about 2 KB
  reference.json  {"accuracy": null, ...}: no reference accuracy (not a trained model)
A submitter runs the real model: `--model-file 3dunet_kits19_128x128x128_dynbatch.onnx`.
"""

import argparse

import common  # first: sets the BLAS thread count before numpy loads

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8
SEED = 19
ROI = 128
CLASSES = 3
# Preprocessed intensities are (clip(HU, -79, 304) - 101) / 76.9, in [-2.34, 2.64]: tumour
# (80 HU) sits near -0.27, kidney medulla and cortex (120, 170 HU) near 0.25 and 0.90, liver
# (60 HU) near -0.53, bone above 1.9, air and fat at the floor.
THRESHOLDS = (-0.45, 0.0, 0.1, 1.2)
# Logits of background, kidney and tumour from the four ramps: tumour in (-0.45, 0.0),
# kidney in (0.1, 1.2), background elsewhere (up to the seeded noise).
MIX = np.array(
    [
        [0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 6.0, -20.0],
        [4.0, -9.0, 0.0, 0.0],
    ]
)
MIX_BIAS = np.array([0.0, -0.2, -0.35])


def build():
    rng = np.random.default_rng(SEED)
    bands = len(THRESHOLDS)
    # A mean filter per band, with seeded noise so that no two weights are equal.
    kernel = np.full((bands, 1, 3, 3, 3), 1.0 / 27.0) * (1.0 + 0.25 * rng.standard_normal((bands, 1, 3, 3, 3)))
    kernel /= kernel.sum(axis=(1, 2, 3, 4), keepdims=True)
    bias = -np.array(THRESHOLDS)
    mix = MIX + 0.05 * rng.standard_normal(MIX.shape)
    init = [
        numpy_helper.from_array(kernel.astype(np.float32), "bands.weight"),
        numpy_helper.from_array(bias.astype(np.float32), "bands.bias"),
        numpy_helper.from_array(mix.reshape(CLASSES, bands, 1, 1, 1).astype(np.float32), "logits.weight"),
        numpy_helper.from_array(MIX_BIAS.astype(np.float32), "logits.bias"),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "bands.weight", "bands.bias"], ["bands"], pads=[1] * 6),
        helper.make_node("Relu", ["bands"], ["ramps"]),
        helper.make_node("Conv", ["ramps", "logits.weight", "logits.bias"], ["output"]),
    ]
    graph = helper.make_graph(
        nodes,
        "unet3d_kits19_io",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch_size", 1, ROI, ROI, ROI])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch_size", CLASSES, ROI, ROI, ROI])],
        init,
    )
    return helper.make_model(
        graph,
        producer_name="mlperf-host scripts/benchmarks/unet3d.py",
        opset_imports=[helper.make_opsetid("", OPSET)],
        ir_version=IR_VERSION,
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=common.default_out("unet3d"), help="output folder (default: data/unet3d)")
    args = ap.parse_args()
    model = build()
    onnx.checker.check_model(model, full_check=True)
    with common.Staging(args.out) as tmp:
        path = tmp / "model.onnx"
        path.write_bytes(model.SerializeToString())
        sess = common.ort_session(path)
        # Two windows of a kidney-like ramp: every class wins somewhere.
        ramp = np.linspace(-2.3, 2.6, ROI, dtype=np.float32)
        x = np.broadcast_to(ramp[None, None, :, None, None], (2, 1, ROI, ROI, ROI)).copy()
        (out,) = sess.run(["output"], {"input": x})
        assert out.dtype == np.float32 and out.shape == (2, CLASSES, ROI, ROI, ROI), (out.dtype, out.shape)
        labels = np.bincount(out[0].argmax(axis=0).ravel(), minlength=CLASSES)
        assert (labels > 0).all(), labels
        common.write_json(
            tmp / "reference.json",
            {
                "accuracy": None,
                "note": "seeded weights with the KiTS19 3D-UNet's inputs and outputs: not a trained model",
                "onnxruntime_version": common.versions()["onnxruntime"],
                "model_sha256": common.sha256(path),
                "check": {"ramp_labels": labels.tolist()},
                "seed": SEED,
                "versions": common.versions(),
                "generator_sha256": common.generator_sha256(__file__),
            },
        )
    common.log(f"unet3d: model with the KiTS19 3D-UNet's inputs and outputs -> {args.out}")


if __name__ == "__main__":
    main()
