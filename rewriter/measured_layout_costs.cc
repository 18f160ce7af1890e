// MeasuredLayoutCosts: see measured_layout_costs.h.
#include "rewriter/measured_layout_costs.h"

#ifdef VERISUB_HAVE_DNNL

#include "onnx/onnx_pb.h"
#include "rewriter/graph_cost.h"

namespace verisub::rewriter {

MeasuredLayoutCosts::MeasuredLayoutCosts(const runtime::MeasuredCpuCostModel* model)
    : model_(model), analytic_(model, *runtime::DevicePreset("cpu-2core")) {}

std::optional<double> MeasuredLayoutCosts::KernelCostUs(
    const runtime::Graph& g, const runtime::Node& node, std::span<const specs::Layout> inputs,
    std::span<const specs::Layout> outputs) const {
  const runtime::dnnl_backend::FusionPlan& plan = PlanOf(g);
  auto found = index_.find(&node);
  const int index = found == index_.end() ? -1 : found->second;
  if (index >= 0) {
    // A post-op or a padding of its group's kernel (a Pad folded into a pool's window, opaque
    // as it may be): it runs in whatever layout the kernel does, for nothing. Every data slot in
    // one layout.
    const int gi = plan.group_of[index];
    if (gi >= 0 && plan.groups[gi].kernel_node != index) {
      std::optional<specs::Layout> common;
      const size_t rank = g.value(node.outputs[0]).dims.size();
      auto same = [&](int v, specs::Layout l) {
        // Weights and parameter tensors (a Pad's pads) are not data slots.
        if (v == runtime::kNoValue || g.value(v).constant || g.value(v).dims.size() != rank)
          return true;
        if (!common) common = l;
        return *common == l;
      };
      for (size_t k = 0; k < inputs.size() && k < node.inputs.size(); ++k)
        if (!same(node.inputs[k], inputs[k])) return std::nullopt;
      for (size_t k = 0; k < outputs.size() && k < node.outputs.size(); ++k)
        if (!same(node.outputs[k], outputs[k])) return std::nullopt;
      return 0.0;
    }
  }
  std::string key = NodeQuery(g, node).Key();
  // ONNX pools the spec has no operator for (ceil mode, count_include_pad): oneDNN runs them in
  // any image layout like the spec pools, so they get the same choices, measured; the key
  // carries their attributes.
  const bool onnx_pool = node.opaque() && node.domain.empty() && node.onnx &&
                         (node.op_type == "MaxPool" || node.op_type == "AveragePool");
  if (onnx_pool && index >= 0 && !outputs.empty() && inputs.size() == 1 &&
      inputs[0] == outputs[0] && g.value(node.outputs[0]).dims.size() == 4) {
    for (const auto& a : node.onnx->attribute()) key += " " + a.ShortDebugString();
    auto t = model_->NodeInLayoutUs(g, plan, index, outputs[0], key);
    if (t.ok()) return *t;
  }
  auto scaled = analytic_.KernelCostUs(g, node, inputs, outputs);
  if (!scaled) return std::nullopt;  // no kernel in that combination
  const bool window =
      node.op && (*node.op == specs::OpKind::kConv2d || *node.op == specs::OpKind::kConv2dBias ||
                  *node.op == specs::OpKind::kPoolMax || *node.op == specs::OpKind::kPoolAvg);
  if (!window || outputs.empty() || index < 0) return scaled;
  auto t = model_->NodeInLayoutUs(g, plan, index, outputs[0], key);
  if (!t.ok()) return scaled;
  return *t;
}

const runtime::dnnl_backend::FusionPlan& MeasuredLayoutCosts::PlanOf(
    const runtime::Graph& g) const {
  bool same = static_cast<int>(nodes_.size()) == g.num_nodes() && graph_outputs_ == g.outputs();
  for (int i = 0; same && i < g.num_nodes(); ++i) same = nodes_[i] == &g.node(i);
  if (!same) {
    nodes_.clear();
    index_.clear();
    for (int i = 0; i < g.num_nodes(); ++i) {
      nodes_.push_back(&g.node(i));
      index_.emplace(&g.node(i), i);
    }
    graph_outputs_ = g.outputs();
    plan_ = runtime::dnnl_backend::PlanFusion(g);
  }
  return plan_;
}

double MeasuredLayoutCosts::ConversionCostUs(const runtime::Value& value, specs::Layout from,
                                             specs::Layout to) const {
  if (from == to) return 0;
  if (value.elem_type == runtime::kFloat && value.StaticShape()) {
    auto t = model_->ReorderUs(value.dims, from, to);
    if (t.ok()) return *t;
  }
  return analytic_.ConversionCostUs(value, from, to);
}

}  // namespace verisub::rewriter

#endif  // VERISUB_HAVE_DNNL
