/*
 * faulty_plugin.c — a SUT plugin for mlperf-host's tests that misbehaves on purpose. It completes
 * every sample inline, on the calling thread (with 1 byte, or the sample's own data), until the
 * sample its config names; there it does one fault: it crashes, exits, hangs, holds samples
 * back, fails, answers with garbage or leaks memory.
 *
 * Config keys (`key = value` lines, `#` comments; string values quoted or bare, since the host
 * may pass either; unknown keys, and keys under a [table], are ignored):
 *
 *   fault           = none  what goes wrong (default none):
 *     none                nothing: every sample completes
 *     segfault            a write through a NULL pointer (SIGSEGV)
 *     abort               abort() (SIGABRT)
 *     exit                exit(exit_status)
 *     kill                SIGKILL to its own process, as the OOM killer sends it
 *     hang_issue          issue_query never returns
 *     hang_flush          flush_queries never returns (at_sample is ignored)
 *     hang_destroy        destroy never returns (at_sample is ignored)
 *     hold                from at_sample on no sample is completed; issue_query returns normally
 *     fail_issue          the issue_query call holding at_sample, and every later one, returns
 *                         an error (MLPERF_ERROR_DEVICE) and completes none of its samples
 *     huge_response       at_sample completes with a length of response_length over a 1-byte
 *                         buffer
 *     garbage_response    at_sample completes twice, followed by an id never issued (0)
 *     leak                from at_sample on, each sample mallocs and touches leak_bytes that are
 *                         never freed (a failed malloc aborts, as an xmalloc would)
 *   at_sample       = 1     the fault strikes at the N-th sample seen, 1-based, counted across
 *                           issue_query calls (default 1)
 *   exit_status     = 0     the status of `exit`, 0..255 (default 0)
 *   echo            = false true: answer each sample with its own data (default false: 1 byte)
 *   response_length = N     the length huge_response claims (default UINT64_MAX)
 *   leak_bytes      = N     what leak takes per sample, 1..2^40 (default 1048576)
 *
 * Hangs block in pause(), burning no CPU, until the process is killed. The host serialises
 * issue_query (no MLPERF_CAP_CONCURRENT_ISSUE), so the sample counter needs no lock.
 *
 *   mlperf-host run --plugin target/release/libmlperf_faulty.so \
 *       --plugin-set fault=segfault --plugin-set at_sample=50 --isolate process
 */

/* kill, getpid and pause are POSIX, not C99. */
#define _POSIX_C_SOURCE 200809L

#include "mlperf_plugin.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAULTY_NAME "faulty"
#define FAULTY_VERSION "0.1.0"
#define FAULTY_MAX_LEAK_BYTES (1ull << 40)

typedef enum fault_kind {
    FAULT_NONE,
    FAULT_SEGFAULT,
    FAULT_ABORT,
    FAULT_EXIT,
    FAULT_KILL,
    FAULT_HANG_ISSUE,
    FAULT_HANG_FLUSH,
    FAULT_HANG_DESTROY,
    FAULT_HOLD,
    FAULT_FAIL_ISSUE,
    FAULT_HUGE_RESPONSE,
    FAULT_GARBAGE_RESPONSE,
    FAULT_LEAK,
} fault_kind;

/* Indexed by fault_kind. */
static const char *const fault_names[] = {
    "none", "segfault", "abort", "exit", "kill", "hang_issue", "hang_flush", "hang_destroy",
    "hold", "fail_issue", "huge_response", "garbage_response", "leak",
};
#define FAULT_COUNT (sizeof fault_names / sizeof fault_names[0])

typedef struct faulty_config {
    fault_kind fault;
    uint64_t at_sample;
    int exit_status;
    int echo;
    uint64_t response_length;
    uint64_t leak_bytes;
} faulty_config;

typedef struct faulty_instance {
    mlperf_host_api host; /* our copy: the part the host knows, the rest zeroed */
    faulty_config config;
    uint64_t seen; /* samples issued so far */
} faulty_instance;

/* ---- Errors: the message in the same block, freed by release ------------------------------- */

typedef struct faulty_error {
    mlperf_error base;
    char message[];
} faulty_error;

static void faulty_error_release(mlperf_error *error) {
    free(error);
}

static void static_error_release(mlperf_error *error) {
    (void)error;
}

static mlperf_error out_of_memory_error = {
    sizeof(mlperf_error), NULL, MLPERF_ERROR_RESOURCE_EXHAUSTED, FAULTY_NAME ": out of memory",
    static_error_release,
};

