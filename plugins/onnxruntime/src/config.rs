//! The plugin's settings, parsed from the TOML text the host hands to `create`. Every error
//! names the key and the value at fault.

use std::fmt;
use std::path::PathBuf;

use mlperf_plugin_api::sdk::{config_error_text, PluginError};
use serde::Deserialize;

/// Upper bounds that turn a typo into an error rather than thousands of threads or sessions.
const MAX_WORKERS: usize = 256;
const MAX_THREADS: usize = 1024;
const MAX_BATCH: usize = 1 << 20;
const MAX_WAIT_US: u64 = 10_000_000;
const MAX_DEVICE_ID: u32 = 1023;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The .onnx file (required).
    pub model: Option<PathBuf>,
    /// libonnxruntime.so; else the ORT_DYLIB_PATH environment variable, else the one in
    /// ./.venv (scripts/setup-onnxruntime.sh).
    pub library: Option<PathBuf>,
    pub provider: Provider,
    /// The GPU for cuda and tensorrt.
    pub device_id: u32,
    /// OpenVINO's device_type ("CPU", "GPU", "GPU.1", "NPU", ...); its default when unset.
    pub device_type: Option<String>,
    /// Threads within one operator, per session.
    pub intra_op_threads: usize,
    /// Threads across operators, per session.
    pub inter_op_threads: usize,
    /// 0: run each query on the host's thread inside issue_query; N: N threads, each with its
    /// own session, taking batches from one shared queue.
    pub workers: usize,
    /// The most samples run together.
    pub max_batch: usize,
    /// With workers: how long a worker holding fewer than max_batch samples waits for more,
    /// counted from the oldest sample's arrival.
    pub max_wait_us: u64,
    /// The model input fed with the samples (default: the model's only input).
    pub input: Option<String>,
    /// For a model of several inputs of one element type and shape: each sample stacks one
    /// row per input along its first axis, in this order (e.g. a BERT sample [3, 128] =
    /// input_ids, attention_mask, token_type_ids); every model input is listed.
    pub stacked_inputs: Vec<String>,
    /// The model output whose per-sample row answers each sample (default: the first).
    pub output: Option<String>,
    /// Model outputs each response also names (ABI 1.3), each sample's row of every one, for
    /// a run that logs outputs by name (`--logged-outputs`); `output` stays the response's data.
    pub outputs: Vec<String>,
    /// For a model whose answer is several outputs of one element type and shape: each
    /// response is them stacked along a new last axis, in this order (numpy's
    /// `np.stack(outputs, -1)`, as MLPerf's bert SUT logs `output_start_logits` and
    /// `output_end_logits`: float32 [384, 2]). Replaces `output`.
    pub stacked_outputs: Vec<String>,
    /// Devices the plugin lists (ABI 1.4), for `--devices` to make an instance of each: GPUs
    /// 0..N for cuda and tensorrt (each instance's device_id is its device), N CPU instances
    /// for cpu (each with its own sessions and threads). 0: none listed.
    pub devices: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            model: None,
            library: None,
            provider: Provider::Cpu,
            device_id: 0,
            device_type: None,
            intra_op_threads: 1,
            inter_op_threads: 1,
            workers: 0,
            max_batch: 64,
            max_wait_us: 0,
            input: None,
            stacked_inputs: Vec::new(),
            output: None,
            outputs: Vec::new(),
            stacked_outputs: Vec::new(),
            devices: 0,
        }
    }
}

/// The ONNX Runtime execution provider the sessions run on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    #[default]
    Cpu,
    Cuda,
    Tensorrt,
    Openvino,
}

impl Provider {
    /// The name ONNX Runtime lists among its available providers.
    pub fn ort_name(self) -> &'static str {
        match self {
            Provider::Cpu => "CPUExecutionProvider",
            Provider::Cuda => "CUDAExecutionProvider",
            Provider::Tensorrt => "TensorrtExecutionProvider",
            Provider::Openvino => "OpenVINOExecutionProvider",
        }
    }

    /// How people write it: "CUDA", "TensorRT", ...
    pub fn display_name(self) -> &'static str {
        match self {
            Provider::Cpu => "CPU",
            Provider::Cuda => "CUDA",
            Provider::Tensorrt => "TensorRT",
            Provider::Openvino => "OpenVINO",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Provider::Cpu => "cpu",
            Provider::Cuda => "cuda",
            Provider::Tensorrt => "tensorrt",
            Provider::Openvino => "openvino",
        })
    }
}

fn invalid(message: impl fmt::Display) -> PluginError {
    PluginError::invalid_config(format!("onnxruntime plugin config: {message}"))
}

