//! Samples and responses beyond one tensor each (ABI 1.3): the named inputs a data set's
//! samples hold, and the named outputs a run logs.

use std::ffi::CString;

use mlperf_plugin_api::ffi;
use serde::{Deserialize, Serialize};

use crate::samples::NamedInput;

/// How a run's samples and responses are read, past one tensor each. Plain data, so that it
/// travels to an isolated plugin's process with the run description.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DataFormat {
    /// The named inputs within every sample's data; empty when a sample is one tensor.
    pub inputs: Vec<NamedInput>,
    /// The outputs a response's logged bytes are made of, in this order; empty: the
    /// response's own data.
    pub logged_outputs: Vec<String>,
    /// The benchmark's post-processing of each response, done by the host.
    #[serde(default)]
    pub postprocess: Option<crate::benchmark::postprocess::ResponseTransform>,
}

/// The `mlperf_input`s the run description lists, and the names and shapes they point at.
pub(crate) struct InputTable {
    inputs: Box<[ffi::mlperf_input]>,
    _names: Vec<CString>,
    _shapes: Vec<Box<[i64]>>,
}

// SAFETY: the table is immutable after construction; its pointers name memory it owns.
unsafe impl Send for InputTable {}
// SAFETY: as for Send.
unsafe impl Sync for InputTable {}

impl InputTable {
    /// None when the samples are one tensor each.
    pub(crate) fn new(inputs: &[NamedInput]) -> Option<InputTable> {
        if inputs.is_empty() {
            return None;
        }
        let names: Vec<CString> = inputs
            .iter()
            .map(|input| CString::new(input.name.as_str()).unwrap_or_default())
            .collect();
        let shapes: Vec<Box<[i64]>> = inputs.iter().map(|i| i.shape.clone().into()).collect();
        let raw = inputs
            .iter()
            .zip(&names)
            .zip(&shapes)
            .map(|((input, name), shape)| ffi::mlperf_input {
                struct_size: std::mem::size_of::<ffi::mlperf_input>(),
                name: name.as_ptr(),
                offset: input.offset,
                length: input.length,
                dtype: input.dtype,
                rank: shape.len() as u32,
                shape: if shape.is_empty() {
                    std::ptr::null()
                } else {
                    shape.as_ptr()
                },
            })
            .collect();
        Some(InputTable {
            inputs: raw,
            _names: names,
            _shapes: shapes,
        })
    }

    /// What the run description carries: the table and its length.
    pub(crate) fn handle(&self) -> (*const ffi::mlperf_input, u64) {
        (self.inputs.as_ptr(), self.inputs.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::split_first_axis;
    use mlperf_plugin_api::sdk::DType;

    #[test]
    fn the_table_points_at_each_input_by_name() {
        let names: Vec<String> = ["input_ids", "attention_mask"].map(String::from).to_vec();
        let inputs = split_first_axis(&names, DType::I64, &[2, 128], 2 * 128 * 8).unwrap();
        let table = InputTable::new(&inputs).unwrap();
        let (first, count) = table.handle();
        assert_eq!(count, 2);
        // SAFETY: two entries live in `table`.
        let second = unsafe { &*first.add(1) };
        // SAFETY: a NUL-terminated name owned by the table.
        let name = unsafe { std::ffi::CStr::from_ptr(second.name) };
        assert_eq!(name.to_str().unwrap(), "attention_mask");
        assert_eq!((second.rank, second.offset), (1, 1024));
    }
}
