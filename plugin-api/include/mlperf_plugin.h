/*
 * mlperf_plugin.h — the plugin ABI of mlperf-host, version 1.5.
 *
 * A plugin is a shared library exporting the symbol MLPERF_PLUGIN_ENTRY_SYMBOL
 * ("mlperf_plugin_entry"), of type mlperf_plugin_entry_fn. The host calls it with the highest
 * ABI version it implements; the plugin returns a pointer to its static mlperf_plugin_api
 * table, stamped with the version the plugin implements (or NULL if it cannot serve that host).
 * The table's `kind` says what the library is: a system-under-test backend or a power meter.
 * A SUT library that also offers a power meter (a vendor's on-board telemetry beside its
 * backend) exports a second entry of the same type, MLPERF_POWER_PLUGIN_ENTRY_SYMBOL
 * ("mlperf_power_plugin_entry"), returning a second table of kind MLPERF_PLUGIN_KIND_POWER;
 * see "Power meters" below.
 *
 * History: 1.0 the SUT backend; 1.1 power meters (mlperf_power_info, mlperf_power_reading,
 * the power entry, power_info and read_power appended to mlperf_plugin_api); 1.2 the host's
 * fail callback (appended to mlperf_host_api); 1.3 the run description (mlperf_run_description,
 * `run` appended to mlperf_host_api), the loaded sample set (load_samples and unload_samples
 * appended to mlperf_plugin_api), named inputs and outputs (mlperf_input, mlperf_output,
 * mlperf_named_response; `inputs` in the run description, `complete_named` appended to
 * mlperf_host_api); 1.4 devices (mlperf_device, `devices` appended to mlperf_plugin_api;
 * `device`, `instance_index` and `instance_count` appended to mlperf_run_description); 1.5
 * the tokens of a streamed answer after its first and the failures of single samples
 * (mlperf_sample_failure; `next_tokens` and `fail_samples` appended to mlperf_host_api).
 *
 * Compatibility rules:
 *   - A different major version is refused. Within a major, the host offers its highest minor
 *     and the plugin answers the minor it implements; each side uses only what both know.
 *   - Every struct that crosses the boundary begins with `struct_size` (the size the writer
 *     compiled against) and `next` (an extension chain of mlperf_extension nodes, NULL when
 *     none). Fields and function pointers are only ever appended; a reader checks struct_size
 *     before touching a field added in a later minor.
 *   - Errors are objects (mlperf_error), returned as pointers: NULL means success. The caller
 *     reads them and hands them back through their own `release`. There is no "last error".
 *
 * Threading and the data path mirror MLPerf LoadGen:
 *   - The host owns the sample data (loaded before timing). issue_query passes samples whose
 *     `data` points into host memory, valid until the host has received that sample's
 *     completion.
 *   - complete() and first_token() are thread-safe and non-blocking, callable from any
 *     plugin thread, inline within issue_query or later. The host takes every timestamp
 *     itself and checks that every issued id completes exactly once. Response data is copied
 *     by the host before complete() returns, if it needs it.
 *   - issue_query may be called from several host threads at once only when the plugin sets
 *     MLPERF_CAP_CONCURRENT_ISSUE.
 *   - destroy() returns only after every thread the plugin started has stopped; no callback
 *     may be made after it returns. Samples still in flight should be completed before it
 *     returns; any left are reported by the host as never completed.
 *   - The host_api table passed to init and create stays valid until destroy returns.
 *   - An error returned by issue_query means none of that call's samples were accepted: the
 *     plugin must not complete them (the host accounts for them and ends the run INVALID).
 *   - A plugin that can no longer finish samples it accepted (a batch failed on a worker
 *     thread, a remote server went away) calls the host's fail() (since 1.2) at once, from any
 *     thread: the host stops issuing, gives up on the outstanding samples after a short drain
 *     and ends the run INVALID with the plugin's message. It need not wait for the next
 *     issue_query or flush_queries to return an error (in Offline there is none). A host of
 *     1.0 or 1.1 has no fail(): check struct_size, and fall back to an error from the next
 *     call (and a log line).
 *   - Arrays of samples and of responses are strided by the struct_size of their first element.
 */
#ifndef MLPERF_PLUGIN_H
#define MLPERF_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MLPERF_PLUGIN_ABI_MAJOR 1u
#define MLPERF_PLUGIN_ABI_MINOR 5u
#define MLPERF_PLUGIN_ENTRY_SYMBOL "mlperf_plugin_entry"
/* Since 1.1: the power meter of a library whose mlperf_plugin_entry is its SUT. */
#define MLPERF_POWER_PLUGIN_ENTRY_SYMBOL "mlperf_power_plugin_entry"

