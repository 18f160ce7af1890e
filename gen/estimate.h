// What a generator config will cost, estimated before the run: the memory the evaluation of one
// graph needs per thread (exact for the inputs, bounded for the results), a loose upper bound on
// the graphs enumerated, and the memory budget the enumeration is held to while it runs.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "gen/config.h"

namespace verisub::gen {

struct GenEstimate {
  int64_t largest_input_elements = 0;
  double evaluation_bytes = 0;    // all threads: input and result tensors, modular and double
  double graphs_upper_bound = 0;  // ignores shape rules: usually far above the real count
  // The most graphs the enumeration may hold within the budget (each is an entry plus the
  // room sorting it needs).
  uint64_t max_graphs_in_budget = 0;
  std::string Summary() const;
};

inline constexpr uint64_t kDefaultGenMemoryBudget = uint64_t{4} << 30;
inline constexpr int64_t kSlowInputElements = int64_t{1} << 20;

// Refuses a config whose evaluation alone cannot fit `budget_bytes` (naming the largest input);
// otherwise returns the estimate.
StatusOr<GenEstimate> EstimateGeneration(const GenConfig& config, int threads,
                                         uint64_t budget_bytes);

}  // namespace verisub::gen
