"""yolo: a small model with the inputs and outputs of MLPerf's YOLOv11-L (a static 640x640
ONNX export, as ultralytics' `yolo export format=onnx` writes it), random weights, for the
`yolo-99` and `yolo-95` benchmarks' tests and examples.

The real export takes `images` float32 [1, 3, 640, 640] (RGB / 255, letterboxed) and answers
`output0` float32 [1, 84, 8400]: per anchor (80x80, 40x40 and 20x20 grids) the box's centre,
width and height in input pixels, then 80 class scores in 0..1. This one has the same names,
types and shapes (batch 1, as the static export has it) and a few layers: each grid's average-pooled pixels
through a 1x1 convolution, boxes around each anchor's cell, sigmoid scores; its detections
depend on each image but detect nothing. The export's metadata (stride, task, image size, the
80 names) is set as ultralytics writes it, so that ultralytics' own `YOLO(model).predict` (the
reference harness) runs it too. Writes into data/yolo/ (or --out):
  model.onnx      opset 17, about 30 KB
  reference.json  {"accuracy": null, ...}: no reference accuracy (random weights)
A submitter runs the real model: `--model-file yolo11l.onnx`.
"""

import argparse

import common  # first: sets the BLAS thread count before numpy loads

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8
SEED = 11
SIDE = 640
CLASSES = 80
GRIDS = (8, 16, 32)  # strides: 80x80, 40x40, 20x20 anchors
COCO_NAMES = [
    "person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat",
    "traffic light", "fire hydrant", "stop sign", "parking meter", "bench", "bird", "cat", "dog",
    "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe", "backpack", "umbrella",
    "handbag", "tie", "suitcase", "frisbee", "skis", "snowboard", "sports ball", "kite",
    "baseball bat", "baseball glove", "skateboard", "surfboard", "tennis racket", "bottle",
    "wine glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple", "sandwich", "orange",
    "broccoli", "carrot", "hot dog", "pizza", "donut", "cake", "chair", "couch", "potted plant",
    "bed", "dining table", "toilet", "tv", "laptop", "mouse", "remote", "keyboard", "cell phone",
    "microwave", "oven", "toaster", "sink", "refrigerator", "book", "clock", "vase", "scissors",
    "teddy bear", "hair drier", "toothbrush",
]


