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
 *     fail_load           load_samples returns an error (MLPERF_ERROR_DEVICE; at_sample ignored)
 *     hang_load           load_samples never returns (at_sample is ignored)
 *     hang_create         create never returns (at_sample is ignored): the host blocked
 *                         before any test begins
 *     fail_unload         unload_samples returns an error (at_sample is ignored)
 *     late_callback       destroy leaves a thread behind that logs through the host 5 ms
 *                         after destroy returned (at_sample is ignored; in the host's own
 *                         process that touches freed memory: use it isolated)
 *     unchecked_run       create reads host->run without checking the host table's
 *                         struct_size first (at_sample is ignored): from a 1.2 host's table,
 *                         whatever lies past its end
 *     unchecked_device    create reads the run description's device (ABI 1.4) without
 *                         checking the description's struct_size first: from a 1.3 host's
 *                         description, whatever lies past its end
 *   at_sample       = 1     the fault strikes at the N-th sample seen, 1-based, counted across
 *                           issue_query calls (default 1)
 *   exit_status     = 0     the status of `exit`, 0..255 (default 0)
 *   echo            = false true: answer each sample with its own data (default false: 1 byte)
 *   response_length = N     the length huge_response claims (default UINT64_MAX)
 *   leak_bytes      = N     what leak takes per sample, 1..2^40 (default 1048576)
 *   hang_ms         = N     how long the hang_* faults block, in ms; then the call goes on as
 *                           if nothing happened (default 0: until the process is killed)
 *
 * Hangs block in pause() (or nanosleep, for hang_ms), burning no CPU. Server's issue threads
 * may call issue_query at once, so the sample counter is atomic: one sample is the at_sample-th.
 *
 *   mlperf-host run --plugin target/release/libmlperf_faulty.so \
 *       --plugin-set fault=segfault --plugin-set at_sample=50 --isolate process
 */

/* kill, getpid and pause are POSIX, not C99. */
#define _POSIX_C_SOURCE 200809L

#include "mlperf_plugin.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ME "faulty"

enum { NONE, SEGFAULT, ABORT, EXIT, KILL, HANG_ISSUE, HANG_FLUSH, HANG_DESTROY, HOLD,
       FAIL_ISSUE, HUGE_RESPONSE, GARBAGE_RESPONSE, LEAK, FAIL_LOAD, HANG_LOAD,
       FAIL_UNLOAD, LATE_CALLBACK, UNCHECKED_RUN, UNCHECKED_DEVICE, HANG_CREATE };
static const char *const faults[] = {
    "none", "segfault", "abort", "exit", "kill", "hang_issue", "hang_flush", "hang_destroy",
    "hold", "fail_issue", "huge_response", "garbage_response", "leak", "fail_load", "hang_load",
    "fail_unload", "late_callback", "unchecked_run", "unchecked_device", "hang_create", NULL,
};
static const char *const booleans[] = {"false", "true", NULL};

/* The config is one number per key, in this order; a word's number is its place in `words`. */
enum { FAULT, AT_SAMPLE, EXIT_STATUS, ECHO, RESPONSE_LENGTH, LEAK_BYTES, HANG_MS, KEYS };
static const struct key {
    const char *name, *expected;
    const char *const *words; /* NULL: a decimal number from min to max */
    uint64_t min, max, initial;
} keys[KEYS] = {
    {"fault", "one of none, segfault, abort, exit, kill, hang_issue, hang_flush, hang_destroy, "
              "hold, fail_issue, huge_response, garbage_response, leak, fail_load, hang_load, "
              "fail_unload, late_callback, unchecked_run, unchecked_device, hang_create",
     faults, 0, 0, NONE},
    {"at_sample", "an integer of at least 1", NULL, 1, UINT64_MAX, 1},
    {"exit_status", "an integer from 0 to 255", NULL, 0, 255, 0},
    {"echo", "true or false", booleans, 0, 0, 0},
    {"response_length", "an integer of at least 0", NULL, 0, UINT64_MAX, UINT64_MAX},
    {"leak_bytes", "an integer from 1 to 2^40", NULL, 1, 1ull << 40, 1u << 20},
    {"hang_ms", "an integer from 0 to 86400000", NULL, 0, 86400000, 0},
};

