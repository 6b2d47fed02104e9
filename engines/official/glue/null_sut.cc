// A null system under test written in C++ against the official LoadGen's own interfaces: the
// baseline that mlperf-host's plugin path through the official engine is compared with
// (`mlperf-host bench --engine official-cpp`). Samples complete inline inside IssueQuery, or
// from one worker thread fed through a mutex and condition variable, one completion call per
// query as mlperf-host's null SUTs make them.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "loadgen.h"
#include "query_sample.h"
#include "query_sample_library.h"
#include "system_under_test.h"
#include "test_settings.h"

extern "C" {
struct mlh_log_settings;
}

namespace {

using Clock = std::chrono::steady_clock;

// Completions are reported in batches of this many.
constexpr size_t kBatch = 256;

class NullSut : public mlperf::SystemUnderTest {
 public:
  explicit NullSut(bool worker) : worker_(worker) {
    if (worker_) thread_ = std::thread([this] { Work(); });
  }
  ~NullSut() override {
    if (worker_) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
      }
      wake_.notify_one();
      thread_.join();
    }
  }
  const std::string& Name() override { return name_; }

  void IssueQuery(const std::vector<mlperf::QuerySample>& samples) override {
    if (!issued_) {
      first_issue_ = Clock::now();
      issued_ = true;
    }
    if (!worker_) {
      Complete(samples.data(), samples.size());
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(samples);
    }
    wake_.notify_one();
  }

  void FlushQueries() override {}

  Clock::time_point first_issue() const { return first_issue_; }

 private:
  static void Complete(const mlperf::QuerySample* samples, size_t count) {
    mlperf::QuerySampleResponse responses[kBatch];
    for (size_t start = 0; start < count; start += kBatch) {
      size_t n = std::min(kBatch, count - start);
      for (size_t i = 0; i < n; i++) {
        responses[i] = mlperf::QuerySampleResponse(samples[start + i].id, 0, 0);
      }
      mlperf::QuerySamplesComplete(responses, n);
    }
  }

  void Work() {
    std::deque<std::vector<mlperf::QuerySample>> taken;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        taken.swap(queue_);
      }
      for (const auto& query : taken) Complete(query.data(), query.size());
      taken.clear();
    }
  }

  const std::string name_ = "cpp-null-sut";
  const bool worker_;
  bool issued_ = false;
  Clock::time_point first_issue_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::vector<mlperf::QuerySample>> queue_;
  bool stop_ = false;
  std::thread thread_;
};

class NullQsl : public mlperf::QuerySampleLibrary {
 public:
  explicit NullQsl(size_t samples) : samples_(samples) {}
  const std::string& Name() override { return name_; }
  size_t TotalSampleCount() override { return samples_; }
  size_t PerformanceSampleCount() override { return samples_; }
  void LoadSamplesToRam(const std::vector<mlperf::QuerySampleIndex>&) override {}
  void UnloadSamplesFromRam(
      const std::vector<mlperf::QuerySampleIndex>&) override {}

 private:
  const std::string name_ = "cpp-null-qsl";
  size_t samples_;
};

}  // namespace

// In glue.cc: mlperf::LogSettings from the C struct.
mlperf::LogSettings MlhLogSettings(const mlh_log_settings* log);

extern "C" {

// Runs one test with the C++ null SUT; `first_issue_ns` gets the time from the call to the
// first IssueQuery.
int mlh_run_cpp_null_sut(const void* settings, const mlh_log_settings* log,
                         size_t qsl_samples, int worker,
                         uint64_t* first_issue_ns, char* error,
                         size_t error_length) {
  try {
    Clock::time_point started = Clock::now();
    NullSut sut(worker != 0);
    NullQsl qsl(qsl_samples);
    mlperf::StartTest(&sut, &qsl,
                      *static_cast<const mlperf::TestSettings*>(settings),
                      MlhLogSettings(log), "");
    *first_issue_ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(sut.first_issue() -
                                                             started)
            .count());
    return 0;
  } catch (const std::exception& e) {
    if (error != nullptr && error_length > 0) {
      std::strncpy(error, e.what(), error_length - 1);
      error[error_length - 1] = '\0';
    }
  }
  return 3;
}

}  // extern "C"
