// MeasuredLayoutCosts: see measured_layout_costs.h.
#include "rewriter/measured_layout_costs.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>

#ifdef VERISUB_HAVE_DNNL

#include "onnx/onnx_pb.h"
#include "rewriter/graph_cost.h"
#include "runtime/dnnl/dnnl_backend.h"
#include "specs/registry.h"

namespace verisub::rewriter {

namespace {

// A concat the backend runs in place (Group::concat_in_place) costs nothing when its parts and
// output share a layout that cuts along channels: plain, or blocked with every part's channel
// count a multiple of the block.
bool ConcatRunsInPlace(const runtime::Graph& g, const runtime::dnnl_backend::Group& group,
                       std::span<const specs::Layout> inputs,
                       std::span<const specs::Layout> outputs) {
  if (outputs.size() != 1) return false;
  const specs::Layout out = outputs[0];
  if (!runtime::dnnl_backend::CutsAlongChannels(out)) return false;
  for (specs::Layout l : inputs)
    if (l != out) return false;
  const int64_t block = specs::LayoutChannelBlock(out);
  for (int v : group.concat_inputs)
    if (g.value(v).dims[1] % block != 0) return false;
  return true;
}

// An ONNX node of the default domain of one of `types`, kept opaque (no spec operator says it).
bool IsOnnx(const runtime::Node& n, std::initializer_list<std::string_view> types) {
  return n.opaque() && n.domain.empty() && n.onnx &&
         std::find(types.begin(), types.end(), n.op_type) != types.end();
}

// The cost table's key of an opaque ONNX node timed per layout: its query with its attributes,
// which the query does not carry.
std::string KeyWithAttributes(const runtime::Graph& g, const runtime::Node& n) {
  std::string key = NodeQuery(g, n).Key();
  for (const auto& a : n.onnx->attribute()) key += " " + a.ShortDebugString();
  return key;
}

}  // namespace

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
    if (gi >= 0 && plan.groups[gi].concat_in_place &&
        ConcatRunsInPlace(g, plan.groups[gi], inputs, outputs))
      return 0.0;
  }
  // A slice or split whose pieces are contiguous in their input's layout: views.
  if (SubTensorIsAView(g, node, inputs, outputs)) return 0.0;
  const std::string key = NodeQuery(g, node).Key();
  // ONNX pools the spec has no operator for (ceil mode, count_include_pad): oneDNN runs them in
  // any image layout like the spec pools, so they get the same choices, measured; the key
  // carries their attributes.
  const bool onnx_pool = IsOnnx(node, {"MaxPool", "AveragePool"});
  // Likewise the ONNX convolutions the spec has no operator for (dilated ones: DeepLab's atrous
  // convolutions), which oneDNN runs in any image layout (a gemm over every tap when plain): in
  // their input's layout, weights and bias the backend's business.
  const bool onnx_conv = IsOnnx(node, {"Conv"}) && inputs.size() >= 2 && [&] {
    for (size_t k = 1; k < inputs.size(); ++k)
      if (inputs[k] != specs::Layout::kPlain) return false;
    return true;
  }();
  if ((onnx_pool ? inputs.size() == 1 : onnx_conv) && index >= 0 && !outputs.empty() &&
      inputs[0] == outputs[0] && g.value(node.outputs[0]).dims.size() == 4) {
    auto t = model_->NodeInLayoutUs(g, plan, index, outputs[0], KeyWithAttributes(g, node));
    if (t.ok()) return *t;
  }
  auto scaled = analytic_.KernelCostUs(g, node, inputs, outputs);
  if (!scaled) return std::nullopt;  // no kernel in that combination
  // A mean over the spatial axes reads its input as stored: timed in each input layout.
  if (IsSpatialMean(g, node) && index >= 0 && !inputs.empty() &&
      inputs[0] != specs::Layout::kPlain && !outputs.empty()) {
    auto t = model_->NodeInLayoutUs(g, plan, index, outputs[0], key, false, inputs[0]);
    return t.ok() ? *t : scaled;
  }
  const bool window =
      node.op && (*node.op == specs::OpKind::kConv2d || *node.op == specs::OpKind::kConv2dBias ||
                  *node.op == specs::OpKind::kPoolMax || *node.op == specs::OpKind::kPoolAvg);
  if (!window || outputs.empty() || index < 0) return scaled;
  auto t = model_->NodeInLayoutUs(g, plan, index, outputs[0], key);
  if (!t.ok()) return scaled;
  return *t;
}

void MeasuredLayoutCosts::Prepare(const runtime::Graph& g) const {
  nodes_.clear();
  index_.clear();
  for (int i = 0; i < g.num_nodes(); ++i) {
    nodes_.push_back(&g.node(i));
    index_.emplace(&g.node(i), i);
  }
  graph_outputs_ = g.outputs();
  plan_ = runtime::dnnl_backend::PlanFusion(g);
}

const runtime::dnnl_backend::FusionPlan& MeasuredLayoutCosts::PlanOf(
    const runtime::Graph& g) const {
  if (&g == begun_) return plan_;
  // Asked outside a bracket: the graph is recognized by its nodes (an O(nodes) check per
  // question, which made the DP quadratic in the graph's size before BeginGraph).
  bool same = static_cast<int>(nodes_.size()) == g.num_nodes() && graph_outputs_ == g.outputs();
  for (int i = 0; same && i < g.num_nodes(); ++i) same = nodes_[i] == &g.node(i);
  if (!same) Prepare(g);
  return plan_;
}

