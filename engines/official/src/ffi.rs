//! The bridge's C ABI (glue/glue.cc), present when the official sources were compiled.

use std::ffi::{c_char, c_int, c_void};

use crate::{QuerySample, QuerySampleResponse};

pub(crate) const OK: c_int = 0;
pub(crate) const UNKNOWN_KEY: c_int = 1;
#[cfg(not(official_loadgen))]
pub(crate) const BAD_VALUE: c_int = 2;

#[repr(C)]
pub(crate) struct Sut {
    pub context: *mut c_void,
    pub name: *const c_char,
    pub name_length: usize,
    pub issue_query: unsafe extern "C" fn(*mut c_void, *const QuerySample, usize),
    pub flush_queries: unsafe extern "C" fn(*mut c_void),
}

#[repr(C)]
pub(crate) struct Qsl {
    pub context: *mut c_void,
    pub name: *const c_char,
    pub name_length: usize,
    pub total_sample_count: usize,
    pub performance_sample_count: usize,
    pub load_samples: unsafe extern "C" fn(*mut c_void, *const usize, usize),
    pub unload_samples: unsafe extern "C" fn(*mut c_void, *const usize, usize),
}

#[repr(C)]
pub(crate) struct LogSettings {
    pub outdir: *const c_char,
    pub prefix: *const c_char,
    pub suffix: *const c_char,
    pub prefix_with_datetime: c_int,
    pub copy_detail_to_stdout: c_int,
    pub copy_summary_to_stdout: c_int,
    pub enable_trace: c_int,
}

#[cfg(official_loadgen)]
extern "C" {
    pub(crate) fn mlh_settings_new() -> *mut c_void;
    pub(crate) fn mlh_settings_free(settings: *mut c_void);
    pub(crate) fn mlh_settings_from_config(
        settings: *mut c_void,
        path: *const c_char,
        model: *const c_char,
        scenario: *const c_char,
        conf_type: c_int,
    ) -> c_int;
    pub(crate) fn mlh_settings_set_scenario(settings: *mut c_void, scenario: c_int) -> c_int;
    pub(crate) fn mlh_settings_set_mode(settings: *mut c_void, mode: c_int) -> c_int;
    pub(crate) fn mlh_settings_get_scenario(settings: *const c_void) -> c_int;
    pub(crate) fn mlh_settings_get_mode(settings: *const c_void) -> c_int;
    pub(crate) fn mlh_settings_set(
        settings: *mut c_void,
        key: *const c_char,
        value: *const c_char,
    ) -> c_int;
    pub(crate) fn mlh_settings_get(
        settings: *const c_void,
        key: *const c_char,
        buffer: *mut c_char,
        length: usize,
    ) -> c_int;
    pub(crate) fn mlh_start_test(
        sut: *const Sut,
        qsl: *const Qsl,
        settings: *const c_void,
        log: *const LogSettings,
        audit_config: *const c_char,
        error: *mut c_char,
        error_length: usize,
    ) -> c_int;
    pub(crate) fn mlh_query_samples_complete(responses: *mut QuerySampleResponse, count: usize);
    pub(crate) fn mlh_first_token_complete(responses: *mut QuerySampleResponse, count: usize);
    pub(crate) fn mlh_loadgen_version(buffer: *mut c_char, length: usize);
    pub(crate) fn mlh_abort_test();
    pub(crate) fn mlh_run_cpp_null_sut(
        settings: *const c_void,
        log: *const LogSettings,
        qsl_samples: usize,
        worker: c_int,
        first_issue_ns: *mut u64,
        error: *mut c_char,
        error_length: usize,
    ) -> c_int;
}

/// Stand-ins with the bridge's signatures when the official sources were not compiled. Never
/// reached: every entry point checks [`crate::is_available`] first.
#[cfg(not(official_loadgen))]
mod absent {
    #![allow(clippy::missing_safety_doc)]
    use super::*;

    pub(crate) unsafe fn mlh_settings_new() -> *mut c_void {
        std::ptr::null_mut()
    }
    pub(crate) unsafe fn mlh_settings_free(_: *mut c_void) {}
    pub(crate) unsafe fn mlh_settings_from_config(
        _: *mut c_void,
        _: *const c_char,
        _: *const c_char,
        _: *const c_char,
        _: c_int,
    ) -> c_int {
        -1
    }
    pub(crate) unsafe fn mlh_settings_set_scenario(_: *mut c_void, _: c_int) -> c_int {
        BAD_VALUE
    }
    pub(crate) unsafe fn mlh_settings_set_mode(_: *mut c_void, _: c_int) -> c_int {
        BAD_VALUE
    }
    pub(crate) unsafe fn mlh_settings_get_scenario(_: *const c_void) -> c_int {
        -1
    }
    pub(crate) unsafe fn mlh_settings_get_mode(_: *const c_void) -> c_int {
        -1
    }
    pub(crate) unsafe fn mlh_settings_set(
        _: *mut c_void,
        _: *const c_char,
        _: *const c_char,
    ) -> c_int {
        UNKNOWN_KEY
    }
    pub(crate) unsafe fn mlh_settings_get(
        _: *const c_void,
        _: *const c_char,
        _: *mut c_char,
        _: usize,
    ) -> c_int {
        UNKNOWN_KEY
    }
    pub(crate) unsafe fn mlh_start_test(
        _: *const Sut,
        _: *const Qsl,
        _: *const c_void,
        _: *const LogSettings,
        _: *const c_char,
        _: *mut c_char,
        _: usize,
    ) -> c_int {
        3
    }
    pub(crate) unsafe fn mlh_query_samples_complete(_: *mut QuerySampleResponse, _: usize) {}
    pub(crate) unsafe fn mlh_first_token_complete(_: *mut QuerySampleResponse, _: usize) {}
    pub(crate) unsafe fn mlh_loadgen_version(_: *mut c_char, _: usize) {}
    pub(crate) unsafe fn mlh_abort_test() {}
    pub(crate) unsafe fn mlh_run_cpp_null_sut(
        _: *const c_void,
        _: *const LogSettings,
        _: usize,
        _: c_int,
        _: *mut u64,
        _: *mut c_char,
        _: usize,
    ) -> c_int {
        3
    }
}
#[cfg(not(official_loadgen))]
pub(crate) use absent::*;

extern "C" {
    /// The C library's `_exit`: ends the process without running exit handlers.
    #[link_name = "_exit"]
    pub(crate) fn exit_now(status: c_int) -> !;
}
