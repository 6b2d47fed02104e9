/*
 * example_plugin.c — a complete mlperf-host SUT backend in plain C99, implementing only
 * mlperf_plugin.h (ABI 1.4), with a power meter beside it. Copy it as the starting point of
 * your own plugin.
 *
 * What it does: it "runs" every sample by answering with the sample's index as 4 little-endian
 * bytes (the same answer as the host's null plugin, so accuracy logs can be compared). It runs in
 * one of two modes, chosen by the plugin config (TOML text handed over by the host):
 *
 *   workers = 0      every sample is completed inline, inside issue_query (no threads at all);
 *   workers = N > 0  issue_query only queues the samples; N worker threads take them off the
 *                    queue (up to max_batch at a time, like a device batch), wait until
 *                    latency_us have passed since the samples were issued, and complete them
 *                    through host->complete from the worker thread.
 *
 * Config keys (anything else is ignored, so a shared config file can carry other settings):
 *
 *   workers    = 2            # worker threads; 0 = complete inline (default 0)
 *   latency_us = 500          # simulated device time per batch, microseconds (default 0)
 *   max_batch  = 16           # samples a worker takes at once, 1..256 (default 16)
 *   device     = "npu0"       # reported as the "device" attribute (default "cpu-simulated")
 *   sample_memory = "pinned"  # where loaded samples live (ABI 1.4): "pinned" (page-aligned + mlock,
 *                             # what a device reads directly), "host" (page-aligned),
 *                             # "device" (a simulated device's own memory, filled through
 *                             # write_samples), "refuse" (the allocation fails: the host's
 *                             # error path), or "" (default: the host's own memory)
 *
 * The library also offers a power meter for the device (a second entry,
 * mlperf_power_plugin_entry; `--power plugin:PATH` on the host): a simulated board sensor
 * reading a constant draw, with an energy counter. Its own config (same syntax) takes
 *
 *   watts      = 75           # the simulated draw, 1..100000 W (default 75)
 *   device     = "npu0"       # named in what the meter measures (default "cpu-simulated")
 *
 * Since ABI 1.3 the host says at create which test the instance serves (host->run: scenario,
 * mode, samples per query, latency bound, ...; the example logs it) and hands over each set of
 * samples LoadGen loads before timing (load_samples / unload_samples; the example keeps which
 * indices are loaded and fails the run if a sample outside the set is ever issued).
 *
 * Where to put your own code is marked "YOUR DEVICE" below.
 *
 * Build (Linux):
 *   cc -std=c99 -shared -fPIC -O2 -pthread -fvisibility=hidden -I include \
 *      example_plugin.c -o libnpu.so
 */

/* clock_gettime, CLOCK_MONOTONIC and pthread_condattr_setclock are POSIX, not C99. */
#define _POSIX_C_SOURCE 200809L
/* MAP_ANONYMOUS, in POSIX only since 2024 (glibc and musl show it with this). */
#define _DEFAULT_SOURCE

#include "mlperf_plugin.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define EXAMPLE_NAME "example-c"
#define EXAMPLE_VERSION "0.1.0"

/* Limits of the config values, checked in create. */
#define EXAMPLE_MAX_WORKERS 256u
#define EXAMPLE_MAX_BATCH 256u
#define EXAMPLE_MAX_LATENCY_US 60000000ull /* one minute */
#define EXAMPLE_DEVICE_MAX 64u
#define EXAMPLE_MAX_WATTS 100000u

/* Samples completed in one complete() call when completing inline. */
#define EXAMPLE_INLINE_CHUNK 64u

/* ============================================================================================
 * Errors
 *
 * Every function that can fail returns an mlperf_error*, NULL meaning success. The receiver
 * reads code and message and then calls error->release(error) exactly once, so the error owns
 * its message and release frees both. There is no "last error" and no thread-local state.
 * ========================================================================================== */

/* An error and its message in one allocation; release frees the whole block. */
typedef struct example_error {
    mlperf_error base; /* first member, so an mlperf_error* is an example_error* */
    char message[];    /* NUL-terminated, UTF-8 */
} example_error;

static void example_error_release(mlperf_error *error) {
    free(error);
}

/* Returned when there is not even memory for an error. Its release does nothing. */
static void static_error_release(mlperf_error *error) {
    (void)error;
}

static mlperf_error out_of_memory_error = {
    sizeof(mlperf_error), NULL, MLPERF_ERROR_RESOURCE_EXHAUSTED,
    EXAMPLE_NAME ": out of memory", static_error_release,
};

/* A new error with a printf-style message. Never returns NULL. */
static mlperf_error *make_error(int32_t code, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int length = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (length < 0) {
        length = 0;
    }
    example_error *error = malloc(sizeof(example_error) + (size_t)length + 1);
    if (error == NULL) {
        return &out_of_memory_error;
    }
    va_start(args, format);
    vsnprintf(error->message, (size_t)length + 1, format, args);
    va_end(args);
    error->base.struct_size = sizeof(mlperf_error);
    error->base.next = NULL;
    error->base.code = code;
    error->base.message = error->message;
    error->base.release = example_error_release;
    return &error->base;
}

/* ============================================================================================
 * Config: a tiny TOML subset, parsed here so the example needs no library.
 *
 * One `key = value` per line; `#` comments; blank lines. Keys are bare; values are decimal
 * integers (underscores allowed between digits, as in TOML) or basic "strings" without escapes.
 * Keys under a [table] header belong to that table and are ignored, as are unknown top-level
 * keys. Multi-line values are not supported. A real plugin should use a TOML library
 * (tomlc99, toml++ for C++): the host passes the text through unchanged.
 * ========================================================================================== */

typedef struct example_config {
    unsigned workers;
    uint64_t latency_us;
    unsigned max_batch;
    char device[EXAMPLE_DEVICE_MAX];
    char sample_memory[16]; /* "", "host", "pinned", "device" or "refuse" */
    unsigned watts; /* the power meter's */
} example_config;

static int is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

static int is_key_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-';
}

/* Trims [*begin, *end) of blanks on both sides. */
static void trim(const char **begin, const char **end) {
    while (*begin < *end && is_space(**begin)) {
        ++*begin;
    }
    while (*end > *begin && is_space((*end)[-1])) {
        --*end;
    }
}

static int key_is(const char *key, size_t key_length, const char *name) {
    return strlen(name) == key_length && memcmp(key, name, key_length) == 0;
}