/// toml's message on one line, with the line it points at.
fn toml_message(text: &str, error: &toml::de::Error) -> String {
    config_error_text(text, error.span().map(|s| s.start), error.message())
}

impl Config {
    pub fn parse(text: &str) -> Result<Config, PluginError> {
        let config: Config = toml::from_str(text).map_err(|e| invalid(toml_message(text, &e)))?;
        config.check()?;
        Ok(config)
    }

    /// The model path; `check` made sure there is one.
    pub fn model_path(&self) -> &std::path::Path {
        self.model.as_deref().expect("checked by Config::check")
    }

    fn check(&self) -> Result<(), PluginError> {
        if self.model.is_none() {
            return Err(invalid(
                "`model` is missing: set it to the .onnx file to run, e.g. model = \"resnet50.onnx\"",
            ));
        }
        let limited = [
            ("workers", self.workers, 0, MAX_WORKERS),
            ("intra_op_threads", self.intra_op_threads, 1, MAX_THREADS),
            ("inter_op_threads", self.inter_op_threads, 1, MAX_THREADS),
            ("max_batch", self.max_batch, 1, MAX_BATCH),
        ];
        for (key, value, least, most) in limited {
            if value < least || value > most {
                return Err(invalid(format!(
                    "{key} = {value} is out of range ({least} to {most})"
                )));
            }
        }
        if self.device_id > MAX_DEVICE_ID {
            return Err(invalid(format!(
                "device_id = {} is out of range (0 to {MAX_DEVICE_ID})",
                self.device_id
            )));
        }
        if self.max_wait_us > MAX_WAIT_US {
            return Err(invalid(format!(
                "max_wait_us = {} is out of range (0 to {MAX_WAIT_US})",
                self.max_wait_us
            )));
        }
        if self.workers == 0 && self.max_wait_us > 0 {
            return Err(invalid(format!(
                "max_wait_us = {} needs workers >= 1 (with workers = 0 each query runs at once on \
                 the host's thread, never waiting for more samples)",
                self.max_wait_us
            )));
        }
        if self.devices > MAX_DEVICE_ID + 1 {
            return Err(invalid(format!(
                "devices = {} is more than {}",
                self.devices,
                MAX_DEVICE_ID + 1
            )));
        }
        if self.devices > 0 && self.provider == Provider::Openvino {
            return Err(invalid(
                "devices applies to provider \"cpu\", \"cuda\" and \"tensorrt\"; OpenVINO picks its device by device_type",
            ));
        }
        if self.device_id != 0 && !matches!(self.provider, Provider::Cuda | Provider::Tensorrt) {
            return Err(invalid(format!(
                "device_id = {} applies to provider \"cuda\" and \"tensorrt\", not \"{}\"{}",
                self.device_id,
                self.provider,
                if self.provider == Provider::Openvino {
                    " (for OpenVINO set device_type, e.g. \"GPU.1\")"
                } else {
                    ""
                }
            )));
        }
        if let Some(device_type) = &self.device_type {
            if self.provider != Provider::Openvino {
                return Err(invalid(format!(
                    "device_type = {device_type:?} applies to provider \"openvino\", not \"{}\"",
                    self.provider
                )));
            }
            if device_type.is_empty() || device_type.contains('\0') {
                return Err(invalid(format!(
                    "device_type = {device_type:?} is not a device"
                )));
            }
        }
        for (key, value) in [("input", &self.input), ("output", &self.output)] {
            if value.as_deref().is_some_and(str::is_empty) {
                return Err(invalid(format!(
                    "{key} = \"\" names no tensor (leave it out for the model's first)"
                )));
            }
        }
        for (i, name) in self.outputs.iter().enumerate() {
            if name.is_empty() || name.contains('\0') || self.outputs[..i].contains(name) {
                return Err(invalid(format!(
                    "outputs = {:?}: entry {i} ({name:?}) is empty, holds a NUL or repeats an earlier one",
                    self.outputs
                )));
            }
        }
        self.check_stacked_inputs()?;
        self.check_stacked_outputs()
    }

    fn check_stacked_outputs(&self) -> Result<(), PluginError> {
        if self.stacked_outputs.is_empty() {
            return Ok(());
        }
        if let Some(output) = &self.output {
            return Err(invalid(format!(
                "output = {output:?} and stacked_outputs = {:?} both name what a response \
                 holds: keep one",
                self.stacked_outputs
            )));
        }
        if self.stacked_outputs.len() < 2 {
            return Err(invalid(format!(
                "stacked_outputs = {:?}: name two outputs or more (for one, write output = {:?})",
                self.stacked_outputs,
                self.stacked_outputs
                    .first()
                    .map(String::as_str)
                    .unwrap_or("")
            )));
        }
        for (i, name) in self.stacked_outputs.iter().enumerate() {
            if name.is_empty() || name.contains('\0') || self.stacked_outputs[..i].contains(name) {
                return Err(invalid(format!(
                    "stacked_outputs = {:?}: entry {i} ({name:?}) is empty, holds a NUL or repeats an earlier one",
                    self.stacked_outputs
                )));
            }
        }
        Ok(())
    }

