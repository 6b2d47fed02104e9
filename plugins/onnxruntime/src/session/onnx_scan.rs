//! A minimal read of an ONNX file's protobuf: enough to tell a model from another file before
//! ONNX Runtime sees it, and to say what precision its weights and operators use.
//!
//! ModelProto.graph = 7; GraphProto.node = 1, .initializer = 5; NodeProto.op_type = 4;
//! TensorProto.data_type = 2 (onnx.proto3). Subgraphs (If/Loop bodies) are not visited.

use std::collections::BTreeSet;

/// What the scan found in the main graph.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Scan {
    /// Distinct operator types.
    pub ops: BTreeSet<String>,
    /// Distinct `TensorProto.DataType` codes of the initializers (weights).
    pub initializer_types: BTreeSet<i32>,
}

/// TensorProto.DataType codes used here.
pub(crate) const ONNX_FLOAT: i32 = 1;
pub(crate) const ONNX_UINT8: i32 = 2;
pub(crate) const ONNX_INT8: i32 = 3;
pub(crate) const ONNX_FLOAT16: i32 = 10;
pub(crate) const ONNX_DOUBLE: i32 = 11;
pub(crate) const ONNX_BFLOAT16: i32 = 16;

impl Scan {
    /// Quantized: QLinear* or *Integer operators, or 8-bit integer weights.
    pub(crate) fn is_int8(&self) -> bool {
        self.ops
            .iter()
            .any(|op| op.starts_with("QLinear") || op.ends_with("Integer"))
            || self.initializer_types.contains(&ONNX_INT8)
            || self.initializer_types.contains(&ONNX_UINT8)
    }

    /// The floating-point types of the weights, narrowest first ("fp16", "fp32", ...).
    pub(crate) fn float_weights(&self) -> Vec<&'static str> {
        [
            (ONNX_FLOAT16, "fp16"),
            (ONNX_BFLOAT16, "bf16"),
            (ONNX_FLOAT, "fp32"),
            (ONNX_DOUBLE, "fp64"),
        ]
        .into_iter()
        .filter(|(code, _)| self.initializer_types.contains(code))
        .map(|(_, name)| name)
        .collect()
    }
}

/// Scans a serialized ModelProto; an error when the bytes are not one.
pub(crate) fn scan(model: &[u8]) -> Result<Scan, String> {
    let mut result = Scan::default();
    let mut graphs = 0;
    for field in Fields::new(model) {
        let (number, value) = field?;
        if let (7, Value::Bytes(graph)) = (number, value) {
            graphs += 1;
            scan_graph(graph, &mut result)?;
        }
    }
    if graphs == 0 {
        return Err("it has no graph (not an ONNX ModelProto)".into());
    }
    Ok(result)
}

fn scan_graph(graph: &[u8], into: &mut Scan) -> Result<(), String> {
    for field in Fields::new(graph) {
        match field? {
            (1, Value::Bytes(node)) => {
                for field in Fields::new(node) {
                    if let (4, Value::Bytes(op)) = field? {
                        into.ops.insert(String::from_utf8_lossy(op).into_owned());
                    }
                }
            }
            (5, Value::Bytes(tensor)) => {
                for field in Fields::new(tensor) {
                    if let (2, Value::Varint(data_type)) = field? {
                        into.initializer_types.insert(data_type as i32);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

enum Value<'a> {
    Varint(u64),
    Fixed,
    Bytes(&'a [u8]),
}

/// The (field number, value) pairs of one protobuf message.
struct Fields<'a> {
    rest: &'a [u8],
    failed: bool,
}

impl<'a> Fields<'a> {
    fn new(message: &'a [u8]) -> Self {
        Fields {
            rest: message,
            failed: false,
        }
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self
                .rest
                .split_first()
                .ok_or("the protobuf ends inside a number")?;
            self.rest = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("a protobuf number is longer than 10 bytes".into())
    }

    fn take(&mut self, length: u64) -> Result<&'a [u8], String> {
        let length = usize::try_from(length).unwrap_or(usize::MAX);
        if length > self.rest.len() {
            return Err(format!(
                "a protobuf field of {length} bytes runs past the end ({} left)",
                self.rest.len()
            ));
        }
        let (taken, rest) = self.rest.split_at(length);
        self.rest = rest;
        Ok(taken)
    }

    fn field(&mut self) -> Result<(u64, Value<'a>), String> {
        let key = self.varint()?;
        let number = key >> 3;
        if number == 0 {
            return Err("a protobuf field numbered 0".into());
        }
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Value::Fixed
            }
            2 => {
                let length = self.varint()?;
                Value::Bytes(self.take(length)?)
            }
            5 => {
                self.take(4)?;
                Value::Fixed
            }
            wire => return Err(format!("protobuf wire type {wire} (field {number})")),
        };
        Ok((number, value))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Value<'a>), String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.rest.is_empty() {
            return None;
        }
        let field = self.field();
        self.failed = field.is_err();
        Some(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A length-delimited field.
    fn bytes(number: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![number << 3 | 2, payload.len() as u8];
        out.extend_from_slice(payload);
        out
    }

    fn model(nodes: &[&str], initializer_types: &[u8]) -> Vec<u8> {
        let mut graph = Vec::new();
        for op in nodes {
            graph.extend(bytes(1, &bytes(4, op.as_bytes())));
        }
        for &ty in initializer_types {
            graph.extend(bytes(5, &[2 << 3, ty]));
        }
        let mut model = vec![1 << 3, 8]; // ir_version = 8
        model.extend(bytes(7, &graph));
        model
    }

    #[test]
    fn finds_ops_and_weight_types() {
        let scan = scan(&model(&["MatMul", "Add"], &[1, 7])).unwrap();
        assert_eq!(scan.ops.iter().collect::<Vec<_>>(), ["Add", "MatMul"]);
        assert!(!scan.is_int8());
        assert_eq!(scan.float_weights(), ["fp32"]);
        assert!(super::scan(&model(&["QLinearConv"], &[1]))
            .unwrap()
            .is_int8());
        assert!(super::scan(&model(&["MatMulInteger"], &[]))
            .unwrap()
            .is_int8());
        assert!(super::scan(&model(&["MatMul"], &[3])).unwrap().is_int8());
        let mixed = super::scan(&model(&[], &[1, 10])).unwrap();
        assert_eq!(mixed.float_weights(), ["fp16", "fp32"]);
    }

    #[test]
    fn refuses_what_is_not_a_model() {
        assert!(scan(b"").unwrap_err().contains("no graph"));
        assert!(scan(b"hello, world").is_err());
        assert!(scan(&[0x3a, 100]).unwrap_err().contains("past the end"));
        assert!(scan(&[0x3a, 200]).unwrap_err().contains("inside a number"));
        assert!(scan(&[0xff; 12]).is_err());
    }
}
