// The generator's progress line.
#include "gen/progress.h"

#include <algorithm>
#include <cstdio>

#include "base/progress.h"

namespace verisub::gen {

std::string ProgressLine(const ProgressCounters& counters, double seconds) {
  static const char* const kStages[] = {"set-up", "enumerate", "test pairs", "done"};
  char buf[128];
  std::snprintf(buf, sizeof buf, "%6.1fs  %-10s ", seconds,
                kStages[std::clamp(counters.stage.load(), 0, 3)]);
  return buf +
         base::CountWithRate("graphs", counters.graphs.load(std::memory_order_relaxed), seconds) +
         "  buckets " + std::to_string(counters.buckets_done.load()) + "/" +
         std::to_string(counters.buckets_total.load()) + "  pairs kept " +
         std::to_string(counters.candidates.load());
}

}  // namespace verisub::gen
