//! A benchmark definition (`configs/benchmarks/NAME.toml`): the model, the data set, the
//! accuracy metric, the backend's configuration per scenario and the LoadGen settings. Paths
//! in it are relative to the file. A definition may extend another (`extends.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use mlperf_loadgen::TestScenario;

use crate::scenario::Scenario;

#[derive(Debug, thiserror::Error)]
pub enum DefinitionError {
    #[error("{}: {message}", path.display())]
    Read { path: PathBuf, message: String },
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    #[error("no benchmark {name:?}{suggestion}; the benchmarks: {known} (looked for {searched})")]
    NotFound {
        name: String,
        /// `: did you mean "fmnist"?`, or nothing.
        suggestion: String,
        /// The names in the configs/benchmarks/ folders searched, or `none`.
        known: String,
        searched: String,
    },
}

/// A parsed definition, its paths made absolute.
#[derive(Debug, Clone)]
pub struct Benchmark {
    pub name: String,
    pub description: String,
    /// The file it was read from.
    pub file: PathBuf,
    /// The command that makes its model and data (for messages).
    pub prepare: Option<String>,
    pub model: Option<PathBuf>,
    /// The model name MLPerf's config files key its settings by (`resnet50`), where it is not
    /// the benchmark's name (`resnet`, the name the round and a submission give it).
    pub config_model: Option<String>,
    /// The data set: a `.npy` file, or the folder of a data set layout (`format`).
    pub inputs: PathBuf,
    /// How `inputs` holds the samples.
    pub format: DatasetFormat,
    /// The expected sha256 of `inputs`, when the definition pins it.
    pub inputs_sha256: Option<String>,
    /// `[dataset] input_names`: each sample stacks these named inputs along its first axis.
    pub input_names: Vec<String>,
    pub performance_sample_count: Option<usize>,
    /// `[dataset] tokenizer`: an LLM's tokenizer.json. The plugin gets it as `tokenizer` and
    /// answers with token ids; the ROUGE scorer decodes them with it.
    pub tokenizer: Option<PathBuf>,
    /// The WebAssembly module that preprocesses the inputs, if any.
    pub preprocess: Option<PreprocessSection>,
    pub accuracy: Accuracy,
    /// `[accuracy] logged_outputs`: the named outputs the accuracy log records, in order.
    pub logged_outputs: Vec<String>,
    /// `[postprocess]`: what the host makes of each response before it is logged, as the
    /// reference's harness does after the model ran.
    pub postprocess: Option<super::postprocess::ResponseTransform>,
    pub plugin: PluginSection,
    /// TestSettings overrides (`field = value`) for every scenario, then per scenario.
    pub settings: BTreeMap<String, toml::Value>,
    pub scenario_settings: BTreeMap<String, BTreeMap<String, toml::Value>>,
    /// The rules a submission of it is checked against, where the definition gives them.
    pub submission: Option<SubmissionSection>,
}

/// `[submission]`: what `mlperf-host check` holds a submission of this benchmark to (MLPerf's
/// own models have their rules built in).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmissionSection {
    /// Samples an accuracy run must cover: the whole data set.
    pub dataset_size: u64,
    /// Compliance tests a closed submission must include (`TEST01`, `TEST04`, `TEST06`).
    #[serde(default)]
    pub compliance: Vec<String>,
    /// The Offline query's minimum samples.
    #[serde(default = "one")]
    pub offline_min_samples_per_query: u64,
    /// Latency bounds per scenario (the Server bound the early-stopping estimate must keep).
    #[serde(default)]
    pub latency_bounds_ms: BTreeMap<Scenario, f64>,
    /// Scenarios each system type must submit.
    #[serde(default)]
    pub required_scenarios_datacenter: Vec<Scenario>,
    #[serde(default)]
    pub required_scenarios_edge: Vec<Scenario>,
}

fn one() -> u64 {
    1
}

/// `[preprocess]`: a sandboxed WebAssembly module run over the inputs.
#[derive(Debug, Clone)]
pub struct PreprocessSection {
    pub module: PathBuf,
    /// Per issued sample inside the timed path, rather than untimed at load.
    pub timed: bool,
    /// Sandbox limits, where the definition sets them.
    pub limits: PreprocessLimits,
}

/// Optional sandbox limits of a preprocessing module (the sandbox's defaults otherwise).
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct PreprocessLimits {
    pub memory_limit_mib: Option<usize>,
    pub time_limit_ms: Option<u64>,
    /// A deterministic instruction budget per sample instead of the time limit.
    pub fuel: Option<u64>,
}

/// How a data set lies on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DatasetFormat {
    /// One `.npy` file whose first axis counts samples.
    #[default]
    Npy,
    /// ImageNet 2012 val: `val_map.txt` and the JPEGs, or the reference's preprocessed cache
    /// of them (`<image>.JPEG.npy`), in one folder.
    Imagenet,
    /// COCO 2017 val's safe subset: `annotations/instances_val2017.json` and the JPEGs under
    /// `val2017_safe/`, in one folder (`coco_safe/`).
    Coco,
    /// KiTS19 as the reference's `preprocess.py` writes it: `preprocessed_files.pkl` and
    /// `nifti/<case>/{imaging,segmentation}.nii.gz`, in one folder (`preprocessed_data/`).
    Kits19,
    /// SQuAD v1.1: `dev-v1.1.json` and the model's WordPiece `vocab.txt`, in one folder, made
    /// into the reference's 384-token features.
    Squad,
    /// CNN-DailyMail as llama3.1-8b reads it: a folder holding `cnn_eval.json` or the edge
    /// set's `sample_cnn_eval_5000.json`, each record's `tok_input` a sample of int32 token
    /// ids.
    Cnndm,
    /// OpenOrca as llama2-70b reads it: the reference's pandas pickle converted once
    /// (`dataset convert`) into `open_orca_gpt4_tokenized_llama.sampled_24576.json`, records
    /// of the same shape as CNN-DailyMail's.
    #[serde(rename = "openorca")]
    OpenOrca,
    /// LibriSpeech as whisper reads it: the reference's repacked manifest
    /// `data/dev-all-repack.json` and its 16 kHz WAV clips, each clip a sample of float32 audio.
    #[serde(rename = "librispeech")]
    LibriSpeech,
}