#if defined(_WIN32)
#define MLPERF_PLUGIN_EXPORT __declspec(dllexport)
#else
#define MLPERF_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ---- Extensions --------------------------------------------------------------------------- */

/* The head of every optional extension hanging off a `next` pointer. Unknown types are skipped. */
typedef struct mlperf_extension {
    size_t struct_size;
    uint32_t type;
    const struct mlperf_extension *next;
} mlperf_extension;

/* ---- Errors ------------------------------------------------------------------------------- */

typedef enum mlperf_error_code {
    MLPERF_ERROR_UNKNOWN = 1,
    MLPERF_ERROR_INVALID_ARGUMENT = 2,
    MLPERF_ERROR_INVALID_CONFIG = 3,
    MLPERF_ERROR_UNSUPPORTED = 4,
    MLPERF_ERROR_RESOURCE_EXHAUSTED = 5,
    MLPERF_ERROR_DEVICE = 6,
    MLPERF_ERROR_INTERNAL = 7,
    /* A panic or exception caught at the boundary. */
    MLPERF_ERROR_PANIC = 8
} mlperf_error_code;

typedef struct mlperf_error {
    size_t struct_size;
    const mlperf_extension *next;
    int32_t code;              /* an mlperf_error_code */
    const char *message;       /* UTF-8, NUL-terminated; valid until release */
    /* Frees the error; called exactly once by whoever received it. */
    void (*release)(struct mlperf_error *error);
} mlperf_error;

/* ---- Plugin description ------------------------------------------------------------------- */

typedef enum mlperf_plugin_kind {
    MLPERF_PLUGIN_KIND_SUT = 1,    /* a system-under-test backend */
    MLPERF_PLUGIN_KIND_POWER = 2   /* a power meter (since 1.1: power_info, read_power) */
} mlperf_plugin_kind;

/* What the host's scheduler must know. Each bit and what the host does with it:
 *
 *   ASYNC_COMPLETION   samples may complete after issue_query returns, from any thread. Without
 *                      it the plugin completes every sample inline, before issue_query returns
 *                      (the host then need not keep a query's samples after the call). Always
 *                      safe to set.
 *   CONCURRENT_ISSUE   issue_query is thread-safe: the host may call it from several threads at
 *                      once (Server with server_num_issue_query_threads > 0). Without it the
 *                      host makes those threads take turns (one call at a time).
 *   NATIVE_BATCHING    the plugin batches samples itself, so the host hands it every query
 *                      whole, as LoadGen issues it (one call per query: SingleStream and Server
 *                      one sample, MultiStream samples_per_query, Offline all of them at once).
 *                      Without it the host batches for the plugin when the run asks
 *                      (--plugin-batch N): a query of more than N samples goes over in calls
 *                      of at most N, and Server's one-sample queries are gathered into calls
 *                      of up to N, the first held at most --plugin-batch-wait (the latency
 *                      counts from LoadGen's issue, so the wait is part of it). The run
 *                      description's max_samples_per_call says N. A batching plugin is
 *                      always handed whole queries (the host refuses --plugin-batch for it).
 *   TOKENS             the plugin reports first tokens (first_token) and token counts
 *                      (n_tokens): required for a token-latency run (use_token_latencies),
 *                      which the host refuses for a plugin without it.
 *   NEEDS_SAMPLE_DATA  the plugin reads sample data. Without it the host may pass data = NULL
 *                      (a run without a data set, such as the null plugin's overhead floor).
 *   SAMPLE_TIMING      (since 1.4) the plugin reports where each sample's time went
 *                      (report_timing, see "Where the time goes"): the host then notes when it
 *                      hands each sample over, and divides the run's latencies. Without it
 *                      the host takes no timestamps of its own unless the run writes a trace.
 */
#define MLPERF_CAP_ASYNC_COMPLETION (1ull << 0)  /* completes after issue_query returns */
#define MLPERF_CAP_CONCURRENT_ISSUE (1ull << 1)  /* issue_query may be called concurrently */
#define MLPERF_CAP_NATIVE_BATCHING  (1ull << 2)  /* batches samples itself */
#define MLPERF_CAP_TOKENS           (1ull << 3)  /* reports first tokens and token counts */
#define MLPERF_CAP_NEEDS_SAMPLE_DATA (1ull << 4) /* reads sample data (else data may be NULL) */
#define MLPERF_CAP_SAMPLE_TIMING    (1ull << 5)  /* reports each sample's timing (since 1.4) */

/* A key/value attribute (vendor, device, driver_version, firmware_version, precision, ...),
 * copied by the host into its detail log and result.json. */
