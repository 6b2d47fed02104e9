// mlperf-host's bridge to the official MLPerf LoadGen, compiled beside its unaltered sources.
//
// A C ABI the Rust crate calls: TestSettings made, configured (the official FromConfig, then
// field by field), read back and freed; a system under test and a sample library made of
// callbacks; StartTest with log settings; completions forwarded. No C++ exception crosses it.

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "loadgen.h"
#include "query_sample.h"
#include "query_sample_library.h"
#include "system_under_test.h"
#include "test_settings.h"
#include "version.h"

extern "C" {

// The system under test, as callbacks on `context`.
struct mlh_sut {
  void* context;
  const char* name;
  size_t name_length;
  void (*issue_query)(void* context, const mlperf::QuerySample* samples,
                      size_t count);
  void (*flush_queries)(void* context);
};

// The query sample library, as callbacks on `context`.
struct mlh_qsl {
  void* context;
  const char* name;
  size_t name_length;
  size_t total_sample_count;
  size_t performance_sample_count;
  void (*load_samples)(void* context, const mlperf::QuerySampleIndex* indices,
                       size_t count);
  void (*unload_samples)(void* context,
                         const mlperf::QuerySampleIndex* indices, size_t count);
};

// mlperf::LogSettings, in C types.
struct mlh_log_settings {
  const char* outdir;
  const char* prefix;
  const char* suffix;
  int prefix_with_datetime;
  int copy_detail_to_stdout;
  int copy_summary_to_stdout;
  int enable_trace;
};

}  // extern "C"

namespace {

// Status codes shared with the Rust side (engines/official/src/ffi.rs).
constexpr int kOk = 0;
constexpr int kUnknownKey = 1;
constexpr int kBadValue = 2;
constexpr int kFailed = 3;

class CallbackSut : public mlperf::SystemUnderTest {
 public:
  explicit CallbackSut(const mlh_sut& sut)
      : sut_(sut), name_(sut.name, sut.name_length) {}
  const std::string& Name() override { return name_; }
  void IssueQuery(const std::vector<mlperf::QuerySample>& samples) override {
    sut_.issue_query(sut_.context, samples.data(), samples.size());
  }
  void FlushQueries() override { sut_.flush_queries(sut_.context); }

 private:
  mlh_sut sut_;
  std::string name_;
};

class CallbackQsl : public mlperf::QuerySampleLibrary {
 public:
  explicit CallbackQsl(const mlh_qsl& qsl)
      : qsl_(qsl), name_(qsl.name, qsl.name_length) {}
  const std::string& Name() override { return name_; }
  size_t TotalSampleCount() override { return qsl_.total_sample_count; }
  size_t PerformanceSampleCount() override {
    return qsl_.performance_sample_count;
  }
  void LoadSamplesToRam(
      const std::vector<mlperf::QuerySampleIndex>& samples) override {
    qsl_.load_samples(qsl_.context, samples.data(), samples.size());
  }
  void UnloadSamplesFromRam(
      const std::vector<mlperf::QuerySampleIndex>& samples) override {
    qsl_.unload_samples(qsl_.context, samples.data(), samples.size());
  }

