//! ONNX Runtime: the model file, its input and output, tensors, and the session that runs
//! batches.

pub(crate) mod engine;
pub(crate) mod model;
pub(crate) mod onnx_scan;
pub(crate) mod tensor;
