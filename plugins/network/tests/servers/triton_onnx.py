"""Serves an ONNX classifier with NVIDIA Triton (through PyTriton) on 127.0.0.1, for the network
plugin's tests: the model runs in ONNX Runtime (1 thread) inside a Triton Python model with a
dynamic batcher, and Triton speaks KServe v2 over HTTP and gRPC.

usage: python triton_onnx.py MODEL.onnx NAME HTTP_PORT GRPC_PORT METRICS_PORT
Inputs and outputs are the model's own names, shapes and types; every output is served.
Runs until SIGINT or SIGTERM.
"""

import signal
import sys

import numpy as np
import onnxruntime as ort
from pytriton.decorators import batch
from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor
from pytriton.triton import Triton, TritonConfig

NUMPY_OF_ONNX = {
    "tensor(float)": np.float32,
    "tensor(double)": np.float64,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(uint8)": np.uint8,
    "tensor(int8)": np.int8,
    "tensor(bool)": np.bool_,
}


def per_sample_shape(shape):
    """The model's shape without its batch axis; () becomes (1,), as Triton wants a dimension."""
    rest = tuple(d if isinstance(d, int) else -1 for d in shape[1:])
    return rest or (1,)


def main():
    model_path, name, http_port, grpc_port, metrics_port = sys.argv[1:6]
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])
    inputs = session.get_inputs()
    outputs = session.get_outputs()

    @batch
    def infer(**feeds):
        results = session.run(None, feeds)
        # Per-sample outputs of rank 0 (a label per sample) get the axis Triton declared.
        return {
            o.name: r.reshape(r.shape[0], -1) if r.ndim == 1 else r
            for o, r in zip(outputs, results)
        }

    config = TritonConfig(
        http_address="127.0.0.1",
        http_port=int(http_port),
        grpc_address="127.0.0.1",
        grpc_port=int(grpc_port),
        metrics_port=int(metrics_port),
        log_verbose=0,
    )
    with Triton(config=config) as triton:
        triton.bind(
            model_name=name,
            infer_func=infer,
            inputs=[Tensor(name=i.name, dtype=NUMPY_OF_ONNX[i.type], shape=per_sample_shape(i.shape)) for i in inputs],
            outputs=[Tensor(name=o.name, dtype=NUMPY_OF_ONNX[o.type], shape=per_sample_shape(o.shape)) for o in outputs],
            config=ModelConfig(max_batch_size=1024, batcher=DynamicBatcher(max_queue_delay_microseconds=100)),
        )
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        triton.serve()


if __name__ == "__main__":
    main()
