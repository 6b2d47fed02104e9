//! The Rust mirror against the C compiler: every size, alignment and field offset of
//! `include/mlperf_plugin.h` (from `tests/layout.c`, compiled by build.rs) must equal Rust's, and
//! every field Rust declares must be one the C side measured.

use std::collections::BTreeMap;
use std::ffi::{c_char, CStr};
use std::mem::{align_of, offset_of, size_of};

use ::mlperf_plugin_api::ffi::*;
use abi_stable::StableAbi;

#[repr(C)]
struct Entry {
    name: *const c_char,
    value: usize,
}

#[link(name = "mlperf_plugin_layout_c", kind = "static")]
extern "C" {
    static mlperf_layout_entries: [Entry; 0];
    static mlperf_layout_count: usize;
    static mlperf_layout_constants: [u64; 48];
    static mlperf_layout_entry_symbol: [c_char; 20];
    static mlperf_layout_power_entry_symbol: [c_char; 26];
}

fn c_layout() -> BTreeMap<String, usize> {
    // SAFETY: layout.c defines `mlperf_layout_count` entries of static strings and numbers.
    unsafe {
        let entries =
            std::slice::from_raw_parts(mlperf_layout_entries.as_ptr(), mlperf_layout_count);
        entries
            .iter()
            .map(|e| {
                let name = CStr::from_ptr(e.name).to_str().unwrap().to_owned();
                (name, e.value)
            })
            .collect()
    }
}

/// `(name, value)` for the type's size and alignment and each listed field's offset, plus
/// the field names abi_stable knows for the type (to prove the list is complete).
macro_rules! rust_layout {
    ($map:ident, $fields:ident, $t:ident { $($f:ident),* $(,)? }) => {{
        $map.insert(stringify!($t).to_owned(), size_of::<$t>());
        $map.insert(concat!(stringify!($t), "/align").to_owned(), align_of::<$t>());
        $( $map.insert(concat!(stringify!($t), ".", stringify!($f)).to_owned(), offset_of!($t, $f)); )*
        let described = <$t as StableAbi>::LAYOUT.get_fields().expect("a struct has fields");
        for field in described.iter() {
            $fields.push(format!("{}.{}", stringify!($t), field.name().trim_start_matches("r#")));
        }
    }};
}

