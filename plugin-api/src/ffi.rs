//! `#[repr(C)]` mirrors of `include/mlperf_plugin.h`, field for field. Layout is asserted at
//! compile time here and checked against the C compiler in tests.
//!
//! The structs derive abi_stable's `StableAbi` so that SDK-built plugins can export a layout
//! descriptor ([`crate::layout`]). abi_stable compares field names and types and also the
//! parameter names of the function pointers: renaming any of them refuses Rust plugins built
//! before the rename.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

use abi_stable::StableAbi;

pub const ABI_MAJOR: u32 = 1;
pub const ABI_MINOR: u32 = 5;
/// The entry symbol every plugin exports, NUL-terminated for `dlsym`.
pub const ENTRY_SYMBOL: &[u8] = b"mlperf_plugin_entry\0";
/// Since 1.1: the power meter's entry in a library whose [`ENTRY_SYMBOL`] is a SUT.
pub const POWER_ENTRY_SYMBOL: &[u8] = b"mlperf_power_plugin_entry\0";

pub const CAP_ASYNC_COMPLETION: u64 = 1 << 0;
pub const CAP_CONCURRENT_ISSUE: u64 = 1 << 1;
pub const CAP_NATIVE_BATCHING: u64 = 1 << 2;
pub const CAP_TOKENS: u64 = 1 << 3;
pub const CAP_NEEDS_SAMPLE_DATA: u64 = 1 << 4;
/// Since 1.4: what `allocate_samples` gave.
pub const MEMORY_HOST: u32 = 1;
pub const MEMORY_PINNED_HOST: u32 = 2;
/// The device's own memory: `memory` is the device's address, which the host never reads or
/// writes; it fills the block through `write_samples`.
pub const MEMORY_DEVICE: u32 = 3;
/// Since 1.4: the plugin reports each sample's timing (`report_timing`).
pub const CAP_SAMPLE_TIMING: u64 = 1 << 5;

pub const SCENARIO_SINGLE_STREAM: u32 = 1;
pub const SCENARIO_MULTI_STREAM: u32 = 2;
pub const SCENARIO_SERVER: u32 = 3;
pub const SCENARIO_OFFLINE: u32 = 4;

pub const MODE_SUBMISSION: u32 = 1;
pub const MODE_ACCURACY: u32 = 2;
pub const MODE_PERFORMANCE: u32 = 3;
pub const MODE_FIND_PEAK: u32 = 4;

pub const RUN_TOKEN_LATENCIES: u32 = 1 << 0;

pub const KIND_SUT: u32 = 1;
pub const KIND_POWER: u32 = 2;

pub const POWER_SCOPE_COMPONENT: u32 = 0;
pub const POWER_SCOPE_WALL: u32 = 1;

pub const POWER_HAS_ENERGY_COUNTER: u32 = 1 << 0;
pub const POWER_SIMULATED: u32 = 1 << 1;

pub const ERROR_UNKNOWN: i32 = 1;
pub const ERROR_INVALID_ARGUMENT: i32 = 2;
pub const ERROR_INVALID_CONFIG: i32 = 3;
pub const ERROR_UNSUPPORTED: i32 = 4;
pub const ERROR_RESOURCE_EXHAUSTED: i32 = 5;
pub const ERROR_DEVICE: i32 = 6;
pub const ERROR_INTERNAL: i32 = 7;
pub const ERROR_PANIC: i32 = 8;

pub const LOG_ERROR: i32 = 1;
pub const LOG_WARN: i32 = 2;
pub const LOG_INFO: i32 = 3;
pub const LOG_DEBUG: i32 = 4;
pub const LOG_TRACE: i32 = 5;

pub const DEVICE_OTHER: u32 = 0;
pub const DEVICE_CPU: u32 = 1;
pub const DEVICE_GPU: u32 = 2;
pub const DEVICE_NPU: u32 = 3;

#[repr(C)]
#[derive(StableAbi, Debug)]
pub struct mlperf_extension {
    pub struct_size: usize,
    pub r#type: u32,
    pub next: *const mlperf_extension,
}