typedef struct faulty {
    mlperf_host_api host; /* our copy: the part the host knows, the rest zeroed */
    uint64_t set[KEYS];
    uint64_t seen; /* samples issued so far */
} faulty;

/* ---- Errors: each one malloc'd with room for its message; one static for want of memory ---- */

typedef struct oops {
    mlperf_error base;
    char text[1024]; /* longer messages are cut short */
} oops;

static void release(mlperf_error *error);
static oops no_memory = {
    {sizeof(mlperf_error), NULL, MLPERF_ERROR_RESOURCE_EXHAUSTED, ME ": out of memory", release},
    "",
};
static void release(mlperf_error *error) {
    if (error != &no_memory.base) {
        free(error);
    }
}

static mlperf_error *oops_of(int32_t code, const char *format, ...) {
    oops *made = malloc(sizeof *made);
    if (made == NULL) {
        return &no_memory.base;
    }
    va_list args;
    va_start(args, format);
    vsnprintf(made->text, sizeof made->text, format, args);
    va_end(args);
    made->base = no_memory.base;
    made->base.code = code;
    made->base.message = made->text;
    return &made->base;
}

/* ---- Config: `key = value` lines, `#` comments, "..." or '...' or bare strings --------------- */

typedef struct span {
    const char *at, *end;
} span;

static int blank(char c) {
    return c != '\0' && strchr(" \t\r", c) != NULL;
}

static span trimmed(span s) {
    for (; s.at < s.end && blank(*s.at); ++s.at) {}
    for (; s.end > s.at && blank(s.end[-1]); --s.end) {}
    return s;
}

static int same(span s, const char *word) {
    size_t n = (size_t)(s.end - s.at);
    return strlen(word) == n && strncmp(s.at, word, n) == 0;
}

/* The value without its quotes; 0 for an unclosed quote, or a quote or `\` inside one. */
static int unquoted(span *s) {
    char quote = s->at < s->end ? *s->at : 0;
    if (quote != '"' && quote != '\'') {
        return 1;
    }
    if (s->end - s->at < 2 || s->end[-1] != quote) {
        return 0;
    }
    const char *inside = s->at + 1;
    size_t n = (size_t)(s->end - inside) - 1;
    *s = (span){inside, inside + n};
    return memchr(inside, quote, n) == NULL && memchr(inside, '\\', n) == NULL;
}

/* Reads `s` as key `k` wants it into *out; 0 if it is not a value of k. */
static int read_value(const struct key *k, span s, uint64_t *out) {
    if (k->words != NULL) {
        for (*out = 0; k->words[*out] != NULL; ++*out) {
            if (same(s, k->words[*out])) {
                return 1;
            }
        }
        return 0;
    }
    char digits[24];
    while (s.end - s.at > 1 && *s.at == '0') {
        ++s.at; /* leading zeros, which could overflow `digits` */
    }
    size_t n = (size_t)(s.end - s.at);
    if (n == 0 || n >= sizeof digits) {
        return 0;
    }
    memcpy(digits, s.at, n);
    digits[n] = '\0';
    errno = 0;
    *out = strtoull(digits, NULL, 10);
    return strspn(digits, "0123456789") == n && errno == 0 && *out >= k->min && *out <= k->max;
}

/* Cuts `#...` off, where the `#` is outside quotes. */
static span uncommented(span s) {
    char quote = 0;
    for (const char *p = s.at; p < s.end; ++p) {
        if (quote == 0 && *p == '#') {
            s.end = p;
            break;
        } else if (quote == 0 && (*p == '"' || *p == '\'')) {
            quote = *p;
        } else if (*p == quote) {
            quote = 0;
        }
    }
    return s;
}

