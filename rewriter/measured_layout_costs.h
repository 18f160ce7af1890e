// The layout DP's costs measured on oneDNN (issue 16): convolutions and pools timed alone with
// their output in each candidate layout, conversions timed as oneDNN reorders per shape and layout
// pair, every other node at its measured time (runtime::MeasuredCpuCostModel) scaled by the
// analytic source's padding factor; nodes the backend fuses into a convolution or matmul
// (runtime::CostModel::AbsorbedNodes) cost nothing in any admissible layout. Which combinations are
// admissible is the analytic source's rule (rewriter/layout_costs.h), so both sources give the DP
// the same problem and differ only in the numbers. Measurements go to the measured model's cost
// table.
#pragma once

#ifdef VERISUB_HAVE_DNNL

#include <unordered_map>
#include <vector>

#include "rewriter/layout_costs.h"
#include "runtime/dnnl/measured_cost.h"

namespace verisub::rewriter {

class MeasuredLayoutCosts : public LayoutCostSource {
 public:
  // `model` must outlive this object.
  explicit MeasuredLayoutCosts(const runtime::MeasuredCpuCostModel* model);

  std::string Name() const override { return "measured-layout:" + model_->Name(); }
  void BeginGraph(const runtime::Graph& g) const override {
    Prepare(g);
    begun_ = &g;
  }
  void EndGraph() const override { begun_ = nullptr; }
  std::optional<double> KernelCostUs(const runtime::Graph& g, const runtime::Node& node,
                                     std::span<const specs::Layout> inputs,
                                     std::span<const specs::Layout> outputs) const override;
  double ConversionCostUs(const runtime::Value& value, specs::Layout from,
                          specs::Layout to) const override;
  // bfloat16 where oneDNN has native kernels for it on this CPU (dnnl_backend::HasBf16Kernels):
  // the operators the backend runs in bfloat16 (convolutions, matmuls, pools, elementwise and
  // binary operators) timed so, with their fusion group; casts timed as typed reorders.
  std::vector<Precision> ReducedPrecisions() const override;
  std::optional<double> FormatKernelCostUs(const runtime::Graph& g, const runtime::Node& node,
                                           std::span<const Format> inputs,
                                           std::span<const Format> outputs) const override;
  double FormatConversionCostUs(const runtime::Value& value, Format from, Format to) const override;
  // A node's costs depend on its fusion group as the backend would run it in the graph: the
  // group's nodes, which one runs the kernel, and what the plan made of them.
  std::optional<NodeContext> ContextOf(const runtime::Graph& g, int node) const override;

 private:
  const runtime::MeasuredCpuCostModel* model_;
  AnalyticLayoutCosts analytic_;  // admissibility and padding factors over the measured times
  // The graph the DP asks about (one at a time, node by node): its fusion plan and node indices,
  // made once per graph. A graph is recognized by its nodes (shared, immutable) and outputs, not
  // by its address, which a search reuses for the next graph it builds.
  // Between BeginGraph(g) and EndGraph() the graph asked about is `g` itself: no check.
  const runtime::dnnl_backend::FusionPlan& PlanOf(const runtime::Graph& g) const;
  void Prepare(const runtime::Graph& g) const;
  mutable const runtime::Graph* begun_ = nullptr;
  mutable std::vector<const runtime::Node*> nodes_;
  mutable std::vector<int> graph_outputs_;
  mutable std::unordered_map<const runtime::Node*, int> index_;
  mutable runtime::dnnl_backend::FusionPlan plan_;
};

}  // namespace verisub::rewriter

#endif  // VERISUB_HAVE_DNNL