#[repr(C)]
#[derive(StableAbi, Debug)]
pub struct mlperf_error {
    pub struct_size: usize,
    pub next: *const mlperf_extension,
    pub code: i32,
    pub message: *const c_char,
    pub release: Option<unsafe extern "C" fn(error: *mut mlperf_error)>,
}

#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct mlperf_attribute {
    pub key: *const c_char,
    pub value: *const c_char,
}

/// Since 1.3: one named input within a sample's data, alike for every sample of a run.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct mlperf_input {
    pub struct_size: usize,
    pub name: *const c_char,
    pub offset: u64,
    pub length: u64,
    pub dtype: i32,
    pub rank: u32,
    pub shape: *const i64,
}

#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct mlperf_sample {
    pub struct_size: usize,
    pub id: u64,
    pub index: u64,
    pub data: *const c_void,
    pub length: u64,
    pub dtype: i32,
    pub rank: u32,
    pub shape: *const i64,
}

/// Since 1.3: one named output of a response.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct mlperf_output {
    pub struct_size: usize,
    pub name: *const c_char,
    pub data: *const c_void,
    pub length: u64,
    pub dtype: i32,
    pub rank: u32,
    pub shape: *const i64,
}

#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct mlperf_response {
    pub struct_size: usize,
    pub id: u64,
    pub data: *const c_void,
    pub length: u64,
    pub n_tokens: i64,
}

/// Since 1.3: a response with named outputs, for the host's `complete_named`: an
/// [`mlperf_response`]'s fields, then the outputs.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct mlperf_named_response {
    pub struct_size: usize,
    pub id: u64,
    pub data: *const c_void,
    pub length: u64,
    pub n_tokens: i64,
    pub outputs: *const mlperf_output,
    pub n_outputs: u64,
}

/// Since 1.4: one device an instance may be created for.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct mlperf_device {
    pub struct_size: usize,
    pub next: *const mlperf_extension,
    pub ordinal: u32,
    pub kind: u32,
    pub name: *const c_char,
    pub id: *const c_char,
    pub memory_bytes: u64,
}

/// Since 1.4: where one sample's time went inside the plugin, on the host's clock
/// (`CLOCK_MONOTONIC` ns; 0 for a time not known).
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct mlperf_sample_timing {
    pub struct_size: usize,
    pub id: u64,
    pub dequeued_ns: u64,
    pub compute_start_ns: u64,
    pub compute_end_ns: u64,
}

/// Since 1.5: the kinds of a single sample's failure.
pub const FAILURE_OTHER: i32 = 0;
pub const FAILURE_STATUS: i32 = 1;
pub const FAILURE_TIMEOUT: i32 = 2;
pub const FAILURE_CONNECTION: i32 = 3;
pub const FAILURE_STREAM: i32 = 4;

/// Since 1.5: one sample that failed on its own.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct mlperf_sample_failure {
    pub struct_size: usize,
    pub id: u64,
    pub kind: i32,
    pub status: i32,
    pub message: *const c_char,
    pub length: u64,
}

/// Since 1.3: the test an instance is created for.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct mlperf_run_description {
    pub struct_size: usize,
    pub next: *const mlperf_extension,
    pub scenario: u32,
    pub mode: u32,
    pub samples_per_query: u64,
    pub target_qps: f64,
    pub target_latency_ns: u64,
    pub target_latency_percentile: f64,
    pub expected_latency_ns: u64,
    pub min_duration_ms: u64,
    pub min_query_count: u64,
    pub performance_sample_count: u64,
    pub total_sample_count: u64,
    pub flags: u32,
    pub issue_threads: u32,
    pub ttft_latency_ns: u64,
    pub tpot_latency_ns: u64,
    pub max_samples_per_call: u64,
    pub inputs: *const mlperf_input,
    pub n_inputs: u64,
    // Appended in 1.4: read only when `struct_size` covers them (see [`RUN_SIZE_1_3`]).
    pub device: *const mlperf_device,
    pub instance_index: u32,
    pub instance_count: u32,
}

pub type CompleteFn =
    unsafe extern "C" fn(context: *mut c_void, responses: *const mlperf_response, count: usize);
pub type LogFn =
    unsafe extern "C" fn(context: *mut c_void, level: i32, message: *const c_char, length: usize);