static mlperf_error *configure(const char *text, size_t length, uint64_t set[KEYS]) {
    for (int k = 0; k < KEYS; ++k) {
        set[k] = keys[k].initial;
    }
    int in_table = 0;
    unsigned number = 1;
    for (span rest = {text, text == NULL ? NULL : text + length}; rest.at < rest.end; ++number) {
        const char *newline = memchr(rest.at, '\n', (size_t)(rest.end - rest.at));
        span line = trimmed(uncommented((span){rest.at, newline ? newline : rest.end}));
        rest.at = newline ? newline + 1 : rest.end;
        const char *equals = memchr(line.at, '=', (size_t)(line.end - line.at));
        in_table |= line.at < line.end && *line.at == '[';
        if (line.at == line.end || *line.at == '[') {
            continue;
        } else if (equals == NULL) {
            return oops_of(MLPERF_ERROR_INVALID_CONFIG,
                           ME ": config line %u: expected `key = value`", number);
        }
        span name = trimmed((span){line.at, equals}), raw = trimmed((span){equals + 1, line.end});
        span value = raw;
        int k = 0;
        while (k < KEYS && !same(name, keys[k].name)) {
            ++k;
        }
        if (!in_table && k < KEYS && !(unquoted(&value) && read_value(&keys[k], value, &set[k]))) {
            return oops_of(MLPERF_ERROR_INVALID_CONFIG,
                           ME ": config key `%s` (line %u): expected %s, got `%.*s`", keys[k].name,
                           number, keys[k].expected, (int)(raw.end - raw.at), raw.at);
        }
    }
    return NULL;
}

/* ---- The faults ------------------------------------------------------------------------------ */

/* Blocks this thread without burning CPU: for `ms` milliseconds, or for good when `ms` is 0
 * (pause() returns only for a handled signal). */
static void hang(uint64_t ms) {
    struct timespec left = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (ms == 0 || nanosleep(&left, &left) != 0) {
        if (ms == 0) {
            pause();
        }
    }
}