static mlperf_error *make_error(int32_t code, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int length = vsnprintf(NULL, 0, format, args);
    va_end(args);
    faulty_error *error = malloc(sizeof(faulty_error) + (size_t)(length < 0 ? 0 : length) + 1);
    if (error == NULL) {
        return &out_of_memory_error;
    }
    va_start(args, format);
    vsnprintf(error->message, (size_t)(length < 0 ? 0 : length) + 1, format, args);
    va_end(args);
    error->base.struct_size = sizeof(mlperf_error);
    error->base.next = NULL;
    error->base.code = code;
    error->base.message = error->message;
    error->base.release = faulty_error_release;
    return &error->base;
}

/* ---- Config: the TOML subset of example-c, strings also bare -------------------------------- */

static int is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

static void trim(const char **begin, const char **end) {
    while (*begin < *end && is_space(**begin)) {
        ++*begin;
    }
    while (*end > *begin && is_space((*end)[-1])) {
        --*end;
    }
}

/* Where a `#` outside quotes starts a comment, or end. */
static const char *comment_start(const char *begin, const char *end) {
    char quote = 0;
    for (const char *p = begin; p < end; ++p) {
        if (quote != 0) {
            quote = *p == quote ? 0 : quote;
        } else if (*p == '"' || *p == '\'') {
            quote = *p;
        } else if (*p == '#') {
            return p;
        }
    }
    return end;
}

/* Strips "..." or '...' from a value; bare text stays. -1 for an unclosed or escaped string. */
static int unquote(const char **begin, const char **end) {
    char quote = **begin;
    if (*begin == *end || (quote != '"' && quote != '\'')) {
        return 0;
    }
    if (*end - *begin < 2 || (*end)[-1] != quote) {
        return -1;
    }
    ++*begin;
    --*end;
    size_t length = (size_t)(*end - *begin);
    if (memchr(*begin, quote, length) != NULL || memchr(*begin, '\\', length) != NULL) {
        return -1;
    }
    return 0;
}

static int is(const char *begin, const char *end, const char *word) {
    return strlen(word) == (size_t)(end - begin) && memcmp(begin, word, (size_t)(end - begin)) == 0;
}

/* A decimal integer from min to max. Returns 0 on success. */
static int parse_uint(const char *begin, const char *end, uint64_t min, uint64_t max,
                      uint64_t *out) {
    uint64_t value = 0;
    if (begin == end) {
        return -1;
    }
    for (const char *p = begin; p < end; ++p) {
        if (*p < '0' || *p > '9') {
            return -1;
        }
        uint64_t digit = (uint64_t)(*p - '0');
        if (value > (max - digit) / 10) {
            return -1;
        }
        value = value * 10 + digit;
    }
    if (value < min) {
        return -1;
    }
    *out = value;
    return 0;
}

static mlperf_error *bad_value(const char *key, unsigned line, const char *expected,
                               const char *value, const char *value_end) {
    return make_error(MLPERF_ERROR_INVALID_CONFIG,
                      FAULTY_NAME ": config key `%s` (line %u): expected %s, got `%.*s`", key,
                      line, expected, (int)(value_end - value), value);
}

static mlperf_error *parse_config(const char *text, size_t length, faulty_config *config) {
    config->fault = FAULT_NONE;
    config->at_sample = 1;
    config->exit_status = 0;
    config->echo = 0;
    config->response_length = UINT64_MAX;
    config->leak_bytes = 1u << 20;

    int in_table = 0;
    unsigned line_number = 0;
    const char *text_end = text + length;
    for (const char *line = text; text != NULL && line < text_end;) {
        const char *newline = memchr(line, '\n', (size_t)(text_end - line));
        const char *begin = line;
        const char *end = comment_start(line, newline != NULL ? newline : text_end);
        line = newline != NULL ? newline + 1 : text_end;
        ++line_number;
        trim(&begin, &end);
        if (begin == end) {
            continue;
        }
        if (*begin == '[') {
            in_table = 1;
            continue;
        }
        const char *equals = memchr(begin, '=', (size_t)(end - begin));
        if (equals == NULL) {
            return make_error(MLPERF_ERROR_INVALID_CONFIG,
                              FAULTY_NAME ": config line %u: expected `key = value`", line_number);
        }
        const char *key = begin, *key_end = equals, *value = equals + 1, *value_end = end;
        trim(&key, &key_end);
        trim(&value, &value_end);
        if (in_table) {
            continue;
        }
        /* The value as written, for messages, and without its quotes, to parse. */
        const char *raw = value, *raw_end = value_end;
        int quoting = unquote(&value, &value_end);

        uint64_t number = 0;
        if (is(key, key_end, "fault")) {
            size_t kind = 0;
            while (quoting == 0 && kind < FAULT_COUNT && !is(value, value_end, fault_names[kind])) {
                ++kind;
            }
            if (quoting != 0 || kind == FAULT_COUNT) {
                return bad_value("fault", line_number,
                                 "one of none, segfault, abort, exit, kill, hang_issue, "
                                 "hang_flush, hang_destroy, hold, fail_issue, huge_response, "
                                 "garbage_response, leak",
                                 raw, raw_end);
            }
            config->fault = (fault_kind)kind;
        } else if (is(key, key_end, "at_sample")) {
            if (quoting != 0 || parse_uint(value, value_end, 1, UINT64_MAX, &number) != 0) {
                return bad_value("at_sample", line_number, "an integer of at least 1", raw,
                                 raw_end);
            }
            config->at_sample = number;
        } else if (is(key, key_end, "exit_status")) {
            if (quoting != 0 || parse_uint(value, value_end, 0, 255, &number) != 0) {
                return bad_value("exit_status", line_number, "an integer from 0 to 255", raw,
                                 raw_end);
            }
            config->exit_status = (int)number;
        } else if (is(key, key_end, "echo")) {
            if (quoting != 0 || !(is(value, value_end, "true") || is(value, value_end, "false"))) {
                return bad_value("echo", line_number, "true or false", raw, raw_end);
            }
            config->echo = is(value, value_end, "true");
        } else if (is(key, key_end, "response_length")) {
            if (quoting != 0 || parse_uint(value, value_end, 0, UINT64_MAX, &number) != 0) {
                return bad_value("response_length", line_number, "an integer of at least 0", raw,
                                 raw_end);
            }
            config->response_length = number;
        } else if (is(key, key_end, "leak_bytes")) {
            if (quoting != 0 ||
                parse_uint(value, value_end, 1, FAULTY_MAX_LEAK_BYTES, &number) != 0) {
                return bad_value("leak_bytes", line_number, "an integer from 1 to 2^40", raw,
                                 raw_end);
            }
            config->leak_bytes = number;
        }
    }
    return NULL;
}