typedef struct mlperf_attribute {
    const char *key;
    const char *value;
} mlperf_attribute;

/* ---- Data --------------------------------------------------------------------------------- */

typedef enum mlperf_dtype {
    MLPERF_DTYPE_UNKNOWN = 0,
    MLPERF_DTYPE_U8 = 1,
    MLPERF_DTYPE_I8 = 2,
    MLPERF_DTYPE_U16 = 3,
    MLPERF_DTYPE_I16 = 4,
    MLPERF_DTYPE_U32 = 5,
    MLPERF_DTYPE_I32 = 6,
    MLPERF_DTYPE_U64 = 7,
    MLPERF_DTYPE_I64 = 8,
    MLPERF_DTYPE_F16 = 9,
    MLPERF_DTYPE_BF16 = 10,
    MLPERF_DTYPE_F32 = 11,
    MLPERF_DTYPE_F64 = 12,
    MLPERF_DTYPE_BOOL = 13,
    MLPERF_DTYPE_BYTES = 14
} mlperf_dtype;

/* One sample of a query. Arrays of samples are strided by struct_size. */
typedef struct mlperf_sample {
    size_t struct_size;
    uint64_t id;              /* opaque, never 0; complete() reports it back */
    uint64_t index;           /* the sample's index in the data set */
    const void *data;         /* into the host's sample memory; NULL when there is none */
    uint64_t length;          /* bytes at data */
    int32_t dtype;            /* an mlperf_dtype */
    uint32_t rank;
    const int64_t *shape;     /* rank entries */
} mlperf_sample;

/* The answer to one sample. */
typedef struct mlperf_response {
    size_t struct_size;
    uint64_t id;
    const void *data;         /* output bytes; the host copies what it keeps before returning */
    uint64_t length;          /* at most 2^30 (1 GiB): a longer response is not read, and the
                                 host ends the run INVALID naming the sample */
    int64_t n_tokens;         /* token runs: tokens generated; else 0 */
} mlperf_response;

/* ---- Several inputs, several outputs (since 1.3) ------------------------------------------ *
 *
 * A model of several inputs reads a data set whose samples hold them all (rows named by
 * `--input-names`, or a file per input, `--dataset-input NAME=FILE.npy`). The inputs lie alike
 * in every sample of a run, so they are described once, in the run description (`inputs`):
 * each with its name, element type, shape, and where it lies within a sample's `data`.
 * mlperf_input_data finds its bytes in a sample.
 *
 * A model of several outputs answers with an mlperf_named_response through the host's
 * complete_named (since 1.3): the response as above, plus its outputs by name. `data` stays
 * the answer a run logs by default; a run that names outputs (`--logged-outputs a,b`, a
 * benchmark's `[accuracy] logged_outputs`) logs those instead, their bytes one after another
 * in its order, and a response without one of them ends the run INVALID naming it. A host of
 * 1.2 has no complete_named: complete with the mlperf_response part (its prefix) instead.
 */

/* One named input within each sample's data. Arrays of inputs are strided by struct_size. */
typedef struct mlperf_input {
    size_t struct_size;
    const char *name;         /* UTF-8, NUL-terminated, e.g. "input_ids" */
    uint64_t offset;          /* bytes from a sample's data to the input's first byte */
    uint64_t length;          /* bytes */
    int32_t dtype;            /* an mlperf_dtype */
    uint32_t rank;
    const int64_t *shape;     /* rank entries */
} mlperf_input;

/* One named output of a response; read before complete_named returns. */
typedef struct mlperf_output {
    size_t struct_size;
    const char *name;         /* UTF-8, NUL-terminated, e.g. "boxes" */
    const void *data;
    uint64_t length;          /* bytes at data, at most 2^30 */
    int32_t dtype;            /* an mlperf_dtype */
    uint32_t rank;
    const int64_t *shape;     /* rank entries; may be NULL with rank 0 */
} mlperf_output;

/* A response with named outputs: an mlperf_response's fields, then the outputs. Arrays are
 * strided by struct_size; outputs by theirs. */
typedef struct mlperf_named_response {
    size_t struct_size;
    uint64_t id;
    const void *data;
    uint64_t length;
    int64_t n_tokens;
    const mlperf_output *outputs; /* n_outputs of them; NULL with 0 for none */
    uint64_t n_outputs;
} mlperf_named_response;

/* Where `input` (one of the run description's) lies in `sample`. */
static inline const void *mlperf_input_data(const mlperf_sample *sample,
                                            const mlperf_input *input) {
    return (const char *)sample->data + input->offset;
}