/* Parses a non-negative decimal integer no larger than max. Returns 0 on success. */
static int parse_uint(const char *begin, const char *end, uint64_t max, uint64_t *out) {
    uint64_t value = 0;
    int digits = 0;
    const char *p = begin;
    if (p < end && *p == '+') {
        ++p;
    }
    for (; p < end; ++p) {
        if (*p == '_' && digits > 0 && p + 1 < end && p[1] >= '0' && p[1] <= '9') {
            continue; /* 1_000 */
        }
        if (*p < '0' || *p > '9') {
            return -1;
        }
        uint64_t digit = (uint64_t)(*p - '0');
        if (value > (max - digit) / 10) {
            return -1; /* larger than max (or than 64 bits) */
        }
        value = value * 10 + digit;
        ++digits;
    }
    if (digits == 0) {
        return -1;
    }
    *out = value;
    return 0;
}

/* Parses a basic string "..." without escapes into out (capacity bytes). Returns 0 on success. */
static int parse_string(const char *begin, const char *end, char *out, size_t capacity) {
    if (end - begin < 2 || *begin != '"' || end[-1] != '"') {
        return -1;
    }
    size_t length = (size_t)(end - begin - 2);
    if (length + 1 > capacity || memchr(begin + 1, '"', length) != NULL ||
        memchr(begin + 1, '\\', length) != NULL) {
        return -1;
    }
    memcpy(out, begin + 1, length);
    out[length] = '\0';
    return 0;
}

/* Where a `#` starts a comment on this line (outside a string), or end. */
static const char *comment_start(const char *begin, const char *end) {
    int in_string = 0;
    for (const char *p = begin; p < end; ++p) {
        if (*p == '"') {
            in_string = !in_string;
        } else if (*p == '#' && !in_string) {
            return p;
        }
    }
    return end;
}

/* Fills config from the TOML text (length bytes, not necessarily NUL-terminated). */
static mlperf_error *parse_config(const char *text, size_t length, example_config *config) {
    /* Defaults. */
    config->workers = 0;
    config->latency_us = 0;
    config->max_batch = 16;
    snprintf(config->device, sizeof config->device, "%s", "cpu-simulated");
    config->watts = 75;

    int in_table = 0; /* after a [table] header: keys there are not ours */
    unsigned line_number = 0;
    const char *text_end = text + length;
    for (const char *line = text; text != NULL && line < text_end;) {
        const char *newline = memchr(line, '\n', (size_t)(text_end - line));
        const char *line_end = newline != NULL ? newline : text_end;
        const char *next_line = newline != NULL ? newline + 1 : text_end;
        ++line_number;

        const char *begin = line;
        const char *end = comment_start(line, line_end);
        trim(&begin, &end);
        line = next_line;
        if (begin == end) {
            continue; /* blank or comment */
        }
        if (*begin == '[') {
            in_table = 1;
            continue;
        }

        const char *equals = memchr(begin, '=', (size_t)(end - begin));
        if (equals == NULL) {
            return make_error(MLPERF_ERROR_INVALID_CONFIG,
                              EXAMPLE_NAME ": config line %u: expected `key = value`", line_number);
        }
        const char *key = begin;
        const char *key_end = equals;
        const char *value = equals + 1;
        const char *value_end = end;
        trim(&key, &key_end);
        trim(&value, &value_end);
        for (const char *p = key; p < key_end; ++p) {
            if (!is_key_char(*p)) {
                key_end = key; /* dotted or quoted key: not one of ours */
                break;
            }
        }
        if (in_table || key == key_end) {
            continue;
        }
        size_t key_length = (size_t)(key_end - key);

        uint64_t number = 0;
        if (key_is(key, key_length, "workers")) {
            if (parse_uint(value, value_end, EXAMPLE_MAX_WORKERS, &number) != 0) {
                return make_error(MLPERF_ERROR_INVALID_CONFIG,
                                  EXAMPLE_NAME ": config key `workers` (line %u): expected an "
                                  "integer from 0 to %u, got `%.*s`",
                                  line_number, EXAMPLE_MAX_WORKERS, (int)(value_end - value), value);
            }
            config->workers = (unsigned)number;
        } else if (key_is(key, key_length, "latency_us")) {
            if (parse_uint(value, value_end, EXAMPLE_MAX_LATENCY_US, &number) != 0) {
                return make_error(MLPERF_ERROR_INVALID_CONFIG,
                                  EXAMPLE_NAME ": config key `latency_us` (line %u): expected an "
                                  "integer from 0 to %llu, got `%.*s`",
                                  line_number, (unsigned long long)EXAMPLE_MAX_LATENCY_US,
                                  (int)(value_end - value), value);
            }
            config->latency_us = number;
        } else if (key_is(key, key_length, "max_batch")) {
            if (parse_uint(value, value_end, EXAMPLE_MAX_BATCH, &number) != 0 || number == 0) {
                return make_error(MLPERF_ERROR_INVALID_CONFIG,
                                  EXAMPLE_NAME ": config key `max_batch` (line %u): expected an "
                                  "integer from 1 to %u, got `%.*s`",
                                  line_number, EXAMPLE_MAX_BATCH, (int)(value_end - value), value);
            }
            config->max_batch = (unsigned)number;
        } else if (key_is(key, key_length, "watts")) {
            if (parse_uint(value, value_end, EXAMPLE_MAX_WATTS, &number) != 0 || number == 0) {
                return make_error(MLPERF_ERROR_INVALID_CONFIG,
                                  EXAMPLE_NAME ": config key `watts` (line %u): expected an "
                                  "integer from 1 to %u, got `%.*s`",
                                  line_number, EXAMPLE_MAX_WATTS, (int)(value_end - value), value);
            }
            config->watts = (unsigned)number;
        } else if (key_is(key, key_length, "sample_memory")) {
            if (parse_string(value, value_end, config->sample_memory,
                             sizeof config->sample_memory) != 0 ||
                (strcmp(config->sample_memory, "") != 0 &&
                 strcmp(config->sample_memory, "host") != 0 &&
                 strcmp(config->sample_memory, "pinned") != 0 &&
                 strcmp(config->sample_memory, "device") != 0 &&
                 strcmp(config->sample_memory, "refuse") != 0)) {
                return make_error(MLPERF_ERROR_INVALID_CONFIG,
                                  EXAMPLE_NAME ": config key `sample_memory` (line %u): expected "
                                  "\"pinned\", \"host\", \"device\", \"refuse\" or \"\", "
                                  "got `%.*s`",
                                  line_number, (int)(value_end - value), value);
            }
        } else if (key_is(key, key_length, "device")) {
            if (parse_string(value, value_end, config->device, sizeof config->device) != 0) {
                return make_error(MLPERF_ERROR_INVALID_CONFIG,
                                  EXAMPLE_NAME ": config key `device` (line %u): expected a "
                                  "\"string\" of at most %u bytes without escapes, got `%.*s`",
                                  line_number, EXAMPLE_DEVICE_MAX - 1, (int)(value_end - value),
                                  value);
            }
        }
        /* else: not our key; ignore it. */
    }
    return NULL;
}

