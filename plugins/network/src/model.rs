//! The served model's input and output as the run uses them: resolved from the model's
//! metadata and the config before timing, and each query's samples checked against them.

use mlperf_plugin_api::sdk::{DType, Sample};

use crate::config::{Config, Protocol};
use crate::protocol::{ModelMeta, Target, TensorMeta};
use crate::tensor::Datatype;

/// What the run sends and reads, checked against the model's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Io {
    pub target: Target,
    /// The metadata's input shape (-1 for any size); empty when the server gives none.
    pub input_dims: Vec<i64>,
    /// One sample's shape from the config; else each sample's own.
    pub sample_shape: Option<Vec<i64>>,
}

impl Io {
    /// The input and output the config names (or the model's only input and first output),
    /// with their datatypes, checked against the config's datatype and shape.
    pub(crate) fn resolve(config: &Config, meta: &ModelMeta) -> Result<Io, String> {
        let input = pick(&meta.inputs, config.input.as_deref(), "input", true)?;
        let output = pick(&meta.outputs, config.output.as_deref(), "output", false)?;
        let input_datatype = fixed_size(input, "input")?;
        let output_datatype = fixed_size(output, "output")?;
        if config.protocol == Protocol::Http && !config.binary {
            for (tensor, datatype) in [(input, input_datatype), (output, output_datatype)] {
                if !datatype.has_json_form() {
                    return Err(format!(
                        "{:?} is {}, which JSON cannot carry: set binary = true or protocol = \"grpc\"",
                        tensor.name, tensor.datatype
                    ));
                }
            }
        }
        if let Some(wanted) = &config.datatype {
            if wanted != input.datatype.as_str() {
                return Err(format!(
                    "datatype = {wanted:?}, but the model's input {:?} is {}",
                    input.name, input.datatype
                ));
            }
        }
        if let Some(shape) = &config.shape {
            if !input.shape.is_empty() && batched(&input.shape, shape).is_none() {
                return Err(format!(
                    "shape = {shape:?} does not fit the model's input {:?} of shape {:?} \
                     (with or without a leading batch dimension)",
                    input.name, input.shape
                ));
            }
        }
        Ok(Io {
            target: Target {
                model: config.model_name().to_string(),
                version: config.model_version.clone(),
                input: input.name.clone(),
                input_datatype,
                output: output.name.clone(),
                output_datatype,
            },
            input_dims: input.shape.clone(),
            sample_shape: config.shape.clone(),
        })
    }

    /// One query's samples checked: all of the input's datatype with one shape that fits the
    /// model. The answer: the per-sample shape, and whether requests carry a batch dimension.
    pub(crate) fn check_samples(&self, samples: &[Sample<'_>]) -> Result<Layout, String> {
        let Some(first) = samples.first() else {
            return Ok(Layout {
                sample_shape: Vec::new(),
                batched: true,
                sample_bytes: 0,
            });
        };
        let datatype = self.target.input_datatype;
        let shape = match &self.sample_shape {
            Some(shape) => shape.clone(),
            None if first.shape().is_empty() => {
                vec![(first.data().len() / datatype.size()) as i64]
            }
            None => first.shape().to_vec(),
        };
        let elements: i64 = shape.iter().product();
        let sample_bytes = elements as usize * datatype.size();
        let batched = if self.input_dims.is_empty() {
            true
        } else {
            batched(&self.input_dims, &shape).ok_or_else(|| {
                format!(
                    "samples of shape {shape:?} do not fit the model's input {:?} of shape {:?}",
                    self.target.input, self.input_dims
                )
            })?
        };
        for sample in samples {
            let dtype = sample.dtype();
            if !matches!(dtype, DType::Unknown) && Datatype::of(dtype) != Some(datatype) {
                return Err(format!(
                    "sample {} is {dtype:?}, but the model's input {:?} is {}",
                    sample.index(),
                    self.target.input,
                    datatype.name()
                ));
            }
            if sample.data().len() != sample_bytes {
                return Err(format!(
                    "sample {} has {} bytes; the input's {} elements of shape {shape:?} take {}",
                    sample.index(),
                    sample.data().len(),
                    datatype.name(),
                    sample_bytes
                ));
            }
        }
        Ok(Layout {
            sample_shape: shape,
            batched,
            sample_bytes,
        })
    }

    /// "input: FP32 [-1, 64]".
    pub(crate) fn describe_input(&self) -> String {
        format!(
            "{}: {} {:?}",
            self.target.input,
            self.target.input_datatype.name(),
            self.input_dims
        )
    }
}

/// How one query's samples go into requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    pub sample_shape: Vec<i64>,
    /// Requests have a leading batch dimension; else each carries one sample.
    pub batched: bool,
    pub sample_bytes: usize,
}