/* ---- Devices (since 1.4) ------------------------------------------------------------------ *
 *
 * A plugin that drives several devices (accelerators, or CPU sockets it pins to) lists them
 * through `devices` (appended to mlperf_plugin_api), given the configuration its instances
 * will be created with. A run asked to use several (`--devices all`, `--devices 2` for the
 * first two, `--devices 0,2`) gets one instance per device, each created with its device in
 * the run description (`device`, and the instance's place among the run's), and the host
 * spreads the queries over them: SingleStream, MultiStream and Server queries each to the
 * instance with the fewest samples outstanding, the Offline query split evenly (the
 * remainder one by one from the first). Each instance serves its device alone; instances of
 * one library are created, used and destroyed on the host's threads as any instance is, and
 * may run at the same time. A plugin without `devices`, or listing none, is one instance as
 * before.
 */

typedef enum mlperf_device_kind {
    MLPERF_DEVICE_OTHER = 0,
    MLPERF_DEVICE_CPU = 1,
    MLPERF_DEVICE_GPU = 2,
    MLPERF_DEVICE_NPU = 3
} mlperf_device_kind;

/* One device an instance may be created for. */
typedef struct mlperf_device {
    size_t struct_size;
    const mlperf_extension *next;
    uint32_t ordinal;          /* the plugin's own number for it (e.g. CUDA's device index) */
    uint32_t kind;             /* an mlperf_device_kind */
    const char *name;          /* e.g. "NVIDIA H200"; UTF-8, NUL-terminated */
    /* What identifies it across restarts (a UUID, a PCI bus id); may be NULL. */
    const char *id;
    uint64_t memory_bytes;     /* its own memory; 0 when it has none or it is not known */
} mlperf_device;

/* ---- Sample memory (since 1.4) ------------------------------------------------------------ *
 *
 * A plugin may provide the memory an instance's loaded samples live in: memory its device
 * reads fast (pinned, registered host memory), so that load_samples and every issued sample
 * find the data where the device reads it, with no copy per query. When an instance's table
 * has allocate_samples and free_samples (both, or neither), the host asks it, at each load
 * (untimed, before load_samples), for `bytes` aligned to `alignment` (64); writes the set
 * into it once (a header and a slot table, then each sample at a 64-byte boundary); and
 * hands the plugin samples whose data points into it, in load_samples and in every
 * issue_query until the set is unloaded. It calls free_samples with the same pointer and size
 * after unload_samples (or at destroy), never while a sample of the set is outstanding.
 * `*memory_kind` says what the plugin gave: HOST or PINNED_HOST (the host writes it in place),
 * or DEVICE: `*memory` is then the block's address in the device's own memory (a CUDA
 * device pointer, say), which the host never reads nor writes. It fills the block through
 * write_samples (required for DEVICE), in one or more calls of increasing offset, before
 * load_samples; each sample's `data` is then `memory` plus the sample's offset in the block
 * (address arithmetic only: the plugin's device reads it), its length, dtype and shape as
 * ever. An instance that leaves a set in the host's memory returns no error and `*memory`
 * NULL. An error from allocate_samples or write_samples fails the run before the set's
 * queries, with its message. Each instance of a run over several devices gets its own copy.
 */

typedef enum mlperf_memory_kind {
    MLPERF_MEMORY_HOST = 1,         /* ordinary host memory */
    MLPERF_MEMORY_PINNED_HOST = 2,  /* page-locked host memory a device reads directly */
    MLPERF_MEMORY_DEVICE = 3        /* the device's own memory, filled through write_samples */
} mlperf_memory_kind;

/* ---- The run (since 1.3) ------------------------------------------------------------------- *
 *
 * What the instance is created for: one LoadGen test (the host creates a fresh instance per
 * test). A batcher picks its policy from it: Server's latency bound and target rate, Offline's
 * one query of every sample, SingleStream's one sample at a time. Handed at create through
 * host->run (valid until destroy); read it only when host->struct_size covers `run`, and
 * expect NULL (an instance made only to read its attributes, or a host of 1.2 and earlier):
 * then pick defaults. Fields are the test's effective settings, as LoadGen derives them from
 * mlperf.conf and user.conf; a field that does not apply to the scenario is 0.
 */

typedef enum mlperf_scenario {
    MLPERF_SCENARIO_SINGLE_STREAM = 1,
    MLPERF_SCENARIO_MULTI_STREAM = 2,
    MLPERF_SCENARIO_SERVER = 3,
    MLPERF_SCENARIO_OFFLINE = 4
} mlperf_scenario;

