// The analytic layout cost source.
#include "rewriter/layout_costs.h"

#include <algorithm>

#include "rewriter/graph_cost.h"
#include "specs/ops/bias_add.h"
#include "specs/ops/channel_scale.h"
#include "specs/ops/concat.h"
#include "specs/ops/conv2d.h"
#include "specs/ops/reduce_mean.h"
#include "specs/ops/slice.h"
#include "specs/ops/split.h"
#include "specs/ops/transpose.h"
#include "specs/registry.h"

namespace verisub::rewriter {
namespace {

using runtime::Graph;
using runtime::kNoValue;
using runtime::Node;
using runtime::Value;
using specs::Layout;
using specs::OpKind;

const std::vector<int64_t>* StaticDims(const Value& v) {
  return v.StaticShape() ? &v.dims : nullptr;
}

int64_t Padded(int64_t c, int block) { return (c + block - 1) / block * block; }

// Padded over real channels of a rank-4 value stored in `l` (1 for other layouts and ranks).
double PaddingWaste(const Value& v, Layout l) {
  const int block = specs::LayoutChannelBlock(l);
  const auto* d = StaticDims(v);
  if (block == 1 || !d || d->size() != 4 || (*d)[1] <= 0) return 1;
  return static_cast<double>(Padded((*d)[1], block)) / static_cast<double>((*d)[1]);
}

bool IsWeight(const Graph& g, int v) { return v != kNoValue && g.value(v).constant != nullptr; }

bool AllPlain(std::span<const Layout> ls) {
  return std::all_of(ls.begin(), ls.end(), [](Layout l) { return l == Layout::kPlain; });
}

int64_t Channels(const Value& v) {
  const auto* d = StaticDims(v);
  return d && d->size() == 4 ? (*d)[1] : -1;
}

bool IsImageLayout(Layout l) {
  return l == Layout::kPlain || l == Layout::kNHWC || l == Layout::kNCHW8c || l == Layout::kNCHW16c;
}

// The convolution's factor for reading x in `in` and writing y in `out`, or nullopt.
std::optional<double> ConvFactor(const Graph& g, const Node& n, Layout in, Layout out) {
  const Value& x = g.value(n.inputs[0]);
  const Value& y = g.value(n.outputs[0]);
  const int64_t cin = Channels(x), cout = Channels(y);
  if (cin <= 0 || cout <= 0)
    return in == Layout::kPlain && out == Layout::kPlain ? std::optional<double>(1.0)
                                                         : std::nullopt;
  const int block = specs::LayoutChannelBlock(out);
  if (in != out) {
    // Only the first-layer kernels: plain in, blocked out, few input channels.
    if (in != Layout::kPlain || block == 1 || cin > kFirstLayerMaxChannels) return std::nullopt;
  }
  double factor = 1;
  switch (out) {
    case Layout::kPlain:
      return 1.0;
    case Layout::kNHWC:
      return kConvNhwcFactor;
    case Layout::kNCHW8c:
      factor = kConvBlocked8Factor;
      break;
    case Layout::kNCHW16c:
      factor = kConvBlocked16Factor;
      break;
    default:
      return std::nullopt;
  }
  const int64_t groups = n.params[specs::ops::kConvGroup] == specs::kDepthwiseGroup
                             ? cin
                             : n.params[specs::ops::kConvGroup];
  if (groups == cin && groups > 1) {  // depthwise: one lane per channel
    return factor * static_cast<double>(Padded(cin, block)) / static_cast<double>(cin);
  }
  if (groups > 1) {
    if ((cin / groups) % block != 0 || (cout / groups) % block != 0) return std::nullopt;
    return factor;
  }
  const int in_block = in == Layout::kPlain ? 1 : block;
  return factor * static_cast<double>(Padded(cin, in_block) * Padded(cout, block)) /
         static_cast<double>(cin * cout);
}

// Concat or split along channels of rank-4 values: every part in the same layout; blocked only
// when every part's channel count is a multiple of the block.
std::optional<double> ChannelPartsFactor(const Graph& g, const Node& n, Layout l) {
  const int64_t axis =
      n.params[n.op == OpKind::kConcat ? specs::ops::kConcatAxis : specs::ops::kSplitAxis];
  if (l == Layout::kPlain) return 1.0;
  if (axis != 1) return std::nullopt;
  const int block = specs::LayoutChannelBlock(l);
  for (const std::vector<int>* ids : {&n.inputs, &n.outputs})
    for (int v : *ids) {
      int64_t c = Channels(g.value(v));
      if (c <= 0 || c % block != 0) return std::nullopt;
    }
  return 1.0;
}

}  // namespace

bool SubTensorIsAView(const Graph& g, const Node& n, std::span<const Layout> inputs,
                      std::span<const Layout> outputs) {
  if (!n.op || (*n.op != OpKind::kSlice && *n.op != OpKind::kSplit) || n.inputs.size() != 1 ||
      outputs.size() != n.outputs.size() || inputs.size() != 1)
    return false;
  const Value& x = g.value(n.inputs[0]);
  if (!x.StaticShape()) return false;
  std::vector<std::vector<int64_t>> pieces;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (outputs[k] != inputs[0]) return false;
    for (int o : g.outputs())
      if (o == n.outputs[k]) return false;
    const Value& y = g.value(n.outputs[k]);
    if (!y.StaticShape()) return false;
    pieces.push_back(y.dims);
  }
  // A split's pieces follow each other along the axis; a slice's starts where it says.
  const bool slice = *n.op == OpKind::kSlice;
  return specs::PiecesAreContiguous(
      x.dims, pieces, n.params[slice ? specs::ops::kSliceAxis : specs::ops::kSplitAxis],
      slice ? n.params[specs::ops::kSliceStart] : 0, inputs[0]);
}

