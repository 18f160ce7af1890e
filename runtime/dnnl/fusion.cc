// Fusion planning: conv/matmul chains and nested concats (see fusion.h).
#include "runtime/dnnl/fusion.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>

#include "onnx/onnx_pb.h"
#include "runtime/canonicalize.h"
#include "runtime/onnx_kernels.h"
#include "runtime/scalar_constant.h"
#include "specs/ops/bias_add.h"
#include "specs/ops/channel_scale.h"
#include "specs/ops/concat.h"
#include "specs/ops/conv2d.h"
#include "specs/ops/elementwise.h"
#include "specs/ops/matmul.h"
#include "specs/ops/pad.h"

namespace verisub::runtime::dnnl_backend {
namespace {

using dnnl::algorithm;
using specs::OpKind;

bool Onnx(const Node& n, const char* type) {
  return n.opaque() && n.domain.empty() && n.op_type == type;
}

int64_t OpsetOf(const Graph& g) { return g.DefaultOpset(); }

// A multiplication of `x` by a one-element constant (spec smul, ONNX Mul, ONNX Div by it):
// the factor.
std::optional<float> ScaleOf(const Graph& g, const Node& n, int x) {
  if (n.outputs.size() != 1 || n.inputs.size() != 2) return std::nullopt;
  if (n.op == OpKind::kSmul && n.inputs[0] == x) return ScalarConstant(g, n.inputs[1]);
  if (Onnx(n, "Mul")) {
    if (n.inputs[0] == x) return ScalarConstant(g, n.inputs[1]);
    if (n.inputs[1] == x) return ScalarConstant(g, n.inputs[0]);
  }
  if (Onnx(n, "Div") && n.inputs[0] == x) {
    std::optional<float> c = ScalarConstant(g, n.inputs[1]);
    if (c && *c != 0.f) return 1.f / *c;
  }
  return std::nullopt;
}

bool Near(std::optional<float> v, double want) {
  return v && std::abs(*v - want) < 1e-4 * std::max(1.0, std::abs(want));
}

struct GeluMatch {
  std::vector<int> nodes;
  int output = kNoValue;
};

// PyTorch's export of GELU (erf form): ((erf(x / sqrt 2) + 1) * x) * 0.5, x read by the Div and
// the first Mul only.
std::optional<GeluMatch> MatchGelu(const Graph& g, int x,
                                   const std::vector<std::vector<int>>& readers,
                                   const std::vector<bool>& is_output,
                                   const std::vector<int>& group_of) {
  if (x == kNoValue || is_output[x] || readers[x].size() != 2) return std::nullopt;
  auto sole = [&](int v) { return is_output[v] || readers[v].size() != 1 ? -1 : readers[v][0]; };
  for (int first = 0; first < 2; ++first) {
    int d = readers[x][first], m1 = readers[x][1 - first];
    const Node& dn = g.node(d);
    if (!Near(ScaleOf(g, dn, x), 1.0 / std::sqrt(2.0))) continue;
    int e = sole(dn.outputs[0]);
    if (e < 0 || !Onnx(g.node(e), "Erf")) continue;
    int a = sole(g.node(e).outputs[0]);
    if (a < 0 || !Onnx(g.node(a), "Add") || g.node(a).inputs.size() != 2) continue;
    const Node& an = g.node(a);
    int erf_out = g.node(e).outputs[0];
    int one = an.inputs[0] == erf_out ? 1 : 0;
    if (an.inputs[1 - one] != erf_out || !Near(ScalarConstant(g, an.inputs[one]), 1.0)) continue;
    const Node& mn = g.node(m1);
    bool mul = mn.op == OpKind::kEwMul || Onnx(mn, "Mul");
    if (sole(an.outputs[0]) != m1 || !mul || mn.inputs.size() != 2 ||
        !((mn.inputs[0] == x && mn.inputs[1] == an.outputs[0]) ||
          (mn.inputs[1] == x && mn.inputs[0] == an.outputs[0])))
      continue;
    int m2 = sole(mn.outputs[0]);
    if (m2 < 0 || !Near(ScaleOf(g, g.node(m2), mn.outputs[0]), 0.5)) continue;
    GeluMatch m{{d, e, a, m1, m2}, g.node(m2).outputs[0]};
    bool free = true;
    for (int n : m.nodes) free &= group_of[n] < 0;
    if (free && g.value(x).dims == g.value(m.output).dims) return m;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<Eltwise>> SpecActivation(specs::Activation a) {
  using V = std::vector<Eltwise>;
  switch (a) {
    case specs::Activation::kNone:
      return V{};
    case specs::Activation::kRelu:
      return V{{algorithm::eltwise_relu}};
    case specs::Activation::kSigmoid:
      return V{{algorithm::eltwise_logistic}};
    case specs::Activation::kTanh:
      return V{{algorithm::eltwise_tanh}};
    case specs::Activation::kRelu6:
      return V{{algorithm::eltwise_clip_v2, 0.f, 6.f}};
    case specs::Activation::kHardSigmoid:  // x/6 + 1/2, clipped to [0, 1]
      return V{{algorithm::eltwise_linear, 1.f / 6.f, 0.5f},
               {algorithm::eltwise_clip_v2, 0.f, 1.f}};
    case specs::Activation::kHardSwish:
      return V{{algorithm::eltwise_hardswish}};
    case specs::Activation::kSilu:
      return V{{algorithm::eltwise_swish, 1.f}};
    case specs::Activation::kGelu:
      return V{{algorithm::eltwise_gelu_erf}};
    case specs::Activation::kGeluTanh:
      return V{{algorithm::eltwise_gelu_tanh}};
    case specs::Activation::kExp:
      return V{{algorithm::eltwise_exp}};
    case specs::Activation::kErf:  // no oneDNN eltwise
      return std::nullopt;
    case specs::Activation::kLog:
      return V{{algorithm::eltwise_log}};
    case specs::Activation::kSqrt:
      return V{{algorithm::eltwise_sqrt}};
    case specs::Activation::kRecip:  // x^-1
      return V{{algorithm::eltwise_pow, 1.f, -1.f}};
  }
  return std::nullopt;
}

bool IsConv(const Node& n) {
  return n.op == OpKind::kConv2d || n.op == OpKind::kConv2dBias || Onnx(n, "Conv");
}
bool IsMatmul(const Node& n) { return n.op == OpKind::kMatmul || Onnx(n, "MatMul"); }
bool IsConcat(const Node& n) { return n.op == OpKind::kConcat || Onnx(n, "Concat"); }

int ConcatAxis(const Graph& g, const Node& n) {
  if (n.outputs.empty() || n.outputs[0] == kNoValue) return -1;
  int64_t rank = static_cast<int64_t>(g.value(n.outputs[0]).dims.size());
  if (n.op == OpKind::kConcat) return static_cast<int>(n.params[specs::ops::kConcatAxis]);
  if (!Onnx(n, "Concat")) return -1;
  KernelContext ctx(*n.onnx, OpsetOf(g), {});
  auto axis = NormalizeAxis(ctx.AttrInt("axis", 0), rank, "Concat");
  return axis.ok() ? static_cast<int>(*axis) : -1;
}

std::optional<std::vector<Eltwise>> EltwiseOf(const Graph& g, const Node& n) {
  using V = std::vector<Eltwise>;
  if (n.op == OpKind::kNeg) return V{{algorithm::eltwise_linear, -1.f, 0.f}};
  if (n.op) {
    const std::optional<specs::Activation> a = specs::ops::UnaryActivation(*n.op);
    return a ? SpecActivation(*a) : std::nullopt;
  }
  if (!n.opaque() || !n.domain.empty() || n.outputs.size() != 1) return std::nullopt;
  KernelContext ctx(*n.onnx, OpsetOf(g), {});
  const std::string& t = n.op_type;
  if (t == "Relu") return V{{algorithm::eltwise_relu}};
  if (t == "Sigmoid") return V{{algorithm::eltwise_logistic}};
  if (t == "Tanh") return V{{algorithm::eltwise_tanh}};
  if (t == "Exp") return V{{algorithm::eltwise_exp}};
  if (t == "Log") return V{{algorithm::eltwise_log}};
  if (t == "Sqrt") return V{{algorithm::eltwise_sqrt}};
  if (t == "Abs") return V{{algorithm::eltwise_abs}};
  if (t == "Neg") return V{{algorithm::eltwise_linear, -1.f, 0.f}};
  if (t == "Softplus") return V{{algorithm::eltwise_soft_relu}};
  if (t == "Mish") return V{{algorithm::eltwise_mish}};
  if (t == "HardSwish") return V{{algorithm::eltwise_hardswish}};
  if (t == "LeakyRelu") return V{{algorithm::eltwise_relu, ctx.AttrFloat("alpha", 0.01f)}};
  if (t == "Elu") return V{{algorithm::eltwise_elu, ctx.AttrFloat("alpha", 1.f)}};
  if (t == "HardSigmoid")
    return V{{algorithm::eltwise_linear, ctx.AttrFloat("alpha", 0.2f), ctx.AttrFloat("beta", 0.5f)},
             {algorithm::eltwise_clip_v2, 0.f, 1.f}};
  if (t == "Clip") {
    float lo = -FLT_MAX, hi = FLT_MAX;
    if (g.DefaultOpset() < 11) {
      lo = ctx.AttrFloat("min", lo);
      hi = ctx.AttrFloat("max", hi);
    } else {
      for (size_t k = 1; k < n.inputs.size(); ++k) {
        if (n.inputs[k] == kNoValue) continue;
        auto c = ScalarConstant(g, n.inputs[k]);
        if (!c) return std::nullopt;
        (k == 1 ? lo : hi) = *c;
      }
    }
    return V{{algorithm::eltwise_clip_v2, lo, hi}};
  }
  return std::nullopt;
}

std::optional<FakeQuant> MatchFakeQuant(const Graph& g, int i,
                                        const std::vector<int>& sole_readers) {
  const Node& q = g.node(i);
  if (!Onnx(q, "QuantizeLinear") || q.outputs.size() != 1) return std::nullopt;
  const int r = sole_readers[q.outputs[0]];
  return r < 0 ? std::nullopt : FakeQuantOf(g, i, r);
}

std::optional<FakeQuant> FakeQuantOf(const Graph& g, int i, int r) {
  const Node& q = g.node(i);
  if (!Onnx(q, "QuantizeLinear") || q.inputs.size() < 2 || q.outputs.size() != 1 ||
      q.inputs[0] == kNoValue || g.value(q.inputs[0]).elem_type != kFloat ||
      g.value(q.inputs[0]).constant || !Onnx(g.node(r), "DequantizeLinear"))
    return std::nullopt;
  const Node& dq = g.node(r);
  if (dq.inputs.size() < 2 || dq.inputs[0] != q.outputs[0] || dq.outputs.size() != 1 ||
      g.value(dq.outputs[0]).elem_type != kFloat)
    return std::nullopt;
  // One scale and zero point (constants), the same on both sides.
  auto scalar = [&](const Node& n, size_t k) -> std::optional<double> {
    if (k >= n.inputs.size() || n.inputs[k] == kNoValue)
      return k == 2 ? 0.0 : std::optional<double>();
    const HostTensor* t = g.value(n.inputs[k]).constant.get();
    if (!t || t->NumElements() != 1) return std::nullopt;
    return t->DoubleAt(0);
  };
  auto zero_type = [&](const Node& n) {
    return n.inputs.size() > 2 && n.inputs[2] != kNoValue ? g.value(n.inputs[2]).elem_type : kUint8;
  };
  const std::optional<double> s = scalar(q, 1), z = scalar(q, 2), s2 = scalar(dq, 1),
                              z2 = scalar(dq, 2);
  const int32_t type = zero_type(q);
  if (!s || !z || !s2 || !z2 || *s != *s2 || *z != *z2 || type != zero_type(dq) ||
      (type != kUint8 && type != kInt8) || !(*s > 0) || !std::isfinite(1.0 / *s))
    return std::nullopt;
  FakeQuant f;
  f.quantize = i;
  f.dequantize = r;
  f.scale = static_cast<float>(*s);
  f.zero = static_cast<float>(*z);
  f.low = type == kUint8 ? 0.f : -128.f;
  f.high = type == kUint8 ? 255.f : 127.f;
  return f;
}

std::optional<FakeQuant> PairProducing(const Graph& g, const std::vector<int>& producers, int v) {
  if (v == kNoValue || v >= static_cast<int>(producers.size())) return std::nullopt;
  const int dq = producers[v];
  if (dq < 0 || g.node(dq).inputs.empty() || g.node(dq).inputs[0] == kNoValue) return std::nullopt;
  const int q = producers[g.node(dq).inputs[0]];
  return q < 0 ? std::nullopt : FakeQuantOf(g, q, dq);
}

std::vector<Eltwise> FakeQuant::Eltwises() const {
  // QuantizeLinear then DequantizeLinear: (saturate(round_half_even(x / scale) + zero) - zero) *
  // scale, the zero point taken out of the bounds instead (rounding is not shift-invariant by
  // an odd integer). x times the reciprocal may round a tie differently from x / scale, once in
  // a great while: one step on that element.
  return {{algorithm::eltwise_linear, 1.f / scale, 0.f},
          {algorithm::eltwise_round},
          {algorithm::eltwise_clip_v2, low - zero, high - zero},
          {algorithm::eltwise_linear, scale, 0.f}};
}

bool AppendEltwise(std::vector<PostOp>* ops, int node, Eltwise e) {
  auto conflicts = [&](const Eltwise& x) {
    for (const PostOp& op : *ops)
      if (op.kind == PostOp::kEltwise && op.eltwise.alg == x.alg &&
          (op.eltwise.alpha != x.alpha || op.eltwise.beta != x.beta))
        return true;
    return false;
  };
  if (conflicts(e)) {
    if (e.alg == algorithm::eltwise_linear && e.beta == 0.f)
      e = {algorithm::eltwise_pow, e.alpha, 1.f};  // alpha * x^1
    else if (e.alg == algorithm::eltwise_clip_v2)
      e.alg = algorithm::eltwise_clip;  // the same forward function
    else if (e.alg == algorithm::eltwise_clip)
      e.alg = algorithm::eltwise_clip_v2;
    if (conflicts(e)) return false;
  }
  ops->push_back({PostOp::kEltwise, node, {}, 0.f, e});
  return true;
}

bool AppendEltwises(std::vector<PostOp>* ops, int node, const std::vector<Eltwise>& es) {
  const size_t size = ops->size();
  for (const Eltwise& e : es)
    if (!AppendEltwise(ops, node, e)) {
      ops->resize(size);
      return false;
    }
  return true;
}

namespace {

// oneDNN 2.6 runs a matmul's gelu post-op in a reference loop: gelu stays a kernel of its own
// after a matmul.
bool IsGeluEltwise(const std::vector<Eltwise>& e) {
  for (const Eltwise& el : e)
    if (el.alg == algorithm::eltwise_gelu_erf || el.alg == algorithm::eltwise_gelu_tanh)
      return true;
  return false;
}

// A channel_scale and/or bias_add along one axis (scale first), then relu/clip/linear
// activations, each the sole reader of the one before: one pass in any layout
// ("pattern:channel_affine", channel_affine.cc).
std::optional<Group> MatchChannelAffine(const Graph& g, int i, const std::vector<int>& sole_readers,
                                        const std::vector<int>& group_of) {
  const Node& n = g.node(i);
  auto axis_of = [](const Node& m) -> std::optional<int64_t> {
    if (m.op == OpKind::kChannelScale) return m.params[specs::ops::kChannelScaleAxis];
    if (m.op == OpKind::kBiasAdd) return m.params[specs::ops::kBiasAxis];
    return std::nullopt;
  };
  const std::optional<int64_t> axis = axis_of(n);
  if (!axis || group_of[i] >= 0 || n.inputs.size() != 2 || n.outputs.size() != 1 ||
      n.inputs[0] == kNoValue || n.inputs[1] == kNoValue || n.outputs[0] == kNoValue)
    return std::nullopt;
  Group grp;
  grp.kernel_node = grp.last_node = i;
  grp.members = {i};
  grp.pattern = "pattern:channel_affine";
  const bool scale = n.op == OpKind::kChannelScale;
  grp.post_ops.push_back({scale ? PostOp::kScale : PostOp::kBias, i, {n.inputs[1]}});
  int tail = n.outputs[0];
  auto next = [&]() -> int {
    int r = sole_readers[tail];
    if (r < 0 || group_of[r] >= 0) return -1;
    const Node& rn = g.node(r);
    if (rn.outputs.size() != 1 || rn.outputs[0] == kNoValue || rn.inputs.empty() ||
        rn.inputs[0] != tail)
      return -1;
    return r;
  };
  if (int r = next(); scale && r >= 0 && g.node(r).op == OpKind::kBiasAdd &&
                      axis_of(g.node(r)) == axis && g.node(r).inputs.size() == 2 &&
                      g.node(r).inputs[1] != kNoValue) {
    grp.post_ops.push_back({PostOp::kBias, r, {g.node(r).inputs[1]}});
    grp.members.push_back(r);
    grp.last_node = r;
    tail = g.node(r).outputs[0];
  }
  for (int r = next(); r >= 0; r = next()) {
    auto e = EltwiseOf(g, g.node(r));
    if (!e || e->empty()) break;
    bool clamp = true;
    for (const Eltwise& el : *e)
      clamp &= el.alg == algorithm::eltwise_relu || el.alg == algorithm::eltwise_clip_v2 ||
               el.alg == algorithm::eltwise_linear;
    if (!clamp) break;
    for (const Eltwise& el : *e) grp.post_ops.push_back({PostOp::kEltwise, r, {}, 0.f, el});
    grp.members.push_back(r);
    grp.last_node = r;
    tail = g.node(r).outputs[0];
  }
  grp.output = tail;
  return grp;
}

}  // namespace

bool CutsAlongChannels(specs::Layout l) {
  return std::find(std::begin(kChannelCutLayouts), std::end(kChannelCutLayouts), l) !=
         std::end(kChannelCutLayouts);
}

namespace {

bool IsView(const Node& n) {
  return n.op == OpKind::kReshape || Onnx(n, "Reshape") || Onnx(n, "Flatten") ||
         Onnx(n, "Squeeze") || Onnx(n, "Unsqueeze");
}

// Group::concat_in_place, walking the concats in node order as the backend builds them (the
// mirror of ConcatInPlace in data.cc on the graph alone): a part is fresh when no other buffer
// holds it or is held by it (no earlier in-place concat took it, it is no view of another value
// and no value is a view of it, no convolution summed into its addend in place), and it is no
// constant, graph input or graph output.
void MarkConcatsInPlace(const Graph& g, const std::vector<int>& producer,
                        const std::vector<bool>& is_output,
                        const std::vector<std::vector<int>>& readers, FusionPlan& plan) {
  std::vector<bool> graph_input(g.num_values(), false);
  for (int v : g.inputs()) graph_input[v] = true;
  std::vector<int> order;
  for (int gi = 0; gi < static_cast<int>(plan.groups.size()); ++gi)
    if (IsConcat(g.node(plan.groups[gi].kernel_node))) order.push_back(gi);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return plan.groups[a].kernel_node < plan.groups[b].kernel_node; });
  std::vector<int> container(g.num_values(), -1);  // the concat whose buffer holds a value
  std::vector<const std::vector<int>*> parts(g.num_values(), nullptr);  // of an in-place concat
  auto root = [&](int v) {
    while (container[v] >= 0) v = container[v];
    return v;
  };
  auto summed_in_place = [&](int v) {
    const int p = producer[v];
    const int gi = p < 0 ? -1 : plan.group_of[p];
    if (gi < 0 || plan.groups[gi].output != v) return false;
    for (const PostOp& op : plan.groups[gi].post_ops)
      if (op.kind == PostOp::kSum) return true;
    return false;
  };
  for (int gi : order) {
    Group& grp = plan.groups[gi];
    const std::vector<int>& in = grp.concat_inputs;
    const Value& y = g.value(grp.output);
    if (in.empty() || ConcatAxis(g, g.node(grp.kernel_node)) != 1 || !y.StaticShape() ||
        y.dims.size() != 4 || y.dims[0] != 1)
      continue;
    size_t skip = 0;
    const int r = in[0] == kNoValue ? -1 : root(in[0]);
    if (r >= 0 && parts[r] && r != grp.output && parts[r]->size() < in.size() &&
        std::equal(parts[r]->begin(), parts[r]->end(), in.begin()) && !is_output[r])
      skip = parts[r]->size();
    bool fresh = true;
    for (size_t k = skip; fresh && k < in.size(); ++k) {
      const int v = in[k];
      fresh = v != kNoValue && !g.value(v).constant && !graph_input[v] && !is_output[v] &&
              g.value(v).dims.size() == 4 && container[v] < 0 && !parts[v] &&
              !(producer[v] >= 0 && IsView(g.node(producer[v]))) && !summed_in_place(v) &&
              std::find(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(k), v) ==
                  in.begin() + static_cast<std::ptrdiff_t>(k);
      if (fresh)
        for (int reader : readers[v]) fresh = fresh && !IsView(g.node(reader));
    }
    if (!fresh) continue;
    grp.concat_in_place = true;
    if (skip > 0) container[r] = grp.output;
    for (size_t k = skip; k < in.size(); ++k) container[in[k]] = grp.output;
    parts[grp.output] = &grp.concat_inputs;
  }
}

}  // namespace

namespace {

// The channel_scale node (axis 1, a run-time scale of one image) whose output only convolution
// `i` reads, when folding the scale into the convolution's constant weights on every run moves
// fewer bytes than scaling the input; else -1. Folding reads and writes the weights twice (the
// scaling, then the conversion to the kernel's layout), scaling reads and writes the input once:
// the weights must be at most a quarter of the input's elements (EfficientNet-B0's
// squeeze-excite blocks up to 28x28 fold; at 14x14, weights 0.4x the input, the two measured
// alike). Grouped convolutions keep the scale (a channel's weights are one group's).
int InputScaleToFold(const Graph& g, int i, const std::vector<int>& producer,
                     const std::vector<int>& sole_readers) {
  const Node& n = g.node(i);
  if (!IsConv(n) || n.inputs.size() < 2 || n.inputs[0] == kNoValue || n.inputs[1] == kNoValue ||
      sole_readers[n.inputs[0]] != i)
    return -1;
  const int p = producer[n.inputs[0]];
  if (p < 0) return -1;
  const Node& s = g.node(p);
  if (s.op != OpKind::kChannelScale || s.params[specs::ops::kChannelScaleAxis] != 1 ||
      s.inputs.size() != 2 || s.inputs[0] == kNoValue || s.inputs[1] == kNoValue)
    return -1;
  const Value& x = g.value(s.inputs[0]);
  const Value& scale = g.value(s.inputs[1]);
  const Value& w = g.value(n.inputs[1]);
  if (!w.constant || scale.constant || !x.StaticShape() || !w.StaticShape() || x.dims.size() != 4 ||
      x.dims[0] != 1 || w.dims.size() != 4 || w.dims[1] != x.dims[1] ||
      scale.dims != std::vector<int64_t>{x.dims[1]})
    return -1;
  int64_t x_elements = 1, w_elements = 1;
  for (int64_t d : x.dims) x_elements *= d;
  for (int64_t d : w.dims) w_elements *= d;
  return 4 * w_elements <= x_elements ? p : -1;
}

}  // namespace

FusionPlan PlanFusion(const Graph& g) {
  FusionPlan plan;
  plan.group_of.assign(g.num_nodes(), -1);
  std::vector<int> producer = g.Producers();
  std::vector<bool> is_output(g.num_values(), false);
  for (int v : g.outputs()) is_output[v] = true;
  std::vector<std::vector<int>> readers(g.num_values());
  for (int i = 0; i < g.num_nodes(); ++i)
    for (int v : g.node(i).inputs)
      if (v != kNoValue) readers[v].push_back(i);
  const std::vector<int> sole_readers = g.SoleReaders();
  auto sole_reader = [&](int v) { return sole_readers[v]; };

  // Nested concats along one axis merge into the outermost (found first walking backwards).
  for (int i = g.num_nodes() - 1; i >= 0; --i) {
    const Node& n = g.node(i);
    if (plan.group_of[i] >= 0 || !IsConcat(n)) continue;
    int axis = ConcatAxis(g, n);
    if (axis < 0) continue;
    Group grp;
    grp.kernel_node = grp.last_node = i;
    grp.output = n.outputs[0];
    grp.members.push_back(i);
    int gi = static_cast<int>(plan.groups.size());
    std::function<void(int)> expand = [&](int v) {
      int p = v == kNoValue ? -1 : producer[v];
      if (p >= 0 && plan.group_of[p] < 0 && IsConcat(g.node(p)) &&
          ConcatAxis(g, g.node(p)) == axis && sole_reader(v) >= 0) {
        plan.group_of[p] = gi;
        grp.members.push_back(p);
        for (int u : g.node(p).inputs) expand(u);
      } else {
        grp.concat_inputs.push_back(v);
      }
    };
    plan.group_of[i] = gi;
    for (int u : n.inputs) expand(u);
    plan.groups.push_back(std::move(grp));
  }

  // Convolutions whose input a run-time per-channel scale makes (squeeze-excite's gate): the
  // scale is folded into their weights on every run where the weights are the smaller tensor.
  std::vector<int> input_scale_of(g.num_nodes(), -1);  // per convolution: the channel_scale node
  std::vector<char> scales_a_conv(g.num_nodes(), 0);   // per node: folded into a convolution
  for (int i = 0; i < g.num_nodes(); ++i) {
    const int p = InputScaleToFold(g, i, producer, sole_readers);
    if (p < 0) continue;
    input_scale_of[i] = p;
    scales_a_conv[p] = 1;
  }

  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    if (scales_a_conv[i]) continue;  // its convolution's group takes it
    bool conv = IsConv(n), mm = IsMatmul(n);
    if (plan.group_of[i] < 0 && !n.inputs.empty()) {
      auto gelu = MatchGelu(g, n.inputs[0], readers, is_output, plan.group_of);
      if (gelu && gelu->nodes[0] == i) {
        Group grp;
        grp.kernel_node = i;
        grp.last_node = gelu->nodes.back();
        grp.output = gelu->output;
        grp.members = gelu->nodes;
        grp.pattern = "pattern:gelu";
        for (int m : gelu->nodes) plan.group_of[m] = static_cast<int>(plan.groups.size());
        plan.groups.push_back(std::move(grp));
        continue;
      }
    }
    if (plan.group_of[i] < 0 && Onnx(n, "DynamicQuantizeLinear") && n.inputs.size() == 1 &&
        n.outputs.size() == 3) {
      // Its three outputs read only by one DequantizeLinear (a dynamically quantized
      // convolution's input, canonicalize.cc RewriteConvInteger): one range-and-round pass.
      const int r = sole_readers[n.outputs[0]];
      if (r >= 0 && plan.group_of[r] < 0 && Onnx(g.node(r), "DequantizeLinear") &&
          g.node(r).inputs == n.outputs && sole_readers[n.outputs[1]] == r &&
          sole_readers[n.outputs[2]] == r && g.node(r).outputs.size() == 1 &&
          g.value(n.inputs[0]).elem_type == kFloat) {
        Group grp;
        grp.kernel_node = i;
        grp.last_node = r;
        grp.output = g.node(r).outputs[0];
        grp.members = {i, r};
        grp.pattern = "pattern:dynamic_fake_quant";
        plan.group_of[i] = plan.group_of[r] = static_cast<int>(plan.groups.size());
        plan.groups.push_back(std::move(grp));
        continue;
      }
    }
    if (plan.group_of[i] < 0) {
      if (auto fq = MatchFakeQuant(g, i, sole_readers); fq && plan.group_of[fq->dequantize] < 0) {
        Group grp;
        grp.kernel_node = i;
        grp.last_node = fq->dequantize;
        grp.output = g.node(fq->dequantize).outputs[0];
        grp.members = {i, fq->dequantize};
        grp.pattern = "pattern:fake_quant";
        plan.group_of[i] = plan.group_of[fq->dequantize] = static_cast<int>(plan.groups.size());
        plan.groups.push_back(std::move(grp));
        continue;
      }
    }
    if (auto affine = MatchChannelAffine(g, i, sole_readers, plan.group_of)) {
      for (int m : affine->members) plan.group_of[m] = static_cast<int>(plan.groups.size());
      plan.groups.push_back(std::move(*affine));
      continue;
    }
    // A zero Pad before a convolution or an average pool becomes the window's padding; so does
    // a spec pad of edge copies before a max pool (oneDNN's max skips padding: the same maximum).
    int pad_node = -1;
    std::optional<std::vector<int64_t>> extra;
    bool avg = n.op == OpKind::kPoolAvg || Onnx(n, "AveragePool");
    bool max_pool = n.op == OpKind::kPoolMax;
    if (plan.group_of[i] < 0 && (conv || avg || max_pool) && !n.inputs.empty() &&
        n.inputs[0] != kNoValue) {
      int p = producer[n.inputs[0]];
      if (p >= 0 && plan.group_of[p] < 0 && sole_reader(n.inputs[0]) == i &&
          g.value(n.inputs[0]).dims.size() == 4) {
        extra = max_pool ? SpecPads(g.node(p), specs::ops::PadMode::kEdge)
                         : ZeroSpatialPads(g, g.node(p));
        if (extra) pad_node = p;
      }
    }
    if ((avg || max_pool) && pad_node >= 0) {
      Group grp;
      grp.kernel_node = grp.last_node = i;
      grp.output = n.outputs[0];
      grp.members = {i, pad_node};
      grp.pad_input = g.node(pad_node).inputs[0];
      grp.extra_pads = *extra;
      plan.group_of[i] = plan.group_of[pad_node] = static_cast<int>(plan.groups.size());
      plan.groups.push_back(std::move(grp));
      continue;
    }
    if (plan.group_of[i] >= 0 || (!conv && !mm) || n.outputs.size() != 1) continue;
    std::optional<std::vector<Eltwise>> act;
    if (n.op) {
      act = SpecActivation(static_cast<specs::Activation>(
          n.params[conv ? specs::ops::kConvActivation : specs::ops::kMatmulActivation]));
      if (!act) continue;  // the kernel refuses it (SpecActivation)
    }
    Group grp;
    grp.kernel_node = grp.last_node = i;
    grp.members.push_back(i);
    int gi = static_cast<int>(plan.groups.size());
    plan.group_of[i] = gi;
    if (pad_node >= 0) {
      grp.members.push_back(pad_node);
      plan.group_of[pad_node] = gi;
      grp.pad_input = g.node(pad_node).inputs[0];
      grp.extra_pads = *extra;
    }
    if (const int p = input_scale_of[i]; p >= 0) {
      grp.members.push_back(p);
      plan.group_of[p] = gi;
      grp.scaled_input = g.node(p).inputs[0];
      grp.input_scale = g.node(p).inputs[1];
    }
    bool has_act = false, has_sum = false;
    if (n.op) {
      AppendEltwises(&grp.post_ops, i, *act);  // one function: no repeat
      has_act = !act->empty();
    }
    int tail = n.outputs[0];
    const size_t rank = g.value(tail).dims.size();
    // The functions node `m` applies to `x` as eltwise post-ops: a scale by a constant (linear),
    // or an activation (a matmul's gelu excepted).
    auto EltwisesAfter = [&](int x, const Node& m) -> std::optional<std::vector<Eltwise>> {
      if (auto scale = ScaleOf(g, m, x))
        return std::vector<Eltwise>{{algorithm::eltwise_linear, *scale, 0.f}};
      auto e = EltwiseOf(g, m);
      if (e && m.inputs[0] == x && (conv || !IsGeluEltwise(*e))) return e;
      return std::nullopt;
    };
    for (;;) {
      // oneDNN 2.6 applies a matmul's gelu_erf post-op in a reference loop (measured on BERT's
      // FFN: 2x the matmul); its jit eltwise kernel is far faster, so only convolutions absorb it.
      auto gelu = conv ? MatchGelu(g, tail, readers, is_output, plan.group_of) : std::nullopt;
      if (gelu && AppendEltwise(&grp.post_ops, gelu->nodes.back(), {algorithm::eltwise_gelu_erf})) {
        for (int m : gelu->nodes) {
          grp.members.push_back(m);
          plan.group_of[m] = gi;
        }
        has_act = true;
        grp.last_node = gelu->nodes.back();
        tail = gelu->output;
        continue;
      }
      int r = sole_reader(tail);
      if (r < 0 || plan.group_of[r] >= 0) break;
      const Node& rn = g.node(r);
      if (rn.outputs.size() != 1 || rn.outputs[0] == kNoValue) break;
      auto is_const = [&](size_t k) {
        return k < rn.inputs.size() && rn.inputs[k] != kNoValue && g.value(rn.inputs[k]).constant;
      };
      PostOp op;
      op.kind = PostOp::kEltwise;
      op.node = r;
      if (rn.op == OpKind::kBiasAdd && rn.inputs[0] == tail && is_const(1) && !has_act &&
          !has_sum &&
          rn.params[specs::ops::kBiasAxis] == (conv ? 1 : static_cast<int64_t>(rank) - 1)) {
        op.kind = PostOp::kBias;
        op.operands = {rn.inputs[1]};
      } else if (rn.op == OpKind::kChannelScale && rn.inputs[0] == tail && is_const(1) &&
                 !has_act && !has_sum && n.inputs.size() > 1 && n.inputs[1] != kNoValue &&
                 g.value(n.inputs[1]).constant &&
                 rn.params[specs::ops::kChannelScaleAxis] ==
                     (conv ? 1 : static_cast<int64_t>(rank) - 1)) {
        // Folded into the kernel's constant weights (output channels, matmul columns) and bias,
        // as batchnorm is.
        op.kind = PostOp::kScale;
        op.operands = {rn.inputs[1]};
      } else if (conv && !has_act && !has_sum && rn.inputs[0] == tail &&
                 (rn.op == OpKind::kBatchnorm ||
                  (Onnx(rn, "BatchNormalization") && rn.inputs.size() == 5)) &&
                 is_const(1) && is_const(2) && is_const(3) && is_const(4)) {
        op.kind = PostOp::kBatchnorm;
        op.operands = {rn.inputs[1], rn.inputs[2], rn.inputs[3], rn.inputs[4]};
        if (rn.op) {
          op.epsilon = static_cast<float>(specs::DecodeFloat(rn.params[0]));
        } else {
          KernelContext ctx(*rn.onnx, OpsetOf(g), {});
          if (ctx.AttrInt("training_mode", 0) != 0) break;
          op.epsilon = ctx.AttrFloat("epsilon", 1e-5f);
        }
      } else if (auto fq = MatchFakeQuant(g, r, sole_readers);
                 fq && rn.inputs[0] == tail && plan.group_of[fq->dequantize] < 0) {
        // A QuantizeLinear and the DequantizeLinear reading it (a QDQ model's activations):
        // their arithmetic as eltwise post-ops, no 8-bit value in between.
        if (!AppendEltwises(&grp.post_ops, r, fq->Eltwises())) {
          // After a convolution's residual add: the group's last step (trailing_quantize).
          if (!conv || !has_sum) break;
          grp.trailing_quantize = r;
          for (int m : {r, fq->dequantize}) {
            grp.members.push_back(m);
            plan.group_of[m] = gi;
          }
          grp.last_node = fq->dequantize;
          tail = g.node(fq->dequantize).outputs[0];
          break;
        }
        has_act = true;
        for (int m : {r, fq->dequantize}) {
          grp.members.push_back(m);
          plan.group_of[m] = gi;
        }
        grp.last_node = fq->dequantize;
        tail = g.node(fq->dequantize).outputs[0];
        continue;
      } else if (auto e = EltwisesAfter(tail, rn)) {
        if (!AppendEltwises(&grp.post_ops, r, *e)) break;
        has_act = true;
        grp.members.push_back(r);
        plan.group_of[r] = gi;
        grp.last_node = r;
        tail = rn.outputs[0];
        continue;
      } else if (!has_sum && (rn.op == OpKind::kEwAdd || Onnx(rn, "Add")) &&
                 rn.inputs.size() == 2) {
        int other = rn.inputs[0] == tail ? rn.inputs[1] : rn.inputs[0];
        if (other == tail || other == kNoValue || g.value(other).constant ||
            g.value(other).dims != g.value(tail).dims ||
            g.value(rn.outputs[0]).dims != g.value(tail).dims || g.value(other).elem_type != kFloat)
          break;
        op.kind = PostOp::kSum;
        op.operands = {other};
        has_sum = true;
      } else {
        break;
      }
      grp.post_ops.push_back(op);
      grp.members.push_back(r);
      plan.group_of[r] = gi;
      grp.last_node = r;
      tail = rn.outputs[0];
    }
    grp.output = tail;
    plan.groups.push_back(std::move(grp));
  }
  MarkConcatsInPlace(g, producer, is_output, readers, plan);
  return plan;
}

FusionPlan Unfused(const Graph& g, FusionPlan plan) {
  FusionPlan out;
  out.group_of.assign(g.num_nodes(), -1);
  for (Group& grp : plan.groups) {
    if (grp.members.size() > 1 && grp.pattern == "pattern:gelu") continue;  // node by node
    Group one;
    one.kernel_node = one.last_node = grp.kernel_node;
    one.members = {grp.kernel_node};
    const Node& n = g.node(grp.kernel_node);
    if (n.outputs.empty()) continue;
    one.output = n.outputs[0];
    one.pattern = grp.pattern;
    for (const PostOp& op : grp.post_ops)
      if (op.node == grp.kernel_node) one.post_ops.push_back(op);
    if (!grp.concat_inputs.empty()) one.concat_inputs = n.inputs;
    out.group_of[grp.kernel_node] = static_cast<int>(out.groups.size());
    out.groups.push_back(std::move(one));
  }
  return out;
}

}  // namespace verisub::runtime::dnnl_backend
