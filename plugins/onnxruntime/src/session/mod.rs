//! ONNX Runtime: the model file, its input and output, tensors, and the session that runs
//! batches.

pub mod engine;
pub mod model;
pub mod onnx_scan;
pub mod tensor;