#[repr(C)]
#[derive(StableAbi, Debug)]
pub struct mlperf_host_api {
    pub struct_size: usize,
    pub next: *const mlperf_extension,
    pub abi_major: u32,
    pub abi_minor: u32,
    pub context: *mut c_void,
    // Spelled out rather than `CompleteFn`/`LogFn`: StableAbi describes a function pointer
    // only when it sees its signature, not through a type alias.
    pub complete: Option<
        unsafe extern "C" fn(context: *mut c_void, responses: *const mlperf_response, count: usize),
    >,
    pub first_token: Option<
        unsafe extern "C" fn(context: *mut c_void, responses: *const mlperf_response, count: usize),
    >,
    pub log: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            level: i32,
            message: *const c_char,
            length: usize,
        ),
    >,
    // Appended in 1.2: read only when `struct_size` covers it (hosts of 1.0 and 1.1 end at
    // `log`).
    pub fail:
        Option<unsafe extern "C" fn(context: *mut c_void, message: *const c_char, length: usize)>,
    // Appended in 1.3: read only when `struct_size` covers them.
    pub run: *const mlperf_run_description,
    pub complete_named: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            responses: *const mlperf_named_response,
            count: usize,
        ),
    >,
    // Appended in 1.4: read only when `struct_size` covers them (see [`HOST_SIZE_1_3`]).
    pub now_ns: Option<unsafe extern "C" fn(context: *mut c_void) -> u64>,
    pub report_timing: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            timings: *const mlperf_sample_timing,
            count: usize,
        ),
    >,
    // Appended in 1.5: read only when `struct_size` covers them (see [`HOST_SIZE_1_4`]).
    pub next_tokens: Option<
        unsafe extern "C" fn(context: *mut c_void, responses: *const mlperf_response, count: usize),
    >,
    pub fail_samples: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            failures: *const mlperf_sample_failure,
            count: usize,
        ),
    >,
}

/// Since 1.1: what a power meter measures.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct mlperf_power_info {
    pub struct_size: usize,
    pub next: *const mlperf_extension,
    pub scope: u32,
    pub flags: u32,
    pub description: *const c_char,
    pub period_ns: u64,
}

/// Since 1.1: one reading of a power meter; NaN for what is not known.
#[repr(C)]
#[derive(StableAbi, Debug, Clone, Copy)]
pub struct mlperf_power_reading {
    pub struct_size: usize,
    pub next: *const mlperf_extension,
    pub watts: f64,
    pub volts: f64,
    pub amps: f64,
    pub power_factor: f64,
    pub energy_joules: f64,
}

#[repr(C)]
#[derive(StableAbi, Debug)]
pub struct mlperf_plugin_api {
    pub struct_size: usize,
    pub next: *const mlperf_extension,
    pub abi_major: u32,
    pub abi_minor: u32,
    pub kind: u32,
    pub reserved: u32,
    pub name: *const c_char,
    pub version: *const c_char,
    pub capabilities: u64,
    pub init: Option<unsafe extern "C" fn(host: *const mlperf_host_api) -> *mut mlperf_error>,
    pub create: Option<
        unsafe extern "C" fn(
            host: *const mlperf_host_api,
            config_toml: *const c_char,
            config_length: usize,
            instance: *mut *mut c_void,
        ) -> *mut mlperf_error,
    >,
    pub destroy: Option<unsafe extern "C" fn(instance: *mut c_void)>,
    pub attributes: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            attributes: *mut *const mlperf_attribute,
            count: *mut usize,
        ) -> *mut mlperf_error,
    >,
    pub issue_query: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            samples: *const mlperf_sample,
            count: usize,
        ) -> *mut mlperf_error,
    >,
    pub flush_queries: Option<unsafe extern "C" fn(instance: *mut c_void) -> *mut mlperf_error>,
    // Appended in 1.1: read only when `struct_size` covers them (see [`TABLE_SIZE_1_0`]).
    pub power_info: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            info: *mut mlperf_power_info,
        ) -> *mut mlperf_error,
    >,
    pub read_power: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            reading: *mut mlperf_power_reading,
        ) -> *mut mlperf_error,
    >,
    // Appended in 1.3: read only when `struct_size` covers them (see [`TABLE_SIZE_1_2`]).
    pub load_samples: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            samples: *const mlperf_sample,
            count: usize,
        ) -> *mut mlperf_error,
    >,
    pub unload_samples: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            samples: *const mlperf_sample,
            count: usize,
        ) -> *mut mlperf_error,
    >,
    // Appended in 1.4: read only when `struct_size` covers it (see [`TABLE_SIZE_1_3`]).
    pub devices: Option<
        unsafe extern "C" fn(
            host: *const mlperf_host_api,
            config_toml: *const c_char,
            config_length: usize,
            devices: *mut *const mlperf_device,
            count: *mut usize,
        ) -> *mut mlperf_error,
    >,
    pub allocate_samples: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            bytes: u64,
            alignment: u64,
            memory_kind: *mut u32,
            memory: *mut *mut c_void,
        ) -> *mut mlperf_error,
    >,
    pub free_samples:
        Option<unsafe extern "C" fn(instance: *mut c_void, memory: *mut c_void, bytes: u64)>,
    pub write_samples: Option<
        unsafe extern "C" fn(
            instance: *mut c_void,
            memory: *mut c_void,
            offset: u64,
            data: *const c_void,
            length: u64,
        ) -> *mut mlperf_error,
    >,
}

