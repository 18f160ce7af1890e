// Applying a match: builds a new graph (the input graph is never edited) with the rule's target
// in place of the matched source, or says why the rewrite is rejected.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rewriter/graph_cost.h"
#include "rewriter/matcher.h"
#include "rewriter/rule_set.h"
#include "runtime/graph.h"

namespace verisub::rewriter {

struct ApplyOptions {
  // Target nodes whose inputs are all weights are evaluated at once (e.g. the concatenated
  // kernels of merged convolutions), so they cost nothing, as runtime::FoldConstants would do.
  bool fold_constants = true;
  int64_t fold_max_elements = int64_t{1} << 24;
};

// Results of folded target nodes, keyed by operator, parameters and input weights, so the same
// fold (e.g. a kernel enlarged or two kernels concatenated) is computed once per search and every
// graph using it shares one tensor. Holds at most `max_bytes` of results.
class FoldCache {
 public:
  explicit FoldCache(int64_t max_bytes = int64_t{256} << 20) : max_bytes_(max_bytes) {}
  const std::vector<std::shared_ptr<const runtime::HostTensor>>* Find(const std::string& key) const;
  void Insert(const std::string& key, std::vector<std::shared_ptr<const runtime::HostTensor>> in,
              std::vector<std::shared_ptr<const runtime::HostTensor>> out);
  int64_t hits() const { return hits_; }

 private:
  struct Entry {
    std::vector<std::shared_ptr<const runtime::HostTensor>> inputs;  // keep key addresses valid
    std::vector<std::shared_ptr<const runtime::HostTensor>> outputs;
  };
  std::map<std::string, Entry> entries_;
  int64_t bytes_ = 0, max_bytes_;
  mutable int64_t hits_ = 0;
};

enum class RejectReason {
  kNone,
  kTypeError,      // a target node's shape rule fails on the bound input types
  kShapeMismatch,  // a target output's shape or element type differs from the source output's
  kCycle,          // the rewritten graph has a cycle (TASO Fig. 6)
  kDownstream,     // a consumer's shape rule fails or changes after the rewrite (split trees)
  kCost,           // the cost model cannot price a target node
  kCostLimit,      // the result would cost more than the caller's limit (checked before building)
  kFold,           // evaluating a weight-only target node failed
};
inline constexpr int kNumRejectReasons = 8;
const char* RejectReasonName(RejectReason r);

struct ApplyResult {
  RejectReason rejected = RejectReason::kNone;
  std::string detail;     // why, when rejected
  runtime::Graph graph;   // the rewritten graph, when not rejected
  double cost_delta = 0;  // cost(graph) - cost(input graph)
  int folded_nodes = 0;   // target nodes evaluated into weights
};

// `index` must describe `g`. The result is topologically ordered and free of dead nodes; new
// values and nodes get names starting with "verisub_rw" (made unique by FinalizeGraph). When the
// cost delta is known to be at least `max_cost_delta` before the graph is built, the rewrite is
// rejected with kCostLimit without building it. `folds` may be null.
ApplyResult ApplyMatch(const runtime::Graph& g, const GraphIndex& index, const RuleSet& rules,
                       const Match& match, CostEvaluator* cost, const ApplyOptions& options = {},
                       double max_cost_delta = 1e300, FoldCache* folds = nullptr);

// Drops unused values (renumbering) and gives every value a unique name: what a search result
// needs before export.
void FinalizeGraph(runtime::Graph* g);

}  // namespace verisub::rewriter