impl DatasetFormat {
    /// A folder rather than a file.
    pub fn is_folder(self) -> bool {
        !matches!(self, DatasetFormat::Npy)
    }

    /// Records of prompt token ids and reference answers (an LLM served elsewhere).
    pub fn is_token_prompts(self) -> bool {
        matches!(self, DatasetFormat::Cnndm | DatasetFormat::OpenOrca)
    }
}

/// How a run's accuracy log is scored.
#[derive(Debug, Clone)]
pub enum Accuracy {
    /// Top-1 classification against integer labels.
    Top1 {
        labels: PathBuf,
        output: OutputEncoding,
        reference: Option<PathBuf>,
        /// Fraction of the reference accuracy a run must reach (MLPerf closed: 0.99).
        threshold: f64,
    },
    /// Cosine similarity of float32 embeddings to reference embeddings (a `.npy` of one row
    /// per sample); the mean must reach `threshold`.
    Cosine {
        embeddings: PathBuf,
        /// The reference run's figures (`reference.json` from the benchmark's generator).
        reference: Option<PathBuf>,
        threshold: f64,
    },
    /// ROUGE-1/2/L of generated text against committed reference answers (a JSON file with
    /// `samples[i].output` and `.output_tokens`): each at least `threshold` of the references'
    /// own, and the tokens per sample within 10 % of theirs. With a tokenizer the responses
    /// are int32 token ids, decoded with it; without, UTF-8 text.
    Rouge {
        references: PathBuf,
        threshold: f64,
        tokenizer: Option<PathBuf>,
    },
    /// ResNet-50's top-1 as the reference's `accuracy-imagenet.py` scores it, against the data
    /// set folder's `val_map.txt`; each response one class of `dtype`.
    Imagenet {
        dtype: crate::benchmark::accuracy::ClassDtype,
    },
    /// YOLO's COCO mAP as the reference's `accuracy-coco.py` scores it, against the data set
    /// folder's annotation file; each response the harness's 7-float detections.
    Coco,
    /// 3D-UNet's mean DICE as the reference's `accuracy_kits.py` scores it, against the data
    /// set folder's `nifti/<case>/segmentation.nii.gz`; each response a uint8 label volume.
    Kits19,
    /// BERT's exact match and F1 on SQuAD v1.1 as the reference's `accuracy-squad.py` and
    /// `evaluate_v1.1.py` score them, against the data set folder's `dev-v1.1.json`; each
    /// response float32 `[384, 2]` start and end logits.
    Squad,
    /// llama3.1-8b's ROUGE as its `evaluation.py` scores it, against the records' `output`:
    /// each response the generated token ids (`dtype`), decoded with `[dataset] tokenizer`
    /// (its folder's `tokenizer_config.json` says whether to clean up spaces) and split into
    /// sentences with the Punkt parameters in `punkt` (a punkt_tab language folder).
    Cnndm {
        punkt: PathBuf,
        dtype: crate::benchmark::accuracy::TokenDtype,
        /// Which script's figures and line (llama2-70b's adds the tokens per sample).
        script: crate::benchmark::accuracy::RougeScript,
    },
    /// whisper's word error rate as its `accuracy_eval.py` scores it, against the manifest's
    /// transcripts: each response the answer's label indices (int64), both sides normalised by
    /// openai-whisper's EnglishTextNormalizer with the spelling map `spelling_map`
    /// (`whisper/normalizers/english.json`).
    Whisper { spelling_map: PathBuf },
    /// No metric (e.g. random weights); `why` says so.
    Unavailable { why: String },
}

/// How a response's bytes encode its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputEncoding {
    /// One little-endian i64: the class.
    Int64,
    /// Little-endian f32 scores: the class is the argmax.
    Float32,
}

#[derive(Debug, Clone)]
pub struct PluginSection {
    pub name: String,
    /// Passed to the plugin; `model` is added from the model section.
    pub config: toml::Table,
    /// Merged over `config` for one scenario.
    pub scenario: BTreeMap<String, toml::Table>,
}

impl Benchmark {
    /// Reads `spec`: a path to a `.toml` file, or a name looked up in `configs/benchmarks/`
    /// under the working directory and the repository the executable was built in.
    pub fn find(spec: &str) -> Result<Benchmark, DefinitionError> {
        let as_path = Path::new(spec);
        if spec.ends_with(".toml") || spec.contains(std::path::MAIN_SEPARATOR) {
            return Benchmark::read(as_path);
        }
        let candidates = search_paths(spec);
        match candidates.iter().find(|p| p.is_file()) {
            Some(path) => Benchmark::read(path),
            None => {
                let known = known_names();
                Err(DefinitionError::NotFound {
                    name: spec.to_string(),
                    suggestion: mlperf_loadgen::suggest::closest(spec, &known)
                        .map(|name| format!(": did you mean {name:?}?"))
                        .unwrap_or_default(),
                    known: Some(known.join(", "))
                        .filter(|names| !names.is_empty())
                        .unwrap_or_else(|| "none".into()),
                    searched: candidates
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                })
            }
        }
    }