typedef enum mlperf_test_mode {
    MLPERF_MODE_SUBMISSION = 1,    /* accuracy, then performance */
    MLPERF_MODE_ACCURACY = 2,      /* every sample once, responses logged */
    MLPERF_MODE_PERFORMANCE = 3,
    MLPERF_MODE_FIND_PEAK = 4      /* performance runs searching the highest valid rate */
} mlperf_test_mode;

#define MLPERF_RUN_TOKEN_LATENCIES (1u << 0) /* a token run: report first tokens */

typedef struct mlperf_run_description {
    size_t struct_size;
    const mlperf_extension *next;
    uint32_t scenario;               /* an mlperf_scenario */
    uint32_t mode;                   /* an mlperf_test_mode */
    /* Samples in each query: SingleStream and Server 1, MultiStream its samples per query,
     * Offline the one query's (every sample LoadGen issues in the run). */
    uint64_t samples_per_query;
    /* Queries per second LoadGen schedules (Server), or expects (Offline: offline_expected_qps;
     * SingleStream and MultiStream: 1 s over the expected latency). */
    double target_qps;
    /* Server: the latency bound the percentile below must meet, ns; else 0. */
    uint64_t target_latency_ns;
    /* The latency percentile the result is judged at, e.g. 0.99 (0.9 for SingleStream). */
    double target_latency_percentile;
    /* SingleStream and MultiStream: the latency the user expects per query, ns; else 0. */
    uint64_t expected_latency_ns;
    uint64_t min_duration_ms;
    uint64_t min_query_count;
    /* Samples LoadGen loads at once (load_samples) and in the whole data set. */
    uint64_t performance_sample_count;
    uint64_t total_sample_count;
    uint32_t flags;                  /* MLPERF_RUN_* bits */
    uint32_t issue_threads;          /* Server: threads that call issue_query; else 0 */
    /* Token runs (Server): the time-to-first-token and time-per-output-token bounds, ns. */
    uint64_t ttft_latency_ns;
    uint64_t tpot_latency_ns;
    /* The most samples one issue_query call holds: 0 when the host hands every query whole
     * (always, for a plugin with MLPERF_CAP_NATIVE_BATCHING); else the batch the host makes
     * for a plugin without it (--plugin-batch: larger queries split, Server queries gathered). */
    uint64_t max_samples_per_call;
    /* The named inputs within every sample's data (see "Several inputs" above); NULL with
     * n_inputs 0 when a sample is one tensor (data, dtype, shape). */
    const mlperf_input *inputs;
    uint64_t n_inputs;

    /* ---- Appended in 1.4: read only when struct_size covers them ---- */

    /* The device this instance is created for: a copy of one the plugin's `devices` listed,
     * valid until destroy; NULL when the run uses no device of the plugin's list. */
    const mlperf_device *device;
    /* The run's instances (one per device it uses; 1 without devices) and this one's place
     * among them, from 0. */
    uint32_t instance_index;
    uint32_t instance_count;
} mlperf_run_description;

/* Input `k` (< n_inputs) of the run. */
static inline const mlperf_input *mlperf_run_input(const mlperf_run_description *run, size_t k) {
    return (const mlperf_input *)((const char *)run->inputs + k * run->inputs->struct_size);
}

/* ---- Where the time goes (since 1.4) ------------------------------------------------------ *
 *
 * A plugin with MLPERF_CAP_SAMPLE_TIMING tells the host, for the samples it completes, when
 * its own work on each began and ended, on the host's clock: CLOCK_MONOTONIC in ns, as
 * host->now_ns returns it (the same clock in every process of the machine, so an isolated
 * plugin's times need no conversion). The host knows the rest (when LoadGen scheduled and
 * issued the sample, when the plugin was handed it, when its completion arrived) and divides
 * each latency into: issue (scheduled to issued), host (issued to handed over), queue (to
 * dequeued_ns, or to compute_start_ns), prepare (dequeued_ns to compute_start_ns: batching,
 * copies in), compute (compute_start_ns to compute_end_ns) and completion (compute_end_ns to
 * the completion's arrival). A time the plugin does not know is 0; times out of that order
 * leave the sample out of the division (the host counts such samples). Report a sample's
 * timing before completing it, through host->report_timing (thread-safe, non-blocking, any
 * thread; the host copies the records before returning).
 */

typedef struct mlperf_sample_timing {
    size_t struct_size;
    uint64_t id;                  /* the sample's id, as issue_query gave it */
    uint64_t dequeued_ns;         /* it left the plugin's queue; 0 when not known */
    uint64_t compute_start_ns;    /* the device (or the model) began work on it */
    uint64_t compute_end_ns;      /* and ended it */
} mlperf_sample_timing;

