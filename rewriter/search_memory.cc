// Counting what one expanded search graph holds.
#include "rewriter/search_memory.h"

#include <limits>
#include <memory>
#include <string>

#include "rewriter/graph_key.h"
#include "rewriter/matcher.h"

namespace verisub::rewriter {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t SatMul(int64_t a, int64_t b) { return b != 0 && a > kMax / b ? kMax : a * b; }
int64_t SatAdd(int64_t a, int64_t b) { return a > kMax - b ? kMax : a + b; }

// What a rewrite adds to its graph: the target's new nodes and values (copied, with their
// parameters and types), about a rule's size.
constexpr int64_t kRewriteBytes = 4 * (sizeof(runtime::Node) + sizeof(runtime::Value) + 256);
// A queue entry: the entry in its ordered set, its match and derivation step, its key.
constexpr int64_t kQueueEntryBytes = 320;

}  // namespace

SearchMemoryEstimate EstimateSearchMemory(const runtime::Graph& g, const SearchOptions& options) {
  int64_t uses = 0;
  for (const auto& n : g.nodes()) uses += static_cast<int64_t>(n->inputs.size());
  // Per value: the graph's shared pointer, GraphIndex's producer, use count, output and
  // weight-only flags and consumer list, GraphKeys' identity; per node: the graph's pointer,
  // the by-operator list, GraphKeys' node hash; per use: a consumer entry.
  const int64_t per_value = sizeof(std::shared_ptr<const runtime::Value>) + 2 * sizeof(int) + 2 +
                            sizeof(std::vector<std::pair<int, int>>) + sizeof(uint64_t);
  const int64_t per_node =
      sizeof(std::shared_ptr<const runtime::Node>) + sizeof(int) + sizeof(uint64_t);
  const int64_t per_use = sizeof(std::pair<int, int>);
  SearchMemoryEstimate e;
  e.bytes_per_graph =
      per_value * g.num_values() + per_node * g.num_nodes() + per_use * uses +
      static_cast<int64_t>(sizeof(runtime::Graph) + sizeof(GraphIndex) + sizeof(GraphKeys)) +
      kRewriteBytes;
  e.graphs = static_cast<int64_t>(options.budget) + 1;
  e.queue_bytes = SatMul(options.max_queue, kQueueEntryBytes);
  e.total_bytes = SatAdd(SatMul(e.graphs, e.bytes_per_graph), e.queue_bytes);
  return e;
}

Status CheckSearchMemory(const runtime::Graph& g, const SearchOptions& options, int64_t max_bytes) {
  if (max_bytes <= 0) return Status::Ok();
  const SearchMemoryEstimate e = EstimateSearchMemory(g, options);
  if (e.total_bytes <= max_bytes) return Status::Ok();
  const int64_t fits =
      max_bytes > e.queue_bytes ? (max_bytes - e.queue_bytes) / e.bytes_per_graph - 1 : -1;
  return FailedPrecondition(
      "search: a budget of " + std::to_string(options.budget) + " graphs of about " +
      std::to_string(e.bytes_per_graph) + " bytes each (" + std::to_string(g.num_nodes()) +
      " nodes) and a queue of " + std::to_string(options.max_queue) + " need about " +
      std::to_string(e.total_bytes) + " bytes, over the memory budget of " +
      std::to_string(max_bytes) + " bytes (--max-memory-mb; SearchOptions::max_memory_bytes): " +
      (fits >= 0 ? "a --budget of at most " + std::to_string(fits) + " fits"
                 : "lower --max-queue"));
}

}  // namespace verisub::rewriter
