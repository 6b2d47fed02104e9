//! The official LoadGen as a second engine (`--engine official`): the same system under test
//! and sample library the native engine drives, adapted to the official library's interfaces.
//!
//! Completions reach the official `QuerySamplesComplete` through a [`Completer`] that forwards
//! to it, so SUT code (a plugin) is the same under both engines. What the official engine
//! lacks, a failure report and a drain timeout, a [`watchdog`] adds: when the official
//! library would wait forever, the process ends with an INVALID verdict.

mod adapters;
pub(crate) mod outstanding;
pub mod result;
pub mod settings;
mod sink;
pub mod watchdog;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub use mlperf_official_loadgen as engine;
use mlperf_official_loadgen::{LogOutput, TestSettings as OfficialSettings};

use crate::loadgen::{Completer, ProgressHandle, QuerySampleLibrary, SystemUnderTest};
use adapters::{OfficialQsl, OfficialSut};
pub use result::SampleCounts;
use sink::OfficialSink;
use watchdog::Watchdog;

/// How a test under the official engine is watched.
#[derive(Clone, Debug)]
pub struct Watch {
    /// End the run when samples are outstanding and none completes for this long.
    pub drain_timeout: Duration,
    /// End the run when a call into the SUT has not returned after this long (`None`: wait).
    pub stall_timeout: Option<Duration>,
    /// The SUT's name, for the reason a stall gives.
    pub sut_name: String,
    /// Called (on the watchdog's thread) before the process ends on an abort, with the
    /// reason: the caller's last words (a verdict file, a message).
    pub on_abort: fn(&AbortReport),
    /// The signal the process was interrupted by, if one came (its number and name): the
    /// official library cannot be cut short, so the watchdog ends the run as for a stall, its
    /// logs flushed as far as written, and the process exits 128 + the signal.
    pub interrupted: fn() -> Option<(i32, &'static str)>,
    /// Fed with the test's counters as it runs (for a progress bar).
    pub progress: Option<ProgressHandle>,
}

/// Why the official engine was aborted, and how far it got.
#[derive(Clone, Debug)]
pub struct AbortReport {
    pub reason: String,
    pub counts: SampleCounts,
}

/// Runs one test on the official LoadGen with `sut` and `qsl`; its logs go to `log`. Returns
/// what went through the adapter.
pub fn run_test(
    sut: &dyn SystemUnderTest,
    qsl: &mut dyn QuerySampleLibrary,
    settings: &OfficialSettings,
    log: &LogOutput,
    audit_config: Option<&Path>,
    watch: &Watch,
) -> Result<SampleCounts, mlperf_official_loadgen::Error> {
    let sink = Arc::new(OfficialSink::default());
    let completer = Completer::forwarding_to(sink.clone());
    let watchdog = Watchdog::start(sink.clone(), watch.clone(), progress_limits(settings));
    let official_sut = OfficialSut::new(sut, completer, &sink);
    let mut official_qsl = OfficialQsl::new(qsl, &sink);
    let result = mlperf_official_loadgen::start_test(
        &official_sut,
        &mut official_qsl,
        settings,
        log,
        audit_config,
    );
    watchdog.stop();
    result.map(|()| sink.counts())
}

/// The minimum duration and query count of `settings`, for the progress bar.
fn progress_limits(settings: &OfficialSettings) -> watchdog::Limits {
    let read = |key: &str| {
        settings
            .get(key)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    watchdog::Limits {
        mode: settings.mode(),
        min_duration: Duration::from_millis(read("min_duration_ms")),
        min_queries: read("min_query_count"),
    }
}
