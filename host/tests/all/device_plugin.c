/* Two simulated devices (ABI 1.4) for the spread tests: device 0 ("sim-fast") serves a sample
 * in 1 ms, device 1 ("sim-slow") in 3 ms, one sample at a time each: an instance queues what
 * it is issued and one thread works the queue. With `crash = true` in the config, device 1's
 * instance aborts at its first sample. With `timing = true` it reports each sample's timing
 * (MLPERF_CAP_SAMPLE_TIMING): dequeued when its thread takes it, compute starting exactly
 * 200 us later and lasting exactly the service time, each waited for on the host's clock
 * before the sample completes. With `tokens = true` (a host of 1.5) each answer streams: its
 * first token, then two more 200 us apart (next_tokens), then the answer of 3 tokens. With
 * `fail_slow = true` (a host of 1.5) device 1 fails each of its samples (fail_samples, status
 * 503) after its service time. Compiled by the tests. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlperf_plugin.h"

#define CAPACITY (1u << 20)

typedef struct {
    mlperf_host_api host;
    unsigned service_us;
    int crash;
    int timing;
    int tokens;
    int fail;
    uint64_t *queue;
    size_t head, tail;
    int stopping;
    pthread_mutex_t lock;
    pthread_cond_t ready;
    pthread_t worker;
} device_instance;

static const mlperf_device listed[2] = {
    {sizeof(mlperf_device), NULL, 0, MLPERF_DEVICE_GPU, "sim-fast", "sim-0000", 1ull << 30},
    {sizeof(mlperf_device), NULL, 1, MLPERF_DEVICE_GPU, "sim-slow", NULL, 1ull << 30},
};

static mlperf_error *devices(const mlperf_host_api *host, const char *config, size_t length,
                             const mlperf_device **out, size_t *count) {
    (void)host;
    (void)config;
    (void)length;
    *out = listed;
    *count = 2;
    return NULL;
}

#define PREPARE_NS 200000ull

/* Until `ns` of CLOCK_MONOTONIC, the host's clock. */
static void sleep_until(uint64_t ns) {
    struct timespec at = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) != 0) {
    }
}

static void *work(void *arg) {
    device_instance *self = arg;
    for (;;) {
        pthread_mutex_lock(&self->lock);
        while (self->head == self->tail && !self->stopping) {
            pthread_cond_wait(&self->ready, &self->lock);
        }
        if (self->head == self->tail) {
            pthread_mutex_unlock(&self->lock);
            return NULL;
        }
        uint64_t id = self->queue[self->head++ % CAPACITY];
        pthread_mutex_unlock(&self->lock);
        if (self->crash) {
            abort();
        }
        if (self->timing) {
            uint64_t dequeued = self->host.now_ns(self->host.context);
            uint64_t start = dequeued + PREPARE_NS;
            uint64_t end = start + (uint64_t)self->service_us * 1000;
            sleep_until(start);
            sleep_until(end);
            mlperf_sample_timing timing = {sizeof timing, id, dequeued, start, end};
            self->host.report_timing(self->host.context, &timing, 1);
        } else {
            struct timespec service = {0, (long)self->service_us * 1000};
            nanosleep(&service, NULL);
        }
        if (self->tokens) {
            mlperf_response first = {sizeof(mlperf_response), id, NULL, 0, 1};
            self->host.first_token(self->host.context, &first, 1);
            for (int k = 0; k < 2; k++) {
                struct timespec gap = {0, 200000};
                nanosleep(&gap, NULL);
                mlperf_response more = {sizeof(mlperf_response), id, NULL, 0, 1};
                self->host.next_tokens(self->host.context, &more, 1);
            }
        }
        if (self->fail) {
            static const char why[] = "sim-slow: service unavailable";
            mlperf_sample_failure failure = {sizeof failure, id, MLPERF_FAILURE_STATUS, 503,
                                             why, sizeof why - 1};
            self->host.fail_samples(self->host.context, &failure, 1);
            continue;
        }
        mlperf_response done = {sizeof(mlperf_response), id, NULL, 0, self->tokens ? 3 : 0};
        self->host.complete(self->host.context, &done, 1);
    }
}

static mlperf_error *create(const mlperf_host_api *host, const char *config, size_t length,
                            void **instance) {
    device_instance *self = calloc(1, sizeof *self);
    self->host = *host;
    self->queue = calloc(CAPACITY, sizeof *self->queue);
    const mlperf_run_description *run =
        host->struct_size >= offsetof(mlperf_host_api, run) + sizeof host->run ? host->run : NULL;
    const mlperf_device *device =
        run != NULL && run->struct_size >= sizeof(mlperf_run_description) ? run->device : NULL;
    int slow = device != NULL && device->ordinal == 1;
    self->service_us = slow ? 3000 : 1000;
    self->crash = slow && length > 0 && strstr(config, "crash = true") != NULL;
    /* The clock and the report come with a host of 1.4. */
    self->timing = length > 0 && strstr(config, "timing = true") != NULL &&
                   host->struct_size >=
                       offsetof(mlperf_host_api, report_timing) + sizeof host->report_timing;
    /* next_tokens and fail_samples come with a host of 1.5. */
    int streams =
        host->struct_size >= offsetof(mlperf_host_api, fail_samples) + sizeof host->fail_samples;
    self->tokens = streams && length > 0 && strstr(config, "tokens = true") != NULL;
    self->fail = streams && slow && length > 0 && strstr(config, "fail_slow = true") != NULL;
    pthread_mutex_init(&self->lock, NULL);
    pthread_cond_init(&self->ready, NULL);
    pthread_create(&self->worker, NULL, work, self);
    *instance = self;
    return NULL;
}

static void destroy(void *instance) {
    device_instance *self = instance;
    pthread_mutex_lock(&self->lock);
    self->stopping = 1;
    pthread_cond_signal(&self->ready);
    pthread_mutex_unlock(&self->lock);
    pthread_join(self->worker, NULL);
    pthread_mutex_destroy(&self->lock);
    pthread_cond_destroy(&self->ready);
    free(self->queue);
    free(self);
}

static mlperf_error *issue_query(void *instance, const mlperf_sample *samples, size_t count) {
    device_instance *self = instance;
    pthread_mutex_lock(&self->lock);
    for (size_t k = 0; k < count; k++) {
        const mlperf_sample *sample =
            (const mlperf_sample *)((const char *)samples + k * samples->struct_size);
        self->queue[self->tail++ % CAPACITY] = sample->id;
    }
    pthread_cond_signal(&self->ready);
    pthread_mutex_unlock(&self->lock);
    return NULL;
}

static mlperf_error *flush_queries(void *instance) {
    (void)instance;
    return NULL;
}

static const mlperf_plugin_api table = {
    .struct_size = sizeof(mlperf_plugin_api),
    .abi_major = MLPERF_PLUGIN_ABI_MAJOR,
    .abi_minor = MLPERF_PLUGIN_ABI_MINOR,
    .kind = MLPERF_PLUGIN_KIND_SUT,
    .name = "sim-devices",
    .version = "0.1.0",
    .capabilities = MLPERF_CAP_ASYNC_COMPLETION | MLPERF_CAP_SAMPLE_TIMING,
    .create = create,
    .destroy = destroy,
    .issue_query = issue_query,
    .flush_queries = flush_queries,
    .devices = devices,
};

MLPERF_PLUGIN_EXPORT const mlperf_plugin_api *mlperf_plugin_entry(uint32_t host_abi_major,
                                                                  uint32_t host_abi_minor) {
    (void)host_abi_minor;
    return host_abi_major == MLPERF_PLUGIN_ABI_MAJOR ? &table : NULL;
}