 private:
  mlh_qsl qsl_;
  std::string name_;
};

// One TestSettings field, reachable by its name.
struct Field {
  const char* name;
  uint64_t mlperf::TestSettings::*u64;
  double mlperf::TestSettings::*f64;
  bool mlperf::TestSettings::*flag;
  int mlperf::TestSettings::*i32;
};

#define U64(f) {#f, &mlperf::TestSettings::f, nullptr, nullptr, nullptr}
#define F64(f) {#f, nullptr, &mlperf::TestSettings::f, nullptr, nullptr}
#define FLAG(f) {#f, nullptr, nullptr, &mlperf::TestSettings::f, nullptr}
#define I32(f) {#f, nullptr, nullptr, nullptr, &mlperf::TestSettings::f}

// Every field of mlperf::TestSettings 6.0.17 but scenario and mode (set apart).
const Field kFields[] = {
    F64(single_stream_expected_latency_ns),
    F64(single_stream_target_latency_percentile),
    F64(multi_stream_expected_latency_ns),
    F64(multi_stream_target_latency_percentile),
    U64(multi_stream_samples_per_query),
    F64(server_target_qps),
    U64(server_target_latency_ns),
    F64(server_target_latency_percentile),
    FLAG(server_coalesce_queries),
    I32(server_find_peak_qps_decimals_of_precision),
    F64(server_find_peak_qps_boundary_step_size),
    U64(server_max_async_queries),
    U64(server_num_issue_query_threads),
    F64(offline_expected_qps),
    FLAG(sample_concatenate_permutation),
    U64(min_duration_ms),
    U64(max_duration_ms),
    U64(min_query_count),
    U64(max_query_count),
    U64(qsl_rng_seed),
    U64(sample_index_rng_seed),
    U64(schedule_rng_seed),
    U64(accuracy_log_rng_seed),
    F64(accuracy_log_probability),
    U64(accuracy_log_sampling_target),
    FLAG(test05),
    U64(test05_qsl_rng_seed),
    U64(test05_sample_index_rng_seed),
    U64(test05_schedule_rng_seed),
    FLAG(print_timestamps),
    FLAG(performance_issue_unique),
    FLAG(performance_issue_same),
    U64(performance_issue_same_index),
    U64(performance_sample_count_override),
    U64(accuracy_sample_count_override),
    FLAG(use_token_latencies),
    U64(server_ttft_latency),
    U64(server_tpot_latency),
    FLAG(infer_token_latencies),
    U64(token_latency_scaling_factor),
};

#undef U64
#undef F64
#undef FLAG
#undef I32

const Field* FindField(const char* name) {
  for (const Field& field : kFields) {
    if (std::strcmp(field.name, name) == 0) return &field;
  }
  return nullptr;
}

// The whole of `text` as an unsigned integer (decimal, 0x hex).
bool ParseU64(const char* text, uint64_t* out) {
  if (*text == '\0' || *text == '-' || *text == '+') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text, &end, 0);
  if (errno != 0 || *end != '\0') return false;
  *out = value;
  return true;
}

bool ParseF64(const char* text, double* out) {
  if (*text == '\0') return false;
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text, &end);
  if (errno != 0 || *end != '\0') return false;
  *out = value;
  return true;
}

void CopyMessage(const char* message, char* buffer, size_t length) {
  if (buffer == nullptr || length == 0) return;
  std::strncpy(buffer, message, length - 1);
  buffer[length - 1] = '\0';
}

}  // namespace

mlperf::LogSettings MlhLogSettings(const mlh_log_settings* log) {
  mlperf::LogSettings settings;
  settings.log_output.outdir = log->outdir;
  settings.log_output.prefix = log->prefix;
  settings.log_output.suffix = log->suffix;
  settings.log_output.prefix_with_datetime = log->prefix_with_datetime != 0;
  settings.log_output.copy_detail_to_stdout = log->copy_detail_to_stdout != 0;
  settings.log_output.copy_summary_to_stdout = log->copy_summary_to_stdout != 0;
  settings.enable_trace = log->enable_trace != 0;
  return settings;
}