namespace {

// Operators the oneDNN backend runs natively in bfloat16 (their kernels take the output's type).
bool RunsInBf16(specs::OpKind op) {
  switch (op) {
    case specs::OpKind::kConv2d:
    case specs::OpKind::kConv2dBias:
    case specs::OpKind::kMatmul:
    case specs::OpKind::kPoolMax:
    case specs::OpKind::kPoolAvg:
    case specs::OpKind::kEwAdd:
    case specs::OpKind::kEwMul:
    case specs::OpKind::kBiasAdd:
    case specs::OpKind::kChannelScale:
    case specs::OpKind::kSmul:
      return true;
    default:
      // Unary elementwise operators (relu, sigmoid, gelu, ...): one eltwise kernel.
      return specs::GetOp(op).layouts.layout_agnostic && specs::GetOp(op).num_inputs == 1;
  }
}

}  // namespace

std::vector<Precision> MeasuredLayoutCosts::ReducedPrecisions() const {
  if (runtime::dnnl_backend::HasBf16Kernels()) return {Precision::kBf16};
  return {};
}

std::optional<double> MeasuredLayoutCosts::FormatKernelCostUs(
    const runtime::Graph& g, const runtime::Node& node, std::span<const Format> inputs,
    std::span<const Format> outputs) const {
  const std::optional<Precision> precision = DataPrecision(g, node, inputs, outputs);
  if (!precision) return std::nullopt;
  const std::vector<specs::Layout> in = LayoutsOf(inputs), out = LayoutsOf(outputs);
  if (*precision == Precision::kF32) return KernelCostUs(g, node, in, out);
  // The ONNX convolutions laid out above compute in bfloat16 as conv2d does (the same kernel).
  const bool onnx_conv = IsOnnx(node, {"Conv"}) && g.value(node.outputs[0]).dims.size() == 4;
  if (*precision != Precision::kBf16 || !runtime::dnnl_backend::HasBf16Kernels() ||
      (!node.op && !onnx_conv) || outputs.empty())
    return std::nullopt;
  // Admissible in these layouts at all (and free when fused into another node's kernel).
  auto f32 = KernelCostUs(g, node, in, out);
  if (!f32) return std::nullopt;
  const runtime::dnnl_backend::FusionPlan& plan = PlanOf(g);
  auto found = index_.find(&node);
  if (found == index_.end()) return std::nullopt;
  const int gi = plan.group_of[found->second];
  if (gi >= 0 && plan.groups[gi].kernel_node != found->second) return 0.0;
  if (node.op ? !RunsInBf16(*node.op) : !onnx_conv) return std::nullopt;
  auto t = model_->NodeInLayoutUs(g, plan, found->second, out[0],
                                  onnx_conv ? KeyWithAttributes(g, node) : NodeQuery(g, node).Key(),
                                  /*bf16=*/true);
  if (!t.ok()) return std::nullopt;
  return *t;
}

std::optional<LayoutCostSource::NodeContext> MeasuredLayoutCosts::ContextOf(const runtime::Graph& g,
                                                                            int node) const {
  const runtime::dnnl_backend::FusionPlan& plan = PlanOf(g);
  NodeContext c;
  const int gi = plan.group_of[node];
  if (gi < 0) return c;  // alone: the node and its values decide
  // Nodes by index here; the cache keys them by the nodes themselves (indices move between the
  // graphs of a search, nodes do not change). Values keep their ids.
  const runtime::dnnl_backend::Group& group = plan.groups[gi];
  c.nodes = group.members;
  c.nodes.push_back(group.kernel_node);
  // What the plan made of them, each list closed by a separator (-2: no value id or pad is).
  std::vector<int64_t>& f = c.facts;
  f = {group.output, group.pad_input};
  f.insert(f.end(), group.extra_pads.begin(), group.extra_pads.end());
  f.push_back(-2);
  f.insert(f.end(), group.pattern.begin(), group.pattern.end());
  f.push_back(-2);
  f.insert(f.end(), group.concat_inputs.begin(), group.concat_inputs.end());
  f.push_back(group.concat_in_place ? 1 : 0);
  for (const runtime::dnnl_backend::PostOp& op : group.post_ops) {
    f.push_back(-2);
    f.push_back(op.kind);  // its node is among the members
    f.insert(f.end(), op.operands.begin(), op.operands.end());
  }
  return c;
}

double MeasuredLayoutCosts::FormatConversionCostUs(const runtime::Value& value, Format from,
                                                   Format to) const {
  if (from.precision == Precision::kF32 && to.precision == Precision::kF32)
    return ConversionCostUs(value, from.layout, to.layout);
  if (from == to) return 0;
  if (value.elem_type == runtime::kFloat && value.StaticShape()) {
    auto t =
        model_->ReorderUs(value.dims, from.layout, to.layout, from.precision == Precision::kBf16,
                          to.precision == Precision::kBf16);
    if (t.ok()) return *t;
  }
  // Not measurable (no static shape, too large): a pass over both copies at the analytic
  // source's bandwidth, plus the layout change.
  const double elements =
      value.StaticShape() ? static_cast<double>(runtime::CountElements(value.dims)) : 0;
  return elements * 6 / (15.0 * 1e3) + ConversionCostUs(value, from.layout, to.layout);
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