/* ============================================================================================
 * The instance
 * ========================================================================================== */

/* One queued sample: all we need of it after issue_query has returned. The host's sample
 * memory (sample->data) stays valid until this sample is completed, so a real device could
 * keep the data pointer here too and read (or DMA) it from the worker. */
typedef struct example_job {
    uint64_t id;
    uint64_t index;
    struct timespec deadline; /* when the simulated device is done with it */
} example_job;

typedef struct example_instance {
    /* Our own copy of the host's table: only the part the host compiled against, rest zeroed.
     * (Copying keeps us independent of how long the host keeps its struct alive.) */
    mlperf_host_api host;
    example_config config;

    /* The attributes handed out by attributes(); the strings live in config. */
    mlperf_attribute attributes[3];

    /* The test this instance serves (ABI 1.3), copied at create; has_run = 0 when the host
     * said nothing (a 1.2 host, or an instance made only for its attributes). */
    mlperf_run_description run;
    int has_run;

    /* The loaded sample set (load_samples/unload_samples, ABI 1.3): one byte per index up to
     * loaded_capacity, 1 = loaded. Written only by load and unload, which never overlap a
     * query, so issue_query reads it without a lock. */
    unsigned char *loaded;
    uint64_t loaded_capacity;
    int sets_handed; /* a load_samples came: issued samples must lie in the set */

    /* The blocks the loaded sets live in (sample_memory, ABI 1.4): allocated and freed by
     * allocate_samples / free_samples, which never overlap a query. A "device" block's
     * `memory` is its address on the simulated device: a reserved range of addresses with no
     * access at all (a host that read or wrote it would fault); `device_copy` is what the
     * device holds there, filled by write_samples. */
    struct {
        void *memory;
        uint64_t bytes;
        unsigned char *device_copy;
    } blocks[8];
    unsigned allocations, frees;

    /* Worker mode only: the threads (written by create and destroy alone) ... */
    pthread_t *threads;
    unsigned threads_started;
    int sync_initialized; /* mutex and work_ready exist */
    pthread_mutex_t mutex;
    pthread_cond_t work_ready; /* signalled when jobs are queued, and on stop */
    /* ... and, guarded by `mutex`, the stop flag and the queue. */
    int stopping;       /* set by destroy: finish the queue without waiting, then exit */
    example_job *queue; /* ring buffer */
    size_t queue_capacity;
    size_t queue_head;
    size_t queue_length;
} example_instance;

/* The answer for one sample: its index as 4 little-endian bytes, whatever the CPU's byte order.
 * YOUR DEVICE: this is where your output goes instead. */
static void write_answer(uint64_t index, unsigned char out[4]) {
    uint32_t value = (uint32_t)index;
    out[0] = (unsigned char)(value & 0xff);
    out[1] = (unsigned char)((value >> 8) & 0xff);
    out[2] = (unsigned char)((value >> 16) & 0xff);
    out[3] = (unsigned char)((value >> 24) & 0xff);
}

/* Completes jobs[0..count) with one host->complete call. Responses and their data need only
 * live until complete() returns: the host copies what it keeps. Never call the host while
 * holding a lock the host could wait on (here: instance->mutex). */
static void complete_jobs(const example_instance *instance, const example_job *jobs,
                          size_t count) {
    mlperf_response responses[EXAMPLE_MAX_BATCH > EXAMPLE_INLINE_CHUNK ? EXAMPLE_MAX_BATCH
                                                                       : EXAMPLE_INLINE_CHUNK];
    unsigned char answers[sizeof responses / sizeof responses[0]][4];
    for (size_t i = 0; i < count; ++i) {
        write_answer(jobs[i].index, answers[i]);
        responses[i].struct_size = sizeof(mlperf_response);
        responses[i].id = jobs[i].id;
        responses[i].data = answers[i];
        responses[i].length = 4;
        responses[i].n_tokens = 0;
    }
    instance->host.complete(instance->host.context, responses, count);
}

static void host_log(const example_instance *instance, int32_t level, const char *format, ...) {
    if (instance->host.log == NULL) {
        return;
    }
    char line[256];
    va_list args;
    va_start(args, format);
    int length = vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (length < 0) {
        return;
    }
    if ((size_t)length >= sizeof line) {
        length = (int)sizeof line - 1; /* truncated */
    }
    instance->host.log(instance->host.context, level, line, (size_t)length);
}

/* YOUR DEVICE: when samples you accepted can no longer complete (the device was lost, a batch
 * failed on a worker thread), tell the host at once through host.fail (since ABI 1.2; NULL in
 * our copy when the host is older): it stops issuing, gives up on the outstanding samples after
 * a short drain and ends the run INVALID with your message. Any thread may call it, also inline
 * in issue_query. Without it (an older host), log the failure and return an error from the
 * next issue_query and flush_queries instead. The simulated device never fails, so the example
 * never calls it:
 *
 *     if (instance->host.fail != NULL) {
 *         instance->host.fail(instance->host.context, message, strlen(message));
 *     }
 */

/* ---- Worker threads ------------------------------------------------------------------------ */

static void add_microseconds(struct timespec *t, uint64_t microseconds) {
    t->tv_sec += (time_t)(microseconds / 1000000u);
    t->tv_nsec += (long)(microseconds % 1000000u) * 1000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_nsec -= 1000000000L;
        t->tv_sec += 1;
    }
}

static int time_before(const struct timespec *a, const struct timespec *b) {
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void *worker_main(void *argument) {
    example_instance *instance = argument;
    example_job batch[EXAMPLE_MAX_BATCH];

    pthread_mutex_lock(&instance->mutex);
    for (;;) {
        while (instance->queue_length == 0 && !instance->stopping) {
            pthread_cond_wait(&instance->work_ready, &instance->mutex);
        }
        if (instance->queue_length == 0) {
            break; /* stopping and nothing left */
        }

        /* Take up to max_batch jobs off the queue. */
        size_t count = instance->queue_length < instance->config.max_batch
                           ? instance->queue_length
                           : instance->config.max_batch;
        for (size_t i = 0; i < count; ++i) {
            batch[i] = instance->queue[instance->queue_head];
            instance->queue_head = (instance->queue_head + 1) % instance->queue_capacity;
        }
        instance->queue_length -= count;

        /* YOUR DEVICE: submit the batch and wait for it here, with the mutex released.
         * The simulation waits until the last job's deadline; destroy cuts the wait short
         * (the waiting releases the mutex, so other workers and issue_query go on). */
        const struct timespec deadline = batch[count - 1].deadline;
        for (;;) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (instance->stopping || !time_before(&now, &deadline)) {
                break;
            }
            pthread_cond_timedwait(&instance->work_ready, &instance->mutex, &deadline);
        }

        pthread_mutex_unlock(&instance->mutex);
        complete_jobs(instance, batch, count); /* from this worker thread, without the lock */
        pthread_mutex_lock(&instance->mutex);
    }
    pthread_mutex_unlock(&instance->mutex);
    return NULL;
}

