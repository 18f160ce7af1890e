// Applying a match: builds a new graph (the input graph is never edited) with the rule's target
// in place of the matched source, or says why the rewrite is rejected.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rewriter/graph_cost.h"
#include "rewriter/matcher.h"
#include "rewriter/rule_set.h"
#include "runtime/graph.h"

namespace verisub::rewriter {

struct ApplyOptions {
  // Target nodes computed from weights only (e.g. the concatenated kernels of merged
  // convolutions) cost nothing: FinalizeGraph folds them into weights. Off, they are priced.
  bool fold_constants = true;
};

enum class RejectReason {
  kNone,
  kTypeError,      // a target node's shape rule fails on the bound input types
  kShapeMismatch,  // a target output's shape or element type differs from the source output's
  kCycle,          // the rewritten graph has a cycle (TASO Fig. 6)
  kDownstream,     // a consumer's shape rule fails or changes after the rewrite (split trees)
  kCost,           // the cost model cannot price a target node
  kCostLimit,      // the result would cost more than the caller's limit (checked before building)
};
inline constexpr int kNumRejectReasons = 7;
const char* RejectReasonName(RejectReason r);

struct ApplyResult {
  RejectReason rejected = RejectReason::kNone;
  std::string detail;         // why, when rejected
  runtime::Graph graph;       // the rewritten graph, when not rejected
  double cost_delta = 0;      // cost(graph) - cost(input graph)
  int weight_only_nodes = 0;  // target nodes computed from weights only (folded at the end)
};

// `index` must describe `g`. The result is topologically ordered and free of dead nodes; new
// values and nodes get names starting with "verisub_rw" (made unique by FinalizeGraph). When the
// cost delta is known to be at least `max_cost_delta` before the graph is built, the rewrite is
// rejected with kCostLimit without building it. An enlarge target node that would not change
// its kernel's size is the identity and is not created.
ApplyResult ApplyMatch(const runtime::Graph& g, const GraphIndex& index, const RuleSet& rules,
                       const Match& match, CostEvaluator* cost, const ApplyOptions& options = {},
                       double max_cost_delta = 1e300);

// Folds weight-only nodes (runtime::FoldConstants), drops unused values (renumbering) and gives
// every value a unique name: what a search result needs before export.
Status FinalizeGraph(runtime::Graph* g);

}  // namespace verisub::rewriter
