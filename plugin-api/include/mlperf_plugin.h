/*
 * mlperf_plugin.h — the plugin ABI of mlperf-host, version 1.0.
 *
 * A plugin is a shared library exporting exactly one symbol, MLPERF_PLUGIN_ENTRY_SYMBOL
 * ("mlperf_plugin_entry"), of type mlperf_plugin_entry_fn. The host calls it with the highest
 * ABI version it implements; the plugin returns a pointer to its static mlperf_plugin_api
 * table, stamped with the version the plugin implements (or NULL if it cannot serve that host).
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
#define MLPERF_PLUGIN_ABI_MINOR 0u
#define MLPERF_PLUGIN_ENTRY_SYMBOL "mlperf_plugin_entry"

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
    MLPERF_PLUGIN_KIND_POWER = 2   /* a power meter (functions appended in a later minor) */
} mlperf_plugin_kind;

/* What the host's scheduler must know. */
#define MLPERF_CAP_ASYNC_COMPLETION (1ull << 0)  /* completes after issue_query returns */
#define MLPERF_CAP_CONCURRENT_ISSUE (1ull << 1)  /* issue_query may be called concurrently */
#define MLPERF_CAP_NATIVE_BATCHING  (1ull << 2)  /* batches samples itself */
#define MLPERF_CAP_TOKENS           (1ull << 3)  /* reports first tokens and token counts */
#define MLPERF_CAP_NEEDS_SAMPLE_DATA (1ull << 4) /* reads sample data (else data may be NULL) */

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
    uint64_t length;
    int64_t n_tokens;         /* token runs: tokens generated; else 0 */
} mlperf_response;

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
} mlperf_host_api;

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
} mlperf_plugin_api;

/* The one exported function. */
typedef const mlperf_plugin_api *(*mlperf_plugin_entry_fn)(uint32_t host_abi_major,
                                                         uint32_t host_abi_minor);
MLPERF_PLUGIN_EXPORT const mlperf_plugin_api *mlperf_plugin_entry(uint32_t host_abi_major,
                                                                  uint32_t host_abi_minor);

#ifdef __cplusplus
}
#endif

#endif /* MLPERF_PLUGIN_H */