/* Stops and joins the workers that were started, then frees the instance. Used by destroy and
 * by create's failure path. */
/* The block of ours `sample`'s data lies inside, or -1. */
static int our_block(const example_instance *instance, const mlperf_sample *sample) {
    uintptr_t data = (uintptr_t)sample->data;
    for (size_t k = 0; k < sizeof instance->blocks / sizeof instance->blocks[0]; ++k) {
        uintptr_t block = (uintptr_t)instance->blocks[k].memory;
        if (block != 0 && data >= block && data + sample->length <= block + instance->blocks[k].bytes) {
            return (int)k;
        }
    }
    return -1;
}

/* While a set lives in memory we gave (the host asked for it: a host before 1.4, or one told
 * to keep samples in its own memory, does not): whether `sample`'s data lies inside one of
 * our blocks. */
static int in_our_memory(const example_instance *instance, const mlperf_sample *sample) {
    if (instance->allocations == instance->frees || sample->data == NULL) {
        return 1;
    }
    return our_block(instance, sample) >= 0;
}

/* Where the plugin reads `sample`'s bytes: in place, or for a device block, in what the device
 * holds at that address. YOUR DEVICE: a kernel reads the device address itself. */
static const unsigned char *readable_data(const example_instance *instance,
                                          const mlperf_sample *sample) {
    int k = our_block(instance, sample);
    if (k >= 0 && instance->blocks[k].device_copy != NULL) {
        uintptr_t offset = (uintptr_t)sample->data - (uintptr_t)instance->blocks[k].memory;
        return instance->blocks[k].device_copy + offset;
    }
    return sample->data;
}

static void free_instance(example_instance *instance) {
    if (instance->sync_initialized) {
        pthread_mutex_lock(&instance->mutex);
        instance->stopping = 1;
        pthread_cond_broadcast(&instance->work_ready);
        pthread_mutex_unlock(&instance->mutex);
        for (unsigned i = 0; i < instance->threads_started; ++i) {
            pthread_join(instance->threads[i], NULL);
        }
        pthread_cond_destroy(&instance->work_ready);
        pthread_mutex_destroy(&instance->mutex);
    }
    free(instance->threads);
    free(instance->queue);
    free(instance->loaded);
    free(instance);
}

/* ============================================================================================
 * The ABI functions
 * ========================================================================================== */

/* Named inputs (a data set run with --input-names or --dataset-input): every sample holds
 * them alike, each `offset` bytes into its data (mlperf_input_data). YOUR DEVICE: bind each
 * to the model input of its name. We only say what they are. */
static void log_named_inputs(const example_instance *instance) {
    for (size_t k = 0; k < instance->run.n_inputs; ++k) {
        const mlperf_input *input = mlperf_run_input(&instance->run, k);
        host_log(instance, MLPERF_LOG_INFO,
                 EXAMPLE_NAME ": input '%s': %llu bytes at offset %llu, dtype %d, rank %u",
                 input->name, (unsigned long long)input->length,
                 (unsigned long long)input->offset, (int)input->dtype, (unsigned)input->rank);
    }
}

static mlperf_error *example_create(const mlperf_host_api *host, const char *config_toml,
                                    size_t config_length, void **instance_out) {
    if (instance_out == NULL) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT, EXAMPLE_NAME ": instance is NULL");
    }
    *instance_out = NULL;

    /* The host table: check its version and that it is large enough for what we call. */
    if (host == NULL ||
        host->struct_size < offsetof(mlperf_host_api, complete) + sizeof host->complete ||
        host->abi_major != MLPERF_PLUGIN_ABI_MAJOR || host->complete == NULL) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT,
                          EXAMPLE_NAME ": the host table is missing, of another ABI major, or "
                                       "has no complete callback");
    }
    if (config_toml == NULL && config_length != 0) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT,
                          EXAMPLE_NAME ": config_toml is NULL but config_length is %zu",
                          config_length);
    }

    example_instance *instance = calloc(1, sizeof *instance);
    if (instance == NULL) {
        return &out_of_memory_error;
    }
    /* Copy what the host compiled against; a field it does not know about stays NULL. */
    memcpy(&instance->host, host,
           host->struct_size < sizeof instance->host ? host->struct_size : sizeof instance->host);
    instance->host.struct_size = sizeof instance->host;

    /* The run description, from a 1.3 host (a smaller table has no `run`). A real batcher picks
     * its policy here: Server's latency bound and rate, Offline's one large query. */
    const mlperf_run_description *run =
        host->struct_size >= offsetof(mlperf_host_api, run) + sizeof host->run ? host->run : NULL;
    /* A 1.3 host's description ends before 1.4's device: copy what it has, the rest zero. */
    if (run != NULL && run->struct_size >= offsetof(mlperf_run_description, device)) {
        memcpy(&instance->run, run,
               run->struct_size < sizeof instance->run ? run->struct_size : sizeof instance->run);
        instance->run.struct_size = sizeof instance->run;
        instance->run.device = NULL; /* not kept past create */
        instance->has_run = 1;
    }
    instance->host.run = NULL; /* not kept: the copy above is */

    mlperf_error *error = parse_config(config_toml, config_length, &instance->config);
    if (error != NULL) {
        free_instance(instance);
        return error;
    }

    instance->attributes[0].key = "vendor";
    instance->attributes[0].value = "mlperf-host example";
    instance->attributes[1].key = "device";
    instance->attributes[1].value = instance->config.device;
    instance->attributes[2].key = "precision";
    instance->attributes[2].value = "int32";

    /* YOUR DEVICE: open and configure it here. */

    if (instance->config.workers > 0) {
        /* Deadlines are on the monotonic clock, so the condition variable waits on it too. */
        pthread_condattr_t condattr;
        int cond_ok = pthread_condattr_init(&condattr) == 0;
        if (cond_ok) {
            cond_ok = pthread_condattr_setclock(&condattr, CLOCK_MONOTONIC) == 0 &&
                      pthread_cond_init(&instance->work_ready, &condattr) == 0;
            pthread_condattr_destroy(&condattr);
        }
        if (!cond_ok) {
            free_instance(instance);
            return make_error(MLPERF_ERROR_INTERNAL, EXAMPLE_NAME ": pthread_cond_init failed");
        }
        if (pthread_mutex_init(&instance->mutex, NULL) != 0) {
            pthread_cond_destroy(&instance->work_ready);
            free_instance(instance);
            return make_error(MLPERF_ERROR_INTERNAL, EXAMPLE_NAME ": pthread_mutex_init failed");
        }
        instance->sync_initialized = 1;

        instance->threads = calloc(instance->config.workers, sizeof *instance->threads);
        if (instance->threads == NULL) {
            free_instance(instance);
            return &out_of_memory_error;
        }
        for (unsigned i = 0; i < instance->config.workers; ++i) {
            int status = pthread_create(&instance->threads[i], NULL, worker_main, instance);
            if (status != 0) {
                free_instance(instance); /* joins the ones already started */
                return make_error(MLPERF_ERROR_RESOURCE_EXHAUSTED,
                                  EXAMPLE_NAME ": could not start worker thread %u: %s", i,
                                  strerror(status));
            }
            instance->threads_started = i + 1;
        }
    }

    host_log(instance, MLPERF_LOG_INFO,
             EXAMPLE_NAME ": created, device %s, %u worker thread(s), latency %llu us, "
                          "max_batch %u",
             instance->config.device, instance->config.workers,
             (unsigned long long)instance->config.latency_us, instance->config.max_batch);
    if (instance->has_run) {
        static const char *const scenarios[] = {"?", "SingleStream", "MultiStream", "Server",
                                                "Offline"};
        uint32_t scenario = instance->run.scenario <= 4 ? instance->run.scenario : 0;
        host_log(instance, MLPERF_LOG_INFO,
                 EXAMPLE_NAME ": run: %s, %llu sample(s) per query, target %.1f qps, "
                              "latency bound %llu ns at p%.1f, %llu of %llu samples loaded at once",
                 scenarios[scenario], (unsigned long long)instance->run.samples_per_query,
                 instance->run.target_qps, (unsigned long long)instance->run.target_latency_ns,
                 instance->run.target_latency_percentile * 100.0,
                 (unsigned long long)instance->run.performance_sample_count,
                 (unsigned long long)instance->run.total_sample_count);
        log_named_inputs(instance);
    }
    *instance_out = instance;
    return NULL;
}

