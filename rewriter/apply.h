// Applying a match: builds a new graph (the input graph is never edited) with the rule's target
// in place of the matched source, or says why the rewrite is rejected.
#pragma once

#include <cstdint>
#include <string>

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

enum class RejectReason {
  kNone,
  kTypeError,      // a target node's shape rule fails on the bound input types
  kShapeMismatch,  // a target output's shape or element type differs from the source output's
  kCycle,          // the rewritten graph has a cycle (TASO Fig. 6)
  kDownstream,     // a consumer's shape rule fails or changes after the rewrite (split trees)
  kCost,           // the cost model cannot price a target node
};
const char* RejectReasonName(RejectReason r);

struct ApplyResult {
  RejectReason rejected = RejectReason::kNone;
  std::string detail;     // why, when rejected
  runtime::Graph graph;   // the rewritten graph, when not rejected
  double cost_delta = 0;  // cost(graph) - cost(input graph)
  int folded_nodes = 0;   // target nodes evaluated into weights
};

// `index` must describe `g`. The result is topologically ordered and free of dead nodes; new
// values and nodes get names starting with "verisub_rw" (made unique by FinalizeGraph).
ApplyResult ApplyMatch(const runtime::Graph& g, const GraphIndex& index, const RuleSet& rules,
                       const Match& match, CostEvaluator* cost, const ApplyOptions& options = {});

// Drops unused values (renumbering) and gives every value a unique name: what a search result
// needs before export.
void FinalizeGraph(runtime::Graph* g);

}  // namespace verisub::rewriter
