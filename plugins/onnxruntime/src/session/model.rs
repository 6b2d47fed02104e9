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
pub(crate) struct ModelFile {
    pub path: PathBuf,
    pub sha256: String,
    pub scan: Scan,
}

impl ModelFile {
    /// Reads the file: an error naming it when it cannot be read or is not an ONNX model.
    pub(crate) fn read(path: &Path) -> Result<ModelFile, PluginError> {
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

/// What the samples feed: one model input, or several stacked along a sample's first axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InputSpec {
    /// The model's inputs in its own order, each with the sample row it takes when stacked.
    pub feeds: Vec<Feed>,
    pub ty: TensorElementType,
    pub element_size: usize,
    /// The dimensions of one sample (the model's shape without its batch axis, after the
    /// stacking axis when stacked); -1 when dynamic.
    pub sample_dims: Vec<i64>,
    /// The model's batch axis is fixed at 1: every batch holds one sample.
    pub batch_of_one: bool,
}

/// A model input and where its data comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Feed {
    pub name: String,
    /// None: the whole sample; Some(k): row k of the sample's first axis (stacked_inputs).
    pub row: Option<usize>,
}

impl InputSpec {
    /// Whether samples stack several inputs.
    pub(crate) fn is_stacked(&self) -> bool {
        self.feeds.iter().any(|feed| feed.row.is_some())
    }

    /// The names of the model inputs a sample feeds, in the order of its rows.
    pub(crate) fn names_in_row_order(&self) -> Vec<&str> {
        let mut feeds: Vec<&Feed> = self.feeds.iter().collect();
        feeds.sort_by_key(|feed| feed.row);
        feeds.iter().map(|feed| feed.name.as_str()).collect()
    }

    /// "model input 'x'", or "model inputs 'a', 'b' (stacked_inputs)" for messages.
    pub(crate) fn label(&self) -> String {
        let quoted: Vec<String> = self
            .names_in_row_order()
            .iter()
            .map(|name| format!("'{name}'"))
            .collect();
        if self.is_stacked() {
            format!("model inputs {} (stacked_inputs)", quoted.join(", "))
        } else {
            format!("model input {}", quoted[0])
        }
    }
}

/// The tensor whose rows answer the samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OutputSpec {
    pub name: String,
    pub ty: TensorElementType,
}

/// The model's input and output as the plugin uses them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Io {
    pub input: InputSpec,
    pub output: OutputSpec,
    /// The outputs each response names (config `outputs`), in order.
    pub named_outputs: Vec<OutputSpec>,
    /// The outputs a response stacks along a new last axis (config `stacked_outputs`), in
    /// order; `output` is the first of them. Empty: the response is `output`'s row.
    pub stacked_outputs: Vec<OutputSpec>,
}

impl Io {
    /// Picks and checks the inputs and output: `input` (else the model's only input) or the
    /// `stacked` ones, and `output` (else the first).
    pub(crate) fn of(
        session: &Session,
        model: &Path,
        input: Option<&str>,
        stacked: &[String],
        output: Option<&str>,
        named: &[String],
        stacked_outputs: &[String],
    ) -> Result<Io, PluginError> {
        let fail = |message: String| {
            PluginError::unsupported(format!(
                "onnxruntime plugin: model \"{}\": {message}",
                model.display()
            ))
        };
        let input = if stacked.is_empty() {
            single_input(session.inputs(), input)
        } else {
            stacked_inputs(session.inputs(), stacked)
        }
        .map_err(fail)?;

        let outputs = session.outputs();
        let stacked_outputs = stackable(outputs, stacked_outputs).map_err(fail)?;
        let output = match stacked_outputs.first() {
            Some(first) => first.clone(),
            None => returnable(outputs, output, "output").map_err(fail)?,
        };
        let named_outputs = named
            .iter()
            .map(|name| returnable(outputs, Some(name), "outputs entry"))
            .collect::<Result<_, _>>()
            .map_err(fail)?;
        Ok(Io {
            input,
            output,
            named_outputs,
            stacked_outputs,
        })
    }

    /// "y: f32", or for stacked outputs "[start, end]: f32 (stacked on a new last axis)".
    pub(crate) fn describe_output(&self) -> String {
        if self.stacked_outputs.is_empty() {
            return format!("{}: {}", self.output.name, self.output.ty);
        }
        let names: Vec<&str> = self
            .stacked_outputs
            .iter()
            .map(|o| o.name.as_str())
            .collect();
        format!(
            "[{}]: {} (stacked on a new last axis)",
            names.join(", "),
            self.output.ty
        )
    }

