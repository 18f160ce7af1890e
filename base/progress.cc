// Progress: the monitor thread and the line format.
#include "base/progress.h"

#include <unistd.h>

namespace verisub::base {

Progress::Progress(std::string label, std::function<std::string(double seconds)> describe,
                   ProgressOptions options)
    : label_(std::move(label)),
      describe_(std::move(describe)),
      options_(options),
      start_(std::chrono::steady_clock::now()) {
  if (options_.enabled) thread_ = std::thread([this] { Loop(); });
}

Progress::~Progress() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
  std::fprintf(options_.out, "%s\n", Line().c_str());
  std::fflush(options_.out);
}

std::string Progress::Line() const {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return label_ + ": " + describe_(seconds);
}

void Progress::Loop() {
  const char* end = isatty(fileno(options_.out)) ? "\r" : "\n";
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, options_.period, [this] { return done_; })) {
    std::fprintf(options_.out, "%s%s", Line().c_str(), end);
    std::fflush(options_.out);
  }
}

std::string CountWithRate(const std::string& name, uint64_t count, double seconds) {
  const double rate = seconds > 0 ? count / seconds : 0.0;
  char buf[128];
  if (rate >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2f M/s", rate / 1e6);
  else if (rate >= 1e3)
    std::snprintf(buf, sizeof buf, "%.2f k/s", rate / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.1f/s", rate);
  return name + " " + std::to_string(count) + " (" + buf + ")";
}

}  // namespace verisub::base
