//! Samples and responses beyond one tensor each (ABI 1.3): the named inputs a data set's
//! samples hold, and the named outputs a run logs.

use std::ffi::CString;

use mlperf_plugin_api::ffi;
use mlperf_plugin_api::sdk::DType;
use serde::{Deserialize, Serialize};

/// How a run's samples and responses are read, past one tensor each. Plain data, so that it
/// travels to an isolated plugin's process with the run description.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DataFormat {
    /// The named inputs within every sample's data; empty when a sample is one tensor.
    pub inputs: Vec<NamedInput>,
    /// The outputs a response's logged bytes are made of, in this order; empty: the
    /// response's own data.
    pub logged_outputs: Vec<String>,
}

/// One named input: where it lies in a sample's data, and what it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedInput {
    pub name: String,
    pub dtype: i32,
    pub shape: Vec<i64>,
    pub offset: u64,
    pub length: u64,
}

impl DataFormat {
    /// The inputs `names` of samples of `dtype` and `shape` (`bytes` each) that stack one row
    /// per input along their first axis (`[dataset] input_names`): row k is input k.
    pub fn split_first_axis(
        names: &[String],
        dtype: DType,
        shape: &[i64],
        bytes: usize,
    ) -> Result<Vec<NamedInput>, String> {
        let Some((&rows, row_shape)) = shape.split_first() else {
            return Err(format!(
                "{} input names for samples that are scalars (no first axis to split)",
                names.len()
            ));
        };
        if rows != names.len() as i64 {
            return Err(format!(
                "{} input names ({}) for samples of shape {shape:?}: the first axis must hold one row per name",
                names.len(),
                names.join(", ")
            ));
        }
        if let Some(repeated) = names
            .iter()
            .enumerate()
            .find_map(|(i, name)| names[..i].contains(name).then_some(name))
        {
            return Err(format!("input name {repeated:?} is given twice"));
        }
        if let Some(bad) = names.iter().find(|n| n.is_empty() || n.contains('\0')) {
            return Err(format!("input name {bad:?} is empty or holds a NUL byte"));
        }
        let row = (bytes / names.len()) as u64;
        Ok(names
            .iter()
            .enumerate()
            .map(|(k, name)| NamedInput {
                name: name.clone(),
                dtype: dtype.to_raw(),
                shape: row_shape.to_vec(),
                offset: k as u64 * row,
                length: row,
            })
            .collect())
    }
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

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn rows_of_the_first_axis_become_named_inputs() {
        let inputs = DataFormat::split_first_axis(
            &names(&["input_ids", "attention_mask", "token_type_ids"]),
            DType::I64,
            &[3, 128],
            3 * 128 * 8,
        )
        .unwrap();
        assert_eq!(inputs.len(), 3);
        assert_eq!(inputs[1].name, "attention_mask");
        assert_eq!((inputs[1].offset, inputs[1].length), (1024, 1024));
        assert_eq!(inputs[2].shape, vec![128]);
        assert_eq!(inputs[2].dtype, DType::I64.to_raw());
        let table = InputTable::new(&inputs).unwrap();
        let (first, count) = table.handle();
        assert_eq!(count, 3);
        // SAFETY: three entries live in `table`.
        let second = unsafe { &*first.add(1) };
        // SAFETY: a NUL-terminated name owned by the table.
        let name = unsafe { std::ffi::CStr::from_ptr(second.name) };
        assert_eq!(name.to_str().unwrap(), "attention_mask");
        assert_eq!((second.rank, second.offset), (1, 1024));
    }

    #[test]
    fn names_that_do_not_match_the_rows_are_refused() {
        let error =
            DataFormat::split_first_axis(&names(&["a", "b"]), DType::F32, &[3, 4], 48).unwrap_err();
        assert!(error.contains("2 input names (a, b)"), "{error}");
        assert!(error.contains("[3, 4]"), "{error}");
        let error =
            DataFormat::split_first_axis(&names(&["a", "a"]), DType::F32, &[2, 4], 32).unwrap_err();
        assert!(error.contains("\"a\" is given twice"), "{error}");
        let error = DataFormat::split_first_axis(&names(&["a"]), DType::F32, &[], 4).unwrap_err();
        assert!(error.contains("scalars"), "{error}");
    }
}
