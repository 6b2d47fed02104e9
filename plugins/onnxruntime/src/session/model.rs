//! The model: its file (sha256, precision) and the input and output the plugin uses, read from
//! a session and checked once at create.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use mlperf_plugin_api::sdk::PluginError;
use ort::session::Session;
use ort::value::{Outlet, TensorElementType, ValueType};
use sha2::{Digest, Sha256};

use super::onnx_scan::{self, Scan};
use super::tensor::{element_size, precision_name};

/// Facts from the model file itself.
#[derive(Debug, Clone)]
pub struct ModelFile {
    pub path: PathBuf,
    pub sha256: String,
    pub scan: Scan,
}

impl ModelFile {
    /// Reads the file: an error naming it when it cannot be read or is not an ONNX model.
    pub fn read(path: &Path) -> Result<ModelFile, PluginError> {
        let bytes = std::fs::read(path).map_err(|e| {
            PluginError::invalid_config(format!(
                "onnxruntime plugin: model = \"{}\": {e}",
                path.display()
            ))
        })?;
        let scan = onnx_scan::scan(&bytes).map_err(|e| {
            PluginError::invalid_config(format!(
                "onnxruntime plugin: model = \"{}\" is not an ONNX model: {e}",
                path.display()
            ))
        })?;
        let mut sha256 = String::with_capacity(64);
        for byte in Sha256::digest(&bytes) {
            let _ = write!(sha256, "{byte:02x}");
        }
        Ok(ModelFile {
            path: path.to_path_buf(),
            sha256,
            scan,
        })
    }
}

/// The tensor the samples go into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputSpec {
    pub name: String,
    pub ty: TensorElementType,
    pub element_size: usize,
    /// The dimensions of one sample (the model's shape without its batch axis); -1 when
    /// dynamic.
    pub sample_dims: Vec<i64>,
    /// The model's batch axis is fixed at 1: every batch holds one sample.
    pub batch_of_one: bool,
}

/// The tensor whose rows answer the samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSpec {
    pub name: String,
    pub ty: TensorElementType,
}

/// The model's input and output as the plugin uses them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Io {
    pub input: InputSpec,
    pub output: OutputSpec,
}

impl Io {
    /// Picks and checks the input and output (`input`/`output` config keys, else the first).
    pub fn of(
        session: &Session,
        model: &Path,
        input: Option<&str>,
        output: Option<&str>,
    ) -> Result<Io, PluginError> {
        let fail = |message: String| {
            PluginError::unsupported(format!(
                "onnxruntime plugin: model \"{}\": {message}",
                model.display()
            ))
        };
        let inputs = session.inputs();
        let chosen = pick(inputs, input, "input").map_err(fail)?;
        if inputs.len() > 1 {
            return Err(fail(format!(
                "it has {} inputs ({}); the plugin feeds each sample to one input",
                inputs.len(),
                names(inputs)
            )));
        }
        let (ty, dims) = tensor_of(chosen, "input").map_err(fail)?;
        let size = element_size(ty).ok_or_else(|| {
            fail(format!(
                "input '{}' takes elements of type {ty}, which the plugin cannot feed",
                chosen.name()
            ))
        })?;
        let Some((&batch, sample_dims)) = dims.split_first() else {
            return Err(fail(format!(
                "input '{}' is a scalar; it needs a batch axis first",
                chosen.name()
            )));
        };
        if batch > 1 {
            return Err(fail(format!(
                "input '{}' has shape {dims:?}: its batch axis is fixed at {batch}; the plugin \
                 needs a dynamic batch axis (or 1)",
                chosen.name()
            )));
        }
        let input = InputSpec {
            name: chosen.name().to_owned(),
            ty,
            element_size: size,
            sample_dims: sample_dims.to_vec(),
            batch_of_one: batch == 1,
        };

        let outputs = session.outputs();
        let chosen = pick(outputs, output, "output").map_err(fail)?;
        let (ty, dims) = tensor_of(chosen, "output").map_err(fail)?;
        if element_size(ty).is_none() {
            return Err(fail(format!(
                "output '{}' has elements of type {ty}, which the plugin cannot return",
                chosen.name()
            )));
        }
        if dims.is_empty() {
            return Err(fail(format!(
                "output '{}' is a scalar; the plugin needs one row per sample",
                chosen.name()
            )));
        }
        let output = OutputSpec {
            name: chosen.name().to_owned(),
            ty,
        };
        Ok(Io { input, output })
    }

    /// "fp32", or "int8" for a quantized model; the weights' float types, else the input's.
    pub fn precision(&self, file: &ModelFile) -> String {
        if file.scan.is_int8() {
            return "int8".into();
        }
        let weights = file.scan.float_weights();
        if weights.is_empty() {
            precision_name(self.input.ty)
        } else {
            weights.join("+")
        }
    }

    /// "x: f32 [-1, 784]" for the log and attributes.
    pub fn describe_input(&self) -> String {
        let mut dims = vec![-1];
        if self.input.batch_of_one {
            dims[0] = 1;
        }
        dims.extend(&self.input.sample_dims);
        format!("{}: {} {dims:?}", self.input.name, self.input.ty)
    }
}

fn names(outlets: &[Outlet]) -> String {
    outlets
        .iter()
        .map(|o| format!("'{}'", o.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn pick<'a>(outlets: &'a [Outlet], wanted: Option<&str>, what: &str) -> Result<&'a Outlet, String> {
    match wanted {
        None => outlets.first().ok_or_else(|| format!("it has no {what}s")),
        Some(name) => outlets.iter().find(|o| o.name() == name).ok_or_else(|| {
            format!(
                "{what} = \"{name}\" is not one of its {what}s ({})",
                names(outlets)
            )
        }),
    }
}

fn tensor_of<'a>(outlet: &'a Outlet, what: &str) -> Result<(TensorElementType, &'a [i64]), String> {
    match outlet.dtype() {
        ValueType::Tensor { ty, shape, .. } => Ok((*ty, shape)),
        other => Err(format!(
            "{what} '{}' is a {other}, not a tensor",
            outlet.name()
        )),
    }
}