/// `sizeof(mlperf_plugin_api)` of ABI 1.0, before the power functions: the smallest table a
/// host of this major accepts, and the size of every table of a 1.0 plugin.
pub const TABLE_SIZE_1_0: usize = std::mem::offset_of!(mlperf_plugin_api, power_info);
/// `sizeof(mlperf_plugin_api)` of ABI 1.1 and 1.2, before the sample set functions.
pub const TABLE_SIZE_1_2: usize = std::mem::offset_of!(mlperf_plugin_api, load_samples);
/// `sizeof(mlperf_plugin_api)` of ABI 1.3, before `devices`.
pub const TABLE_SIZE_1_3: usize = std::mem::offset_of!(mlperf_plugin_api, devices);
/// `sizeof(mlperf_run_description)` of ABI 1.3, before `device`.
pub const RUN_SIZE_1_3: usize = std::mem::offset_of!(mlperf_run_description, device);
/// `sizeof(mlperf_host_api)` of ABI 1.2, before `run`.
pub const HOST_SIZE_1_2: usize = std::mem::offset_of!(mlperf_host_api, run);
/// `sizeof(mlperf_host_api)` of ABI 1.3, before `now_ns`.
pub const HOST_SIZE_1_3: usize = std::mem::offset_of!(mlperf_host_api, now_ns);
/// `sizeof(mlperf_host_api)` of ABI 1.4, before `next_tokens`.
pub const HOST_SIZE_1_4: usize = std::mem::offset_of!(mlperf_host_api, next_tokens);

// SAFETY: the table is immutable static data and its pointers name static strings and
// functions; sharing it across threads is what the ABI intends.
unsafe impl Sync for mlperf_plugin_api {}
// SAFETY: as for Sync: nothing in the table is owned by, or tied to, the thread that made it.
unsafe impl Send for mlperf_plugin_api {}

pub type mlperf_plugin_entry_fn =
    unsafe extern "C" fn(host_abi_major: u32, host_abi_minor: u32) -> *const mlperf_plugin_api;