/* ---- Failures of single samples (since 1.5) ----------------------------------------------- *
 *
 * A plugin that serves samples one request at a time (a network client) may see one request
 * fail while the others go on: a server's error status, a timeout, a lost connection, a stream
 * that broke off. It reports each through host->fail_samples: the sample is then finished (do
 * not complete it as well). What the host does with it depends on the test: a LoadGen run ends
 * INVALID naming the first, as fail() would; a serving sweep counts the failures by kind and goes
 * on. A host of 1.4 or older has no fail_samples: call fail() instead.
 */

typedef enum mlperf_failure_kind {
    MLPERF_FAILURE_OTHER = 0,
    MLPERF_FAILURE_STATUS = 1,     /* the server answered with an error status (`status`) */
    MLPERF_FAILURE_TIMEOUT = 2,    /* no answer in time */
    MLPERF_FAILURE_CONNECTION = 3, /* no connection, or it was lost before an answer began */
    MLPERF_FAILURE_STREAM = 4      /* the answer broke off, stalled, or could not be read */
} mlperf_failure_kind;

typedef struct mlperf_sample_failure {
    size_t struct_size;
    uint64_t id;                  /* the sample's id, as issue_query gave it */
    int32_t kind;                 /* an mlperf_failure_kind */
    int32_t status;               /* the protocol's status (an HTTP status); 0 when none */
    const char *message;          /* UTF-8, `length` bytes, not NUL-terminated; copied */
    uint64_t length;
} mlperf_sample_failure;

/* ---- The host, as the plugin sees it ------------------------------------------------------ */

typedef enum mlperf_log_level {
    MLPERF_LOG_ERROR = 1,
    MLPERF_LOG_WARN = 2,
    MLPERF_LOG_INFO = 3,
    MLPERF_LOG_DEBUG = 4,
    MLPERF_LOG_TRACE = 5
} mlperf_log_level;

typedef struct mlperf_host_api {
    size_t struct_size;
    const mlperf_extension *next;
    uint32_t abi_major;
    uint32_t abi_minor;
    void *context;            /* passed back to every callback */
    /* Samples finished. Thread-safe, non-blocking, any thread. */
    void (*complete)(void *context, const mlperf_response *responses, size_t count);
    /* First tokens of samples of a token run (data = the first token's bytes). */
    void (*first_token)(void *context, const mlperf_response *responses, size_t count);
    /* A log line from the plugin (UTF-8, need not be NUL-terminated). */
    void (*log)(void *context, int32_t level, const char *message, size_t length);

    /* ---- Appended in 1.2: read only when struct_size covers it (hosts of 1.0 and 1.1 lack
     * it: their struct_size ends after `log`) ---- */

    /* The plugin cannot finish samples it accepted (a device or a remote server failed): the
     * host stops issuing, gives up on the outstanding samples after a short drain, and ends the
     * run INVALID with this message (`length` bytes of UTF-8, not NUL-terminated; the host
     * copies it before returning). Thread-safe, non-blocking, callable from any thread, also
     * inline within issue_query. The first failure is kept; later calls are ignored. Samples
     * the plugin still completes afterwards are accepted as usual. */
    void (*fail)(void *context, const char *message, size_t length);

    /* ---- Appended in 1.3: read only when struct_size covers it ---- */

    /* The test this instance is created for (see mlperf_run_description); valid until destroy.
     * NULL when the instance serves no test. */
    const mlperf_run_description *run;
    /* Samples finished, with named outputs (see mlperf_named_response). Thread-safe,
     * non-blocking, any thread, like complete. */
    void (*complete_named)(void *context, const mlperf_named_response *responses,
                           size_t count);

    /* ---- Appended in 1.4: read only when struct_size covers them ---- */

    /* The host's clock (see "Where the time goes"): CLOCK_MONOTONIC, ns. Any thread. */
    uint64_t (*now_ns)(void *context);
    /* Where samples' time went (records strided by struct_size); for a plugin with
     * MLPERF_CAP_SAMPLE_TIMING, before the samples complete. Thread-safe, non-blocking. */
    void (*report_timing)(void *context, const mlperf_sample_timing *timings, size_t count);

    /* ---- Appended in 1.5: read only when struct_size covers them ---- */

    /* More tokens of streamed answers arrived: for each response, `n_tokens` tokens of sample
     * `id` came now, after its first token (which first_token reports, not this); `data` holds
     * their bytes (NULL with length 0 when not kept). The host stamps the call with its own
     * clock, so call it as each piece of the stream arrives, not later in a batch: the gaps
     * between the calls are the answer's inter-token latencies. Optional (a plugin that does
     * not call it reports no inter-token latency); never after the sample's complete.
     * Thread-safe, non-blocking, any thread, like first_token. */
    void (*next_tokens)(void *context, const mlperf_response *responses, size_t count);
    /* Samples that failed each on its own (see "Failures of single samples"; records strided
     * by struct_size). Thread-safe, non-blocking, any thread, also inline within issue_query. */
    void (*fail_samples)(void *context, const mlperf_sample_failure *failures, size_t count);
} mlperf_host_api;

