// Graph cost for the search: the sum of per-node times from a CostModel, cached per operator
// instance (OpCostQuery::Key), so each distinct instance is asked once per optimization.
#pragma once

#include <string>
#include <unordered_map>

#include "runtime/cost/cost_model.h"
#include "runtime/graph.h"
#include "specs/status.h"

namespace verisub::rewriter {

// The cost query of one node: shapes from spec types (or static dims), 4-byte floats unless
// the element type says otherwise. Unknown shapes give rank-0 shapes (opaque nodes only).
runtime::OpCostQuery NodeQuery(const runtime::Graph& g, const runtime::Node& n);

class CostEvaluator {
 public:
  explicit CostEvaluator(const runtime::CostModel* model) : model_(model) {}

  StatusOr<double> NodeCost(const runtime::Graph& g, const runtime::Node& n);
  StatusOr<double> GraphCost(const runtime::Graph& g);
  int cache_size() const { return static_cast<int>(cache_.size()); }

 private:
  const runtime::CostModel* model_;
  std::unordered_map<std::string, double> cache_;
};

}  // namespace verisub::rewriter
