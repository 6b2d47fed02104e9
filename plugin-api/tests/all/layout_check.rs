//! The layout descriptor check: a plugin built against a plugin-api whose structs differ from
//! the host's is refused with a message naming the type and field.

use ::mlperf_plugin_api::layout::{check_layout, expected};
use abi_stable::StableAbi;

/// A copy of the ABI's types as a plugin built against another plugin-api would have them,
/// with `mlperf_sample`'s and `mlperf_response`'s fields given by the caller, and the fields of
/// `mlperf_host_api` after `log` (by default 1.2's `fail` and 1.3's `run`), and functions
/// appended after 1.4's.
macro_rules! abi_copy {
    (
        $module:ident,
        sample { $($sample:tt)* },
        response { $($response:tt)* }
        $(, appended { $($appended:tt)* })?
    ) => {
        abi_copy!(
            $module,
            host_after_log {
                pub fail: Option<
                    unsafe extern "C" fn(
                        context: *mut c_void,
                        message: *const c_char,
                        length: usize,
                    ),
                >,
                pub run: *const mlperf_run_description,
                pub complete_named: Option<
                    unsafe extern "C" fn(
                        context: *mut c_void,
                        responses: *const mlperf_named_response,
                        count: usize,
                    ),
                >,
                pub now_ns: Option<unsafe extern "C" fn(context: *mut c_void) -> u64>,
                pub report_timing: Option<
                    unsafe extern "C" fn(
                        context: *mut c_void,
                        timings: *const mlperf_sample_timing,
                        count: usize,
                    ),
                >,
                pub next_tokens: Option<
                    unsafe extern "C" fn(
                        context: *mut c_void,
                        responses: *const mlperf_response,
                        count: usize,
                    ),
                >,
                pub fail_samples: Option<
                    unsafe extern "C" fn(
                        context: *mut c_void,
                        failures: *const mlperf_sample_failure,
                        count: usize,
                    ),
                >,
            },
            sample { $($sample)* },
            response { $($response)* }
            $(, appended { $($appended)* })?
        );
    };
    (
        $module:ident,
        host_after_log { $($host:tt)* },
        sample { $($sample:tt)* },
        response { $($response:tt)* }
        $(, appended { $($appended:tt)* })?
    ) => {
        #[allow(non_camel_case_types, dead_code, unreachable_pub)]
        mod $module {
            use abi_stable::StableAbi;
            use std::ffi::{c_char, c_void};

            #[repr(C)]
            #[derive(StableAbi)]
            pub struct mlperf_extension {
                pub struct_size: usize,
                pub r#type: u32,
                pub next: *const mlperf_extension,
            }

            #[repr(C)]
            #[derive(StableAbi)]
            pub struct mlperf_error {
                pub struct_size: usize,
                pub next: *const mlperf_extension,
                pub code: i32,
                pub message: *const c_char,
                pub release: Option<unsafe extern "C" fn(error: *mut mlperf_error)>,
            }

            #[repr(C)]
            #[derive(StableAbi)]
            pub struct mlperf_attribute {
                pub key: *const c_char,
                pub value: *const c_char,
            }

            #[repr(C)]
            #[derive(StableAbi)]
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
            #[derive(StableAbi)]
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
            #[derive(StableAbi)]
            pub struct mlperf_named_response {
                pub struct_size: usize,
                pub id: u64,
                pub data: *const c_void,
                pub length: u64,
                pub n_tokens: i64,
                pub outputs: *const mlperf_output,
                pub n_outputs: u64,
            }

            #[repr(C)]
            #[derive(StableAbi)]
            pub struct mlperf_sample {
                $($sample)*
            }

            #[repr(C)]
            #[derive(StableAbi)]
            pub struct mlperf_response {
                $($response)*
            }

            #[repr(C)]
            #[derive(StableAbi)]
            pub struct mlperf_power_info {
                pub struct_size: usize,
                pub next: *const mlperf_extension,
                pub scope: u32,
                pub flags: u32,
                pub description: *const c_char,
                pub period_ns: u64,
            }

            #[repr(C)]
            #[derive(StableAbi)]
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
            #[derive(StableAbi)]
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
                pub device: *const mlperf_device,
                pub instance_index: u32,
                pub instance_count: u32,
            }

            #[repr(C)]
            #[derive(StableAbi)]
            pub struct mlperf_device {
                pub struct_size: usize,
                pub next: *const mlperf_extension,
                pub ordinal: u32,
                pub kind: u32,
                pub name: *const c_char,
                pub id: *const c_char,
                pub memory_bytes: u64,
            }

            #[repr(C)]
            #[derive(StableAbi)]
            pub struct mlperf_sample_timing {
                pub struct_size: usize,
                pub id: u64,
                pub dequeued_ns: u64,
                pub compute_start_ns: u64,
                pub compute_end_ns: u64,
            }

            #[repr(C)]
            #[derive(StableAbi)]
            pub struct mlperf_sample_failure {
                pub struct_size: usize,
                pub id: u64,
                pub kind: i32,
                pub status: i32,
                pub message: *const c_char,
                pub length: u64,
            }

            // Parameter names are part of what abi_stable compares.
            #[repr(C)]
            #[derive(StableAbi)]
            pub struct mlperf_host_api {
                pub struct_size: usize,
                pub next: *const mlperf_extension,
                pub abi_major: u32,
                pub abi_minor: u32,
                pub context: *mut c_void,
                pub complete: Option<
                    unsafe extern "C" fn(
                        context: *mut c_void,
                        responses: *const mlperf_response,
                        count: usize,
                    ),
                >,
                pub first_token: Option<
                    unsafe extern "C" fn(
                        context: *mut c_void,
                        responses: *const mlperf_response,
                        count: usize,
                    ),
                >,
                pub log: Option<
                    unsafe extern "C" fn(
                        context: *mut c_void,
                        level: i32,
                        message: *const c_char,
                        length: usize,
                    ),
                >,
                $($host)*
            }

            #[repr(C)]
            #[derive(StableAbi)]
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
                pub init:
                    Option<unsafe extern "C" fn(host: *const mlperf_host_api) -> *mut mlperf_error>,
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
                pub flush_queries:
                    Option<unsafe extern "C" fn(instance: *mut c_void) -> *mut mlperf_error>,
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
                pub free_samples: Option<
                    unsafe extern "C" fn(instance: *mut c_void, memory: *mut c_void, bytes: u64),
                >,
                pub write_samples: Option<
                    unsafe extern "C" fn(
                        instance: *mut c_void,
                        memory: *mut c_void,
                        offset: u64,
                        data: *const c_void,
                        length: u64,
                    ) -> *mut mlperf_error,
                >,
                $($($appended)*)?
            }
        }
    };
}

