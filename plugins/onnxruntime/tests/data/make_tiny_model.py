"""Writes the tiny ONNX models the plugin's tests run (a few hundred bytes each).

    python3 make_tiny_model.py   # needs the `onnx` package; writes next to this file

tiny_<t>.onnx (t = f32, u8, i32, i64): input "x" of element type t, shape [batch, 8];
    logits = Cast(x, float) @ W + B  -> output "logits", f32 [batch, 4]
    label  = ArgMax(logits, axis=1)  -> output "label",  i64 [batch]   (the first output)
  with W[k][j] = ((5k + 3j) % 7 - 3) / 4 and B[j] = (j - 1.5) / 2: dyadic numbers, so for
  small integer inputs every sum is exact in f32 and a test can compute the answer itself.

tiny_int8.onnx: input "x" u8 [batch, 8]; scores = MatMulInteger(x, Wq) with
  Wq[k][j] = (5k + 3j) % 7 - 3 as int8 -> output "scores", i32 [batch, 4]; then
  label = ArgMax(scores, axis=1) -> output "label", i64 [batch] (first). Quantized ops, so
  the plugin reports precision "int8".

tiny_dyn.onnx: input "x" f32 [batch, n], n dynamic; sum = ReduceSum(x, axis 1) -> output
  "sum", f32 [batch]: samples of different lengths cannot share a batch.

tiny_flat.onnx: input "x" f32 [batch, n]; flat = Reshape(x, [-1]) -> output "flat", f32
  [batch * n]: one row per sample only when n = 1, so samples with n > 1 make the plugin's
  output check fail after ONNX Runtime ran (the tests of failures after a query was accepted).

tiny_stacked.onnx: inputs "a", "b", "c", each i64 [batch, 4] (in that model order);
  mix = a + 10 b + 100 c -> output "mix", i64 [batch, 4]: a test feeding them from rows of
  one sample (stacked_inputs) sees which row went to which input.

tiny_two_out.onnx: input "x" f32 [batch, 4]; outputs "start" = x + 1, "end" = -x, each f32
  [batch, 4], and "short" = first two of x, f32 [batch, 2]: a response stacking two outputs
  (stacked_outputs, as MLPerf bert's start and end logits) sees them interleaved.

tiny_mixed.onnx: inputs "a" i64 [batch, 4] and "b" f32 [batch, 4]; out = Cast(a, float) + b
  -> output "out", f32 [batch, 4]: inputs that cannot be stacked.

The tests carry the same formulas; change both together.
"""

import os

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = {"f32": TensorProto.FLOAT, "u8": TensorProto.UINT8, "i32": TensorProto.INT32, "i64": TensorProto.INT64}


def weight(k, j):
    return (5 * k + 3 * j) % 7 - 3


def save(graph, name):
    model = helper.make_model(graph, producer_name="mlperf-host tests",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = os.path.join(HERE, name)
    onnx.save(model, path)
    print(path, os.path.getsize(path), "bytes")


def float_model(suffix, elem):
    w = helper.make_tensor("W", TensorProto.FLOAT, [8, 4], [weight(k, j) / 4 for k in range(8) for j in range(4)])
    b = helper.make_tensor("B", TensorProto.FLOAT, [4], [(j - 1.5) / 2 for j in range(4)])
    nodes = []
    x = "x"
    if elem != TensorProto.FLOAT:
        nodes.append(helper.make_node("Cast", ["x"], ["xf"], to=TensorProto.FLOAT))
        x = "xf"
    nodes += [
        helper.make_node("MatMul", [x, "W"], ["xw"]),
        helper.make_node("Add", ["xw", "B"], ["logits"]),
        helper.make_node("ArgMax", ["logits"], ["label"], axis=1, keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, f"tiny_{suffix}",
        [helper.make_tensor_value_info("x", elem, ["batch", 8])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, ["batch"]),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 4])],
        [w, b])
    save(graph, f"tiny_{suffix}.onnx")


def int8_model():
    wq = helper.make_tensor("Wq", TensorProto.INT8, [8, 4], [weight(k, j) for k in range(8) for j in range(4)])
    nodes = [
        helper.make_node("MatMulInteger", ["x", "Wq"], ["scores"]),
        helper.make_node("ArgMax", ["scores"], ["label"], axis=1, keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "tiny_int8",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, ["batch", 8])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, ["batch"]),
         helper.make_tensor_value_info("scores", TensorProto.INT32, ["batch", 4])],
        [wq])
    save(graph, "tiny_int8.onnx")


def dynamic_model():
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    nodes = [helper.make_node("ReduceSum", ["x", "axes"], ["sum"], keepdims=0)]
    graph = helper.make_graph(
        nodes, "tiny_dyn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "n"])],
        [helper.make_tensor_value_info("sum", TensorProto.FLOAT, ["batch"])],
        [axes])
    save(graph, "tiny_dyn.onnx")


def flat_model():
    shape = helper.make_tensor("shape", TensorProto.INT64, [1], [-1])
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["flat"])]
    graph = helper.make_graph(
        nodes, "tiny_flat",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "n"])],
        [helper.make_tensor_value_info("flat", TensorProto.FLOAT, ["total"])],
        [shape])
    save(graph, "tiny_flat.onnx")


def stacked_model():
    ten = helper.make_tensor("ten", TensorProto.INT64, [], [10])
    hundred = helper.make_tensor("hundred", TensorProto.INT64, [], [100])
    nodes = [
        helper.make_node("Mul", ["b", "ten"], ["b10"]),
        helper.make_node("Mul", ["c", "hundred"], ["c100"]),
        helper.make_node("Add", ["a", "b10"], ["ab"]),
        helper.make_node("Add", ["ab", "c100"], ["mix"]),
    ]
    graph = helper.make_graph(
        nodes, "tiny_stacked",
        [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", 4]) for n in "abc"],
        [helper.make_tensor_value_info("mix", TensorProto.INT64, ["batch", 4])],
        [ten, hundred])
    save(graph, "tiny_stacked.onnx")


def mixed_model():
    nodes = [
        helper.make_node("Cast", ["a"], ["af"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["af", "b"], ["out"]),
    ]
    graph = helper.make_graph(
        nodes, "tiny_mixed",
        [helper.make_tensor_value_info("a", TensorProto.INT64, ["batch", 4]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 4])])
    save(graph, "tiny_mixed.onnx")


def two_out_model():
    one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
    starts = helper.make_tensor("starts", TensorProto.INT64, [1], [0])
    ends = helper.make_tensor("ends", TensorProto.INT64, [1], [2])
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    nodes = [
        helper.make_node("Add", ["x", "one"], ["start"]),
        helper.make_node("Neg", ["x"], ["end"]),
        helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["short"]),
    ]
    graph = helper.make_graph(
        nodes, "tiny_two_out",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("start", TensorProto.FLOAT, ["batch", 4]),
         helper.make_tensor_value_info("end", TensorProto.FLOAT, ["batch", 4]),
         helper.make_tensor_value_info("short", TensorProto.FLOAT, ["batch", 2])],
        [one, starts, ends, axes])
    save(graph, "tiny_two_out.onnx")


if __name__ == "__main__":
    for suffix, elem in TYPES.items():
        float_model(suffix, elem)
    int8_model()
    dynamic_model()
    flat_model()
    stacked_model()
    mixed_model()
    two_out_model()
