// Progress line.
#include "gen/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace verisub::gen {

ProgressPrinter::ProgressPrinter(const ProgressCounters* counters, bool enabled,
                                 std::chrono::milliseconds period)
    : counters_(counters), period_(period), start_(std::chrono::steady_clock::now()) {
  if (enabled) thread_ = std::thread([this] { Loop(); });
}

ProgressPrinter::~ProgressPrinter() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
  std::fprintf(stderr, "%s\n", Line().c_str());
}

std::string ProgressPrinter::Line() const {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  uint64_t graphs = counters_->graphs.load(std::memory_order_relaxed);
  static const char* const kStages[] = {"set-up", "enumerate", "test pairs", "done"};
  int stage = std::clamp(counters_->stage.load(), 0, 3);
  char buf[256];
  std::snprintf(
      buf, sizeof buf,
      "verisub-gen: %6.1fs  %-10s graphs %llu (%.2f M/s)  buckets %llu/%llu  pairs kept %llu", secs,
      kStages[stage], static_cast<unsigned long long>(graphs), secs > 0 ? graphs / secs / 1e6 : 0.0,
      static_cast<unsigned long long>(counters_->buckets_done.load()),
      static_cast<unsigned long long>(counters_->buckets_total.load()),
      static_cast<unsigned long long>(counters_->candidates.load()));
  return buf;
}

void ProgressPrinter::Loop() {
  // On a terminal the line is rewritten in place; in a log each update is a line of its own.
  const char* end = isatty(2) ? "\r" : "\n";
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, period_, [this] { return done_; }))
    std::fprintf(stderr, "%s%s", Line().c_str(), end);
}

}  // namespace verisub::gen