/* ---- Power meters (since 1.1) ------------------------------------------------------------- *
 *
 * A power meter is a table of kind MLPERF_PLUGIN_KIND_POWER: init, create, destroy and
 * attributes as for a SUT (create gets the meter's own TOML config and makes an instance used
 * only as a meter; a meter never calls complete, first_token or fail), plus power_info and
 * read_power; issue_query and flush_queries are NULL. It is a pull model: the host asks
 * power_info once after create, then calls read_power once a period, on a sampling thread of
 * its own, between the start and the end of each measured run, and stamps every reading with
 * its own UTC wall clock (the middle of the call). The meter needs no thread of its own.
 *
 *   - power_info and read_power are never called concurrently on one instance (nor with
 *     attributes or destroy), but not always from the same thread.
 *   - read_power should return within a fraction of the period: it must not wait for the next
 *     sample of a slow sensor; return the latest one. A read that has not returned a few
 *     periods plus 5 s after the host asked to stop ends the measurement with an error, and
 *     the host abandons that thread (the instance is then destroyed, and the library
 *     unloaded, only if the call ever returns).
 *   - An error from read_power ends the measurement: the host stops polling and reports the
 *     plugin's message as the meter's failure. The benchmark's own result is not affected.
 *   - Both structs are allocated by the host, zeroed, with struct_size set to the host's size
 *     and every measurement preset to NaN ("unknown"); the plugin writes only the fields it
 *     knows that lie within struct_size, and leaves struct_size as it is.
 *
 * On-host meters measure components (a card, a package), not the wall power of MLPerf power
 * results; the host labels their readings so. Say MLPERF_POWER_SCOPE_WALL only for a meter
 * at the system's wall socket (a PDU outlet), and set MLPERF_POWER_SIMULATED for made-up
 * readings: the host then labels everything from the meter as simulated.
 */

typedef enum mlperf_power_scope {
    MLPERF_POWER_SCOPE_COMPONENT = 0, /* one component of the system (the default) */
    MLPERF_POWER_SCOPE_WALL = 1       /* the whole system, at the wall socket */
} mlperf_power_scope;

#define MLPERF_POWER_HAS_ENERGY_COUNTER (1u << 0) /* read_power fills energy_joules */
#define MLPERF_POWER_SIMULATED          (1u << 1) /* the readings are made up, not measured */

/* What a meter measures, asked once after create. */
typedef struct mlperf_power_info {
    size_t struct_size;
    const mlperf_extension *next;
    uint32_t scope;            /* an mlperf_power_scope */
    uint32_t flags;            /* MLPERF_POWER_* bits */
    /* What is measured, e.g. "NPU 0 board power (sensor INA3221)"; UTF-8, NUL-terminated,
     * valid until destroy. May be NULL. */
    const char *description;
    /* The time between two readings the sensor supports, in ns; the host polls at it (but
     * not faster than once a millisecond). Must not be 0. */
    uint64_t period_ns;
} mlperf_power_info;

/* One reading. Measurements not known stay NaN. */
typedef struct mlperf_power_reading {
    size_t struct_size;
    const mlperf_extension *next;
    double watts;              /* power now; NaN or <= 0: the sensor had no reading */
    double volts;              /* RMS voltage, or NaN */
    double amps;               /* RMS current, or NaN */
    double power_factor;       /* or NaN */
    /* With MLPERF_POWER_HAS_ENERGY_COUNTER: energy in joules since a fixed origin (create,
     * say), never decreasing: the plugin corrects its counter's wraparound. Else NaN. */
    double energy_joules;
} mlperf_power_reading;

/* ---- The plugin, as the host sees it ------------------------------------------------------ */