/* ---- The faults ----------------------------------------------------------------------------- */

/* Blocks this thread for good without burning CPU; pause() returns only for a handled signal. */
static void hang(void) {
    for (;;) {
        pause();
    }
}

/* A real invalid access, not raise(SIGSEGV). The volatile pointer keeps the compiler from
 * seeing the NULL and turning the store into a trap (SIGILL). */
static void segfault(void) {
    volatile int *volatile nowhere = NULL;
    *nowhere = 1;
}

/* Memory taken and never given back; every page is written, so it is really used (and the
 * volatile stores keep the compiler from dropping an allocation nobody reads). */
static void leak(uint64_t bytes) {
    volatile unsigned char *block = malloc((size_t)bytes);
    if (block == NULL) {
        abort();
    }
    for (uint64_t i = 0; i < bytes; i += 4096) {
        block[i] = 1;
    }
    block[bytes - 1] = 1;
}

static void host_log(const faulty_instance *instance, int32_t level, const char *format, ...) {
    if (instance->host.log == NULL) {
        return;
    }
    char line[256];
    va_list args;
    va_start(args, format);
    int length = vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (length > 0) {
        size_t size = (size_t)length < sizeof line ? (size_t)length : sizeof line - 1;
        instance->host.log(instance->host.context, level, line, size);
    }
}

/* The faults that leave issue_query by another door than its return. */
static void strike(const faulty_instance *instance) {
    switch (instance->config.fault) {
    case FAULT_SEGFAULT:
        segfault();
        break;
    case FAULT_ABORT:
        abort();
    case FAULT_EXIT:
        exit(instance->config.exit_status);
    case FAULT_KILL:
        kill(getpid(), SIGKILL);
        hang(); /* until the signal lands */
        break;
    case FAULT_HANG_ISSUE:
        hang();
        break;
    default:
        break;
    }
}

/* ---- The ABI functions ---------------------------------------------------------------------- */

static mlperf_error *faulty_create(const mlperf_host_api *host, const char *config_toml,
                                   size_t config_length, void **instance_out) {
    if (instance_out == NULL) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT, FAULTY_NAME ": instance is NULL");
    }
    *instance_out = NULL;
    if (host == NULL ||
        host->struct_size < offsetof(mlperf_host_api, complete) + sizeof host->complete ||
        host->abi_major != MLPERF_PLUGIN_ABI_MAJOR || host->complete == NULL) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT,
                          FAULTY_NAME ": the host table is missing, of another ABI major, or "
                                      "has no complete callback");
    }
    if (config_toml == NULL && config_length != 0) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT,
                          FAULTY_NAME ": config_toml is NULL but config_length is %zu",
                          config_length);
    }
    faulty_config config;
    mlperf_error *error = parse_config(config_toml, config_length, &config);
    if (error != NULL) {
        return error;
    }
    faulty_instance *instance = calloc(1, sizeof *instance);
    if (instance == NULL) {
        return &out_of_memory_error;
    }
    memcpy(&instance->host, host,
           host->struct_size < sizeof instance->host ? host->struct_size : sizeof instance->host);
    instance->host.struct_size = sizeof instance->host;
    instance->config = config;
    host_log(instance, MLPERF_LOG_INFO, FAULTY_NAME ": fault %s at sample %llu",
             fault_names[config.fault], (unsigned long long)config.at_sample);
    *instance_out = instance;
    return NULL;
}