extern "C" {

void* mlh_settings_new(void) {
  try {
    return new mlperf::TestSettings();
  } catch (...) {
    return nullptr;
  }
}

void mlh_settings_free(void* settings) {
  delete static_cast<mlperf::TestSettings*>(settings);
}

// The official FromConfig: conf_type 0 reads the embedded mlperf.conf, 1 a user.conf (the first
// such call in a process reads the embedded mlperf.conf before it), 2 any other file.
int mlh_settings_from_config(void* settings, const char* path,
                             const char* model, const char* scenario,
                             int conf_type) {
  try {
    return static_cast<mlperf::TestSettings*>(settings)->FromConfig(
        path, model, scenario, conf_type);
  } catch (...) {
    return -EINVAL;
  }
}

// scenario: 0 SingleStream, 1 MultiStream, 2 Server, 3 Offline; mode: 0 SubmissionRun,
// 1 AccuracyOnly, 2 PerformanceOnly, 3 FindPeakPerformance (the official enums' order).
int mlh_settings_set_scenario(void* settings, int scenario) {
  auto* s = static_cast<mlperf::TestSettings*>(settings);
  switch (scenario) {
    case 0: s->scenario = mlperf::TestScenario::SingleStream; return kOk;
    case 1: s->scenario = mlperf::TestScenario::MultiStream; return kOk;
    case 2: s->scenario = mlperf::TestScenario::Server; return kOk;
    case 3: s->scenario = mlperf::TestScenario::Offline; return kOk;
    default: return kBadValue;
  }
}

int mlh_settings_set_mode(void* settings, int mode) {
  auto* s = static_cast<mlperf::TestSettings*>(settings);
  switch (mode) {
    case 0: s->mode = mlperf::TestMode::SubmissionRun; return kOk;
    case 1: s->mode = mlperf::TestMode::AccuracyOnly; return kOk;
    case 2: s->mode = mlperf::TestMode::PerformanceOnly; return kOk;
    case 3: s->mode = mlperf::TestMode::FindPeakPerformance; return kOk;
    default: return kBadValue;
  }
}

int mlh_settings_get_scenario(const void* settings) {
  return static_cast<int>(
      static_cast<const mlperf::TestSettings*>(settings)->scenario);
}

int mlh_settings_get_mode(const void* settings) {
  return static_cast<int>(
      static_cast<const mlperf::TestSettings*>(settings)->mode);
}

// Sets field `key` from `value` in the field's own type: an unsigned integer, a number, or a
// flag (0/1/true/false).
int mlh_settings_set(void* settings, const char* key, const char* value) {
  auto* s = static_cast<mlperf::TestSettings*>(settings);
  const Field* field = FindField(key);
  if (field == nullptr) return kUnknownKey;
  if (field->u64 != nullptr) {
    uint64_t parsed;
    if (!ParseU64(value, &parsed)) return kBadValue;
    s->*(field->u64) = parsed;
  } else if (field->f64 != nullptr) {
    double parsed;
    if (!ParseF64(value, &parsed)) return kBadValue;
    s->*(field->f64) = parsed;
  } else if (field->flag != nullptr) {
    if (std::strcmp(value, "1") == 0 || std::strcmp(value, "true") == 0) {
      s->*(field->flag) = true;
    } else if (std::strcmp(value, "0") == 0 ||
               std::strcmp(value, "false") == 0) {
      s->*(field->flag) = false;
    } else {
      return kBadValue;
    }
  } else {
    char* end = nullptr;
    errno = 0;
    long parsed = std::strtol(value, &end, 10);
    if (*value == '\0' || errno != 0 || *end != '\0' || parsed < INT32_MIN ||
        parsed > INT32_MAX) {
      return kBadValue;
    }
    s->*(field->i32) = static_cast<int>(parsed);
  }
  return kOk;
}

// Field `key` as text (integers exactly, numbers with 17 significant digits).
int mlh_settings_get(const void* settings, const char* key, char* buffer,
                     size_t length) {
  const auto* s = static_cast<const mlperf::TestSettings*>(settings);
  const Field* field = FindField(key);
  if (field == nullptr) return kUnknownKey;
  std::string text;
  if (field->u64 != nullptr) {
    text = std::to_string(s->*(field->u64));
  } else if (field->f64 != nullptr) {
    char number[64];
    std::snprintf(number, sizeof number, "%.17g", s->*(field->f64));
    text = number;
  } else if (field->flag != nullptr) {
    text = (s->*(field->flag)) ? "1" : "0";
  } else {
    text = std::to_string(s->*(field->i32));
  }
  CopyMessage(text.c_str(), buffer, length);
  return kOk;
}

// Runs one test; blocks until the official StartTest returns. `audit_config` may be empty (no
// audit.config is read then). On an exception, its message goes to `error`.
int mlh_start_test(const mlh_sut* sut, const mlh_qsl* qsl,
                   const void* settings, const mlh_log_settings* log,
                   const char* audit_config, char* error,
                   size_t error_length) {
  try {
    CallbackSut callback_sut(*sut);
    CallbackQsl callback_qsl(*qsl);
    mlperf::StartTest(&callback_sut, &callback_qsl,
                      *static_cast<const mlperf::TestSettings*>(settings),
                      MlhLogSettings(log), audit_config);
    return kOk;
  } catch (const std::exception& e) {
    CopyMessage(e.what(), error, error_length);
  } catch (...) {
    CopyMessage("unknown C++ exception", error, error_length);
  }
  return kFailed;
}

void mlh_query_samples_complete(mlperf::QuerySampleResponse* responses,
                                size_t count) {
  mlperf::QuerySamplesComplete(responses, count);
}

void mlh_first_token_complete(mlperf::QuerySampleResponse* responses,
                              size_t count) {
  mlperf::FirstTokenComplete(responses, count);
}

// "6.0.17 @ d6147c7eb7": the version and git revision the official logs carry.
void mlh_loadgen_version(char* buffer, size_t length) {
  std::string text =
      mlperf::LoadgenVersion() + " @ " + mlperf::LoadgenGitRevision();
  CopyMessage(text.c_str(), buffer, length);
}

}  // extern "C"

extern "C" {

// The official AbortTest: stops its issue threads and flushes and closes its logs.
void mlh_abort_test(void) {
  try {
    mlperf::AbortTest();
  } catch (...) {
  }
}

}  // extern "C"