/* Logs `faulty: <what><fault> at sample <at>` where the host takes log lines. */
static void say(const faulty *self, int32_t level, const char *what, uint64_t fault, uint64_t at) {
    char line[128];
    int n = snprintf(line, sizeof line, ME ": %s%s at sample %llu", what, faults[fault],
                     (unsigned long long)at);
    if (self->host.log != NULL && n > 0) {
        self->host.log(self->host.context, level, line, strlen(line));
    }
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

/* The faults that leave issue_query by another door than its return. A real invalid access,
 * not raise(SIGSEGV): the volatile pointer keeps the compiler from seeing the NULL and turning
 * the store into a trap (SIGILL). */
static void strike(const faulty *self) {
    volatile int *volatile nowhere = NULL;
    switch (self->set[FAULT]) {
    case SEGFAULT:
        *nowhere = 1;
        break;
    case ABORT:
        abort();
    case EXIT:
        exit((int)self->set[EXIT_STATUS]);
    case KILL:
        kill(getpid(), SIGKILL);
        hang(0); /* until the signal lands */
        break;
    case HANG_ISSUE:
        hang(self->set[HANG_MS]);
        break;
    }
}

/* ---- The ABI functions ----------------------------------------------------------------------- */

static mlperf_error *faulty_create(const mlperf_host_api *host, const char *config_toml,
                                   size_t config_length, void **instance_out) {
    if (instance_out == NULL) {
        return oops_of(MLPERF_ERROR_INVALID_ARGUMENT, ME ": instance is NULL");
    }
    *instance_out = NULL;
    size_t known = host == NULL ? 0 : host->struct_size;
    if (known < offsetof(mlperf_host_api, complete) + sizeof host->complete ||
        host->abi_major != MLPERF_PLUGIN_ABI_MAJOR || host->complete == NULL) {
        return oops_of(MLPERF_ERROR_INVALID_ARGUMENT, ME ": the host table is missing, of another "
                                                      "ABI major, or has no complete callback");
    }
    if (config_toml == NULL && config_length != 0) {
        return oops_of(MLPERF_ERROR_INVALID_ARGUMENT,
                       ME ": config_toml is NULL but config_length is %zu", config_length);
    }
    uint64_t set[KEYS];
    mlperf_error *error = configure(config_toml, config_length, set);
    faulty *self = error == NULL ? calloc(1, sizeof *self) : NULL;
    if (self == NULL) {
        return error != NULL ? error : &no_memory.base;
    }
    int has_run = known >= offsetof(mlperf_host_api, run) + sizeof host->run;
    if (set[FAULT] == UNCHECKED_DEVICE && has_run && host->run != NULL &&
        host->run->device != NULL) {
        /* The bug: `device` is read as if every run description had it. */
        say(self, MLPERF_LOG_INFO, "read the device unchecked: ", set[FAULT],
            host->run->device->ordinal);
    }
    if (set[FAULT] == UNCHECKED_RUN && host->run != NULL) {
        /* The bug: `run` is read as if every host had it. */
        say(self, MLPERF_LOG_INFO, "read the run description unchecked: ", set[FAULT],
            host->run->scenario);
    }
    memcpy(&self->host, host, known < sizeof self->host ? known : sizeof self->host);
    self->host.struct_size = sizeof self->host;
    memcpy(self->set, set, sizeof set);
    say(self, MLPERF_LOG_INFO, "fault ", set[FAULT], set[AT_SAMPLE]);
    if (set[FAULT] == HANG_CREATE) {
        hang(set[HANG_MS]);
    }
    *instance_out = self;
    return NULL;
}

/* late_callback: what the thread left behind needs of the host. */
typedef struct late {
    mlperf_host_api host;
} late;

static void *call_late(void *argument) {
    static const char text[] = ME ": a callback after destroy (fault = late_callback)";
    late *left = argument;
    struct timespec wait = {0, 5L * 1000000L};
    nanosleep(&wait, NULL);
    if (left->host.log != NULL) {
        left->host.log(left->host.context, MLPERF_LOG_WARN, text, sizeof text - 1);
    }
    free(left);
    return NULL;
}

static void faulty_destroy(void *instance) {
    faulty *self = instance;
    if (self != NULL && self->set[FAULT] == HANG_DESTROY) {
        hang(self->set[HANG_MS]);
    }
    if (self != NULL && self->set[FAULT] == LATE_CALLBACK) {
        late *left = malloc(sizeof *left);
        pthread_t thread;
        if (left != NULL) {
            left->host = self->host;
            if (pthread_create(&thread, NULL, call_late, left) == 0) {
                pthread_detach(thread); /* not joined: the fault */
            } else {
                free(left);
            }
        }
    }
    free(self);
}

static mlperf_error *faulty_issue_query(void *instance, const mlperf_sample *samples,
                                        size_t count) {
    static const unsigned char one_byte = 1;
    faulty *self = instance;
    if (count == 0) {
        return NULL;
    } else if (self == NULL || samples == NULL) {
        return oops_of(MLPERF_ERROR_INVALID_ARGUMENT, ME ": issue_query: NULL argument");
    }
    /* We read up to `length`, all of ABI 1.0's sample; a later host's samples are larger. */
    size_t stride = samples->struct_size;
    if (stride < offsetof(mlperf_sample, length) + sizeof samples->length) {
        return oops_of(MLPERF_ERROR_INVALID_ARGUMENT,
                       ME ": issue_query: sample struct_size %zu is too small", stride);
    }
    uint64_t fault = self->set[FAULT], at = self->set[AT_SAMPLE];
    if (fault == FAIL_ISSUE && __atomic_load_n(&self->seen, __ATOMIC_RELAXED) + count >= at) {
        /* all or nothing: none of this call's samples is completed */
        __atomic_add_fetch(&self->seen, count, __ATOMIC_RELAXED);
        return oops_of(MLPERF_ERROR_DEVICE,
                       ME ": issue_query fails from sample %llu on (fault = fail_issue)",
                       (unsigned long long)at);
    }
    for (const char *next = (const char *)samples; count > 0; --count, next += stride) {
        const mlperf_sample *sample = (const mlperf_sample *)next;
        uint64_t n = __atomic_add_fetch(&self->seen, 1, __ATOMIC_RELAXED);
        int struck = n == at;
        if (struck && fault != NONE) {
            say(self, MLPERF_LOG_WARN, "", fault, n);
        }
        if (n >= at && fault == HOLD) {
            continue;
        } else if (n >= at && fault == LEAK) {
            leak(self->set[LEAK_BYTES]);
        }
        if (struck) {
            strike(self);
        }
        int echo = self->set[ECHO] != 0, huge = struck && fault == HUGE_RESPONSE;
        mlperf_response answers[2] = {{
            .struct_size = sizeof(mlperf_response),
            .id = sample->id,
            .data = echo && !huge ? sample->data : &one_byte,
            .length = huge ? self->set[RESPONSE_LENGTH] : echo ? sample->length : 1,
        }};
        self->host.complete(self->host.context, answers, 1);
        if (struck && fault == GARBAGE_RESPONSE) {
            /* The same id again, then an id no host issues (ids are never 0). */
            answers[1] = answers[0];
            answers[1].id = 0;
            self->host.complete(self->host.context, answers, 2);
        }
    }
    return NULL;
}

static mlperf_error *faulty_flush_queries(void *instance) {
    const faulty *self = instance;
    if (self != NULL && self->set[FAULT] == HANG_FLUSH) {
        hang(self->set[HANG_MS]);
    }
    return NULL;
}

/* ABI 1.3: the loaded set. Nothing is staged; the faults are the point. */
static mlperf_error *faulty_load_samples(void *instance, const mlperf_sample *samples,
                                         size_t count) {
    const faulty *self = instance;
    (void)samples;
    if (self != NULL && self->set[FAULT] == HANG_LOAD) {
        hang(self->set[HANG_MS]);
    } else if (self != NULL && self->set[FAULT] == FAIL_LOAD) {
        return oops_of(MLPERF_ERROR_DEVICE,
                       ME ": load_samples of %zu samples fails (fault = fail_load)", count);
    }
    return NULL;
}

static mlperf_error *faulty_unload_samples(void *instance, const mlperf_sample *samples,
                                           size_t count) {
    const faulty *self = instance;
    (void)samples;
    if (self != NULL && self->set[FAULT] == FAIL_UNLOAD) {
        return oops_of(MLPERF_ERROR_DEVICE,
                       ME ": unload_samples of %zu samples fails (fault = fail_unload)", count);
    }
    return NULL;
}

/* NEEDS_SAMPLE_DATA: with echo = true the answers are the samples' data. Every sample completes
 * inline, so no ASYNC_COMPLETION; one issuing thread at a time, so no CONCURRENT_ISSUE. */
static const mlperf_plugin_api table = {
    .struct_size = sizeof(mlperf_plugin_api),
    .abi_major = MLPERF_PLUGIN_ABI_MAJOR,
    .abi_minor = MLPERF_PLUGIN_ABI_MINOR,
    .kind = MLPERF_PLUGIN_KIND_SUT,
    .name = ME,
    .version = "0.1.0",
    .capabilities = MLPERF_CAP_NEEDS_SAMPLE_DATA,
    .create = faulty_create,
    .destroy = faulty_destroy,
    .issue_query = faulty_issue_query,
    .flush_queries = faulty_flush_queries,
    .load_samples = faulty_load_samples,
    .unload_samples = faulty_unload_samples,
};

MLPERF_PLUGIN_EXPORT const mlperf_plugin_api *mlperf_plugin_entry(uint32_t host_abi_major,
                                                                  uint32_t host_abi_minor) {
    (void)host_abi_minor;
    return host_abi_major == MLPERF_PLUGIN_ABI_MAJOR ? &table : NULL;
}
