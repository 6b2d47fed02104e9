//! `mlperf_host.loadgen`: the mlperf-host LoadGen engine behind the API of the official
//! `mlperf_loadgen` 6.0.17 Python module, so an existing harness switches with one import.
//!
//! The module's names, defaults and conversions follow the official pybind11 binding; where
//! the official module crashes or hangs (an exception in a callback, a bad handle, a completion
//! from a thread it did not expect) this one raises or ends the run INVALID instead.

mod complete;
mod convert;
mod enums;
mod gil;
mod handles;
mod log_settings;
mod samples;
mod signals;
mod start;
mod sut;
mod test_settings;

use pyo3::prelude::*;

/// The module as Python imports it: `mlperf_host.loadgen`.
#[pymodule(name = "loadgen")]
fn loadgen(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add(
        "__doc__",
        "MLPerf Inference load generator (mlperf-host engine).",
    )?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add_class::<enums::TestScenario>()?;
    module.add_class::<enums::TestMode>()?;
    module.add_class::<enums::LoggingMode>()?;
    module.add_class::<test_settings::TestSettings>()?;
    module.add_class::<log_settings::LogOutputSettings>()?;
    module.add_class::<log_settings::LogSettings>()?;
    module.add_class::<samples::QuerySample>()?;
    module.add_class::<samples::QuerySampleResponse>()?;
    enums::add_members(module)?;
    samples::add_vector_types(module)?;
    module.add_function(wrap_pyfunction!(handles::construct_sut, module)?)?;
    module.add_function(wrap_pyfunction!(handles::construct_fast_sut, module)?)?;
    module.add_function(wrap_pyfunction!(handles::construct_qdl, module)?)?;
    module.add_function(wrap_pyfunction!(handles::construct_qsl, module)?)?;
    module.add_function(wrap_pyfunction!(handles::destroy_sut, module)?)?;
    module.add_function(wrap_pyfunction!(handles::destroy_fast_sut, module)?)?;
    module.add_function(wrap_pyfunction!(handles::destroy_qdl, module)?)?;
    module.add_function(wrap_pyfunction!(handles::destroy_qsl, module)?)?;
    module.add_function(wrap_pyfunction!(start::start_test, module)?)?;
    module.add_function(wrap_pyfunction!(
        start::start_test_with_log_settings,
        module
    )?)?;
    module.add_function(wrap_pyfunction!(start::abort_test, module)?)?;
    module.add_function(wrap_pyfunction!(complete::query_samples_complete, module)?)?;
    module.add_function(wrap_pyfunction!(complete::first_token_complete, module)?)?;
    Ok(())
}
