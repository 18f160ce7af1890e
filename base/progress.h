// The one progress reporter: a periodic line on stderr while a long phase runs, a last line
// (the summary of counts and rate) when it ends.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace verisub::base {

struct ProgressOptions {
  bool enabled = true;  // false: prints nothing, starts no thread
  std::chrono::milliseconds period{1000};
  std::FILE* out = stderr;
};

// While alive, a monitor thread prints "LABEL: TEXT" every period, TEXT = describe(seconds since
// start); the destructor prints the final line. `describe` runs on the monitor thread, so it
// reads only what workers publish safely (atomics). Workers never print or lock for progress.
// On a terminal the periodic line is rewritten in place; in a log each update is a line.
class Progress {
 public:
  Progress(std::string label, std::function<std::string(double seconds)> describe,
           ProgressOptions options = {});
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

 private:
  void Loop();
  std::string Line() const;

  std::string label_;
  std::function<std::string(double)> describe_;
  ProgressOptions options_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// "NAME COUNT (RATE/s)" with the rate scaled (k, M): e.g. "graphs 1234567 (2.31 M/s)".
std::string CountWithRate(const std::string& name, uint64_t count, double seconds);

}  // namespace verisub::base
