// The search's memory, estimated before it starts: its budget of expanded graphs and its queue
// bound what it holds, so a budget that cannot fit (a --budget in the millions on a large
// model) is refused with the estimate instead of running until the machine is out of memory.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "rewriter/search.h"
#include "runtime/graph.h"

namespace verisub::rewriter {

struct SearchMemoryEstimate {
  int64_t bytes_per_graph = 0;  // one expanded graph: its node and value lists, index, keys
  int64_t graphs = 0;           // at most budget + 1 are held at once
  int64_t queue_bytes = 0;      // max_queue entries
  int64_t total_bytes = 0;      // saturating
};

// Upper estimate of the search's own structures on `g` (weights are shared between graph
// variants, not copied, and not counted).
SearchMemoryEstimate EstimateSearchMemory(const runtime::Graph& g, const SearchOptions& options);

// FailedPrecondition with the estimate when it exceeds `max_bytes` (> 0), naming the budget and
// the largest budget that fits; Ok when `max_bytes` is 0.
Status CheckSearchMemory(const runtime::Graph& g, const SearchOptions& options, int64_t max_bytes);

}  // namespace verisub::rewriter
