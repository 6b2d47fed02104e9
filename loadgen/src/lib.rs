//! The LoadGen engine: model-agnostic, bit-exact with the official MLPerf LoadGen 6.0.17.
//!
//! A benchmark implements [`SystemUnderTest`] and [`QuerySampleLibrary`], builds
//! [`TestSettings`] (directly or from mlperf.conf/user.conf with [`config`]) and calls
//! [`start_test`]. The engine knows nothing of plugins, WebAssembly or power meters. Its public
//! surface is the items re-exported here and the modules `config`, `early_stopping`, `logging`,
//! `rng` and `testing`; the rest is private.

mod abort;
mod completion;
pub mod config;
mod diagnostics;
mod domain;
pub mod early_stopping;
pub mod early_stopping_table;
mod effective;
mod engine;
mod issue;
mod issue_threads;
mod loadable_sets;
pub mod logging;
mod measurements;
mod memory;
mod progress;
mod query_gen;
mod ranked;
mod recent_schedule;
mod results;
pub mod rng;
mod schedule;
mod series;
mod settings;
mod slot_release;
pub mod suggest;
mod sut;
mod sut_calls;
pub mod testing;
mod types;

pub use abort::{abort_test, abort_test_because, AbortWatch};
pub use completion::{AccuracyRecord, Completer, CompletionAnomalies, CompletionSink, SlotArena};
pub use diagnostics::{Diagnostic, Severity};
pub use domain::{OutOfDomain, MOST_QUERIES};
pub use effective::EffectiveSettings;
pub use engine::FindPeakReport;
pub use engine::{
    check_official_schedule, check_query_size, start_test, start_test_with, AbandonHook,
    SampleTimes, SeriesObserver, SeriesObserverHook, SeriesReport, TestContext, TestError,
    TestResult,
};
pub use issue::StopReason;
pub use memory::available_memory;
pub use progress::{ExternalProgress, ProgressHandle, ProgressSnapshot};
pub use query_gen::GenerationError;
pub use results::{
    EarlyStoppingReport, LatencyStats, PerformanceSummary, ScenarioMetrics, SingleStreamTokenRates,
    TokenRates, TokenSummary, Validity, REPORTED_PERCENTILES,
};
pub use settings::{
    LogOutputSettings, LogSettings, TestMode, TestScenario, TestSettings, DEFAULT_ISSUE_SPIN,
};
pub use sut::{QslError, QuerySampleLibrary, SystemUnderTest};
pub use types::{
    monotonic_ns, AsSampleResponse, QuerySample, QuerySampleIndex, QuerySampleResponse, ResponseId,
};