bool IsSpatialMean(const Graph& g, const Node& n) {
  if (!n.op || *n.op != OpKind::kReduceMean || n.inputs.size() != 1) return false;
  const auto* d = StaticDims(g.value(n.inputs[0]));
  return d && d->size() == 4 && n.params[specs::ops::kReduceMeanAxes] == 12;
}

std::optional<double> AnalyticLayoutCosts::KernelCostUs(const Graph& g, const Node& n,
                                                        std::span<const Layout> inputs,
                                                        std::span<const Layout> outputs) const {
  if (inputs.size() != n.inputs.size() || outputs.size() != n.outputs.size()) return std::nullopt;
  // The plain time, asked only for admissible combinations (most are refused by shape).
  auto scaled = [&](double factor) -> std::optional<double> {
    auto base = kernels_->OpTimeUs(NodeQuery(g, n));
    if (!base.ok()) return std::nullopt;
    return *base * factor;
  };
  // Layouts of the data slots: activation inputs (weights are the backend's business).
  const bool plain = AllPlain(outputs) && [&] {
    for (size_t k = 0; k < inputs.size(); ++k)
      if (!IsWeight(g, n.inputs[k]) && inputs[k] != Layout::kPlain) return false;
    return true;
  }();
  // A transpose that only renames the dimensions of its input's buffer (channels-last NCHW read
  // as NHWC, and back: ConvNeXt's and Swin's permutes around LayerNorm) runs as a view.
  if (n.op == OpKind::kTranspose && inputs.size() == 1 && outputs.size() == 1) {
    const auto* d = StaticDims(g.value(n.inputs[0]));
    const std::vector<int> perm = specs::DecodePerm(n.params[specs::ops::kTransposePerm]);
    if (d && specs::TransposeIsRelabeling(*d, inputs[0], perm, outputs[0])) return 0.0;
    // Otherwise a strided copy, from a plain or channels-last input into a plain output.
    if (outputs[0] != Layout::kPlain || (inputs[0] != Layout::kPlain && inputs[0] != Layout::kNHWC))
      return std::nullopt;
    return scaled(1);
  }
  // A slice that is a contiguous piece of its input (a channel split of one image, plain or on
  // whole blocks) is a view.
  if (SubTensorIsAView(g, n, inputs, outputs)) return 0.0;
  if (plain) return scaled(1);
  if (!n.op) return std::nullopt;  // opaque: plain only
  const OpKind op = *n.op;
  const Layout out = outputs.empty() ? Layout::kPlain : outputs[0];
  // Every data input (the output's shape) and every output in `out`; other activation inputs
  // (scalars, vectors) plain.
  auto uniform = [&]() {
    const Value& y = g.value(n.outputs[0]);
    for (Layout l : outputs)
      if (l != out) return false;
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (IsWeight(g, n.inputs[k]) || n.inputs[k] == kNoValue) continue;
      const Value& x = g.value(n.inputs[k]);
      bool data = x.dims == y.dims;
      if (data ? inputs[k] != out : inputs[k] != Layout::kPlain) return false;
    }
    return true;
  };
  switch (op) {
    case OpKind::kConv2d:
    case OpKind::kConv2dBias: {
      for (size_t k = 1; k < inputs.size(); ++k)
        if (inputs[k] != Layout::kPlain && !IsWeight(g, n.inputs[k])) return std::nullopt;
      auto f = ConvFactor(g, n, inputs[0], out);
      if (!f) return std::nullopt;
      return scaled(*f);
    }
    case OpKind::kPoolMax:
    case OpKind::kPoolAvg: {
      if (inputs[0] != out) return std::nullopt;
      double f = out == Layout::kNHWC                 ? kPoolNhwcFactor
                 : specs::LayoutChannelBlock(out) > 1 ? kPoolBlockedFactor
                                                      : 1.0;
      if (!IsImageLayout(out)) return std::nullopt;
      return scaled(f * PaddingWaste(g.value(n.inputs[0]), out));
    }
    case OpKind::kReduceMean: {
      if (!IsSpatialMean(g, n) || !AllPlain(outputs) || !IsImageLayout(inputs[0]))
        return std::nullopt;
      const int block = specs::LayoutChannelBlock(inputs[0]);
      if (block > 1 && Channels(g.value(n.inputs[0])) % block != 0) return std::nullopt;
      return scaled(inputs[0] == Layout::kNHWC ? kPoolNhwcFactor : kPoolBlockedFactor);
    }
    case OpKind::kBiasAdd:
    case OpKind::kChannelScale: {
      const Value& y = g.value(n.outputs[0]);
      const auto* d = StaticDims(y);
      const int64_t axis = op == OpKind::kBiasAdd ? n.params[specs::ops::kBiasAxis]
                                                  : n.params[specs::ops::kChannelScaleAxis];
      if (d && d->size() == 4 && axis != 1) return std::nullopt;
      [[fallthrough]];
    }
    case OpKind::kRelu:
    case OpKind::kSigmoid:
    case OpKind::kTanh:
    case OpKind::kEwAdd:
    case OpKind::kEwMul:
    case OpKind::kSmul:
    case OpKind::kBatchnorm:
      if (!uniform()) return std::nullopt;
      return scaled(PaddingWaste(g.value(n.outputs[0]), out));
    case OpKind::kSlice: {
      // A copy of the sub-tensor in its input's layout (the backend's CopySubTensor): any image
      // layout; a blocked one only where the channel offset and count are whole blocks.
      if (inputs.size() != 1 || outputs.size() != 1 || inputs[0] != out || !IsImageLayout(out))
        return std::nullopt;
      const int64_t in_c = Channels(g.value(n.inputs[0]));
      if (out != Layout::kPlain && in_c <= 0) return std::nullopt;
      const int64_t block = specs::LayoutChannelBlock(out);
      if (block > 1 && (in_c % block != 0 || Channels(g.value(n.outputs[0])) % block != 0 ||
                        (n.params[specs::ops::kSliceAxis] == 1 &&
                         n.params[specs::ops::kSliceStart] % block != 0)))
        return std::nullopt;
      return scaled(1);
    }
    case OpKind::kConcat:
    case OpKind::kSplit: {
      for (Layout l : outputs)
        if (l != out) return std::nullopt;
      for (size_t k = 0; k < inputs.size(); ++k)
        if (!IsWeight(g, n.inputs[k]) && inputs[k] != out) return std::nullopt;
      auto f = ChannelPartsFactor(g, n, out);
      if (!f) return std::nullopt;
      return scaled(*f);
    }
    case OpKind::kMatmul:
      if (out != Layout::kPlain) return std::nullopt;
      for (Layout l : inputs)
        if (l != Layout::kPlain && l != Layout::kColMajor) return std::nullopt;
      return scaled(1);
    default:
      // Elementwise operators of the set (relu6, silu, gelu, ...) run in any layout.
      if (!specs::GetOp(op).layouts.layout_agnostic || !uniform()) return std::nullopt;
      return scaled(PaddingWaste(g.value(n.outputs[0]), out));
  }
}

double AnalyticLayoutCosts::ConversionCostUs(const Value& value, Layout from, Layout to) const {
  if (from == to) return 0;
  const auto* d = StaticDims(value);
  double elements = d ? static_cast<double>(runtime::CountElements(*d)) : 0;
  int bytes = 4;
  switch (value.elem_type) {
    case runtime::kDouble:
    case runtime::kInt64:
      bytes = 8;
      break;
    case runtime::kFloat16:
    case runtime::kBfloat16:
      bytes = 2;
      break;
    default:
      break;
  }
  const double moved = elements * bytes * (PaddingWaste(value, from) + PaddingWaste(value, to));
  return moved / (device_.bandwidth_gbps * 1e3) + device_.launch_overhead_us;
}

}  // namespace verisub::rewriter
