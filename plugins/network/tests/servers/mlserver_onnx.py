"""An MLServer runtime that runs an ONNX model in ONNX Runtime (1 thread), for the network
plugin's tests: MLServer then speaks KServe v2 over HTTP and gRPC for the same model.onnx and
the same ONNX Runtime version that the onnxruntime plugin runs locally.

model-settings.json: "implementation": "mlserver_onnx.OnnxModel" (this folder on PYTHONPATH),
"parameters": {"uri": "/path/to/model.onnx"}, and the model's inputs and outputs.
"""

import onnxruntime as ort
from mlserver import MLModel
from mlserver.codecs import NumpyCodec
from mlserver.types import InferenceRequest, InferenceResponse


class OnnxModel(MLModel):
    async def load(self) -> bool:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            self.settings.parameters.uri, options, providers=["CPUExecutionProvider"]
        )
        self._outputs = [o.name for o in self._session.get_outputs()]
        return True

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        feeds = {i.name: NumpyCodec.decode_input(i) for i in payload.inputs}
        wanted = [o.name for o in payload.outputs] if payload.outputs else self._outputs
        results = self._session.run(wanted, feeds)
        return InferenceResponse(
            model_name=self.name,
            outputs=[NumpyCodec.encode_output(n, r) for n, r in zip(wanted, results)],
        )
