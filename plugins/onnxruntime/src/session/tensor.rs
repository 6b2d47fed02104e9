//! Element types between the host (`DType`) and ONNX Runtime (`TensorElementType`), input
//! tensors over borrowed bytes, and output tensors as bytes.

use std::marker::PhantomData;
use std::ptr::NonNull;

use mlperf_plugin_api::sdk::DType;
use ort::memory::{Allocator, MemoryInfo};
use ort::value::{DynTensorValueType, DynValue, TensorElementType, ValueType};
use ort::AsPointer;

/// The ONNX element type of host samples of `dtype`; None for those ONNX has no match for.
pub(crate) fn element_type(dtype: DType) -> Option<TensorElementType> {
    use TensorElementType as T;
    Some(match dtype {
        DType::U8 => T::Uint8,
        DType::I8 => T::Int8,
        DType::U16 => T::Uint16,
        DType::I16 => T::Int16,
        DType::U32 => T::Uint32,
        DType::I32 => T::Int32,
        DType::U64 => T::Uint64,
        DType::I64 => T::Int64,
        DType::F16 => T::Float16,
        DType::BF16 => T::Bfloat16,
        DType::F32 => T::Float32,
        DType::F64 => T::Float64,
        DType::Bool => T::Bool,
        DType::Unknown | DType::Bytes | DType::Other(_) => return None,
    })
}

/// Bytes per element of the fixed-width types the plugin moves (None for strings, sub-byte
/// and complex types).
pub(crate) fn element_size(ty: TensorElementType) -> Option<usize> {
    use TensorElementType as T;
    match ty {
        T::Uint8 | T::Int8 | T::Bool => Some(1),
        T::Uint16 | T::Int16 | T::Float16 | T::Bfloat16 => Some(2),
        T::Uint32 | T::Int32 | T::Float32 => Some(4),
        T::Uint64 | T::Int64 | T::Float64 => Some(8),
        _ => None,
    }
}

/// The usual name of a numeric precision: "fp32", "fp16", "int8", "int64", ...
pub(crate) fn precision_name(ty: TensorElementType) -> String {
    use TensorElementType as T;
    match ty {
        T::Float32 => "fp32".into(),
        T::Float16 => "fp16".into(),
        T::Bfloat16 => "bf16".into(),
        T::Float64 => "fp64".into(),
        T::Int8 => "int8".into(),
        T::Uint8 => "uint8".into(),
        T::Int16 => "int16".into(),
        T::Uint16 => "uint16".into(),
        T::Int32 => "int32".into(),
        T::Uint32 => "uint32".into(),
        T::Int64 => "int64".into(),
        T::Uint64 => "uint64".into(),
        other => other.to_string(),
    }
}

/// A CPU tensor over borrowed bytes: ONNX Runtime reads them in place, no copy.
pub(crate) struct InputTensor<'a> {
    value: DynValue,
    _bytes: PhantomData<&'a [u8]>,
}

impl<'a> InputTensor<'a> {
    /// `bytes` hold `shape`'s elements of `ty`, aligned for it (the caller checks both).
    pub(crate) fn borrow(
        bytes: &'a [u8],
        shape: &[i64],
        ty: TensorElementType,
        memory: &MemoryInfo<'_>,
        allocator: &Allocator,
    ) -> ort::Result<InputTensor<'a>> {
        let api = ort::api();
        let mut value = std::ptr::null_mut();
        // SAFETY: ONNX Runtime only reads `bytes` (inputs are const) and the value holding the
        // pointer lives no longer than 'a; shape and length are as the C API takes them.
        unsafe {
            ort::Error::result_from_status((api.CreateTensorWithDataAsOrtValue)(
                memory.ptr(),
                bytes.as_ptr().cast_mut().cast(),
                bytes.len(),
                shape.as_ptr(),
                shape.len(),
                ty.into(),
                &mut value,
            ))?;
        }
        let value = NonNull::new(value).ok_or_else(|| ort::Error::new("CreateTensor gave NULL"))?;
        Ok(InputTensor {
            // SAFETY: a fresh tensor value we own; it borrows memory no allocator owns, so the
            // default CPU allocator is named only to satisfy from_ptr (ReleaseValue frees no
            // data of a tensor created over user memory).
            value: unsafe { DynValue::from_ptr(value, Some(allocator)) },
            _bytes: PhantomData,
        })
    }

    pub(crate) fn value(&self) -> &DynValue {
        &self.value
    }
}

/// An output tensor's bytes (in CPU memory) and its shape; an error naming what is wrong.
pub(crate) fn output_bytes<'v>(
    value: &'v DynValue,
    name: &str,
) -> Result<(&'v [i64], &'v [u8]), String> {
    let ValueType::Tensor { ty, shape, .. } = value.dtype() else {
        return Err(format!(
            "output '{name}' is a {}, not a tensor",
            value.dtype()
        ));
    };
    let size = element_size(*ty).ok_or_else(|| {
        format!("output '{name}' has elements of type {ty}, which the plugin cannot return")
    })?;
    let tensor = value
        .view()
        .downcast::<DynTensorValueType>()
        .map_err(|e| format!("output '{name}': {e}"))?;
    if !tensor.memory_info().is_cpu_accessible() {
        return Err(format!("output '{name}' is not in CPU memory"));
    }
    let count: i64 = shape.iter().product();
    let length =
        usize::try_from(count).map_err(|_| format!("output '{name}' has shape {shape:?}"))? * size;
    let bytes = if length == 0 {
        &[][..]
    } else {
        // SAFETY: a CPU tensor of `count` elements of `size` bytes, alive as long as `value`.
        unsafe { std::slice::from_raw_parts(tensor.data_ptr().cast::<u8>(), length) }
    };
    Ok((shape, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_type_with_an_onnx_match_has_its_size() {
        for code in 0..20 {
            let dtype = DType::from_raw(code);
            if let Some(ty) = element_type(dtype) {
                assert_eq!(element_size(ty), Some(dtype.size()), "{dtype:?}");
            }
        }
        assert_eq!(element_type(DType::Bytes), None);
        assert_eq!(precision_name(TensorElementType::Float32), "fp32");
        assert_eq!(precision_name(TensorElementType::Int4), "i4");
    }
}
