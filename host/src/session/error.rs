//! Why a session could not run or finish its test.

use std::path::PathBuf;

use thiserror::Error;

use crate::benchmark::accuracy::AccuracyError;
use crate::compliance::ComplianceError;
use crate::logs::DetailLogError;
use crate::plugin::PluginError;
use crate::power::PowerError;
use crate::samples::SourceError;

/// The messages name the file, value or setting, not the flag that may have set it: a data
/// set, its input names, its performance sample count, the logged outputs and the
/// preprocessing module may as well come from a benchmark definition the user never read.
#[derive(Debug, Error)]
pub enum SessionError {
    #[error(transparent)]
    Plugin(#[from] PluginError),
    #[error(transparent)]
    Devices(#[from] crate::plugin::DeviceSelectionError),
    /// A plugin the plan chose for the user (the benchmark's, the default null plugin).
    #[error("{context}")]
    PluginStart {
        context: String,
        #[source]
        source: PluginError,
    },
    #[error("data set {}: unknown format (expected a .npy file)", .0.display())]
    DatasetFormat(PathBuf),
    #[error("data set")]
    Dataset(#[source] SourceError),
    #[error("data set {}: it has no samples", .0.display())]
    EmptyDataset(PathBuf),
    #[error("data set {}: cannot hash it: {message}", path.display())]
    DatasetHash { path: PathBuf, message: String },
    #[error("data set {}: its sha256 is {found}, not the {expected} its benchmark definition pins (a changed or different data set; prepare it again, or update the pin)", path.display())]
    DatasetChanged {
        path: PathBuf,
        expected: String,
        found: String,
    },
    #[error("input names for {}: {message}", dataset.display())]
    InputNames { dataset: PathBuf, message: String },
    #[error("--plugin-batch: plugin {0} batches samples itself (MLPERF_CAP_NATIVE_BATCHING) and is handed every query whole; configure its own batch instead")]
    BatchesItself(String),
    #[error("logged outputs: {0:?} is not an output name")]
    LoggedOutputName(String),
    #[error(
        "performance sample count {asked} must be between 1 and the data set's length ({total})"
    )]
    PerformanceSamples { asked: usize, total: usize },
    #[error("preprocessing module {}", module.display())]
    PreprocessModule {
        module: PathBuf,
        #[source]
        source: Box<wasm_preprocess::PreprocessError>,
    },
    #[error("data set {}", dataset.display())]
    PreprocessDataset {
        dataset: PathBuf,
        #[source]
        source: Box<wasm_preprocess::PreprocessError>,
    },
    #[error("the output directory {} exists and is not a directory", .0.display())]
    OutNotADirectory(PathBuf),
    #[error("cannot create the output directory {}", path.display())]
    CreateOut {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the output directory {} is not writable", path.display())]
    OutNotWritable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot remove {}", path.display())]
    Remove {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot serialize result.json")]
    ResultJson(#[source] serde_json::Error),
    #[error("the official LoadGen wrote no {}", path.display())]
    NoOfficialSummary {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Power(Box<PowerError>),
    #[error("{}", ranging_failed(.out, .why))]
    RangingFailed { out: PathBuf, why: Option<String> },
    #[error("the test could not run")]
    Native(#[source] mlperf_loadgen::TestError),
    #[error("the official LoadGen could not run the test")]
    Official(#[source] Box<mlperf_official_loadgen::Error>),
    #[error(transparent)]
    OfficialLog(#[from] DetailLogError),
    #[error(transparent)]
    Accuracy(#[from] AccuracyError),
    #[error(transparent)]
    Compliance(#[from] ComplianceError),
    #[error("the plugin's destroy has not returned after {0:?} (the testing run was not started)")]
    DestroyStalled(std::time::Duration),
    #[error("a token run (use_token_latencies) needs a plugin that reports tokens: plugin {0} does not declare MLPERF_CAP_TOKENS")]
    NoTokens(String),
    #[error("interrupted by {0} before the test started")]
    Interrupted(&'static str),
    #[error("scoring TEST01's baseline and compliance accuracy")]
    AccuracyFallback(#[source] ComplianceError),
    #[error("{0}: the compliance run has no audit.config to read the test's thresholds from")]
    AuditConfigMissing(crate::compliance::ComplianceTest),
    #[error("{0} scores the compliance run with a benchmark's accuracy metric: give --benchmark")]
    AuditNeedsBenchmark(crate::compliance::ComplianceTest),
    #[error(
        "{0} compares the compliance run's responses with the accuracy run's: give --accuracy-run"
    )]
    AuditNeedsAccuracyRun(crate::compliance::ComplianceTest),
    #[error("the system under test failed: {message} (logs in {}; nothing verified)", logs.display())]
    ComplianceRunFailed { message: String, logs: PathBuf },
    #[error(
        "--out {}: it would write into the submission's run {}; give the compliance test a folder of its own",
        out.display(),
        reference.display()
    )]
    OutIsReference { out: PathBuf, reference: PathBuf },
    #[error("cannot copy {} into {}", from.display(), into.display())]
    Copy {
        from: PathBuf,
        into: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl From<PowerError> for SessionError {
    fn from(error: PowerError) -> Self {
        SessionError::Power(Box::new(error))
    }
}

impl From<crate::power::PowerReadError> for SessionError {
    fn from(error: crate::power::PowerReadError) -> Self {
        SessionError::Power(Box::new(error.into()))
    }
}

fn ranging_failed(out: &std::path::Path, why: &Option<String>) -> String {
    match why {
        None => format!(
            "the ranging run did not complete (logs in {}); the testing run was not started",
            out.display()
        ),
        Some(lost) => format!(
            "{lost} (in the ranging run, logs in {}); the testing run was not started",
            out.display()
        ),
    }
}