fn rust_layout() -> (BTreeMap<String, usize>, Vec<String>) {
    let mut map = BTreeMap::new();
    let mut fields = Vec::new();
    // `type` is a keyword in Rust; the header's field is measured under the same name.
    map.insert(
        "mlperf_extension.type".to_owned(),
        offset_of!(mlperf_extension, r#type),
    );
    rust_layout!(map, fields, mlperf_extension { struct_size, next });
    rust_layout!(
        map,
        fields,
        mlperf_error {
            struct_size,
            next,
            code,
            message,
            release
        }
    );
    rust_layout!(map, fields, mlperf_attribute { key, value });
    rust_layout!(
        map,
        fields,
        mlperf_sample {
            struct_size,
            id,
            index,
            data,
            length,
            dtype,
            rank,
            shape
        }
    );
    rust_layout!(
        map,
        fields,
        mlperf_input {
            struct_size,
            name,
            offset,
            length,
            dtype,
            rank,
            shape
        }
    );
    rust_layout!(
        map,
        fields,
        mlperf_response {
            struct_size,
            id,
            data,
            length,
            n_tokens
        }
    );
    rust_layout!(
        map,
        fields,
        mlperf_named_response {
            struct_size,
            id,
            data,
            length,
            n_tokens,
            outputs,
            n_outputs
        }
    );
    rust_layout!(
        map,
        fields,
        mlperf_output {
            struct_size,
            name,
            data,
            length,
            dtype,
            rank,
            shape
        }
    );
    rust_layout!(
        map,
        fields,
        mlperf_host_api {
            struct_size,
            next,
            abi_major,
            abi_minor,
            context,
            complete,
            first_token,
            log,
            fail,
            run,
            complete_named,
            now_ns,
            report_timing,
            next_tokens,
            fail_samples
        }
    );
    rust_layout!(
        map,
        fields,
        mlperf_sample_failure {
            struct_size,
            id,
            kind,
            status,
            message,
            length
        }
    );
    rust_layout!(
        map,
        fields,
        mlperf_sample_timing {
            struct_size,
            id,
            dequeued_ns,
            compute_start_ns,
            compute_end_ns
        }
    );
    rust_layout!(
        map,
        fields,
        mlperf_run_description {
            struct_size,
            next,
            scenario,
            mode,
            samples_per_query,
            target_qps,
            target_latency_ns,
            target_latency_percentile,
            expected_latency_ns,
            min_duration_ms,
            min_query_count,
            performance_sample_count,
            total_sample_count,
            flags,
            issue_threads,
            ttft_latency_ns,
            tpot_latency_ns,
            max_samples_per_call,
            inputs,
            n_inputs,
            device,
            instance_index,
            instance_count
        }
    );
    rust_layout!(
        map,
        fields,
        mlperf_device {
            struct_size,
            next,
            ordinal,
            kind,
            name,
            id,
            memory_bytes
        }
    );
    rust_layout!(
        map,
        fields,
        mlperf_power_info {
            struct_size,
            next,
            scope,
            flags,
            description,
            period_ns
        }
    );
    rust_layout!(
        map,
        fields,
        mlperf_power_reading {
            struct_size,
            next,
            watts,
            volts,
            amps,
            power_factor,
            energy_joules
        }
    );
    rust_layout!(
        map,
        fields,
        mlperf_plugin_api {
            struct_size,
            next,
            abi_major,
            abi_minor,
            kind,
            reserved,
            name,
            version,
            capabilities,
            init,
            create,
            destroy,
            attributes,
            issue_query,
            flush_queries,
            power_info,
            read_power,
            load_samples,
            unload_samples,
            devices,
            allocate_samples,
            free_samples,
            write_samples,
        }
    );
    (map, fields)
}

#[test]
fn sizes_alignments_and_offsets_match_the_c_compiler() {
    let c = c_layout();
    let (rust, _) = rust_layout();
    let mismatches: Vec<String> = c
        .keys()
        .chain(rust.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|name| c.get(*name) != rust.get(*name))
        .map(|name| format!("{name}: C {:?}, Rust {:?}", c.get(name), rust.get(name)))
        .collect();
    assert!(
        mismatches.is_empty(),
        "layout differs:\n{}",
        mismatches.join("\n")
    );
}

#[test]
fn every_rust_field_is_measured_in_c() {
    let c = c_layout();
    let (_, fields) = rust_layout();
    let unmeasured: Vec<_> = fields.iter().filter(|f| !c.contains_key(*f)).collect();
    assert!(
        unmeasured.is_empty(),
        "fields missing from tests/layout.c: {unmeasured:?}"
    );
}

#[test]
fn constants_match_the_header() {
    let rust: [u64; 48] = [
        ABI_MAJOR.into(),
        ABI_MINOR.into(),
        CAP_ASYNC_COMPLETION,
        CAP_CONCURRENT_ISSUE,
        CAP_NATIVE_BATCHING,
        CAP_TOKENS,
        CAP_NEEDS_SAMPLE_DATA,
        CAP_SAMPLE_TIMING,
        KIND_SUT.into(),
        KIND_POWER.into(),
        SCENARIO_SINGLE_STREAM.into(),
        SCENARIO_MULTI_STREAM.into(),
        SCENARIO_SERVER.into(),
        SCENARIO_OFFLINE.into(),
        MODE_SUBMISSION.into(),
        MODE_ACCURACY.into(),
        MODE_PERFORMANCE.into(),
        MODE_FIND_PEAK.into(),
        RUN_TOKEN_LATENCIES.into(),
        POWER_SCOPE_COMPONENT.into(),
        POWER_SCOPE_WALL.into(),
        POWER_HAS_ENERGY_COUNTER.into(),
        POWER_SIMULATED.into(),
        ERROR_UNKNOWN as u64,
        ERROR_INVALID_ARGUMENT as u64,
        ERROR_INVALID_CONFIG as u64,
        ERROR_UNSUPPORTED as u64,
        ERROR_RESOURCE_EXHAUSTED as u64,
        ERROR_DEVICE as u64,
        ERROR_INTERNAL as u64,
        ERROR_PANIC as u64,
        LOG_ERROR as u64,
        LOG_WARN as u64,
        LOG_INFO as u64,
        LOG_DEBUG as u64,
        LOG_TRACE as u64,
        DEVICE_OTHER.into(),
        DEVICE_CPU.into(),
        DEVICE_GPU.into(),
        DEVICE_NPU.into(),
        MEMORY_HOST.into(),
        MEMORY_PINNED_HOST.into(),
        MEMORY_DEVICE.into(),
        FAILURE_OTHER as u64,
        FAILURE_STATUS as u64,
        FAILURE_TIMEOUT as u64,
        FAILURE_CONNECTION as u64,
        FAILURE_STREAM as u64,
    ];
    // SAFETY: layout.c defines both arrays with exactly these lengths.
    let (c, symbol, power_symbol) = unsafe {
        (
            mlperf_layout_constants,
            &mlperf_layout_entry_symbol,
            &mlperf_layout_power_entry_symbol,
        )
    };
    assert_eq!(rust, c);
    let bytes = |symbol: &[c_char]| symbol.iter().map(|&b| b as u8).collect::<Vec<u8>>();
    assert_eq!(bytes(symbol), ENTRY_SYMBOL);
    assert_eq!(bytes(power_symbol), POWER_ENTRY_SYMBOL);
}