static void faulty_destroy(void *instance) {
    faulty_instance *faulty = instance;
    if (faulty != NULL && faulty->config.fault == FAULT_HANG_DESTROY) {
        hang();
    }
    free(faulty);
}

static mlperf_error *faulty_issue_query(void *opaque, const mlperf_sample *samples,
                                        size_t count) {
    faulty_instance *instance = opaque;
    if (count == 0) {
        return NULL;
    }
    if (instance == NULL || samples == NULL) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT,
                          FAULTY_NAME ": issue_query: NULL argument");
    }
    /* We read up to `length`, all of ABI 1.0's sample; a later host's samples are larger. */
    size_t stride = samples->struct_size;
    if (stride < offsetof(mlperf_sample, length) + sizeof samples->length) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT,
                          FAULTY_NAME ": issue_query: sample struct_size %zu is too small",
                          stride);
    }
    const faulty_config *config = &instance->config;
    if (config->fault == FAULT_FAIL_ISSUE && instance->seen + count >= config->at_sample) {
        /* All or nothing: none of this call's samples is completed. */
        instance->seen += count;
        return make_error(MLPERF_ERROR_DEVICE,
                          FAULTY_NAME ": issue_query fails from sample %llu on "
                                      "(fault = fail_issue)",
                          (unsigned long long)config->at_sample);
    }

    static const unsigned char one_byte = 1;
    for (size_t i = 0; i < count; ++i) {
        const mlperf_sample *sample =
            (const mlperf_sample *)((const char *)samples + i * stride);
        uint64_t n = ++instance->seen;
        int struck = n == config->at_sample;
        if (struck && config->fault != FAULT_NONE) {
            host_log(instance, MLPERF_LOG_WARN, FAULTY_NAME ": %s at sample %llu",
                     fault_names[config->fault], (unsigned long long)n);
        }
        if (config->fault == FAULT_HOLD && n >= config->at_sample) {
            continue;
        }
        if (config->fault == FAULT_LEAK && n >= config->at_sample) {
            leak(config->leak_bytes);
        }
        if (struck) {
            strike(instance);
        }

        mlperf_response responses[2];
        responses[0].struct_size = sizeof(mlperf_response);
        responses[0].id = sample->id;
        responses[0].data = config->echo ? sample->data : &one_byte;
        responses[0].length = config->echo ? sample->length : 1;
        responses[0].n_tokens = 0;
        if (struck && config->fault == FAULT_HUGE_RESPONSE) {
            responses[0].data = &one_byte;
            responses[0].length = config->response_length;
        }
        instance->host.complete(instance->host.context, responses, 1);
        if (struck && config->fault == FAULT_GARBAGE_RESPONSE) {
            /* The same id again, then an id no host issues (ids are never 0). */
            responses[1] = responses[0];
            responses[1].id = 0;
            instance->host.complete(instance->host.context, responses, 2);
        }
    }
    return NULL;
}

static mlperf_error *faulty_flush_queries(void *opaque) {
    faulty_instance *instance = opaque;
    if (instance != NULL && instance->config.fault == FAULT_HANG_FLUSH) {
        hang();
    }
    return NULL;
}

/* NEEDS_SAMPLE_DATA: with echo = true the answers are the samples' data. Every sample completes
 * inline, so no ASYNC_COMPLETION; one issuing thread at a time, so no CONCURRENT_ISSUE. */
static const mlperf_plugin_api faulty_api = {
    sizeof(mlperf_plugin_api),
    NULL,
    MLPERF_PLUGIN_ABI_MAJOR,
    MLPERF_PLUGIN_ABI_MINOR,
    MLPERF_PLUGIN_KIND_SUT,
    0,
    FAULTY_NAME,
    FAULTY_VERSION,
    MLPERF_CAP_NEEDS_SAMPLE_DATA,
    NULL, /* init */
    faulty_create,
    faulty_destroy,
    NULL, /* attributes */
    faulty_issue_query,
    faulty_flush_queries,
    NULL, /* power_info */
    NULL, /* read_power */
};

MLPERF_PLUGIN_EXPORT const mlperf_plugin_api *mlperf_plugin_entry(uint32_t host_abi_major,
                                                                  uint32_t host_abi_minor) {
    (void)host_abi_minor;
    return host_abi_major == MLPERF_PLUGIN_ABI_MAJOR ? &faulty_api : NULL;
}