/* Stops the workers and frees the instance. Samples still queued are completed first, without
 * their simulated latency, so every issued id is still completed exactly once; by the time
 * destroy returns every worker has been joined and no callback can follow. */
static void example_destroy(void *opaque) {
    example_instance *instance = opaque;
    if (instance != NULL) {
        if (instance->config.sample_memory[0] != '\0') {
            host_log(instance, MLPERF_LOG_INFO,
                     EXAMPLE_NAME ": sample memory: %u block(s) allocated, %u freed",
                     instance->allocations, instance->frees);
        }
        free_instance(instance);
    }
}

/* Memory for a loaded set (ABI 1.4). YOUR DEVICE: register it with the driver (e.g. as
 * pinned host memory the device reads by DMA) here, and unregister it in free_samples. */
static mlperf_error *example_allocate_samples(void *opaque, uint64_t bytes, uint64_t alignment,
                                              uint32_t *memory_kind, void **memory) {
    example_instance *instance = opaque;
    if (instance == NULL || memory_kind == NULL || memory == NULL) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT, EXAMPLE_NAME ": allocate_samples: NULL argument");
    }
    *memory = NULL;
    const char *kind = instance->config.sample_memory;
    if (kind[0] == '\0') {
        return NULL; /* no memory of ours: the host keeps the samples */
    }
    if (strcmp(kind, "refuse") == 0) {
        return make_error(MLPERF_ERROR_RESOURCE_EXHAUSTED,
                          EXAMPLE_NAME ": allocate_samples: refusing %llu bytes (sample_memory = "
                                       "\"refuse\")",
                          (unsigned long long)bytes);
    }
    size_t slot = 0;
    while (slot < sizeof instance->blocks / sizeof instance->blocks[0] &&
           instance->blocks[slot].memory != NULL) {
        ++slot;
    }
    if (slot == sizeof instance->blocks / sizeof instance->blocks[0]) {
        return make_error(MLPERF_ERROR_RESOURCE_EXHAUSTED,
                          EXAMPLE_NAME ": allocate_samples: every block is in use");
    }
    if (strcmp(kind, "device") == 0) {
        /* The device's address space, simulated: addresses reserved with no access, so the
         * host touching the block faults, and the bytes kept aside as the device's. */
        void *address = mmap(NULL, (size_t)bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        unsigned char *device_copy = malloc((size_t)bytes);
        if (address == MAP_FAILED || device_copy == NULL) {
            if (address != MAP_FAILED) {
                munmap(address, (size_t)bytes);
            }
            free(device_copy);
            return make_error(MLPERF_ERROR_RESOURCE_EXHAUSTED,
                              EXAMPLE_NAME ": allocate_samples: %llu bytes of device memory",
                              (unsigned long long)bytes);
        }
        instance->blocks[slot].memory = address;
        instance->blocks[slot].bytes = bytes;
        instance->blocks[slot].device_copy = device_copy;
        instance->allocations += 1;
        *memory_kind = MLPERF_MEMORY_DEVICE;
        *memory = address;
        return NULL;
    }
    /* Whole pages (what mlock locks), aligned to a page or more. */
    size_t page = 4096;
    size_t align = alignment > page ? (size_t)alignment : page;
    void *block = NULL;
    int status = posix_memalign(&block, align, (size_t)bytes);
    if (status != 0) {
        return make_error(MLPERF_ERROR_RESOURCE_EXHAUSTED,
                          EXAMPLE_NAME ": allocate_samples: %llu bytes aligned to %zu: %s",
                          (unsigned long long)bytes, align, strerror(status));
    }
    *memory_kind = MLPERF_MEMORY_HOST;
    if (strcmp(kind, "pinned") == 0) {
        if (mlock(block, bytes) == 0) {
            *memory_kind = MLPERF_MEMORY_PINNED_HOST;
        } else {
            /* RLIMIT_MEMLOCK is small by default; a device driver pins its own way. */
            host_log(instance, MLPERF_LOG_WARN,
                     EXAMPLE_NAME ": mlock of %llu bytes failed (%s): the set is not pinned",
                     (unsigned long long)bytes, strerror(errno));
        }
    }
    instance->blocks[slot].memory = block;
    instance->blocks[slot].bytes = bytes;
    instance->allocations += 1;
    *memory = block;
    return NULL;
}