typedef struct mlperf_plugin_api {
    size_t struct_size;
    const mlperf_extension *next;
    uint32_t abi_major;       /* what the plugin implements */
    uint32_t abi_minor;
    uint32_t kind;            /* an mlperf_plugin_kind */
    uint32_t reserved;
    const char *name;         /* short, e.g. "null" */
    const char *version;      /* the plugin's own version */
    uint64_t capabilities;    /* MLPERF_CAP_* bits */

    /* Library-wide set-up, once, before any create. May be NULL. */
    mlperf_error *(*init)(const mlperf_host_api *host);
    /* A plugin instance configured by TOML text (config_length bytes, may be 0). */
    mlperf_error *(*create)(const mlperf_host_api *host, const char *config_toml,
                            size_t config_length, void **instance);
    /* Stops the instance's threads and frees it. */
    void (*destroy)(void *instance);
    /* The instance's attributes, valid until destroy. May be NULL. */
    mlperf_error *(*attributes)(void *instance, const mlperf_attribute **attributes,
                                size_t *count);

    /* MLPERF_PLUGIN_KIND_SUT */
    mlperf_error *(*issue_query)(void *instance, const mlperf_sample *samples, size_t count);
    /* No more queries in this series. */
    mlperf_error *(*flush_queries)(void *instance);

    /* ---- Appended in 1.1: read only when struct_size covers them ---- */

    /* MLPERF_PLUGIN_KIND_POWER (NULL otherwise) */
    mlperf_error *(*power_info)(void *instance, mlperf_power_info *info);
    mlperf_error *(*read_power)(void *instance, mlperf_power_reading *reading);

    /* ---- Appended in 1.3: read only when struct_size covers them; each may be NULL ---- */

    /* MLPERF_PLUGIN_KIND_SUT. LoadGen loaded a set of samples (untimed, before a series of
     * queries): `samples` (strided by struct_size) carry index, data, length, dtype and shape
     * as issue_query's will, and id 0. The data stays where it is until the matching
     * unload_samples, so a plugin may copy, pin, or preprocess the set onto its device here;
     * issued samples of the set point at the same memory. Indices may repeat (MultiStream
     * pads the set). The host calls unload_samples with the same set before the next load and
     * before destroy; the two never overlap a query. An error from load_samples ends the test
     * before the set's queries (the run fails with the plugin's message); one from
     * unload_samples is logged and the results stand. Hosts of 1.2 and earlier never call
     * them: the plugin must then work from issue_query's samples alone. */
    mlperf_error *(*load_samples)(void *instance, const mlperf_sample *samples, size_t count);
    /* The set of the last load_samples is being released: drop what was staged for it. */
    mlperf_error *(*unload_samples)(void *instance, const mlperf_sample *samples, size_t count);

    /* ---- Appended in 1.4: read only when struct_size covers them; may be NULL ---- */

    /* MLPERF_PLUGIN_KIND_SUT. The devices instances configured by `config_toml` (as create
     * gets it) may be created for (see "Devices" above), after init and before any create.
     * `*devices` (strided by struct_size) and the strings they point at stay valid until the
     * next call of `devices` or until the library is unloaded; `*count` 0 means none. */
    mlperf_error *(*devices)(const mlperf_host_api *host, const char *config_toml,
                             size_t config_length, const mlperf_device **devices,
                             size_t *count);
    /* MLPERF_PLUGIN_KIND_SUT. The memory the instance's loaded samples live in (see "Sample
     * memory" above); both NULL, or both set. */
    mlperf_error *(*allocate_samples)(void *instance, uint64_t bytes, uint64_t alignment,
                                      uint32_t *memory_kind, void **memory);
    void (*free_samples)(void *instance, void *memory, uint64_t bytes);
    /* MLPERF_PLUGIN_KIND_SUT, with allocate_samples: copies `length` bytes from the host's
     * `data` into the block `memory` at `offset` (a host-to-device transfer for a DEVICE
     * block; untimed, at load). Called only for DEVICE blocks; may be NULL otherwise. */
    mlperf_error *(*write_samples)(void *instance, void *memory, uint64_t offset,
                                   const void *data, uint64_t length);
} mlperf_plugin_api;

/* The entry function: mlperf_plugin_entry, and in a SUT library that also offers a power meter,
 * mlperf_power_plugin_entry (a table of kind MLPERF_PLUGIN_KIND_POWER). A host opening a power
 * meter uses mlperf_power_plugin_entry when the library exports it, else mlperf_plugin_entry. */
typedef const mlperf_plugin_api *(*mlperf_plugin_entry_fn)(uint32_t host_abi_major,
                                                         uint32_t host_abi_minor);
MLPERF_PLUGIN_EXPORT const mlperf_plugin_api *mlperf_plugin_entry(uint32_t host_abi_major,
                                                                  uint32_t host_abi_minor);
MLPERF_PLUGIN_EXPORT const mlperf_plugin_api *mlperf_power_plugin_entry(uint32_t host_abi_major,
                                                                        uint32_t host_abi_minor);

#ifdef __cplusplus
}
#endif

#endif /* MLPERF_PLUGIN_H */