impl Layout {
    /// A request's shape for `count` samples.
    pub(crate) fn request_shape(&self, count: usize) -> Vec<i64> {
        let mut shape = Vec::with_capacity(self.sample_shape.len() + 1);
        if self.batched {
            shape.push(count as i64);
        }
        shape.extend_from_slice(&self.sample_shape);
        shape
    }
}

/// Some(true) when `dims` is a batch dimension then `shape`, Some(false) when it is `shape`
/// itself (a model without a batch dimension), None when neither; -1 in `dims` fits any size.
fn batched(dims: &[i64], shape: &[i64]) -> Option<bool> {
    let fits = |dims: &[i64]| {
        dims.len() == shape.len() && dims.iter().zip(shape).all(|(&d, &s)| d == -1 || d == s)
    };
    if dims.len() == shape.len() + 1 && fits(&dims[1..]) {
        Some(true)
    } else if fits(dims) {
        Some(false)
    } else {
        None
    }
}

fn pick<'a>(
    tensors: &'a [TensorMeta],
    wanted: Option<&str>,
    kind: &str,
    only: bool,
) -> Result<&'a TensorMeta, String> {
    let names = || {
        tensors
            .iter()
            .map(|t| format!("{:?}", t.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match wanted {
        Some(name) => tensors.iter().find(|t| t.name == name).ok_or_else(|| {
            format!(
                "{kind} = {name:?} is not one of the model's {kind}s ({})",
                names()
            )
        }),
        None if tensors.is_empty() => Err(format!("the model's metadata lists no {kind}s")),
        None if only && tensors.len() > 1 => Err(format!(
            "the model has {} {kind}s ({}); set `{kind}` to the one the samples feed",
            tensors.len(),
            names()
        )),
        None => Ok(&tensors[0]),
    }
}

fn fixed_size(tensor: &TensorMeta, kind: &str) -> Result<Datatype, String> {
    Datatype::parse(&tensor.datatype).ok_or_else(|| {
        format!(
            "the model's {kind} {:?} is {:?}, which this plugin does not send or read (it \
             handles fixed-size numeric and BOOL tensors)",
            tensor.name, tensor.datatype
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlperf_plugin_api::ffi::mlperf_sample;

    fn tensor(name: &str, datatype: &str, shape: &[i64]) -> TensorMeta {
        TensorMeta {
            name: name.into(),
            datatype: datatype.into(),
            shape: shape.to_vec(),
        }
    }

    fn meta() -> ModelMeta {
        ModelMeta {
            name: "digits".into(),
            platform: "onnx".into(),
            inputs: vec![tensor("input", "FP32", &[-1, 64])],
            outputs: vec![
                tensor("label", "INT64", &[-1]),
                tensor("probabilities", "FP32", &[-1, 10]),
            ],
        }
    }

    fn config(extra: &str) -> Config {
        Config::parse(&format!(
            "endpoints = [\"a:1\"]\nmodel = \"digits\"\n{extra}"
        ))
        .unwrap()
    }

    fn sample(data: &[u8], dtype: DType, shape: &[i64]) -> Sample<'static> {
        let data: &'static [u8] = Vec::leak(data.to_vec());
        let shape: &'static [i64] = Vec::leak(shape.to_vec());
        // SAFETY: data and shape are leaked, so they outlive the sample.
        unsafe {
            Sample::from_raw(mlperf_sample {
                struct_size: size_of::<mlperf_sample>(),
                id: 1,
                index: 7,
                data: data.as_ptr().cast(),
                length: data.len() as u64,
                dtype: dtype.to_raw(),
                rank: shape.len() as u32,
                shape: shape.as_ptr(),
            })
        }
    }

    #[test]
    fn defaults_are_the_only_input_and_the_first_output() {
        let io = Io::resolve(&config(""), &meta()).unwrap();
        assert_eq!(io.target.input, "input");
        assert_eq!(io.target.output, "label");
        assert_eq!(io.target.output_datatype, Datatype::I64);
        let io = Io::resolve(&config("output = \"probabilities\""), &meta()).unwrap();
        assert_eq!(io.target.output_datatype, Datatype::F32);
    }

    #[test]
    fn names_datatypes_and_shapes_are_checked_against_the_metadata() {
        let error = Io::resolve(&config("output = \"logits\""), &meta()).unwrap_err();
        assert!(error.contains("\"label\", \"probabilities\""), "{error}");
        let error = Io::resolve(&config("datatype = \"UINT8\""), &meta()).unwrap_err();
        assert!(error.contains("input \"input\" is FP32"), "{error}");
        let error = Io::resolve(&config("shape = [28, 28]"), &meta()).unwrap_err();
        assert!(error.contains("[-1, 64]"), "{error}");
        assert!(Io::resolve(&config("shape = [64]"), &meta()).is_ok());
        let mut two_inputs = meta();
        two_inputs.inputs.push(tensor("mask", "INT64", &[-1, 64]));
        let error = Io::resolve(&config(""), &two_inputs).unwrap_err();
        assert!(error.contains("set `input`"), "{error}");
        let mut halves = meta();
        halves.inputs[0].datatype = "FP16".into();
        let error = Io::resolve(&config(""), &halves).unwrap_err();
        assert!(error.contains("JSON cannot carry"), "{error}");
        assert!(Io::resolve(&config("binary = true"), &halves).is_ok());
        let mut strings = meta();
        strings.outputs[0].datatype = "BYTES".into();
        let error = Io::resolve(&config(""), &strings).unwrap_err();
        assert!(error.contains("\"BYTES\""), "{error}");
    }

    #[test]
    fn samples_are_checked_and_laid_out_in_batches() {
        let io = Io::resolve(&config(""), &meta()).unwrap();
        let good = sample(&[0; 256], DType::F32, &[64]);
        let layout = io.check_samples(&[good, good]).unwrap();
        assert!(layout.batched);
        assert_eq!(layout.request_shape(2), vec![2, 64]);

        let bytes = sample(&[0; 64], DType::U8, &[64]);
        let error = io.check_samples(&[good, bytes]).unwrap_err();
        assert!(error.contains("sample 7 is U8"), "{error}");
        let short = sample(&[0; 128], DType::F32, &[64]);
        let error = io.check_samples(&[good, short]).unwrap_err();
        assert!(error.contains("has 128 bytes"), "{error}");
        let wrong = sample(&[0; 128], DType::F32, &[32]);
        let error = io.check_samples(&[wrong]).unwrap_err();
        assert!(error.contains("do not fit"), "{error}");
    }

    #[test]
    fn a_model_without_a_batch_dimension_gets_one_sample_per_request() {
        let mut unbatched = meta();
        unbatched.inputs[0].shape = vec![8, 8];
        let io = Io::resolve(&config("shape = [8, 8]"), &unbatched).unwrap();
        let flat = sample(&[0; 256], DType::F32, &[64]);
        let layout = io.check_samples(&[flat]).unwrap();
        assert!(!layout.batched);
        assert_eq!(layout.request_shape(1), vec![8, 8]);
    }
}
