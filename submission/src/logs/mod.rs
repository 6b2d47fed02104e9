//! The run folder's files, in one place: their names, and the detail log read back with
//! explicit first/last semantics. The engine writes the LoadGen logs ([`LogFiles`]); the host
//! adds its own files beside them.

pub mod accuracy;
mod detail;

pub use detail::{DetailLog, DetailLogError, LoggedMessage};
pub use mlperf_loadgen::logging::LogFiles;

/// The LoadGen logs under the default output settings, as every reader finds them
/// ([`LogFiles::standard`] gives the same paths).
pub const SUMMARY_LOG: &str = "mlperf_log_summary.txt";
pub const DETAIL_LOG: &str = "mlperf_log_detail.txt";
pub const ACCURACY_LOG: &str = "mlperf_log_accuracy.json";
pub const TRACE_LOG: &str = "mlperf_log_trace.json";
/// `run --report`'s HTML report.
pub const REPORT_HTML: &str = "report.html";
/// mlperf-host's own summary of a run for programs (`schema/`).
pub const RESULT_JSON: &str = "result.json";

/// Written beside the official LoadGen's logs by `run --engine official`: what the native engine
/// logs about the run's provenance (`sut_model`, `sut_plugin_*`, …) and the official library
/// cannot, as one JSON object of the same keys.
pub const PROVENANCE_FILE: &str = "mlperf_host_provenance.json";

/// Written in the log directory when the watchdog ended the official engine.
pub const ABORTED_FILE: &str = "mlperf_host_aborted.txt";

/// The accuracy run's score, in the shape of MLPerf's accuracy scripts.
pub const ACCURACY_TXT: &str = "accuracy.txt";
/// The detail-log key of the data set's sha256 (its file's, or a manifest of its files').
pub const DATASET_SHA256: &str = "sut_dataset_sha256";

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_names_are_the_engines_default_ones() {
        let files = LogFiles::standard(Path::new("d"));
        let names = [
            (files.summary, SUMMARY_LOG),
            (files.detail, DETAIL_LOG),
            (files.accuracy, ACCURACY_LOG),
            (files.trace, TRACE_LOG),
            (files.result, RESULT_JSON),
        ];
        for (path, name) in names {
            assert_eq!(path, Path::new("d").join(name));
        }
    }
}
