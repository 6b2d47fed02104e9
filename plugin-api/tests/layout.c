/* sizeof, _Alignof and offsetof of every struct and field of mlperf_plugin.h, as this C
 * compiler lays them out. tests/all/layout.rs compares them with the Rust mirror. */
#include <stddef.h>

#include "mlperf_plugin.h"

typedef struct mlperf_layout_entry {
    const char *name; /* "type" (size), "type/align", or "type.field" (offset) */
    size_t value;
} mlperf_layout_entry;

#define SIZE(T) {#T, sizeof(T)}, {#T "/align", _Alignof(T)}
#define FIELD(T, F) {#T "." #F, offsetof(T, F)}

const mlperf_layout_entry mlperf_layout_entries[] = {
    SIZE(mlperf_extension),
    FIELD(mlperf_extension, struct_size),
    FIELD(mlperf_extension, type),
    FIELD(mlperf_extension, next),

    SIZE(mlperf_error),
    FIELD(mlperf_error, struct_size),
    FIELD(mlperf_error, next),
    FIELD(mlperf_error, code),
    FIELD(mlperf_error, message),
    FIELD(mlperf_error, release),

    SIZE(mlperf_attribute),
    FIELD(mlperf_attribute, key),
    FIELD(mlperf_attribute, value),

    SIZE(mlperf_input),
    FIELD(mlperf_input, struct_size),
    FIELD(mlperf_input, name),
    FIELD(mlperf_input, offset),
    FIELD(mlperf_input, length),
    FIELD(mlperf_input, dtype),
    FIELD(mlperf_input, rank),
    FIELD(mlperf_input, shape),

    SIZE(mlperf_sample),
    FIELD(mlperf_sample, struct_size),
    FIELD(mlperf_sample, id),
    FIELD(mlperf_sample, index),
    FIELD(mlperf_sample, data),
    FIELD(mlperf_sample, length),
    FIELD(mlperf_sample, dtype),
    FIELD(mlperf_sample, rank),
    FIELD(mlperf_sample, shape),
    FIELD(mlperf_sample, inputs),
    FIELD(mlperf_sample, n_inputs),

    SIZE(mlperf_output),
    FIELD(mlperf_output, struct_size),
    FIELD(mlperf_output, name),
    FIELD(mlperf_output, data),
    FIELD(mlperf_output, length),
    FIELD(mlperf_output, dtype),
    FIELD(mlperf_output, rank),
    FIELD(mlperf_output, shape),

    SIZE(mlperf_response),
    FIELD(mlperf_response, struct_size),
    FIELD(mlperf_response, id),
    FIELD(mlperf_response, data),
    FIELD(mlperf_response, length),
    FIELD(mlperf_response, n_tokens),
    FIELD(mlperf_response, outputs),
    FIELD(mlperf_response, n_outputs),

    SIZE(mlperf_host_api),
    FIELD(mlperf_host_api, struct_size),
    FIELD(mlperf_host_api, next),
    FIELD(mlperf_host_api, abi_major),
    FIELD(mlperf_host_api, abi_minor),
    FIELD(mlperf_host_api, context),
    FIELD(mlperf_host_api, complete),
    FIELD(mlperf_host_api, first_token),
    FIELD(mlperf_host_api, log),
    FIELD(mlperf_host_api, fail),
    FIELD(mlperf_host_api, run),

    SIZE(mlperf_run_description),
    FIELD(mlperf_run_description, struct_size),
    FIELD(mlperf_run_description, next),
    FIELD(mlperf_run_description, scenario),
    FIELD(mlperf_run_description, mode),
    FIELD(mlperf_run_description, samples_per_query),
    FIELD(mlperf_run_description, target_qps),
    FIELD(mlperf_run_description, target_latency_ns),
    FIELD(mlperf_run_description, target_latency_percentile),
    FIELD(mlperf_run_description, expected_latency_ns),
    FIELD(mlperf_run_description, min_duration_ms),
    FIELD(mlperf_run_description, min_query_count),
    FIELD(mlperf_run_description, performance_sample_count),
    FIELD(mlperf_run_description, total_sample_count),
    FIELD(mlperf_run_description, flags),
    FIELD(mlperf_run_description, issue_threads),
    FIELD(mlperf_run_description, ttft_latency_ns),
    FIELD(mlperf_run_description, tpot_latency_ns),
    FIELD(mlperf_run_description, max_samples_per_call),

    SIZE(mlperf_power_info),
    FIELD(mlperf_power_info, struct_size),
    FIELD(mlperf_power_info, next),
    FIELD(mlperf_power_info, scope),
    FIELD(mlperf_power_info, flags),
    FIELD(mlperf_power_info, description),
    FIELD(mlperf_power_info, period_ns),

    SIZE(mlperf_power_reading),
    FIELD(mlperf_power_reading, struct_size),
    FIELD(mlperf_power_reading, next),
    FIELD(mlperf_power_reading, watts),
    FIELD(mlperf_power_reading, volts),
    FIELD(mlperf_power_reading, amps),
    FIELD(mlperf_power_reading, power_factor),
    FIELD(mlperf_power_reading, energy_joules),

    SIZE(mlperf_plugin_api),
    FIELD(mlperf_plugin_api, struct_size),
    FIELD(mlperf_plugin_api, next),
    FIELD(mlperf_plugin_api, abi_major),
    FIELD(mlperf_plugin_api, abi_minor),
    FIELD(mlperf_plugin_api, kind),
    FIELD(mlperf_plugin_api, reserved),
    FIELD(mlperf_plugin_api, name),
    FIELD(mlperf_plugin_api, version),
    FIELD(mlperf_plugin_api, capabilities),
    FIELD(mlperf_plugin_api, init),
    FIELD(mlperf_plugin_api, create),
    FIELD(mlperf_plugin_api, destroy),
    FIELD(mlperf_plugin_api, attributes),
    FIELD(mlperf_plugin_api, issue_query),
    FIELD(mlperf_plugin_api, flush_queries),
    FIELD(mlperf_plugin_api, power_info),
    FIELD(mlperf_plugin_api, read_power),
    FIELD(mlperf_plugin_api, load_samples),
    FIELD(mlperf_plugin_api, unload_samples),
};