// Layout on 64-bit targets, as the C compiler lays the header out (also checked in tests).
#[cfg(target_pointer_width = "64")]
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<mlperf_extension>() == 24);
    assert!(size_of::<mlperf_error>() == 40);
    assert!(offset_of!(mlperf_error, code) == 16);
    assert!(offset_of!(mlperf_error, release) == 32);
    assert!(size_of::<mlperf_attribute>() == 16);
    assert!(size_of::<mlperf_input>() == 48);
    assert!(offset_of!(mlperf_input, offset) == 16);
    assert!(offset_of!(mlperf_input, shape) == 40);
    assert!(size_of::<mlperf_sample>() == 56);
    assert!(offset_of!(mlperf_sample, dtype) == 40);
    assert!(offset_of!(mlperf_sample, shape) == 48);
    assert!(size_of::<mlperf_response>() == 40);
    assert!(offset_of!(mlperf_response, n_tokens) == 32);
    assert!(size_of::<mlperf_output>() == 48);
    assert!(offset_of!(mlperf_output, data) == 16);
    assert!(offset_of!(mlperf_output, shape) == 40);
    // A named response begins as a response does.
    assert!(size_of::<mlperf_named_response>() == 56);
    assert!(offset_of!(mlperf_named_response, n_tokens) == 32);
    assert!(offset_of!(mlperf_named_response, outputs) == 40);
    assert!(size_of::<mlperf_host_api>() == 112);
    assert!(offset_of!(mlperf_host_api, fail_samples) == 104);
    assert!(size_of::<mlperf_sample_failure>() == 40);
    assert!(offset_of!(mlperf_sample_failure, message) == 24);
    assert!(offset_of!(mlperf_host_api, context) == 24);
    assert!(offset_of!(mlperf_host_api, log) == 48);
    // 1.0's and 1.1's host table ended here; 1.2 appended `fail`.
    assert!(offset_of!(mlperf_host_api, fail) == 56);
    // 1.2's host table ended here; 1.3 appended `run`.
    assert!(HOST_SIZE_1_2 == 64);
    assert!(offset_of!(mlperf_host_api, complete_named) == 72);
    // 1.3's host table ended here; 1.4 appended the clock and the timing report.
    assert!(HOST_SIZE_1_3 == 80);
    assert!(offset_of!(mlperf_host_api, report_timing) == 88);
    // 1.4's host table ended here; 1.5 appended the tokens after the first.
    assert!(HOST_SIZE_1_4 == 96);
    assert!(size_of::<mlperf_sample_timing>() == 40);
    assert!(offset_of!(mlperf_sample_timing, compute_end_ns) == 32);
    assert!(size_of::<mlperf_run_description>() == 160);
    // 1.3's run description ended here; 1.4 appended the device.
    assert!(RUN_SIZE_1_3 == 144);
    assert!(offset_of!(mlperf_run_description, instance_count) == 156);
    assert!(size_of::<mlperf_device>() == 48);
    assert!(offset_of!(mlperf_device, name) == 24);
    assert!(offset_of!(mlperf_device, memory_bytes) == 40);
    assert!(offset_of!(mlperf_run_description, inputs) == 128);
    assert!(offset_of!(mlperf_run_description, samples_per_query) == 24);
    assert!(offset_of!(mlperf_run_description, flags) == 96);
    assert!(offset_of!(mlperf_run_description, tpot_latency_ns) == 112);
    assert!(size_of::<mlperf_power_info>() == 40);
    assert!(offset_of!(mlperf_power_info, description) == 24);
    assert!(offset_of!(mlperf_power_info, period_ns) == 32);
    assert!(size_of::<mlperf_power_reading>() == 56);
    assert!(offset_of!(mlperf_power_reading, watts) == 16);
    assert!(offset_of!(mlperf_power_reading, energy_joules) == 48);
    assert!(size_of::<mlperf_plugin_api>() == 168);
    assert!(offset_of!(mlperf_plugin_api, capabilities) == 48);
    assert!(offset_of!(mlperf_plugin_api, init) == 56);
    assert!(offset_of!(mlperf_plugin_api, flush_queries) == 96);
    // 1.0's table ended here; 1.1 appended the power functions.
    assert!(TABLE_SIZE_1_0 == 104);
    assert!(offset_of!(mlperf_plugin_api, read_power) == 112);
    // 1.2's table ended here; 1.3 appended the sample set functions.
    assert!(TABLE_SIZE_1_2 == 120);
    assert!(offset_of!(mlperf_plugin_api, unload_samples) == 128);
    // 1.3's table ended here; 1.4 appended `devices`.
    assert!(TABLE_SIZE_1_3 == 136);
    assert!(offset_of!(mlperf_plugin_api, allocate_samples) == 144);
    assert!(offset_of!(mlperf_plugin_api, free_samples) == 152);
    assert!(offset_of!(mlperf_plugin_api, write_samples) == 160);
};