def build():
    rng = np.random.default_rng(SEED)
    init = []

    def constant(name, array, dtype=np.float32):
        init.append(numpy_helper.from_array(np.ascontiguousarray(array, dtype=dtype), name))
        return name

    nodes = []
    boxes, scores = [], []
    for stride in GRIDS:
        cells = SIDE // stride
        tag = f"s{stride}"
        nodes.append(helper.make_node("AveragePool", ["images"], [f"{tag}.pool"], kernel_shape=[stride, stride], strides=[stride, stride]))
        w = constant(f"{tag}.weight", rng.standard_normal((4 + CLASSES, 3, 1, 1)) * 3.0)
        b = constant(f"{tag}.bias", np.concatenate([rng.standard_normal(4) * 0.5, rng.standard_normal(CLASSES) - 3.0]))
        nodes.append(helper.make_node("Conv", [f"{tag}.pool", w, b], [f"{tag}.conv"]))
        nodes.append(helper.make_node("Reshape", [f"{tag}.conv", constant(f"{tag}.flat", [0, 4 + CLASSES, -1], np.int64)], [f"{tag}.head"]))
        nodes.append(helper.make_node("Split", [f"{tag}.head", constant(f"{tag}.split", [4, CLASSES], np.int64)], [f"{tag}.box", f"{tag}.cls"], axis=1))
        # Box: the anchor cell's centre plus an offset of up to two cells, a size of up to
        # eight cells.
        ys, xs = np.meshgrid(np.arange(cells), np.arange(cells), indexing="ij")
        centres = np.stack([xs.ravel(), ys.ravel()]).astype(np.float32)[None] * stride + stride / 2
        nodes.append(helper.make_node("Sigmoid", [f"{tag}.box"], [f"{tag}.box01"]))
        nodes.append(helper.make_node("Split", [f"{tag}.box01", constant(f"{tag}.split2", [2, 2], np.int64)], [f"{tag}.xy01", f"{tag}.wh01"], axis=1))
        nodes.append(helper.make_node("Mul", [f"{tag}.xy01", constant(f"{tag}.xyscale", 4.0 * stride)], [f"{tag}.xyoff"]))
        nodes.append(helper.make_node("Add", [f"{tag}.xyoff", constant(f"{tag}.centre", centres - 2.0 * stride)], [f"{tag}.xy"]))
        nodes.append(helper.make_node("Mul", [f"{tag}.wh01", constant(f"{tag}.whscale", 8.0 * stride)], [f"{tag}.wh"]))
        nodes.append(helper.make_node("Concat", [f"{tag}.xy", f"{tag}.wh"], [f"{tag}.xywh"], axis=1))
        nodes.append(helper.make_node("Sigmoid", [f"{tag}.cls"], [f"{tag}.score"]))
        boxes.append(f"{tag}.xywh")
        scores.append(f"{tag}.score")
    nodes.append(helper.make_node("Concat", boxes, ["boxes"], axis=2))
    nodes.append(helper.make_node("Concat", scores, ["scores"], axis=2))
    nodes.append(helper.make_node("Concat", ["boxes", "scores"], ["output0"], axis=1))
    anchors = sum((SIDE // s) ** 2 for s in GRIDS)
    graph = helper.make_graph(
        nodes,
        "yolo11_io",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, SIDE, SIDE])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 4 + CLASSES, anchors])],
        init,
    )
    model = helper.make_model(
        graph,
        producer_name="mlperf-host scripts/benchmarks/yolo.py",
        opset_imports=[helper.make_opsetid("", OPSET)],
        ir_version=IR_VERSION,
    )
    # As ultralytics' exporter writes them (values as str(), names a dict), so that its
    # AutoBackend reads the stride, the size and the classes; not dynamic: a full letterbox.
    metadata = {
        "description": "random weights with a YOLO11 export's inputs and outputs",
        "author": "mlperf-host",
        "stride": "32",
        "task": "detect",
        "batch": "1",
        "imgsz": str([SIDE, SIDE]),
        "names": str(dict(enumerate(COCO_NAMES))),
        "args": str({"batch": 1, "half": False, "dynamic": False, "nms": False}),
    }
    for key, value in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    return model, anchors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=common.default_out("yolo"), help="output folder (default: data/yolo)")
    args = ap.parse_args()
    model, anchors = build()
    onnx.checker.check_model(model, full_check=True)
    with common.Staging(args.out) as tmp:
        path = tmp / "model.onnx"
        path.write_bytes(model.SerializeToString())
        sess = common.ort_session(path)
        x = np.random.default_rng(SEED + 1).uniform(0, 1, (1, 3, SIDE, SIDE)).astype(np.float32)
        (out,) = sess.run(["output0"], {"images": x})
        assert out.dtype == np.float32 and out.shape == (1, 4 + CLASSES, anchors), (out.dtype, out.shape)
        assert ((out[:, 4:] > 0) & (out[:, 4:] < 1)).all()
        common.write_json(
            tmp / "reference.json",
            {
                "accuracy": None,
                "note": "random weights with a YOLO11 static export's inputs and outputs: no detection",
                "onnxruntime_version": common.versions()["onnxruntime"],
                "model_sha256": common.sha256(path),
                "check": {"max_score": float(out[:, 4:].max())},
                "seed": SEED,
                "versions": common.versions(),
                "generator_sha256": common.generator_sha256(__file__),
            },
        )
    common.log(f"yolo: model with a YOLO11 export's inputs and outputs -> {args.out}")


if __name__ == "__main__":
    main()
