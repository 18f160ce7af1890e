// The generator's progress counters (bumped by the workers in batches) and the line that
// base::Progress prints from them.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace verisub::gen {

struct ProgressCounters {
  std::atomic<uint64_t> graphs{0};
  std::atomic<uint64_t> buckets_done{0};
  std::atomic<uint64_t> buckets_total{0};
  std::atomic<uint64_t> candidates{0};  // pairs kept as rules, before deduplication
  std::atomic<int> stage{0};            // 0 set-up, 1 enumerate, 2 test pairs, 3 done
};

// "  12.3s  graphs 1234 (1.20 M/s)  buckets 3/9  pairs kept 17"
std::string ProgressLine(const ProgressCounters& counters, double seconds);

}  // namespace verisub::gen