    /// "fp32", or "int8" for a quantized model; the weights' float types, else the input's.
    pub(crate) fn precision(&self, file: &ModelFile) -> String {
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

    /// "x: f32 [-1, 784]", or for stacked inputs "[input_ids, attention_mask]: i64 [-1, 2, 128]"
    /// (the sample batch as the host lays it out), for the log and attributes.
    pub(crate) fn describe_input(&self) -> String {
        let input = &self.input;
        let mut dims = vec![if input.batch_of_one { 1 } else { -1 }];
        dims.extend(&input.sample_dims);
        let names = input.names_in_row_order();
        if input.is_stacked() {
            format!("[{}]: {} {dims:?}", names.join(", "), input.ty)
        } else {
            format!("{}: {} {dims:?}", names[0], input.ty)
        }
    }
}

/// The output `wanted` (else the first), checked to be a tensor of one row per sample whose
/// elements the plugin can return.
fn returnable(outputs: &[Outlet], wanted: Option<&str>, what: &str) -> Result<OutputSpec, String> {
    let chosen = pick(outputs, wanted, what)?;
    let (ty, dims) = tensor_of(chosen, "output")?;
    if element_size(ty).is_none() {
        return Err(format!(
            "output '{}' has elements of type {ty}, which the plugin cannot return",
            chosen.name()
        ));
    }
    if dims.is_empty() {
        return Err(format!(
            "output '{}' is a scalar; the plugin needs one row per sample",
            chosen.name()
        ));
    }
    Ok(OutputSpec {
        name: chosen.name().to_owned(),
        ty,
    })
}

/// The outputs `wanted` stacks, each returnable and all of one element type and shape.
fn stackable(outputs: &[Outlet], wanted: &[String]) -> Result<Vec<OutputSpec>, String> {
    let mut specs: Vec<OutputSpec> = Vec::with_capacity(wanted.len());
    let mut first_dims: Option<&[i64]> = None;
    for name in wanted {
        let spec = returnable(outputs, Some(name), "stacked_outputs entry")?;
        let outlet = pick(outputs, Some(name), "stacked_outputs entry")?;
        let (_, dims) = tensor_of(outlet, "output")?;
        if let (Some(first), Some(dims0)) = (specs.first(), first_dims) {
            if spec.ty != first.ty || dims != dims0 {
                return Err(format!(
                    "stacked_outputs must share element type and shape, but '{}' is {} {dims0:?} \
                     and '{}' is {} {dims:?}",
                    first.name, first.ty, spec.name, spec.ty
                ));
            }
        } else {
            first_dims = Some(dims);
        }
        specs.push(spec);
    }
    Ok(specs)
}

/// The one input samples go into whole.
fn single_input(inputs: &[Outlet], wanted: Option<&str>) -> Result<InputSpec, String> {
    let chosen = pick(inputs, wanted, "input")?;
    if inputs.len() > 1 {
        return Err(format!(
            "it has {} inputs ({}); the plugin feeds each sample to one input, or to several \
             with stacked_inputs = [...] (a sample holding one row per input)",
            inputs.len(),
            names(inputs)
        ));
    }
    let (ty, element_size, batch_of_one, sample_dims) = input_facts(chosen)?;
    Ok(InputSpec {
        feeds: vec![Feed {
            name: chosen.name().to_owned(),
            row: None,
        }],
        ty,
        element_size,
        sample_dims: sample_dims.to_vec(),
        batch_of_one,
    })
}

/// Every model input, each fed by one row of a sample's first axis, in `stacked`'s order:
/// they must share element type and shape.
fn stacked_inputs(inputs: &[Outlet], stacked: &[String]) -> Result<InputSpec, String> {
    for name in stacked {
        pick(inputs, Some(name), "stacked_inputs entry")?;
    }
    let missing: Vec<String> = inputs
        .iter()
        .filter(|input| !stacked.iter().any(|name| name == input.name()))
        .map(|input| format!("'{}'", input.name()))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "stacked_inputs leaves out its input(s) {}: list every input ({})",
            missing.join(", "),
            names(inputs)
        ));
    }
    let first = pick(inputs, Some(&stacked[0]), "input")?;
    let (ty, element_size, batch_of_one, row_dims) = input_facts(first)?;
    let mut feeds = Vec::with_capacity(inputs.len());
    for input in inputs {
        let facts = input_facts(input)?;
        if (facts.0, facts.2, facts.3) != (ty, batch_of_one, row_dims) {
            return Err(format!(
                "stacked_inputs must share element type and shape, but '{}' is {} {:?} and \
                 '{}' is {ty} {:?}",
                input.name(),
                facts.0,
                tensor_of(input, "input")?.1,
                first.name(),
                tensor_of(first, "input")?.1,
            ));
        }
        let row = stacked.iter().position(|name| name == input.name());
        feeds.push(Feed {
            name: input.name().to_owned(),
            row,
        });
    }
    let mut sample_dims = vec![stacked.len() as i64];
    sample_dims.extend(row_dims);
    Ok(InputSpec {
        feeds,
        ty,
        element_size,
        sample_dims,
        batch_of_one,
    })
}

/// An input's element type and size, whether its batch axis is fixed at 1, and its dimensions
/// after the batch axis.
fn input_facts(input: &Outlet) -> Result<(TensorElementType, usize, bool, &[i64]), String> {
    let (ty, dims) = tensor_of(input, "input")?;
    let size = element_size(ty).ok_or_else(|| {
        format!(
            "input '{}' takes elements of type {ty}, which the plugin cannot feed",
            input.name()
        )
    })?;
    let Some((&batch, sample_dims)) = dims.split_first() else {
        return Err(format!(
            "input '{}' is a scalar; it needs a batch axis first",
            input.name()
        ));
    };
    if batch > 1 {
        return Err(format!(
            "input '{}' has shape {dims:?}: its batch axis is fixed at {batch}; the plugin needs \
             a dynamic batch axis (or 1)",
            input.name()
        ));
    }
    Ok((ty, size, batch == 1, sample_dims))
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