    fn check_stacked_inputs(&self) -> Result<(), PluginError> {
        if self.stacked_inputs.is_empty() {
            return Ok(());
        }
        if let Some(input) = &self.input {
            return Err(invalid(format!(
                "input = {input:?} and stacked_inputs = {:?} both name what the samples feed: \
                 keep one",
                self.stacked_inputs
            )));
        }
        for (i, name) in self.stacked_inputs.iter().enumerate() {
            if name.is_empty() {
                return Err(invalid(format!(
                    "stacked_inputs = {:?}: entry {i} is \"\", which names no input",
                    self.stacked_inputs
                )));
            }
            if self.stacked_inputs[..i].contains(name) {
                return Err(invalid(format!(
                    "stacked_inputs = {:?} names {name:?} twice",
                    self.stacked_inputs
                )));
            }
        }
        Ok(())
    }

    /// The devices `devices` lists: the ordinal, and whether it is a GPU.
    pub fn listed_devices(&self) -> Vec<(u32, bool)> {
        let gpu = matches!(self.provider, Provider::Cuda | Provider::Tensorrt);
        (0..self.devices).map(|ordinal| (ordinal, gpu)).collect()
    }

    /// "cpu", "cuda:0", "tensorrt:1", "openvino", "openvino:GPU.0".
    pub fn device(&self) -> String {
        match (self.provider, &self.device_type) {
            (Provider::Cpu, _) | (Provider::Openvino, None) => self.provider.to_string(),
            (Provider::Openvino, Some(device_type)) => format!("openvino:{device_type}"),
            (Provider::Cuda | Provider::Tensorrt, _) => {
                format!("{}:{}", self.provider, self.device_id)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlperf_plugin_api::ffi::ERROR_INVALID_CONFIG;

    fn error(text: &str) -> String {
        let error = Config::parse(text).unwrap_err();
        assert_eq!(error.code, ERROR_INVALID_CONFIG);
        error.message
    }

    fn assert_names(text: &str, words: &[&str]) {
        let message = error(text);
        for word in words {
            assert!(message.contains(word), "{word:?} not in {message:?}");
        }
    }

    #[test]
    fn defaults_need_only_the_model() {
        let config = Config::parse("model = 'm.onnx'").unwrap();
        assert_eq!(
            config,
            Config {
                model: Some("m.onnx".into()),
                ..Config::default()
            }
        );
        assert_eq!(config.provider, Provider::Cpu);
        assert_eq!((config.intra_op_threads, config.inter_op_threads), (1, 1));
        assert_eq!(
            (config.workers, config.max_batch, config.max_wait_us),
            (0, 64, 0)
        );
        assert_eq!(config.device(), "cpu");
    }

    #[test]
    fn reads_every_key() {
        let config = Config::parse(
            "model = 'a/m.onnx'\nlibrary = '/opt/ort/libonnxruntime.so'\nprovider = 'cuda'\n\
             device_id = 1\nintra_op_threads = 4\ninter_op_threads = 2\nworkers = 3\n\
             max_batch = 32\nmax_wait_us = 500\ninput = 'x'\noutput = 'probabilities'\n",
        )
        .unwrap();
        assert_eq!(config.model_path(), std::path::Path::new("a/m.onnx"));
        assert_eq!(
            config.library.as_deref(),
            Some(std::path::Path::new("/opt/ort/libonnxruntime.so"))
        );
        assert_eq!(config.provider, Provider::Cuda);
        assert_eq!(config.device(), "cuda:1");
        assert_eq!((config.intra_op_threads, config.inter_op_threads), (4, 2));
        assert_eq!(
            (config.workers, config.max_batch, config.max_wait_us),
            (3, 32, 500)
        );
        assert_eq!(config.input.as_deref(), Some("x"));
        assert_eq!(config.output.as_deref(), Some("probabilities"));
        let stacked = Config::parse("model = 'm.onnx'\nstacked_inputs = ['ids', 'mask']").unwrap();
        assert_eq!(stacked.stacked_inputs, ["ids", "mask"]);

        let openvino =
            Config::parse("model = 'm.onnx'\nprovider = 'openvino'\ndevice_type = 'GPU.0'")
                .unwrap();
        assert_eq!(openvino.device(), "openvino:GPU.0");
        let trt = Config::parse("model = 'm.onnx'\nprovider = 'tensorrt'").unwrap();
        assert_eq!(trt.device(), "tensorrt:0");
    }

    #[test]
    fn every_bad_setting_is_named() {
        assert_names("", &["`model` is missing"]);
        assert_names("model = 'm.onnx'\nmodle = 1", &["unknown field", "modle"]);
        assert_names("model = 3", &["model"]);
        assert_names(
            "model = 'm.onnx'\nprovider = 'rocm'",
            &["rocm", "cpu", "cuda"],
        );
        assert_names("model = 'm.onnx'\nworkers = -1", &["workers"]);
        assert_names("model = 'm.onnx'\nworkers = 100000", &["workers = 100000"]);
        assert_names("model = 'm.onnx'\nworkers = 'two'", &["workers"]);
        assert_names(
            "model = 'm.onnx'\nintra_op_threads = 0",
            &["intra_op_threads = 0"],
        );
        assert_names(
            "model = 'm.onnx'\ninter_op_threads = 0",
            &["inter_op_threads = 0"],
        );
        assert_names("model = 'm.onnx'\nmax_batch = 0", &["max_batch = 0"]);
        assert_names(
            "model = 'm.onnx'\nworkers = 1\nmax_wait_us = 99999999",
            &["max_wait_us = 99999999"],
        );
        assert_names(
            "model = 'm.onnx'\nmax_wait_us = 100",
            &["max_wait_us = 100", "workers >= 1"],
        );
        assert_names(
            "model = 'm.onnx'\ndevice_id = 2",
            &["device_id = 2", "\"cpu\""],
        );
        assert_names(
            "model = 'm.onnx'\nprovider = 'openvino'\ndevice_id = 1",
            &["device_id = 1", "device_type"],
        );
        assert_names(
            "model = 'm.onnx'\ndevice_type = 'GPU'",
            &["device_type = \"GPU\"", "openvino"],
        );
        assert_names(
            "model = 'm.onnx'\nprovider = 'openvino'\ndevice_type = ''",
            &["device_type = \"\""],
        );
        assert_names("model = 'm.onnx'\ninput = ''", &["input = \"\""]);
        assert_names("model = 'm.onnx'\noutput = ''", &["output = \"\""]);
        assert_names(
            "model = 'm.onnx'\noutput = 'a'\nstacked_outputs = ['a', 'b']",
            &["output = \"a\"", "stacked_outputs", "keep one"],
        );
        assert_names(
            "model = 'm.onnx'\nstacked_outputs = ['a']",
            &["stacked_outputs", "two outputs", "output = \"a\""],
        );
        assert_names(
            "model = 'm.onnx'\nstacked_outputs = ['a', 'a']",
            &["entry 1", "\"a\""],
        );
        assert_names("model = 'm.onnx'\ndevice_id = -3", &["device_id"]);
        assert_names(
            "model = 'm.onnx'\nprovider = 'cuda'\ndevice_id = 5000",
            &["device_id = 5000"],
        );
        assert_names("model = ", &["onnxruntime plugin config"]);
        assert_names(
            "model = 'm.onnx'\ninput = 'x'\nstacked_inputs = ['a', 'b']",
            &["input = \"x\"", "stacked_inputs", "keep one"],
        );
        assert_names(
            "model = 'm.onnx'\nstacked_inputs = ['a', 'a']",
            &["\"a\" twice"],
        );
        assert_names("model = 'm.onnx'\nstacked_inputs = ['a', '']", &["entry 1"]);
        assert_names(
            "model = 'm.onnx'\nstacked_inputs = 'a'",
            &["stacked_inputs"],
        );
    }
    #[test]
    fn devices_list_gpus_for_cuda_and_instances_for_cpu_and_refuse_openvino() {
        let cpu = Config::parse("model = 'm.onnx'\ndevices = 2").unwrap();
        assert_eq!(cpu.listed_devices(), [(0, false), (1, false)]);
        let cuda = Config::parse("model = 'm.onnx'\nprovider = 'cuda'\ndevices = 3").unwrap();
        assert_eq!(cuda.listed_devices(), [(0, true), (1, true), (2, true)]);
        assert!(Config::parse("model = 'm.onnx'")
            .unwrap()
            .listed_devices()
            .is_empty());
        let error = Config::parse("model = 'm.onnx'\nprovider = 'openvino'\ndevices = 2")
            .unwrap_err()
            .to_string();
        assert!(error.contains("devices applies to provider"), "{error}");
    }
}
