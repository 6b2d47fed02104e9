//! Named inputs within a data set's samples (ABI 1.3): each input's name, element type, shape
//! and place in a sample's bytes, alike for every sample of the data set.

use mlperf_plugin_api::sdk::DType;
use serde::{Deserialize, Serialize};

/// One named input: where it lies in a sample's data, and what it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedInput {
    pub name: String,
    pub dtype: i32,
    pub shape: Vec<i64>,
    pub offset: u64,
    pub length: u64,
}

/// The inputs `names` of samples of `dtype` and `shape` (`bytes` each) that stack one row per
/// input along their first axis (`[dataset] input_names`): row k is input k.
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
    check_names(names)?;
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

/// Input names a plugin can be handed: none empty, none holding a NUL byte, none twice.
pub(super) fn check_names<S: AsRef<str>>(names: &[S]) -> Result<(), String> {
    if let Some(bad) = names
        .iter()
        .map(AsRef::as_ref)
        .find(|n| n.is_empty() || n.contains('\0'))
    {
        return Err(format!("input name {bad:?} is empty or holds a NUL byte"));
    }
    if let Some(repeated) = names.iter().enumerate().find_map(|(i, name)| {
        names[..i]
            .iter()
            .any(|n| n.as_ref() == name.as_ref())
            .then_some(name)
    }) {
        return Err(format!("input name {:?} is given twice", repeated.as_ref()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn rows_of_the_first_axis_become_named_inputs() {
        let inputs = split_first_axis(
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
    }

    #[test]
    fn names_that_do_not_match_the_rows_are_refused() {
        let error = split_first_axis(&names(&["a", "b"]), DType::F32, &[3, 4], 48).unwrap_err();
        assert!(error.contains("2 input names (a, b)"), "{error}");
        assert!(error.contains("[3, 4]"), "{error}");
        let error = split_first_axis(&names(&["a", "a"]), DType::F32, &[2, 4], 32).unwrap_err();
        assert!(error.contains("\"a\" is given twice"), "{error}");
        let error = split_first_axis(&names(&["a"]), DType::F32, &[], 4).unwrap_err();
        assert!(error.contains("scalars"), "{error}");
    }
}