abi_copy!(
    same,
    sample {
        pub struct_size: usize,
        pub id: u64,
        pub index: u64,
        pub data: *const c_void,
        pub length: u64,
        pub dtype: i32,
        pub rank: u32,
        pub shape: *const i64,
    },
    response {
        pub struct_size: usize,
        pub id: u64,
        pub data: *const c_void,
        pub length: u64,
        pub n_tokens: i64,
    }
);

abi_copy!(
    sample_grew,
    sample {
        pub struct_size: usize,
        pub id: u64,
        pub index: u64,
        pub data: *const c_void,
        pub length: u64,
        pub dtype: i32,
        pub rank: u32,
        pub shape: *const i64,
        pub deadline_ns: u64,
    },
    response {
        pub struct_size: usize,
        pub id: u64,
        pub data: *const c_void,
        pub length: u64,
        pub n_tokens: i64,
    }
);

abi_copy!(
    tokens_unsigned,
    sample {
        pub struct_size: usize,
        pub id: u64,
        pub index: u64,
        pub data: *const c_void,
        pub length: u64,
        pub dtype: i32,
        pub rank: u32,
        pub shape: *const i64,
    },
    response {
        pub struct_size: usize,
        pub id: u64,
        pub data: *const c_void,
        pub length: u64,
        pub n_tokens: u64,
    }
);

abi_copy!(
    function_appended,
    sample {
        pub struct_size: usize,
        pub id: u64,
        pub index: u64,
        pub data: *const c_void,
        pub length: u64,
        pub dtype: i32,
        pub rank: u32,
        pub shape: *const i64,
    },
    response {
        pub struct_size: usize,
        pub id: u64,
        pub data: *const c_void,
        pub length: u64,
        pub n_tokens: i64,
    },
    appended {
        pub register_memory: Option<unsafe extern "C" fn(instance: *mut c_void) -> *mut mlperf_error>,
    }
);

