//! `TestSettings`: every field of the official Python binding, with its name there
//! (`ttft_latency`, `tpot_latency`), its default and its conversions, and `FromConfig`.

use std::ffi::CString;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use mlperf_loadgen::config::{ConfType, ConfigError, ConfigFile, MULTIPLE_CONF_FILES_MESSAGE};
use mlperf_loadgen::{self as loadgen, Diagnostic};
use pyo3::exceptions::{PyRuntimeWarning, PyUserWarning};
use pyo3::prelude::*;
use pyo3::PyTypeInfo;

use crate::convert::{Count, Flag, Integer};
use crate::enums::{TestMode, TestScenario};

/// `FromConfig` return codes, as the official `-ENOENT` / `-EINVAL`.
const ENOENT: i32 = -2;
const EINVAL: i32 = -22;

/// How many user.conf files `FromConfig` has read in this process: the official counter is
/// process-wide, so the first one also applies mlperf.conf and a second one is an error.
static USER_CONF_COUNT: AtomicU64 = AtomicU64::new(0);

/// Errors `FromConfig` found, for the detail log of the next test (the official LoadGen
/// queues them in its logger until a test starts).
static EARLIER_DIAGNOSTICS: Mutex<Vec<Diagnostic>> = Mutex::new(Vec::new());

/// The diagnostics queued since the last test, leaving none.
pub(crate) fn take_earlier_diagnostics() -> Vec<Diagnostic> {
    std::mem::take(
        &mut EARLIER_DIAGNOSTICS
            .lock()
            .unwrap_or_else(|p| p.into_inner()),
    )
}

fn queue(diagnostic: Diagnostic) {
    EARLIER_DIAGNOSTICS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(diagnostic);
}

#[pyclass(module = "mlperf_host.loadgen")]
#[derive(Debug, Clone, Default)]
pub struct TestSettings {
    pub inner: loadgen::TestSettings,
}

macro_rules! settings_fields {
    (methods { $($methods:tt)* }
     $($getter:ident, $setter:ident => $field:ident: $get:ty, $set:ty;)*) => {
        #[pymethods]
        impl TestSettings {
            $(
                #[getter]
                fn $getter(&self) -> $get {
                    <$get>::from(self.inner.$field)
                }

                #[setter]
                fn $setter(&mut self, value: $set) {
                    self.inner.$field = value.into();
                }
            )*
            $($methods)*
        }
    };
}

