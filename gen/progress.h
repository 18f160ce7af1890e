// Live progress on stderr: counters the workers bump in batches, printed by a monitor thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace verisub::gen {

struct ProgressCounters {
  std::atomic<uint64_t> graphs{0};
  std::atomic<uint64_t> buckets_done{0};
  std::atomic<uint64_t> buckets_total{0};
  std::atomic<uint64_t> candidates{0};  // pairs kept as rules, before deduplication
  std::atomic<int> stage{0};            // 0 set-up, 1 enumerate, 2 test pairs, 3 done
};

// Prints one line about every `period` while alive (nothing when disabled).
class ProgressPrinter {
 public:
  ProgressPrinter(const ProgressCounters* counters, bool enabled,
                  std::chrono::milliseconds period = std::chrono::milliseconds(1000));
  ~ProgressPrinter();
  ProgressPrinter(const ProgressPrinter&) = delete;
  ProgressPrinter& operator=(const ProgressPrinter&) = delete;

 private:
  void Loop();
  std::string Line() const;

  const ProgressCounters* counters_;
  std::chrono::milliseconds period_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace verisub::gen