// A plugin built against plugin-api 1.1: its host table ends at `log`.
abi_copy!(
    host_of_1_1,
    host_after_log {},
    sample {
        pub struct_size: usize,
        pub id: u64,
        pub index: u64,
        pub data: *const c_void,
        pub length: u64,
        pub dtype: i32,
        pub rank: u32,
        pub shape: *const i64,
    },
    response {
        pub struct_size: usize,
        pub id: u64,
        pub data: *const c_void,
        pub length: u64,
        pub n_tokens: i64,
    }
);

// `fail` with a parameter of another type.
abi_copy!(
    fail_retyped,
    host_after_log {
        pub fail: Option<
            unsafe extern "C" fn(context: *mut c_void, message: *const u8, length: usize),
        >,
        pub run: *const mlperf_run_description,
        pub complete_named: Option<
            unsafe extern "C" fn(
                context: *mut c_void,
                responses: *const mlperf_named_response,
                count: usize,
            ),
        >,
        pub now_ns: Option<unsafe extern "C" fn(context: *mut c_void) -> u64>,
        pub report_timing: Option<
            unsafe extern "C" fn(
                context: *mut c_void,
                timings: *const mlperf_sample_timing,
                count: usize,
            ),
        >,
        pub next_tokens: Option<
            unsafe extern "C" fn(
                context: *mut c_void,
                responses: *const mlperf_response,
                count: usize,
            ),
        >,
        pub fail_samples: Option<
            unsafe extern "C" fn(
                context: *mut c_void,
                failures: *const mlperf_sample_failure,
                count: usize,
            ),
        >,
    },
    sample {
        pub struct_size: usize,
        pub id: u64,
        pub index: u64,
        pub data: *const c_void,
        pub length: u64,
        pub dtype: i32,
        pub rank: u32,
        pub shape: *const i64,
    },
    response {
        pub struct_size: usize,
        pub id: u64,
        pub data: *const c_void,
        pub length: u64,
        pub n_tokens: i64,
    }
);

#[test]
fn the_hosts_own_layout_and_an_identical_copy_pass() {
    check_layout(expected()).unwrap();
    check_layout(<same::mlperf_plugin_api as StableAbi>::LAYOUT).unwrap();
}

#[test]
fn a_struct_with_an_extra_field_is_refused_naming_type_and_field() {
    let message = check_layout(<sample_grew::mlperf_plugin_api as StableAbi>::LAYOUT).unwrap_err();
    assert!(message.contains("`mlperf_sample`"), "{message}");
    assert!(message.contains("deadline_ns"), "{message}");
    assert!(message.contains("issue_query(argument 2)"), "{message}");
    assert!(
        message.contains("size 64 where 56 was expected"),
        "{message}"
    );
}

#[test]
fn a_field_of_another_type_is_refused_naming_it() {
    let message =
        check_layout(<tokens_unsigned::mlperf_plugin_api as StableAbi>::LAYOUT).unwrap_err();
    assert!(message.contains("`mlperf_response.n_tokens`"), "{message}");
    assert!(
        message.contains("U64") || message.contains("u64"),
        "{message}"
    );
}

#[test]
fn an_appended_function_differs_too() {
    let message =
        check_layout(<function_appended::mlperf_plugin_api as StableAbi>::LAYOUT).unwrap_err();
    assert!(message.contains("`mlperf_plugin_api`"), "{message}");
    assert!(message.contains("\"register_memory\""), "{message}");
}

#[test]
fn the_host_tables_fail_is_part_of_the_checked_layout() {
    // A 1.1 plugin's view lacks `fail`: the exact check tells them apart (which is why the
    // host checks the layout only of plugins of its own minor, and loads others by struct_size).
    let message = check_layout(<host_of_1_1::mlperf_plugin_api as StableAbi>::LAYOUT).unwrap_err();
    assert!(message.contains("`mlperf_host_api`"), "{message}");
    assert!(
        message.contains(
            "missing field(s) [\"fail\", \"run\", \"complete_named\", \"now_ns\", \"report_timing\", \"next_tokens\", \"fail_samples\"]"
        ),
        "{message}"
    );
    let message = check_layout(<fail_retyped::mlperf_plugin_api as StableAbi>::LAYOUT).unwrap_err();
    assert!(message.contains("mlperf_host_api"), "{message}");
    assert!(message.contains("fail"), "{message}");
}