static void example_free_samples(void *opaque, void *memory, uint64_t bytes) {
    example_instance *instance = opaque;
    for (size_t k = 0; k < sizeof instance->blocks / sizeof instance->blocks[0]; ++k) {
        if (instance->blocks[k].memory == memory) {
            if (instance->blocks[k].device_copy != NULL) {
                munmap(memory, (size_t)bytes);
                free(instance->blocks[k].device_copy);
                instance->blocks[k].device_copy = NULL;
            } else {
                munlock(memory, bytes); /* harmless where it was not locked */
                free(memory);
            }
            instance->blocks[k].memory = NULL;
            instance->frees += 1;
            return;
        }
    }
    host_log(instance, MLPERF_LOG_ERROR, EXAMPLE_NAME ": free_samples: %p is not ours", memory);
}

/* The host fills a device block (ABI 1.4). YOUR DEVICE: a host-to-device copy
 * (cudaMemcpy, a DMA transfer) to `memory` + `offset`. */
static mlperf_error *example_write_samples(void *opaque, void *memory, uint64_t offset,
                                           const void *data, uint64_t length) {
    example_instance *instance = opaque;
    if (instance == NULL || (data == NULL && length != 0)) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT, EXAMPLE_NAME ": write_samples: NULL argument");
    }
    for (size_t k = 0; k < sizeof instance->blocks / sizeof instance->blocks[0]; ++k) {
        if (instance->blocks[k].memory != memory || instance->blocks[k].device_copy == NULL) {
            continue;
        }
        if (offset > instance->blocks[k].bytes || length > instance->blocks[k].bytes - offset) {
            return make_error(MLPERF_ERROR_INVALID_ARGUMENT,
                              EXAMPLE_NAME ": write_samples: %llu bytes at %llu overrun the "
                                           "block of %llu",
                              (unsigned long long)length, (unsigned long long)offset,
                              (unsigned long long)instance->blocks[k].bytes);
        }
        memcpy(instance->blocks[k].device_copy + offset, data, (size_t)length);
        return NULL;
    }
    return make_error(MLPERF_ERROR_INVALID_ARGUMENT,
                      EXAMPLE_NAME ": write_samples: %p is not a device block of ours", memory);
}

static mlperf_error *example_attributes(void *opaque, const mlperf_attribute **attributes,
                                        size_t *count) {
    example_instance *instance = opaque;
    if (instance == NULL || attributes == NULL || count == NULL) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT, EXAMPLE_NAME ": attributes: NULL argument");
    }
    *attributes = instance->attributes; /* valid until destroy */
    *count = sizeof instance->attributes / sizeof instance->attributes[0];
    return NULL;
}

/* The i-th sample. Samples are strided by struct_size, which is larger when the host was built
 * against a later minor that appended fields: never index the array as samples[i]. */
static const mlperf_sample *sample_at(const mlperf_sample *samples, size_t stride, size_t i) {
    return (const mlperf_sample *)((const char *)samples + i * stride);
}

/* Marks (value 1) or clears (0) the indices of a loaded set. YOUR DEVICE: copy or pin the set's
 * data (sample->data, sample->length: valid until the matching unload) onto the device here,
 * outside the timed run. */
static mlperf_error *mark_set(example_instance *instance, const mlperf_sample *samples,
                              size_t count, unsigned char value, const char *function) {
    if (instance == NULL || (samples == NULL && count != 0)) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT, EXAMPLE_NAME ": %s: NULL argument",
                          function);
    }
    if (count == 0) {
        return NULL;
    }
    size_t stride = samples->struct_size;
    if (stride < offsetof(mlperf_sample, index) + sizeof samples->index) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT,
                          EXAMPLE_NAME ": %s: sample struct_size %zu is too small", function,
                          stride);
    }
    for (size_t i = 0; i < count; ++i) {
        if (value == 1 && stride >= sizeof(mlperf_sample) &&
            !in_our_memory(instance, sample_at(samples, stride, i))) {
            return make_error(MLPERF_ERROR_INVALID_ARGUMENT,
                              EXAMPLE_NAME ": %s: sample %llu's data is not in the memory "
                                           "allocate_samples gave",
                              function, (unsigned long long)sample_at(samples, stride, i)->index);
        }
        uint64_t index = sample_at(samples, stride, i)->index;
        if (index >= instance->loaded_capacity) {
            if (value == 0) {
                continue; /* never loaded */
            }
            uint64_t capacity = instance->loaded_capacity ? instance->loaded_capacity : 1024;
            while (capacity <= index) {
                capacity *= 2;
            }
            unsigned char *grown = realloc(instance->loaded, capacity);
            if (grown == NULL) {
                return make_error(MLPERF_ERROR_RESOURCE_EXHAUSTED,
                                  EXAMPLE_NAME ": %s: cannot track %llu samples", function,
                                  (unsigned long long)capacity);
            }
            memset(grown + instance->loaded_capacity, 0, capacity - instance->loaded_capacity);
            instance->loaded = grown;
            instance->loaded_capacity = capacity;
        }
        instance->loaded[index] = value;
    }
    return NULL;
}

/* With sample_memory set: a digest (FNV-1a) of the set's bytes as the plugin reads them, so a
 * test can see that every sample arrived intact wherever it lives. */
static void log_set_digest(const example_instance *instance, const mlperf_sample *samples,
                           size_t count) {
    uint64_t digest = 0xcbf29ce484222325ull;
    uint64_t bytes = 0;
    for (size_t i = 0; i < count; ++i) {
        const mlperf_sample *sample = sample_at(samples, samples->struct_size, i);
        const unsigned char *data = readable_data(instance, sample);
        for (uint64_t b = 0; data != NULL && b < sample->length; ++b) {
            digest = (digest ^ data[b]) * 0x100000001b3ull;
        }
        bytes += sample->length;
    }
    host_log(instance, MLPERF_LOG_INFO,
             EXAMPLE_NAME ": load_samples: %zu sample(s), %llu bytes, digest %016llx", count,
             (unsigned long long)bytes, (unsigned long long)digest);
}

