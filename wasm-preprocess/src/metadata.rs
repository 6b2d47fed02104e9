//! The metadata a module declares: `key=value` lines naming it and its input and output
//! tensors (see the README's guest ABI).

use std::fmt;
use std::path::PathBuf;

/// Element types a module may declare, by their NumPy names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementType {
    Bool,
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Int64,
    UInt64,
    Float16,
    BFloat16,
    Float32,
    Float64,
}

impl ElementType {
    const ALL: [(ElementType, &'static str); 13] = [
        (ElementType::Bool, "bool"),
        (ElementType::Int8, "int8"),
        (ElementType::UInt8, "uint8"),
        (ElementType::Int16, "int16"),
        (ElementType::UInt16, "uint16"),
        (ElementType::Int32, "int32"),
        (ElementType::UInt32, "uint32"),
        (ElementType::Int64, "int64"),
        (ElementType::UInt64, "uint64"),
        (ElementType::Float16, "float16"),
        (ElementType::BFloat16, "bfloat16"),
        (ElementType::Float32, "float32"),
        (ElementType::Float64, "float64"),
    ];

    pub fn from_name(name: &str) -> Option<ElementType> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(t, _)| *t)
    }

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(t, _)| *t == self)
            .map_or("?", |(_, n)| n)
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        use ElementType::*;
        match self {
            Bool | Int8 | UInt8 => 1,
            Int16 | UInt16 | Float16 | BFloat16 => 2,
            Int32 | UInt32 | Float32 => 4,
            Int64 | UInt64 | Float64 => 8,
        }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One declared dimension: a fixed size or any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    Fixed(u64),
    Any,
}

/// A declared shape, such as `*,*,3`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeSpec(pub Vec<Dim>);

impl ShapeSpec {
    fn parse(text: &str) -> Result<ShapeSpec, String> {
        let dims = text
            .split(',')
            .map(|dim| match dim.trim() {
                "*" => Ok(Dim::Any),
                number => number
                    .parse()
                    .map(Dim::Fixed)
                    .map_err(|_| format!("`{number}` is neither a dimension nor `*`")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ShapeSpec(dims))
    }

    pub fn accepts(&self, shape: &[u64]) -> bool {
        shape.len() == self.0.len()
            && self.0.iter().zip(shape).all(|(spec, &dim)| match spec {
                Dim::Any => true,
                Dim::Fixed(fixed) => *fixed == dim,
            })
    }
}

impl fmt::Display for ShapeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (position, dim) in self.0.iter().enumerate() {
            if position > 0 {
                f.write_str(",")?;
            }
            match dim {
                Dim::Fixed(size) => write!(f, "{size}")?,
                Dim::Any => f.write_str("*")?,
            }
        }
        Ok(())
    }
}

/// A declared tensor: element type and shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorSpec {
    pub dtype: ElementType,
    pub shape: ShapeSpec,
}

impl fmt::Display for TensorSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}]", self.dtype, self.shape)
    }
}

/// What a module says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    pub name: String,
    pub version: String,
    pub description: String,
    pub input: TensorSpec,
    pub output: TensorSpec,
}

impl Metadata {
    pub fn parse(text: &str) -> Result<Metadata, String> {
        let mut fields = std::collections::HashMap::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| format!("metadata line {} has no `=`: `{line}`", number + 1))?;
            fields.insert(key.trim(), value.trim());
        }
        let required = |key: &str| {
            fields
                .get(key)
                .map(|value| value.to_string())
                .ok_or_else(|| format!("metadata lacks `{key}`"))
        };
        let dtype = |key: &str| {
            let name = required(key)?;
            ElementType::from_name(&name)
                .ok_or_else(|| format!("metadata `{key}`: unknown element type `{name}`"))
        };
        let shape = |key: &str| {
            ShapeSpec::parse(&required(key)?).map_err(|e| format!("metadata `{key}`: {e}"))
        };
        Ok(Metadata {
            name: required("name")?,
            version: required("version")?,
            description: fields.get("description").unwrap_or(&"").to_string(),
            input: TensorSpec {
                dtype: dtype("input_dtype")?,
                shape: shape("input_shape")?,
            },
            output: TensorSpec {
                dtype: dtype("output_dtype")?,
                shape: shape("output_shape")?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let metadata = Metadata::parse(
            "name=fmnist\nversion=1.0.0\n\ninput_dtype=uint8\ninput_shape=28,28\n\
             output_dtype=float32\noutput_shape=784\n",
        )
        .unwrap();
        assert_eq!(metadata.name, "fmnist");
        assert_eq!(metadata.input.dtype, ElementType::UInt8);
        assert!(metadata.input.shape.accepts(&[28, 28]));
        assert!(!metadata.input.shape.accepts(&[28, 29]));
        assert!(!metadata.input.shape.accepts(&[784]));
        assert_eq!(metadata.output.to_string(), "float32 [784]");
    }

    #[test]
    fn wildcards_accept_any_size_of_their_rank() {
        let spec = ShapeSpec::parse("*,*,3").unwrap();
        assert!(spec.accepts(&[427, 640, 3]));
        assert!(!spec.accepts(&[427, 640, 4]));
        assert!(!spec.accepts(&[640, 3]));
        assert_eq!(spec.to_string(), "*,*,3");
    }

    #[test]
    fn missing_and_bad_fields_are_named() {
        let error = Metadata::parse("name=x\nversion=1").unwrap_err();
        assert_eq!(error, "metadata lacks `input_dtype`");
        let error = Metadata::parse(
            "name=x\nversion=1\ninput_dtype=u8\ninput_shape=1\noutput_dtype=uint8\noutput_shape=1",
        )
        .unwrap_err();
        assert!(error.contains("unknown element type `u8`"), "{error}");
        let error = Metadata::parse(
            "name=x\nversion=1\ninput_dtype=uint8\ninput_shape=a\noutput_dtype=uint8\noutput_shape=1",
        )
        .unwrap_err();
        assert!(error.contains("`a` is neither"), "{error}");
        assert!(Metadata::parse("garbage").unwrap_err().contains("no `=`"));
    }
}

/// Who a module is: what the logs record so an auditor can verify what ran.
#[derive(Debug, Clone)]
pub struct ModuleIdentity {
    pub path: PathBuf,
    pub sha256: String,
    pub metadata: Metadata,
}

impl ModuleIdentity {
    /// The name used in messages: the module's own name and its file.
    pub fn label(&self) -> String {
        format!("{} ({})", self.metadata.name, self.path.display())
    }
}
