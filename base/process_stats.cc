// Process statistics from getrusage.
#include "base/process_stats.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <thread>

namespace verisub::base {

int64_t PeakRssBytes() {
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;  // Linux reports kilobytes
}

int64_t CurrentRssBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

double ProcessCpuSeconds() {
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
}

int ThreadsOrOnePerCore(int threads) {
  return threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

int MaxThreads() {
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(4, 4 * hw);
}

Status CheckThreadCount(int threads, const std::string& what) {
  if (threads >= 0 && threads <= MaxThreads()) return Status::Ok();
  return InvalidArgument(what + " must be in [0, " + std::to_string(MaxThreads()) +
                         "] (at most 4 x the " +
                         std::to_string(std::thread::hardware_concurrency()) +
                         " hardware threads), not " + std::to_string(threads));
}

}  // namespace verisub::base
