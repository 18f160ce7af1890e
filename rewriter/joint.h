// TASO's joint substitution and layout optimization as one call (issue 16): the search prices
// every graph it builds by its layout-DP-optimal cost, and the rewrites-only search's answer is
// priced by the same DP, the cheaper of the two kept. Used by `Session` (layout "joint") and
// `verisub-opt --layout dp`.
#pragma once

#include <optional>

#include "rewriter/layout_cost_source.h"
#include "rewriter/optimize.h"
#include "runtime/cost/analytic_cost.h"
#include "runtime/cost/cost_model.h"

namespace verisub {

// The layout DP's cost source for a cost model: kernels and reorders timed per layout on oneDNN
// (rewriter::MeasuredLayoutCosts) when `model` is the measured CPU model, else the analytic
// layout costs over `model`'s plain times (the cpu-2core preset's when null), conversions at the
// cpu-2core preset's bandwidth. `model` must outlive this object.
class LayoutCostsFor {
 public:
  explicit LayoutCostsFor(const runtime::CostModel* model);
  ~LayoutCostsFor();
  const rewriter::LayoutCostSource& costs() const { return *costs_; }

 private:
  runtime::DeviceDescription device_;
  runtime::AnalyticCostModel kernels_;
  std::unique_ptr<rewriter::LayoutCostSource> costs_;
};

struct JointChoice {
  double joint_cost_us = 0;       // layout-DP cost of the joint search's graph
  double sequential_cost_us = 0;  // of the rewrites-only search's graph
  bool kept_sequential = false;   // the cheaper is kept; the joint one on a tie
};

// Optimize with `options.search.graph_cost` set to the DP-optimal cost under `layout_costs`, and
// without it; `output` and `report` get the graph of lower DP cost (so it is never worse than
// rewrites then layouts, in the DP's prices); `choice` (may be null) says which. The two searches
// explore different graphs: the joint one orders by per-rewrite deltas and prices by the DP, so
// it can stop on a graph the rewrites-only one passes over, and the other way round.
Status OptimizeJointly(const runtime::Graph& input, const rewriter::RuleSet& rules,
                       const OptimizeOptions& options,
                       const rewriter::LayoutCostSource& layout_costs, runtime::Graph* output,
                       OptimizeReport* report, JointChoice* choice);

}  // namespace verisub