static mlperf_error *example_load_samples(void *opaque, const mlperf_sample *samples,
                                          size_t count) {
    example_instance *instance = opaque;
    mlperf_error *error = mark_set(instance, samples, count, 1, "load_samples");
    if (error == NULL) {
        instance->sets_handed = 1;
        host_log(instance, MLPERF_LOG_DEBUG, EXAMPLE_NAME ": %zu samples loaded", count);
        if (instance->config.sample_memory[0] != '\0' && samples->struct_size >= sizeof(mlperf_sample)) {
            log_set_digest(instance, samples, count);
        }
    }
    return error;
}

static mlperf_error *example_unload_samples(void *opaque, const mlperf_sample *samples,
                                            size_t count) {
    return mark_set(opaque, samples, count, 0, "unload_samples");
}

/* A sample outside the loaded set: the host broke the ABI's promise. Said through host.fail
 * (since 1.2; the run ends INVALID) and refused. */
static mlperf_error *outside_the_set(const example_instance *instance, uint64_t index) {
    mlperf_error *error = make_error(MLPERF_ERROR_INVALID_ARGUMENT,
                                     EXAMPLE_NAME ": issue_query: sample index %llu is not in "
                                                  "the loaded set",
                                     (unsigned long long)index);
    if (instance->host.fail != NULL) {
        instance->host.fail(instance->host.context, error->message, strlen(error->message));
    }
    return error;
}

static int is_loaded(const example_instance *instance, uint64_t index) {
    return !instance->sets_handed ||
           (index < instance->loaded_capacity && instance->loaded[index] != 0);
}

static mlperf_error *example_issue_query(void *opaque, const mlperf_sample *samples,
                                         size_t count) {
    example_instance *instance = opaque;
    if (count == 0) {
        return NULL;
    }
    if (instance == NULL || samples == NULL) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT, EXAMPLE_NAME ": issue_query: NULL argument");
    }
    /* We read id and index, both in ABI 1.0's mlperf_sample. */
    size_t stride = samples->struct_size;
    if (stride < offsetof(mlperf_sample, index) + sizeof samples->index) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT,
                          EXAMPLE_NAME ": issue_query: sample struct_size %zu is too small",
                          stride);
    }
    for (size_t i = 0; i < count; ++i) {
        const mlperf_sample *sample = sample_at(samples, stride, i);
        if (!is_loaded(instance, sample->index)) {
            return outside_the_set(instance, sample->index);
        }
        if (stride >= sizeof(mlperf_sample) && !in_our_memory(instance, sample)) {
            mlperf_error *error = make_error(MLPERF_ERROR_INVALID_ARGUMENT,
                                             EXAMPLE_NAME ": issue_query: sample %llu's data is "
                                                          "not in the memory allocate_samples gave",
                                             (unsigned long long)sample->index);
            if (instance->host.fail != NULL) {
                instance->host.fail(instance->host.context, error->message, strlen(error->message));
            }
            return error;
        }
    }

    if (instance->config.workers == 0) {
        /* Inline: complete right here, on the host's thread, in chunks. */
        example_job jobs[EXAMPLE_INLINE_CHUNK];
        for (size_t done = 0; done < count;) {
            size_t chunk = count - done < EXAMPLE_INLINE_CHUNK ? count - done : EXAMPLE_INLINE_CHUNK;
            for (size_t i = 0; i < chunk; ++i) {
                const mlperf_sample *sample = sample_at(samples, stride, done + i);
                jobs[i].id = sample->id;
                jobs[i].index = sample->index;
            }
            complete_jobs(instance, jobs, chunk);
            done += chunk;
        }
        return NULL;
    }

    /* Worker mode: queue everything (all or nothing) and wake the workers. The host may call
     * issue_query from several threads at once (we set MLPERF_CAP_CONCURRENT_ISSUE); the
     * mutex makes that safe. */
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    add_microseconds(&deadline, instance->config.latency_us);

    pthread_mutex_lock(&instance->mutex);
    if (instance->queue_length + count > instance->queue_capacity) {
        /* Grow the ring buffer and unwrap it. */
        size_t capacity = instance->queue_capacity ? instance->queue_capacity : 256;
        while (capacity < instance->queue_length + count) {
            capacity *= 2;
        }
        example_job *queue = malloc(capacity * sizeof *queue);
        if (queue == NULL) {
            pthread_mutex_unlock(&instance->mutex);
            return make_error(MLPERF_ERROR_RESOURCE_EXHAUSTED,
                              EXAMPLE_NAME ": issue_query: cannot queue %zu samples", count);
        }
        for (size_t i = 0; i < instance->queue_length; ++i) {
            queue[i] = instance->queue[(instance->queue_head + i) % instance->queue_capacity];
        }
        free(instance->queue);
        instance->queue = queue;
        instance->queue_capacity = capacity;
        instance->queue_head = 0;
    }
    for (size_t i = 0; i < count; ++i) {
        const mlperf_sample *sample = sample_at(samples, stride, i);
        example_job *job = &instance->queue[(instance->queue_head + instance->queue_length) %
                                            instance->queue_capacity];
        job->id = sample->id;
        job->index = sample->index;
        job->deadline = deadline;
        instance->queue_length++;
    }
    if (count == 1) {
        pthread_cond_signal(&instance->work_ready);
    } else {
        pthread_cond_broadcast(&instance->work_ready);
    }
    pthread_mutex_unlock(&instance->mutex);
    return NULL;
}

/* No more queries in this series. LoadGen sends it so that a batching backend can run a partial
 * batch now instead of waiting for more samples. This example never holds samples back (a
 * worker takes whatever is queued), so there is nothing to do. */
static mlperf_error *example_flush_queries(void *opaque) {
    (void)opaque;
    return NULL;
}

/* ============================================================================================
 * The table and the entry point
 * ========================================================================================== */

/* Capabilities are per library, not per instance, so they must hold for every config:
 *  - ASYNC_COMPLETION: with workers > 0 samples complete after issue_query returns. (With
 *    workers = 0 they complete inline, which the ABI always allows, so declaring it is safe.)
 *  - CONCURRENT_ISSUE: issue_query is thread-safe in both modes.
 *  - not NEEDS_SAMPLE_DATA: we answer from the index alone, so the host may pass data = NULL.
 *    A real backend that reads its inputs sets it. */