settings_fields! {
    methods {
        #[new]
        fn new() -> Self {
            TestSettings::default()
        }

        /// Applies a config file as the official `FromConfig` does: `conf_type` 1 (default) a
        /// user.conf, preceded on the process's first call by the built-in mlperf.conf; 0 the
        /// built-in mlperf.conf (`path` unused); any other a config file on its own (2: an
        /// audit.config). Returns 0, -2 (the file cannot be read) or -22 (a line is malformed:
        /// nothing of the file is applied). A `scenario` that is no scenario's name applies the
        /// `*.*` and model-wide keys, as the official does. Errors go to the next test's detail
        /// log and are shown as Python warnings, as are our warnings (an unknown key, an unknown
        /// scenario).
        #[pyo3(name = "FromConfig", signature = (path, model, scenario, conf_type = 1))]
        fn read_config(
            &mut self,
            py: Python<'_>,
            path: &str,
            model: &str,
            scenario: &str,
            conf_type: i32,
        ) -> PyResult<i32> {
            if !loadgen::TestScenario::ALL.iter().any(|s| s.as_str() == scenario) {
                warn::<PyUserWarning>(
                    py,
                    &format!(
                        "FromConfig: {scenario:?} is not a scenario (SingleStream, MultiStream, Server or Offline): only the keys of every scenario apply"
                    ),
                )?;
            }
            if conf_type == 1 {
                if USER_CONF_COUNT.fetch_add(1, Ordering::SeqCst) == 0 {
                    self.apply(py, ConfigFile::embedded(), model, scenario, ConfType::MlperfConf)?;
                } else {
                    queue(Diagnostic::error("error_invalid_config", MULTIPLE_CONF_FILES_MESSAGE));
                }
            }
            if conf_type == 0 {
                self.apply(py, ConfigFile::embedded(), model, scenario, ConfType::MlperfConf)?;
                return Ok(0);
            }
            match ConfigFile::read(Path::new(path)) {
                Ok(file) => {
                    // The official reads every file but mlperf.conf alike, with the model given.
                    self.apply(py, &file, model, scenario, ConfType::UserConf)?;
                    Ok(0)
                }
                Err(ConfigError::Io { .. }) => {
                    report_error(py, format!("can't open file {path}"))?;
                    Ok(ENOENT)
                }
                Err(error) => {
                    for line in error.diagnostics() {
                        report_error(py, line.to_string())?;
                    }
                    Ok(EINVAL)
                }
            }
        }
    }

    scenario, set_scenario => scenario: TestScenario, TestScenario;
    mode, set_mode => mode: TestMode, TestMode;
    single_stream_expected_latency_ns, set_single_stream_expected_latency_ns => single_stream_expected_latency_ns: f64, f64;
    single_stream_target_latency_percentile, set_single_stream_target_latency_percentile => single_stream_target_latency_percentile: f64, f64;
    multi_stream_expected_latency_ns, set_multi_stream_expected_latency_ns => multi_stream_expected_latency_ns: f64, f64;
    multi_stream_target_latency_percentile, set_multi_stream_target_latency_percentile => multi_stream_target_latency_percentile: f64, f64;
    multi_stream_samples_per_query, set_multi_stream_samples_per_query => multi_stream_samples_per_query: u64, Count;
    server_target_qps, set_server_target_qps => server_target_qps: f64, f64;
    server_target_latency_ns, set_server_target_latency_ns => server_target_latency_ns: u64, Count;
    server_target_latency_percentile, set_server_target_latency_percentile => server_target_latency_percentile: f64, f64;
    server_coalesce_queries, set_server_coalesce_queries => server_coalesce_queries: bool, Flag;
    server_find_peak_qps_decimals_of_precision, set_server_find_peak_qps_decimals_of_precision => server_find_peak_qps_decimals_of_precision: i32, Integer<i32>;
    server_find_peak_qps_boundary_step_size, set_server_find_peak_qps_boundary_step_size => server_find_peak_qps_boundary_step_size: f64, f64;
    server_max_async_queries, set_server_max_async_queries => server_max_async_queries: u64, Count;
    server_num_issue_query_threads, set_server_num_issue_query_threads => server_num_issue_query_threads: u64, Count;
    offline_expected_qps, set_offline_expected_qps => offline_expected_qps: f64, f64;
    sample_concatenate_permutation, set_sample_concatenate_permutation => sample_concatenate_permutation: bool, Flag;
    min_duration_ms, set_min_duration_ms => min_duration_ms: u64, Count;
    max_duration_ms, set_max_duration_ms => max_duration_ms: u64, Count;
    min_query_count, set_min_query_count => min_query_count: u64, Count;
    max_query_count, set_max_query_count => max_query_count: u64, Count;
    qsl_rng_seed, set_qsl_rng_seed => qsl_rng_seed: u64, Count;
    sample_index_rng_seed, set_sample_index_rng_seed => sample_index_rng_seed: u64, Count;
    schedule_rng_seed, set_schedule_rng_seed => schedule_rng_seed: u64, Count;
    accuracy_log_rng_seed, set_accuracy_log_rng_seed => accuracy_log_rng_seed: u64, Count;
    accuracy_log_probability, set_accuracy_log_probability => accuracy_log_probability: f64, f64;
    accuracy_log_sampling_target, set_accuracy_log_sampling_target => accuracy_log_sampling_target: u64, Count;
    test05, set_test05 => test05: bool, Flag;
    test05_qsl_rng_seed, set_test05_qsl_rng_seed => test05_qsl_rng_seed: u64, Count;
    test05_sample_index_rng_seed, set_test05_sample_index_rng_seed => test05_sample_index_rng_seed: u64, Count;
    test05_schedule_rng_seed, set_test05_schedule_rng_seed => test05_schedule_rng_seed: u64, Count;
    print_timestamps, set_print_timestamps => print_timestamps: bool, Flag;
    performance_issue_unique, set_performance_issue_unique => performance_issue_unique: bool, Flag;
    performance_issue_same, set_performance_issue_same => performance_issue_same: bool, Flag;
    performance_issue_same_index, set_performance_issue_same_index => performance_issue_same_index: u64, Count;
    performance_sample_count_override, set_performance_sample_count_override => performance_sample_count_override: u64, Count;
    accuracy_sample_count_override, set_accuracy_sample_count_override => accuracy_sample_count_override: u64, Count;
    use_token_latencies, set_use_token_latencies => use_token_latencies: bool, Flag;
    ttft_latency, set_ttft_latency => server_ttft_latency: u64, Count;
    tpot_latency, set_tpot_latency => server_tpot_latency: u64, Count;
    infer_token_latencies, set_infer_token_latencies => infer_token_latencies: bool, Flag;
    token_latency_scaling_factor, set_token_latency_scaling_factor => token_latency_scaling_factor: u64, Count;

}

impl TestSettings {
    fn apply(
        &mut self,
        py: Python<'_>,
        file: &ConfigFile,
        model: &str,
        scenario: &str,
        conf_type: ConfType,
    ) -> PyResult<()> {
        for warning in file.apply_for_scenario_named(&mut self.inner, model, scenario, conf_type) {
            warn::<PyUserWarning>(py, &warning.to_string())?;
        }
        Ok(())
    }
}

/// A config error: queued for the next test's detail log and shown now as a Python warning.
fn report_error(py: Python<'_>, message: String) -> PyResult<()> {
    queue(Diagnostic::error("error_invalid_config", message.clone()));
    warn::<PyRuntimeWarning>(py, &message)
}

/// Issues a Python warning of category `W` (an error if the warning filters say so).
pub(crate) fn warn<W: PyTypeInfo>(py: Python<'_>, message: &str) -> PyResult<()> {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    PyErr::warn(py, &py.get_type::<W>(), &text, 1)
}