    pub fn read(path: &Path) -> Result<Benchmark, DefinitionError> {
        let text = crate::input_file::read_to_string(path).map_err(|e| DefinitionError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let invalid = |message: String| DefinitionError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        // Without `extends`, straight from the text, so that errors keep their line numbers.
        let raw: RawDefinition = if text.contains("extends") {
            let table = super::extends::read_merged(path, &text).map_err(invalid)?;
            RawDefinition::deserialize(toml::Value::Table(table))
                .map_err(|e| invalid(e.to_string()))?
        } else {
            toml::from_str(&text).map_err(|e| invalid(e.to_string()))?
        };
        raw.resolve(path)
    }

    /// The plugin configuration for `scenario`: the common table, the scenario's table over
    /// it, and `model`.
    pub fn plugin_config(&self, scenario: TestScenario) -> toml::Table {
        let mut config = self.plugin.config.clone();
        if let Some(overrides) = self.plugin.scenario.get(&scenario.to_string()) {
            for (key, value) in overrides {
                config.insert(key.clone(), value.clone());
            }
        }
        if let Some(model) = &self.model {
            config.insert(
                "model".into(),
                toml::Value::String(model.display().to_string()),
            );
        }
        if let Some(tokenizer) = &self.tokenizer {
            config.insert(
                "tokenizer".into(),
                toml::Value::String(tokenizer.display().to_string()),
            );
        }
        config
    }

    /// `key=value` TestSettings overrides for `scenario`, common ones first.
    pub fn setting_overrides(&self, scenario: TestScenario) -> Vec<(String, String)> {
        let scenario = self.scenario_settings.get(&scenario.to_string());
        self.settings
            .iter()
            .chain(scenario.into_iter().flatten())
            .map(|(key, value)| (key.clone(), setting_text(value)))
            .collect()
    }

    /// The data set folder's `val_map.txt` (an ImageNet layout).
    pub fn val_map(&self) -> PathBuf {
        self.inputs.join(crate::datasets::imagenet::VAL_MAP)
    }

    /// The data set folder's annotation file (a COCO layout).
    pub fn coco_annotations(&self) -> PathBuf {
        self.inputs.join(crate::datasets::coco::ANNOTATIONS)
    }

    /// The file that stands for a data set folder in the run's records (its list: hashing
    /// every image at each start would take minutes); the data set itself for a file.
    pub fn dataset_list(&self) -> PathBuf {
        match self.format {
            DatasetFormat::Npy => self.inputs.clone(),
            DatasetFormat::Imagenet => self.val_map(),
            DatasetFormat::Coco => self.coco_annotations(),
            DatasetFormat::Kits19 => self.inputs.join(crate::datasets::kits19::CASE_LIST),
            DatasetFormat::Squad => self.inputs.join(crate::datasets::squad::DEV_SET),
            DatasetFormat::Cnndm => crate::datasets::cnndm::evaluation_file(&self.inputs),
            DatasetFormat::OpenOrca => crate::datasets::openorca::evaluation_file(&self.inputs),
            DatasetFormat::LibriSpeech => crate::datasets::librispeech::manifest_file(&self.inputs),
        }
    }

    /// The same benchmark on the data set folder `dir` (`--dataset-dir`): a folder layout's
    /// samples and ground truth are read from there.
    pub fn with_dataset_dir(mut self, dir: &Path) -> Result<Benchmark, DefinitionError> {
        if !self.format.is_folder() {
            return Err(DefinitionError::Invalid {
                path: self.file.clone(),
                message: format!(
                    "--dataset-dir {}: benchmark {} reads one .npy file (give --dataset)",
                    dir.display(),
                    self.name
                ),
            });
        }
        self.inputs = dir.to_path_buf();
        Ok(self)
    }

    /// The same benchmark with the model file `model` (`--model-file`). An LLM served
    /// elsewhere (`cnndm`) takes its checkpoint folder instead, as the reference's
    /// `--model-name`: its tokenizer.json and tokenizer_config.json decode the answers.
    pub fn with_model_file(mut self, model: &Path) -> Benchmark {
        if self.format.is_token_prompts() {
            self.tokenizer = Some(if model.is_dir() {
                model.join("tokenizer.json")
            } else {
                model.to_path_buf()
            });
        } else {
            self.model = Some(model.to_path_buf());
        }
        self
    }

    /// Files the definition names that do not exist.
    pub fn missing_files(&self) -> Vec<&Path> {
        self.files().into_iter().filter(|p| !p.exists()).collect()
    }

    /// The data files the definition names: inputs, model, tokenizer and the scorer's.
    pub fn files(&self) -> Vec<&Path> {
        let mut files = vec![self.inputs.as_path()];
        files.extend(self.model.as_deref());
        files.extend(self.tokenizer.as_deref());
        match &self.accuracy {
            Accuracy::Top1 {
                labels, reference, ..
            } => {
                files.push(labels);
                files.extend(reference.as_deref());
            }
            Accuracy::Cosine {
                embeddings,
                reference,
                ..
            } => {
                files.push(embeddings);
                files.extend(reference.as_deref());
            }
            Accuracy::Rouge { references, .. } => files.push(references),
            Accuracy::Cnndm { punkt, .. } => files.push(punkt),
            Accuracy::Whisper { spelling_map } => files.push(spelling_map),
            Accuracy::Imagenet { .. }
            | Accuracy::Coco
            | Accuracy::Kits19
            | Accuracy::Squad
            | Accuracy::Unavailable { .. } => {}
        }
        files
    }
}

/// A TOML value as `--set` takes it (strings unquoted).
fn setting_text(value: &toml::Value) -> String {
    match value {
        toml::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The benchmark names the searched configs/benchmarks/ folders define, sorted.
fn known_names() -> Vec<String> {
    let mut names: Vec<String> = config_search_paths("benchmarks")
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".toml").map(str::to_string)
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

fn search_paths(name: &str) -> Vec<PathBuf> {
    config_search_paths(Path::new("benchmarks").join(format!("{name}.toml")))
}

/// Where `configs/<path>` (a file or a folder) is looked for: under the working directory,
/// then in the repository the executable was built in.
pub(crate) fn config_search_paths(path: impl AsRef<Path>) -> Vec<PathBuf> {
    let relative = Path::new("configs").join(path);
    let mut paths = vec![relative.clone()];
    // target/<profile>/mlperf-host → the repository's configs/.
    if let Some(root) = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.to_path_buf()))
    {
        paths.push(root.join(&relative));
    }
    // The source tree it was built from, wherever its target/ lives (CI links it to a cache).
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(&relative);
    if !paths.contains(&source) {
        paths.push(source);
    }
    paths
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDefinition {
    name: String,
    #[serde(default)]
    description: String,
    prepare: Option<String>,
    /// The model name in MLPerf's config files, where it is not `name`.
    config_model: Option<String>,
    model: Option<RawModel>,
    dataset: RawDataset,
    preprocess: Option<RawPreprocess>,
    postprocess: Option<super::postprocess::ResponseTransform>,
    accuracy: RawAccuracy,
    plugin: RawPlugin,
    #[serde(default)]
    settings: BTreeMap<String, toml::Value>,
    submission: Option<SubmissionSection>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    path: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDataset {
    /// A `.npy` file, or (with `format`) the data set's folder.
    inputs: PathBuf,
    #[serde(default)]
    format: DatasetFormat,
    /// The inputs file's expected sha256: a run of another content is refused.
    sha256: Option<String>,
    #[serde(default)]
    input_names: Vec<String>,
    performance_sample_count: Option<usize>,
    tokenizer: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPreprocess {
    module: PathBuf,
    #[serde(default)]
    timed: bool,
    memory_limit_mib: Option<usize>,
    time_limit_ms: Option<u64>,
    fuel: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAccuracy {
    metric: String,
    /// The element type of the logged class (`imagenet`: the script's `--dtype`).
    dtype: Option<crate::benchmark::accuracy::ClassDtype>,
    labels: Option<PathBuf>,
    embeddings: Option<PathBuf>,
    references: Option<PathBuf>,
    output: Option<OutputEncoding>,
    reference: Option<PathBuf>,
    threshold: Option<f64>,
    why: Option<String>,
    #[serde(default)]
    logged_outputs: Vec<String>,
    /// `cnndm`: the punkt_tab language folder.
    punkt: Option<PathBuf>,
    /// `whisper`: openai-whisper's `whisper/normalizers/english.json`.
    spelling_map: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlugin {
    name: String,
    #[serde(default)]
    config: toml::Table,
    #[serde(default)]
    scenario: BTreeMap<String, toml::Table>,
}

const SCENARIOS: [&str; 4] = ["SingleStream", "MultiStream", "Server", "Offline"];

impl RawDefinition {
    fn resolve(mut self, file: &Path) -> Result<Benchmark, DefinitionError> {
        let invalid = |message: String| DefinitionError::Invalid {
            path: file.to_path_buf(),
            message,
        };
        let dir = file.parent().unwrap_or(Path::new("."));
        let at = |path: &Path| dir.join(path);
        for scenario in self.plugin.scenario.keys() {
            if !SCENARIOS.contains(&scenario.as_str()) {
                return Err(invalid(format!(
                    "[plugin.scenario.{scenario}]: unknown scenario (one of {})",
                    SCENARIOS.join(", ")
                )));
            }
        }
        if let Some(section) = &self.submission {
            check_submission_section(section).map_err(invalid)?;
        }
        // [settings] holds common keys and one table per scenario.
        let mut settings = BTreeMap::new();
        let mut scenario_settings = BTreeMap::new();
        for (key, value) in self.settings {
            match value {
                toml::Value::Table(table) if SCENARIOS.contains(&key.as_str()) => {
                    scenario_settings.insert(key, table.into_iter().collect());
                }
                toml::Value::Table(_) => {
                    return Err(invalid(format!(
                        "[settings.{key}]: unknown scenario (one of {})",
                        SCENARIOS.join(", ")
                    )))
                }
                value => {
                    settings.insert(key, value);
                }
            }
        }
        if let Some(digest) = &self.dataset.sha256 {
            if !crate::digest::is_sha256(digest) {
                return Err(invalid(format!(
                    "[dataset] sha256 = {digest:?}: not a sha256 (64 hexadecimal digits)"
                )));
            }
        }
        if let Some(threshold) = self.accuracy.threshold {
            if !(threshold > 0.0 && threshold <= 1.0) {
                return Err(invalid(format!(
                    "[accuracy] threshold = {threshold}: out of range (above 0, at most 1)"
                )));
            }
        }
        let logged_outputs = std::mem::take(&mut self.accuracy.logged_outputs);
        if let Some(bad) = logged_outputs
            .iter()
            .find(|n| n.is_empty() || n.contains('\0'))
        {
            return Err(invalid(format!(
                "[accuracy] logged_outputs: {bad:?} is not an output name"
            )));
        }
        if self
            .postprocess
            .as_ref()
            .is_some_and(|p| p.is_sliding_window())
            && self.dataset.format != DatasetFormat::Kits19
        {
            return Err(invalid(
                "[postprocess] kind = \"sliding-window\" needs [dataset] format = \"kits19\" (its samples are the preprocessed (1, D, H, W) volumes it slides over)".into(),
            ));
        }
        let accuracy = match self.accuracy.metric.as_str() {
            "top1" => Accuracy::Top1 {
                labels: at(&self
                    .accuracy
                    .labels
                    .ok_or_else(|| invalid("[accuracy] metric top1 needs `labels`".into()))?),
                output: self.accuracy.output.unwrap_or(OutputEncoding::Int64),
                reference: self.accuracy.reference.as_deref().map(at),
                threshold: self.accuracy.threshold.unwrap_or(0.99),
            },
            "cosine" => Accuracy::Cosine {
                embeddings: at(&self.accuracy.embeddings.ok_or_else(|| {
                    invalid("[accuracy] metric cosine needs `embeddings`".into())
                })?),
                reference: self.accuracy.reference.as_deref().map(at),
                threshold: self.accuracy.threshold.unwrap_or(0.99),
            },
            "rouge" => Accuracy::Rouge {
                references: at(&self
                    .accuracy
                    .references
                    .ok_or_else(|| invalid("[accuracy] metric rouge needs `references`".into()))?),
                threshold: self.accuracy.threshold.unwrap_or(0.99),
                tokenizer: self.dataset.tokenizer.as_deref().map(at),
            },
            "imagenet" => {
                if self.dataset.format != DatasetFormat::Imagenet {
                    return Err(invalid(
                        "[accuracy] metric imagenet needs [dataset] format = \"imagenet\" (its labels are the folder's val_map.txt)".into(),
                    ));
                }
                Accuracy::Imagenet {
                    dtype: self
                        .accuracy
                        .dtype
                        .unwrap_or(crate::benchmark::accuracy::ClassDtype::Float32),
                }
            }
            "coco" => {
                if self.dataset.format != DatasetFormat::Coco {
                    return Err(invalid(
                        "[accuracy] metric coco needs [dataset] format = \"coco\" (its ground truth is the folder's annotations/instances_val2017.json)".into(),
                    ));
                }
                Accuracy::Coco
            }
            "kits19" => {
                if self.dataset.format != DatasetFormat::Kits19 {
                    return Err(invalid(
                        "[accuracy] metric kits19 needs [dataset] format = \"kits19\" (its ground truth is the folder's nifti/<case>/segmentation.nii.gz)".into(),
                    ));
                }
                Accuracy::Kits19
            }
            "squad" => {
                if self.dataset.format != DatasetFormat::Squad {
                    return Err(invalid(
                        "[accuracy] metric squad needs [dataset] format = \"squad\" (its ground truth is the folder's dev-v1.1.json)".into(),
                    ));
                }
                Accuracy::Squad
            }
            metric @ ("cnndm" | "openorca") => {
                let (format, script) = if metric == "cnndm" {
                    (DatasetFormat::Cnndm, crate::benchmark::accuracy::RougeScript::Evaluation)
                } else {
                    (DatasetFormat::OpenOrca, crate::benchmark::accuracy::RougeScript::EvaluateAccuracy)
                };
                if self.dataset.format != format || self.dataset.tokenizer.is_none() {
                    return Err(invalid(format!(
                        "[accuracy] metric {metric} needs [dataset] format = \"{metric}\" (its references are the records' output) and the model's `tokenizer`"
                    )));
                }
                let dtype = match self.accuracy.dtype {
                    None | Some(crate::benchmark::accuracy::ClassDtype::Int32) => {
                        crate::benchmark::accuracy::TokenDtype::Int32
                    }
                    Some(crate::benchmark::accuracy::ClassDtype::Int64) => {
                        crate::benchmark::accuracy::TokenDtype::Int64
                    }
                    Some(other) => {
                        return Err(invalid(format!(
                            "[accuracy] dtype = {:?}: token ids are int32 or int64",
                            other.name()
                        )))
                    }
                };
                Accuracy::Cnndm {
                    punkt: at(&self.accuracy.punkt.clone().ok_or_else(|| {
                        invalid(format!("[accuracy] metric {metric} needs `punkt` (a punkt_tab language folder, e.g. ~/nltk_data/tokenizers/punkt_tab/english)"))
                    })?),
                    dtype,
                    script,
                }
            }
            "whisper" => {
                if self.dataset.format != DatasetFormat::LibriSpeech {
                    return Err(invalid(
                        "[accuracy] metric whisper needs [dataset] format = \"librispeech\" (its references are the manifest's transcripts)".into(),
                    ));
                }
                // The reference's int32 is array('l'): 8 bytes on Linux, as int64.
                if let Some(other @ crate::benchmark::accuracy::ClassDtype::Float32) = self.accuracy.dtype {
                    return Err(invalid(format!(
                        "[accuracy] dtype = {:?}: whisper's answers are int64 label indices",
                        other.name()
                    )));
                }
                Accuracy::Whisper {
                    spelling_map: at(&self.accuracy.spelling_map.clone().ok_or_else(|| {
                        invalid("[accuracy] metric whisper needs `spelling_map` (openai-whisper's whisper/normalizers/english.json; `prepare.sh whisper` writes data/whisper/english.json)".into())
                    })?),
                }
            }
            "none" => Accuracy::Unavailable {
                why: self
                    .accuracy
                    .why
                    .unwrap_or_else(|| "the benchmark defines no accuracy metric".into()),
            },
            other => {
                return Err(invalid(format!(
                    "[accuracy] metric = {other:?}: unknown (top1, cosine, rouge, imagenet, coco, kits19, squad, cnndm, openorca, whisper or none)"
                )))
            }
        };
        Ok(Benchmark {
            name: self.name,
            description: self.description,
            file: file.to_path_buf(),
            prepare: self.prepare,
            model: self.model.map(|m| at(&m.path)),
            config_model: self.config_model,
            inputs: at(&self.dataset.inputs),
            format: self.dataset.format,
            inputs_sha256: self.dataset.sha256.map(|d| d.to_ascii_lowercase()),
            input_names: self.dataset.input_names,
            performance_sample_count: self.dataset.performance_sample_count,
            tokenizer: self.dataset.tokenizer.as_deref().map(at),
            preprocess: self.preprocess.map(|p| PreprocessSection {
                module: at(&p.module),
                timed: p.timed,
                limits: PreprocessLimits {
                    memory_limit_mib: p.memory_limit_mib,
                    time_limit_ms: p.time_limit_ms,
                    fuel: p.fuel,
                },
            }),
            accuracy,
            logged_outputs,
            postprocess: self.postprocess.clone(),
            plugin: PluginSection {
                name: self.plugin.name,
                config: self.plugin.config,
                scenario: self.plugin.scenario,
            },
            settings,
            scenario_settings,
            submission: self.submission,
        })
    }
}

/// The names in `[submission]` are ones `check` knows.
fn check_submission_section(section: &SubmissionSection) -> Result<(), String> {
    const TESTS: [&str; 3] = ["TEST01", "TEST04", "TEST06"];
    if let Some(test) = section
        .compliance
        .iter()
        .find(|t| !TESTS.contains(&t.as_str()))
    {
        return Err(format!(
            "[submission] compliance: unknown test {test:?} (one of {})",
            TESTS.join(", ")
        ));
    }
    let scenarios = section
        .latency_bounds_ms
        .keys()
        .chain(&section.required_scenarios_datacenter)
        .chain(&section.required_scenarios_edge);
    if let Some(scenario) = scenarios.into_iter().find(|s| !s.is_loadgen()) {
        return Err(format!(
            "[submission]: {scenario} is a round's scenario for its LLMs, not a benchmark definition's (one of {})",
            SCENARIOS.join(", ")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_are_found_in_the_source_tree_wherever_the_executable_is() {
        let paths = config_search_paths("audit");
        assert_eq!(paths[0], Path::new("configs/audit"));
        let source = paths.last().unwrap();
        assert!(source.is_dir(), "{}", source.display());
        assert!(source.ends_with("../configs/audit"), "{}", source.display());
    }

    fn parse(text: &str) -> Result<Benchmark, DefinitionError> {
        let raw: RawDefinition = toml::from_str(text).map_err(|e| DefinitionError::Invalid {
            path: "test.toml".into(),
            message: e.to_string(),
        })?;
        raw.resolve(Path::new("/defs/test.toml"))
    }

    const FULL: &str = r#"
name = "fmnist"
prepare = "bash scripts/benchmarks/prepare.sh fmnist"
[model]
path = "../data/model.onnx"
[dataset]
inputs = "../data/inputs.npy"
performance_sample_count = 100
[accuracy]
metric = "top1"
labels = "../data/labels.npy"
reference = "../data/reference.json"
[plugin]
name = "onnxruntime"
config = { output = "label", workers = 1 }
[plugin.scenario.Offline]
workers = 2
[settings]
min_query_count = 10
[settings.Offline]
offline_expected_qps = 5000
"#;

    #[test]
    fn named_inputs_and_logged_outputs_are_read() {
        let text = FULL
            .replace(
                "performance_sample_count = 100",
                "performance_sample_count = 100\ninput_names = [\"ids\", \"mask\"]",
            )
            .replace(
                "metric = \"top1\"",
                "metric = \"top1\"\nlogged_outputs = [\"scores\"]",
            );
        let benchmark = parse(&text).unwrap();
        assert_eq!(benchmark.input_names, ["ids", "mask"]);
        assert_eq!(benchmark.logged_outputs, ["scores"]);
        assert!(parse(FULL).unwrap().logged_outputs.is_empty());
        let error = parse(&text.replace("[\"scores\"]", "[\"\"]"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("[accuracy] logged_outputs: \"\" is not an output name"),
            "{error}"
        );
    }

    #[test]
    fn paths_resolve_beside_the_file_and_scenarios_layer() {
        let benchmark = parse(FULL).unwrap();
        assert_eq!(benchmark.inputs, Path::new("/defs/../data/inputs.npy"));
        let offline = benchmark.plugin_config(TestScenario::Offline);
        assert_eq!(offline["workers"].as_integer(), Some(2));
        assert_eq!(offline["output"].as_str(), Some("label"));
        assert_eq!(offline["model"].as_str(), Some("/defs/../data/model.onnx"));
        let single = benchmark.plugin_config(TestScenario::SingleStream);
        assert_eq!(single["workers"].as_integer(), Some(1));
        assert_eq!(
            benchmark.setting_overrides(TestScenario::Offline),
            vec![
                ("min_query_count".to_string(), "10".to_string()),
                ("offline_expected_qps".to_string(), "5000".to_string())
            ]
        );
        assert_eq!(benchmark.setting_overrides(TestScenario::Server).len(), 1);
        match benchmark.accuracy {
            Accuracy::Top1 {
                threshold, output, ..
            } => {
                assert_eq!(threshold, 0.99);
                assert_eq!(output, OutputEncoding::Int64);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_tokenizer_resolves_beside_the_file_for_the_plugin_and_the_rouge_scorer() {
        let text = FULL
            .replace(
                "inputs = \"../data/inputs.npy\"",
                "inputs = \"../data/inputs.npy\"\ntokenizer = \"../data/tokenizer.json\"",
            )
            .replace(
                "metric = \"top1\"\nlabels = \"../data/labels.npy\"",
                "metric = \"rouge\"\nreferences = \"llm/references.json\"",
            );
        let benchmark = parse(&text).unwrap();
        let tokenizer = Path::new("/defs/../data/tokenizer.json");
        assert_eq!(benchmark.tokenizer.as_deref(), Some(tokenizer));
        let config = benchmark.plugin_config(TestScenario::Offline);
        assert_eq!(
            config["tokenizer"].as_str(),
            Some("/defs/../data/tokenizer.json")
        );
        assert!(benchmark.missing_files().contains(&tokenizer));
        match benchmark.accuracy {
            Accuracy::Rouge {
                references,
                tokenizer: scorer,
                ..
            } => {
                assert_eq!(references, Path::new("/defs/llm/references.json"));
                assert_eq!(scorer.as_deref(), Some(tokenizer));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_cosine_metric_resolves_its_embeddings() {
        let text = FULL.replace(
            "metric = \"top1\"\nlabels = \"../data/labels.npy\"",
            "metric = \"cosine\"\nembeddings = \"minilm/reference.npy\"\nthreshold = 0.995",
        );
        let benchmark = parse(&text).unwrap();
        match benchmark.accuracy {
            Accuracy::Cosine {
                embeddings,
                reference,
                threshold,
            } => {
                assert_eq!(embeddings, Path::new("/defs/minilm/reference.npy"));
                assert_eq!(
                    reference.unwrap(),
                    Path::new("/defs/../data/reference.json")
                );
                assert_eq!(threshold, 0.995);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_preprocess_section_resolves_its_module_and_limits() {
        assert!(parse(FULL).unwrap().preprocess.is_none());
        let text = FULL.replace(
            "[accuracy]",
            "[preprocess]\nmodule = \"../m/fmnist.wasm\"\ntimed = true\nfuel = 5000\n\
             time_limit_ms = 20\n[accuracy]",
        );
        let preprocess = parse(&text).unwrap().preprocess.unwrap();
        assert_eq!(preprocess.module, Path::new("/defs/../m/fmnist.wasm"));
        assert!(preprocess.timed);
        assert_eq!(preprocess.limits.fuel, Some(5000));
        assert_eq!(preprocess.limits.time_limit_ms, Some(20));
        assert_eq!(preprocess.limits.memory_limit_mib, None);
        let error = parse(&text.replace("fuel =", "fuels ="))
            .unwrap_err()
            .to_string();
        assert!(error.contains("fuels"), "{error}");
    }

    #[test]
    fn the_shipped_definitions_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/benchmarks");
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "toml") {
                continue; // a benchmark's committed data
            }
            let benchmark = Benchmark::read(&path).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(path.file_stem().unwrap().to_str(), Some(&*benchmark.name));
            names.push(benchmark.name);
        }
        names.sort();
        assert_eq!(
            names,
            [
                "3d-unet-99",
                "3d-unet-99.9",
                "bert-99",
                "bert-99.9",
                "digits",
                "fmnist",
                "llama2-70b-99.9",
                "llama3.1-8b",
                "llama3.1-8b-edge",
                "minilm",
                "resnet",
                "resnet50-topology",
                "smollm2",
                "smollm2-interactive",
                "whisper",
                "yolo-95",
                "yolo-99"
            ]
        );
    }

    #[test]
    fn the_rounds_benchmarks_read_mlperf_conf_under_the_reference_harness_model_name() {
        let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        let conf = std::fs::read_to_string(configs.join("mlperf.conf")).unwrap();
        for (benchmark, model) in [
            ("resnet", "resnet50"),
            ("yolo-99", "yolo"),
            ("yolo-95", "yolo"),
            ("3d-unet-99", "3d-unet"),
            ("3d-unet-99.9", "3d-unet"),
            ("bert-99", "bert"),
            ("bert-99.9", "bert"),
        ] {
            let path = configs.join("benchmarks").join(format!("{benchmark}.toml"));
            let definition = Benchmark::read(&path).unwrap();
            assert_eq!(
                definition.config_model.as_deref(),
                Some(model),
                "{benchmark}"
            );
            // The official LoadGen looks the name up as it is: a name without lines in
            // mlperf.conf silently runs on the wildcard defaults.
            let prefix = format!("\n{model}.");
            assert!(conf.contains(&prefix), "mlperf.conf has no {model}.* line");
        }
    }

    #[test]
    fn bert_is_the_rounds_benchmark_on_a_squad_folder() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/benchmarks");
        let bert = Benchmark::read(&dir.join("bert-99.9.toml")).unwrap();
        assert_eq!(bert.format, DatasetFormat::Squad);
        assert!(bert.dataset_list().ends_with("squad/dev-v1.1.json"));
        assert!(matches!(bert.accuracy, Accuracy::Squad));
        assert_eq!(bert.config_model.as_deref(), Some("bert"));
        let wrong = parse(
            "name = 'x'\n[dataset]\ninputs = 'x.npy'\n[accuracy]\nmetric = 'squad'\n[plugin]\nname = 'null'",
        )
        .unwrap_err()
        .to_string();
        assert!(wrong.contains("format = \"squad\""), "{wrong}");
    }

    #[test]
    fn llama_is_the_rounds_benchmark_on_a_cnndm_folder() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/benchmarks");
        let edge = Benchmark::read(&dir.join("llama3.1-8b-edge.toml")).unwrap();
        assert_eq!(edge.format, DatasetFormat::Cnndm);
        assert_eq!(edge.config_model.as_deref(), Some("llama3_1-8b-edge"));
        assert!(edge.dataset_list().ends_with("cnndm/cnn_eval.json"));
        assert!(matches!(
            edge.accuracy,
            Accuracy::Cnndm {
                dtype: crate::benchmark::accuracy::TokenDtype::Int32,
                ..
            }
        ));
        let config = edge.plugin_config(TestScenario::Offline);
        assert_eq!(config["prompt"].as_str(), Some("token_ids"));
        // A checkpoint folder given as the model is where the tokenizer is.
        let served = edge.with_model_file(&dir);
        assert_eq!(served.tokenizer, Some(dir.join("tokenizer.json")));
        assert_eq!(served.model, None);
        let base = "name = 'x'\n[dataset]\nformat = 'cnndm'\ninputs = 'd'\n[accuracy]\nmetric = 'cnndm'\n[plugin]\nname = 'null'";
        let wrong = parse(base).unwrap_err().to_string();
        assert!(wrong.contains("the model's `tokenizer`"), "{wrong}");
        let with_tokenizer = base.replace("inputs = 'd'", "inputs = 'd'\ntokenizer = 't.json'");
        let wrong = parse(&with_tokenizer).unwrap_err().to_string();
        assert!(wrong.contains("needs `punkt`"), "{wrong}");
        let wrong = parse(&with_tokenizer.replace(
            "metric = 'cnndm'",
            "metric = 'cnndm'\npunkt = 'p'\ndtype = 'float32'",
        ))
        .unwrap_err()
        .to_string();
        assert!(wrong.contains("int32 or int64"), "{wrong}");
    }

    #[test]
    fn llama2_is_the_rounds_benchmark_on_a_converted_openorca_folder() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/benchmarks");
        let llama2 = Benchmark::read(&dir.join("llama2-70b-99.9.toml")).unwrap();
        assert_eq!(llama2.format, DatasetFormat::OpenOrca);
        assert_eq!(llama2.config_model.as_deref(), Some("llama2-70b"));
        assert!(llama2
            .dataset_list()
            .ends_with("openorca/open_orca_gpt4_tokenized_llama.sampled_24576.json"));
        assert!(matches!(
            llama2.accuracy,
            Accuracy::Cnndm {
                dtype: crate::benchmark::accuracy::TokenDtype::Int32,
                script: crate::benchmark::accuracy::RougeScript::EvaluateAccuracy,
                ..
            }
        ));
        let config = llama2.plugin_config(TestScenario::Server);
        assert_eq!(config["prompt"].as_str(), Some("token_ids"));
        assert_eq!(config["max_tokens"].as_integer(), Some(1024));
        let served = llama2.with_model_file(&dir);
        assert_eq!(served.tokenizer, Some(dir.join("tokenizer.json")));
        // The metric and the format go together.
        let base = "name = 'x'\n[dataset]\nformat = 'cnndm'\ninputs = 'd'\ntokenizer = 't.json'\n[accuracy]\nmetric = 'openorca'\npunkt = 'p'\n[plugin]\nname = 'null'";
        let wrong = parse(base).unwrap_err().to_string();
        assert!(
            wrong.contains("metric openorca needs [dataset] format = \"openorca\""),
            "{wrong}"
        );
        assert!(parse(&base.replace("format = 'cnndm'", "format = 'openorca'")).is_ok());
    }

    #[test]
    fn yolo_is_the_rounds_benchmark_on_a_coco_folder() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/benchmarks");
        let yolo = Benchmark::read(&dir.join("yolo-95.toml")).unwrap();
        assert_eq!(yolo.format, DatasetFormat::Coco);
        assert!(yolo
            .dataset_list()
            .ends_with("coco_safe/annotations/instances_val2017.json"));
        assert!(matches!(yolo.accuracy, Accuracy::Coco));
        assert_eq!(
            yolo.postprocess,
            Some(
                crate::benchmark::postprocess::ResponseTransform::Detections {
                    input: [640, 640],
                    originals: Vec::new(),
                }
            )
        );
        let config = yolo.plugin_config(TestScenario::Offline);
        assert_eq!(config["input"].as_str(), Some("images"));
        assert_eq!(config["output"].as_str(), Some("output0"));
        let bad = std::fs::read_to_string(dir.join("yolo-99.toml"))
            .unwrap()
            .replace("format = \"coco\"", "format = \"imagenet\"");
        let file = std::env::temp_dir().join(format!("yolo-{}.toml", std::process::id()));
        std::fs::write(&file, bad).unwrap();
        let error = Benchmark::read(&file).unwrap_err().to_string();
        assert!(
            error.contains("metric coco needs [dataset] format = \"coco\""),
            "{error}"
        );
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn resnet_is_the_rounds_benchmark_on_a_data_set_folder() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/benchmarks/resnet.toml");
        let resnet = Benchmark::read(&path).unwrap();
        assert_eq!(resnet.config_model.as_deref(), Some("resnet50"));
        assert_eq!(resnet.format, DatasetFormat::Imagenet);
        assert!(resnet.val_map().ends_with("imagenet/raw/val_map.txt"));
        assert!(matches!(
            resnet.accuracy,
            Accuracy::Imagenet {
                dtype: crate::benchmark::accuracy::ClassDtype::Float32
            }
        ));
        assert_eq!(
            resnet.postprocess,
            Some(crate::benchmark::postprocess::ResponseTransform::Class {
                input: crate::benchmark::postprocess::ClassInput::Int64,
                offset: -1,
                logged: crate::benchmark::accuracy::ClassDtype::Float32,
            })
        );
        let config = resnet.plugin_config(TestScenario::Offline);
        assert_eq!(config["input"].as_str(), Some("input_tensor:0"));
        assert_eq!(config["output"].as_str(), Some("ArgMax:0"));
        let elsewhere = resnet
            .clone()
            .with_dataset_dir(Path::new("/data/imagenet"))
            .unwrap();
        assert_eq!(elsewhere.val_map(), Path::new("/data/imagenet/val_map.txt"));
        let npy = parse(FULL).unwrap();
        let error = npy
            .with_dataset_dir(Path::new("/d"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("reads one .npy file"), "{error}");
        let bad = FULL.replace("metric = \"top1\"", "metric = \"imagenet\"");
        let error = parse(&bad).unwrap_err().to_string();
        assert!(error.contains("format = \"imagenet\""), "{error}");
    }

    #[test]
    fn mistakes_are_named() {
        let cases = [
            (FULL.replace("top1", "top5"), "metric = \"top5\""),
            (
                FULL.replace("[settings.Offline]", "[settings.Batch]"),
                "[settings.Batch]",
            ),
            (
                FULL.replace("[plugin.scenario.Offline]", "[plugin.scenario.offline]"),
                "[plugin.scenario.offline]",
            ),
            (FULL.replace("prepare =", "prepared ="), "prepared"),
            (FULL.replace("labels = ", "label_file = "), "label_file"),
            (
                FULL.replace("metric = \"top1\"", "metric = \"top1\"\nthreshold = 99"),
                "threshold = 99",
            ),
            (
                FULL.replace("metric = \"top1\"", "metric = \"cosine\""),
                "metric cosine needs `embeddings`",
            ),
            (
                FULL.replace("metric = \"top1\"", "metric = \"rouge\""),
                "metric rouge needs `references`",
            ),
        ];
        for (text, words) in cases {
            let error = parse(&text).unwrap_err().to_string();
            assert!(error.contains(words), "{error}");
        }
    }
}