static const mlperf_plugin_api example_api = {
    sizeof(mlperf_plugin_api),
    NULL,                    /* next: no extensions */
    MLPERF_PLUGIN_ABI_MAJOR, /* we implement the header's version, 1.4 */
    MLPERF_PLUGIN_ABI_MINOR,
    MLPERF_PLUGIN_KIND_SUT,
    0, /* reserved */
    EXAMPLE_NAME,
    EXAMPLE_VERSION,
    MLPERF_CAP_ASYNC_COMPLETION | MLPERF_CAP_CONCURRENT_ISSUE,
    NULL, /* init: no library-wide set-up */
    example_create,
    example_destroy,
    example_attributes,
    example_issue_query,
    example_flush_queries,
    NULL, /* power_info: a SUT table has none (the meter has its own table, below) */
    NULL, /* read_power */
    example_load_samples,
    example_unload_samples,
    NULL, /* devices (1.4): this example drives one device; a plugin that drives several lists
           * them here and is created once per device (see "Devices" in the header) */
    example_allocate_samples, /* 1.4: the loaded samples in our memory (sample_memory) */
    example_free_samples,
    example_write_samples, /* 1.4: fills a device block */
};

/* The entry point. The host offers its highest ABI version; we answer with the version we
 * implement (1.4) if the major matches, NULL otherwise. Build with -fvisibility=hidden so that
 * the entries are the only symbols the library exports. */
MLPERF_PLUGIN_EXPORT const mlperf_plugin_api *mlperf_plugin_entry(uint32_t host_abi_major,
                                                                  uint32_t host_abi_minor);

MLPERF_PLUGIN_EXPORT const mlperf_plugin_api *mlperf_plugin_entry(uint32_t host_abi_major,
                                                                  uint32_t host_abi_minor) {
    (void)host_abi_minor; /* any 1.x host can use a 1.3 SUT: it reads what it knows */
    if (host_abi_major != MLPERF_PLUGIN_ABI_MAJOR) {
        return NULL;
    }
    return &example_api;
}

/* ============================================================================================
 * A power meter beside the backend (ABI 1.1)
 *
 * A second table, of kind power, behind the second entry, mlperf_power_plugin_entry. The host
 * creates a meter instance of its own (with the meter's config), asks power_info once, then
 * calls read_power once a period from a thread of its own and stamps each reading itself.
 * Calls on one meter instance never overlap, so it needs no lock. This one simulates a board
 * sensor: a constant draw and an exact energy counter.
 * ========================================================================================== */

typedef struct example_meter {
    double watts;
    struct timespec created;            /* the energy counter's origin */
    char description[EXAMPLE_DEVICE_MAX + 32]; /* handed to the host, valid until destroy */
} example_meter;

static mlperf_error *meter_create(const mlperf_host_api *host, const char *config_toml,
                                  size_t config_length, void **instance_out) {
    (void)host; /* a meter calls nothing back; a real one could log through host->log */
    if (instance_out == NULL || (config_toml == NULL && config_length != 0)) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT, EXAMPLE_NAME " meter: NULL argument");
    }
    *instance_out = NULL;
    example_config config;
    mlperf_error *error = parse_config(config_toml, config_length, &config);
    if (error != NULL) {
        return error;
    }
    example_meter *meter = calloc(1, sizeof *meter);
    if (meter == NULL) {
        return &out_of_memory_error;
    }
    /* YOUR DEVICE: open the device's power sensor here. */
    meter->watts = (double)config.watts;
    clock_gettime(CLOCK_MONOTONIC, &meter->created);
    snprintf(meter->description, sizeof meter->description, "%s board power (simulated)",
             config.device);
    *instance_out = meter;
    return NULL;
}

static void meter_destroy(void *instance) {
    free(instance);
}

static mlperf_error *meter_power_info(void *instance, mlperf_power_info *info) {
    example_meter *meter = instance;
    /* Write only fields that lie within the host's struct (all of 1.1's, from any 1.1 host). */
    if (meter == NULL || info == NULL || info->struct_size < sizeof *info) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT,
                          EXAMPLE_NAME " meter: power_info: NULL or too small argument");
    }
    info->scope = MLPERF_POWER_SCOPE_COMPONENT; /* an on-board sensor sees a component */
    /* YOUR DEVICE: drop MLPERF_POWER_SIMULATED: then the readings count as measured. */
    info->flags = MLPERF_POWER_HAS_ENERGY_COUNTER | MLPERF_POWER_SIMULATED;
    info->description = meter->description;
    info->period_ns = 100000000ull; /* YOUR DEVICE: the sensor's update interval (100 ms) */
    return NULL;
}

static mlperf_error *meter_read_power(void *instance, mlperf_power_reading *reading) {
    example_meter *meter = instance;
    if (meter == NULL || reading == NULL || reading->struct_size < sizeof *reading) {
        return make_error(MLPERF_ERROR_INVALID_ARGUMENT,
                          EXAMPLE_NAME " meter: read_power: NULL or too small argument");
    }
    /* YOUR DEVICE: read the sensor's latest value; never wait for the next one. A sensor that
     * fails returns an error (MLPERF_ERROR_DEVICE): it ends the measurement, not the run. */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double seconds = (double)(now.tv_sec - meter->created.tv_sec) +
                     (double)(now.tv_nsec - meter->created.tv_nsec) / 1e9;
    reading->watts = meter->watts;
    reading->energy_joules = meter->watts * seconds; /* a real counter: correct wraparound */
    /* volts, amps and power_factor stay NaN, as the host preset them: this sensor has none. */
    return NULL;
}

static const mlperf_plugin_api example_meter_api = {
    sizeof(mlperf_plugin_api),
    NULL,
    MLPERF_PLUGIN_ABI_MAJOR, /* the header's version (1.1 was the first with power meters) */
    MLPERF_PLUGIN_ABI_MINOR,
    MLPERF_PLUGIN_KIND_POWER,
    0, /* reserved */
    EXAMPLE_NAME,
    EXAMPLE_VERSION,
    0,    /* capabilities: none apply to a meter */
    NULL, /* init */
    meter_create,
    meter_destroy,
    NULL, /* attributes: none */
    NULL, /* issue_query: a meter has none */
    NULL, /* flush_queries */
    meter_power_info,
    meter_read_power,
    NULL, /* load_samples: a meter has none */
    NULL, /* unload_samples */
    NULL, /* devices */
    NULL, /* allocate_samples */
    NULL, /* free_samples */
    NULL, /* write_samples */
};

MLPERF_PLUGIN_EXPORT const mlperf_plugin_api *mlperf_power_plugin_entry(uint32_t host_abi_major,
                                                                        uint32_t host_abi_minor) {
    /* A host of 1.0 cannot use a meter; it refuses a power table by its kind. */
    (void)host_abi_minor;
    if (host_abi_major != MLPERF_PLUGIN_ABI_MAJOR) {
        return NULL;
    }
    return &example_meter_api;
}
