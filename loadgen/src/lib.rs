//! The LoadGen engine: model-agnostic, bit-exact with the official MLPerf LoadGen 6.0.17.
//!
//! A benchmark implements [`SystemUnderTest`] and [`QuerySampleLibrary`], builds
//! [`TestSettings`] (directly or from mlperf.conf/user.conf with [`config`]) and calls
//! [`start_test`]. The engine knows nothing of plugins, WebAssembly or power meters.

pub mod completion;
pub mod config;
pub mod diagnostics;
pub mod early_stopping;
pub mod early_stopping_table;
pub mod effective;
mod engine;
pub(crate) mod issue;
mod issue_threads;
pub mod loadable_sets;
pub mod logging;
mod measurements;
pub mod progress;
pub mod query_gen;
pub mod results;
pub mod rng;
pub mod settings;
pub mod sut;
pub mod testing;
pub mod types;

pub use completion::{AccuracyRecord, Completer, CompletionAnomalies, CompletionSink};
pub use diagnostics::{Diagnostic, Severity};
pub use effective::EffectiveSettings;
pub use engine::FindPeakReport;
pub use engine::{
    abort_test, start_test, start_test_with, SeriesReport, TestContext, TestError, TestResult,
};
pub use issue::StopReason;
pub use progress::{ExternalProgress, ProgressHandle, ProgressSnapshot};
pub use results::{LatencyStats, PerformanceSummary, Validity};
pub use settings::{LogOutputSettings, LogSettings, TestMode, TestScenario, TestSettings};
pub use sut::{QslError, QuerySampleLibrary, SystemUnderTest};
pub use types::{AsSampleResponse, QuerySample, QuerySampleIndex, QuerySampleResponse, ResponseId};