const size_t mlperf_layout_count = sizeof mlperf_layout_entries / sizeof mlperf_layout_entries[0];

/* The header's constants, so the Rust ones are checked too. */
const unsigned long long mlperf_layout_constants[] = {
    MLPERF_PLUGIN_ABI_MAJOR,
    MLPERF_PLUGIN_ABI_MINOR,
    MLPERF_CAP_ASYNC_COMPLETION,
    MLPERF_CAP_CONCURRENT_ISSUE,
    MLPERF_CAP_NATIVE_BATCHING,
    MLPERF_CAP_TOKENS,
    MLPERF_CAP_NEEDS_SAMPLE_DATA,
    MLPERF_PLUGIN_KIND_SUT,
    MLPERF_PLUGIN_KIND_POWER,
    MLPERF_SCENARIO_SINGLE_STREAM,
    MLPERF_SCENARIO_MULTI_STREAM,
    MLPERF_SCENARIO_SERVER,
    MLPERF_SCENARIO_OFFLINE,
    MLPERF_MODE_SUBMISSION,
    MLPERF_MODE_ACCURACY,
    MLPERF_MODE_PERFORMANCE,
    MLPERF_MODE_FIND_PEAK,
    MLPERF_RUN_TOKEN_LATENCIES,
    MLPERF_POWER_SCOPE_COMPONENT,
    MLPERF_POWER_SCOPE_WALL,
    MLPERF_POWER_HAS_ENERGY_COUNTER,
    MLPERF_POWER_SIMULATED,
    MLPERF_ERROR_UNKNOWN,
    MLPERF_ERROR_INVALID_ARGUMENT,
    MLPERF_ERROR_INVALID_CONFIG,
    MLPERF_ERROR_UNSUPPORTED,
    MLPERF_ERROR_RESOURCE_EXHAUSTED,
    MLPERF_ERROR_DEVICE,
    MLPERF_ERROR_INTERNAL,
    MLPERF_ERROR_PANIC,
    MLPERF_LOG_ERROR,
    MLPERF_LOG_WARN,
    MLPERF_LOG_INFO,
    MLPERF_LOG_DEBUG,
    MLPERF_LOG_TRACE,
};

const char mlperf_layout_entry_symbol[] = MLPERF_PLUGIN_ENTRY_SYMBOL;
const char mlperf_layout_power_entry_symbol[] = MLPERF_POWER_PLUGIN_ENTRY_SYMBOL;
