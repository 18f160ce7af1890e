// Mapping of opaque ONNX nodes onto spec operators (exact semantics only).
#include "runtime/op_mapping.h"

#include <numeric>

#include "onnx/onnx_pb.h"
#include "runtime/onnx_kernels.h"
#include "specs/evaluate.h"
#include "specs/ops/batchnorm.h"
#include "specs/ops/bias_add.h"
#include "specs/ops/concat.h"
#include "specs/ops/conv2d.h"
#include "specs/ops/matmul.h"
#include "specs/ops/pooling.h"
#include "specs/ops/reshape.h"
#include "specs/ops/split.h"
#include "specs/ops/transpose.h"
#include "specs/registry.h"

namespace verisub::runtime {
namespace {

using specs::OpKind;
namespace ops = specs::ops;

bool FloatStatic(const Value& v) {
  return (v.elem_type == kFloat || v.elem_type == kDouble) && v.spec_type.has_value();
}

std::optional<specs::TensorType> LeafTypeOf(const Value& v) {
  if (!v.StaticShape() || v.dims.size() > static_cast<size_t>(specs::kMaxRank)) return {};
  for (int64_t d : v.dims)
    if (d <= 0) return {};
  auto s = specs::Shape::FromVector(v.dims);
  if (!s.ok()) return {};
  return specs::TensorType(*s);
}

// Window geometry of a Conv or pool node, decided per spatial dimension: "same" when both pads
// are (k-1)/2 for an odd k, "valid" when both are zero.
std::optional<specs::Padding> WindowPadding(const KernelContext& ctx,
                                            const std::vector<int64_t>& in_hw,
                                            const std::vector<int64_t>& k,
                                            const std::vector<int64_t>& strides) {
  size_t r = k.size();
  std::vector<int64_t> pads = ctx.AttrInts("pads");
  std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    pads.assign(2 * r, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    pads.assign(2 * r, 0);
    for (size_t d = 0; d < r; ++d) {
      int64_t out = (in_hw[d] + strides[d] - 1) / strides[d];
      int64_t total = std::max<int64_t>(0, (out - 1) * strides[d] + k[d] - in_hw[d]);
      int64_t small = total / 2, big = total - small;
      pads[d] = auto_pad == "SAME_UPPER" ? small : big;
      pads[d + r] = auto_pad == "SAME_UPPER" ? big : small;
    }
  } else if (auto_pad != "NOTSET") {
    return std::nullopt;
  }
  if (pads.empty()) pads.assign(2 * r, 0);
  if (pads.size() != 2 * r) return std::nullopt;
  bool valid = true, same = true;
  for (size_t d = 0; d < r; ++d) {
    valid &= pads[d] == 0 && pads[d + r] == 0;
    same &= k[d] % 2 == 1 && pads[d] == (k[d] - 1) / 2 && pads[d + r] == (k[d] - 1) / 2;
  }
  if (valid) return specs::Padding::kValid;
  if (same) return specs::Padding::kSame;
  return std::nullopt;
}

bool AllOnes(const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x != 1) return false;
  return true;
}

// Builds the replacement of one node. Spec nodes are type-checked as they are added; Commit
// accepts the replacement only if the final outputs match the shapes ONNX inferred.
class Replacement {
 public:
  Replacement(Graph* g, const Node& orig) : g_(g), orig_(orig) {}

  bool failed() const { return failed_; }
  void Fail() { failed_ = true; }

  int NewValue(int32_t elem_type) {
    Value v;
    v.name = g_->UniqueName(orig_.name);
    v.elem_type = elem_type;
    return g_->AddValue(std::move(v));
  }

  int NewWeight(HostTensor t) {
    Value v;
    v.name = g_->UniqueName(orig_.name + "_w");
    v.elem_type = t.elem_type;
    v.dims = t.dims;
    v.rank_known = true;
    v.spec_type = LeafTypeOf(v);
    v.constant = std::make_shared<const HostTensor>(std::move(t));
    return g_->AddValue(std::move(v));
  }

  // Adds a spec node writing `outputs` (new values or the original node's outputs).
  void Add(OpKind kind, const specs::Params& p, std::vector<int> inputs, std::vector<int> outputs) {
    if (failed_) return;
    const specs::TensorType* in[specs::kMaxOpInputs];
    for (size_t k = 0; k < inputs.size(); ++k) {
      const auto& t = g_->value(inputs[k]).spec_type;
      if (!t) {
        failed_ = true;
        return;
      }
      in[k] = &*t;
    }
    specs::TensorType out[specs::kMaxOpOutputs];
    if (!specs::InferTypes(kind, p, in, out).ok()) {
      failed_ = true;
      return;
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      int v = outputs[k];
      if (IsOriginalOutput(v)) {
        const Value& val = g_->value(v);
        if (!val.StaticShape() || val.dims != out[k].shape.ToVector()) {
          failed_ = true;
          return;
        }
        pending_types_.push_back({v, out[k]});
      } else {
        Value& val = g_->mutable_value(v);
        val.dims = out[k].shape.ToVector();
        val.rank_known = true;
        val.spec_type = out[k];
      }
    }
    Node n;
    n.name = orig_.name + (nodes_.empty() ? "" : "_" + std::to_string(nodes_.size()));
    n.op = kind;
    n.params = p;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    nodes_.push_back(std::make_shared<const Node>(std::move(n)));
  }

  // On success, sets the original outputs' spec types and returns the new nodes.
  std::optional<std::vector<std::shared_ptr<const Node>>> Commit() {
    if (failed_ || nodes_.empty()) return std::nullopt;
    for (auto& [v, t] : pending_types_) g_->mutable_value(v).spec_type = t;
    return std::move(nodes_);
  }

 private:
  bool IsOriginalOutput(int v) const {
    return std::find(orig_.outputs.begin(), orig_.outputs.end(), v) != orig_.outputs.end();
  }

  Graph* g_;
  const Node& orig_;
  bool failed_ = false;
  std::vector<std::shared_ptr<const Node>> nodes_;
  std::vector<std::pair<int, specs::TensorType>> pending_types_;
};

specs::Params Defaults(OpKind kind) { return specs::GetOp(kind).DefaultParams(); }

class Mapper {
 public:
  explicit Mapper(Graph* g) : g_(g) {}

  Status Run() {
    std::vector<std::shared_ptr<const Node>> nodes = g_->nodes();
    std::vector<int> producer = g_->Producers();
    for (int v = 0; v < g_->num_values(); ++v)
      if (producer[v] < 0) g_->mutable_value(v).spec_type = LeafTypeOf(g_->value(v));
    std::vector<std::shared_ptr<const Node>> out;
    for (const auto& np : nodes) {
      const Node& n = *np;
      if (n.opaque() && n.domain.empty() && n.op_type == "Identity" && RemoveIdentity(n)) continue;
      std::optional<std::vector<std::shared_ptr<const Node>>> mapped;
      if (n.opaque() && n.domain.empty() && OutputsStatic(n)) mapped = Map(n);
      if (mapped) {
        for (auto& m : *mapped) out.push_back(std::move(m));
        continue;
      }
      for (int o : n.outputs)
        if (o != kNoValue) g_->mutable_value(o).spec_type = LeafTypeOf(g_->value(o));
      out.push_back(np);
    }
    g_->SetNodes(std::move(out));
    for (const auto& [from, to] : renames_) g_->ReplaceUses(from, to);
    g_->RemoveDeadCode();
    return Status::Ok();
  }

 private:
  bool OutputsStatic(const Node& n) const {
    for (int o : n.outputs)
      if (o != kNoValue && !LeafTypeOf(g_->value(o))) return false;
    return !n.outputs.empty();
  }

  // Identity is dropped by rewiring its readers to its input. When its output is a graph
  // output, the input takes over the output's name unless the input is itself a graph input,
  // a graph output or a weight (then the Identity stays).
  bool RemoveIdentity(const Node& n) {
    if (n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] == kNoValue) return false;
    int in = Resolve(n.inputs[0]), out = n.outputs[0];
    const auto& outs = g_->outputs();
    bool out_is_graph_output = std::find(outs.begin(), outs.end(), out) != outs.end();
    if (out_is_graph_output) {
      const auto& ins = g_->inputs();
      if (std::find(ins.begin(), ins.end(), in) != ins.end() ||
          std::find(outs.begin(), outs.end(), in) != outs.end() || g_->value(in).constant)
        return false;
      std::string name = g_->value(out).name;
      g_->mutable_value(out).name = g_->UniqueName(name);
      g_->mutable_value(in).name = name;
    }
    renames_.push_back({out, in});
    return true;
  }

  int Resolve(int v) const {
    for (const auto& [from, to] : renames_)
      if (from == v) return to;
    return v;
  }

  const Value& In(const Node& n, size_t k) const { return g_->value(Resolve(n.inputs[k])); }
  int InId(const Node& n, size_t k) const { return Resolve(n.inputs[k]); }
  bool Present(const Node& n, size_t k) const {
    return k < n.inputs.size() && n.inputs[k] != kNoValue;
  }
  bool InputsFloatStatic(const Node& n, size_t count) const {
    if (n.inputs.size() < count) return false;
    for (size_t k = 0; k < count; ++k)
      if (!Present(n, k) || !FloatStatic(In(n, k))) return false;
    return true;
  }
  int SingleOutput(const Node& n) const {
    int count = 0, out = kNoValue;
    for (int o : n.outputs)
      if (o != kNoValue) ++count, out = o;
    return count == 1 && n.outputs[0] != kNoValue ? out : kNoValue;
  }

  std::optional<std::vector<std::shared_ptr<const Node>>> Map(const Node& n) {
    // The readers of n still name the original input ids; rewrite them through renames first.
    Node node = n;
    for (int& v : node.inputs)
      if (v != kNoValue) v = Resolve(v);
    KernelContext ctx(*n.onnx, g_->DefaultOpset(), {});
    Replacement r(g_, node);
    const std::string& t = n.op_type;
    if (t == "Relu" || t == "Sigmoid" || t == "Tanh") {
      if (!InputsFloatStatic(node, 1) || SingleOutput(node) == kNoValue) return {};
      OpKind k = t == "Relu" ? OpKind::kRelu : t == "Sigmoid" ? OpKind::kSigmoid : OpKind::kTanh;
      r.Add(k, Defaults(k), {node.inputs[0]}, {node.outputs[0]});
    } else if (t == "Conv") {
      MapConv(node, ctx, &r);
    } else if (t == "MatMul") {
      if (!InputsFloatStatic(node, 2)) return {};
      r.Add(OpKind::kMatmul, Defaults(OpKind::kMatmul), {node.inputs[0], node.inputs[1]},
            {node.outputs[0]});
    } else if (t == "Gemm") {
      MapGemm(node, ctx, &r);
    } else if (t == "Add" || t == "Mul") {
      MapBinary(node, t == "Add", &r);
    } else if (t == "Transpose") {
      if (!InputsFloatStatic(node, 1)) return {};
      std::vector<int64_t> perm = ctx.AttrInts("perm");
      int rank = static_cast<int>(In(node, 0).dims.size());
      if (perm.empty())
        for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
      if (static_cast<int>(perm.size()) != rank) return {};
      std::vector<int> p(perm.begin(), perm.end());
      std::vector<int> sorted = p;
      std::sort(sorted.begin(), sorted.end());
      for (int d = 0; d < rank; ++d)
        if (sorted[d] != d) return {};
      specs::Params params = Defaults(OpKind::kTranspose);
      params[ops::kTransposePerm] = specs::EncodePerm(p);
      r.Add(OpKind::kTranspose, params, {node.inputs[0]}, {node.outputs[0]});
    } else if (t == "Concat") {
      MapConcat(node, ctx, &r);
    } else if (t == "Split") {
      MapSplit(node, ctx, &r);
    } else if (t == "MaxPool" || t == "AveragePool") {
      MapPool(node, ctx, t == "MaxPool", &r);
    } else if (t == "GlobalAveragePool" || t == "GlobalMaxPool") {
      if (!InputsFloatStatic(node, 1) || In(node, 0).dims.size() != 4) return {};
      bool max = t == "GlobalMaxPool";
      OpKind k = max ? OpKind::kPoolMax : OpKind::kPoolAvg;
      specs::Params p = Defaults(k);
      p[ops::kPoolKernelH] = In(node, 0).dims[2];
      p[ops::kPoolKernelW] = In(node, 0).dims[3];
      p[ops::kPoolStrideH] = p[ops::kPoolStrideW] = 1;
      p[ops::kPoolPadding] = static_cast<int64_t>(specs::Padding::kValid);
      p[ops::kPoolActivation] = static_cast<int64_t>(specs::Activation::kNone);
      r.Add(k, p, {node.inputs[0]}, {node.outputs[0]});
    } else if (t == "Reshape" || t == "Flatten") {
      if (!InputsFloatStatic(node, 1) || SingleOutput(node) == kNoValue) return {};
      const Value& out = g_->value(node.outputs[0]);
      specs::Params p = Defaults(OpKind::kReshape);
      p[ops::kReshapeShape] = static_cast<int64_t>(out.dims.size());
      for (size_t d = 0; d < out.dims.size(); ++d) p[ops::kReshapeShape + 1 + d] = out.dims[d];
      r.Add(OpKind::kReshape, p, {node.inputs[0]}, {node.outputs[0]});
    } else if (t == "BatchNormalization") {
      if (!InputsFloatStatic(node, 5) || SingleOutput(node) == kNoValue) return {};
      if (ctx.AttrInt("training_mode", 0) != 0 || ctx.AttrInt("spatial", 1) != 1) return {};
      specs::Params p = Defaults(OpKind::kBatchnorm);
      p[ops::kBatchnormEpsilon] = specs::EncodeFloat(ctx.AttrFloat("epsilon", 1e-5f));
      r.Add(OpKind::kBatchnorm, p, {node.inputs.begin(), node.inputs.begin() + 5},
            {node.outputs[0]});
    } else {
      return {};
    }
    return r.Commit();
  }

  void MapConv(const Node& n, const KernelContext& ctx, Replacement* r) {
    if (!InputsFloatStatic(n, 2) || SingleOutput(n) == kNoValue) return Fail(r);
    const Value &x = In(n, 0), &w = In(n, 1);
    if (x.dims.size() != 4 || w.dims.size() != 4) return Fail(r);
    std::vector<int64_t> k = {w.dims[2], w.dims[3]};
    std::vector<int64_t> ks = ctx.AttrInts("kernel_shape");
    if (!ks.empty() && ks != k) return Fail(r);
    std::vector<int64_t> dil = ctx.AttrInts("dilations");
    if (!dil.empty() && !AllOnes(dil)) return Fail(r);
    std::vector<int64_t> strides = ctx.AttrInts("strides");
    if (strides.empty()) strides = {1, 1};
    if (strides.size() != 2) return Fail(r);
    auto pad = WindowPadding(ctx, {x.dims[2], x.dims[3]}, k, strides);
    if (!pad) return Fail(r);
    int64_t group = ctx.AttrInt("group", 1);
    specs::Params p = Defaults(OpKind::kConv2d);
    p[ops::kConvStrideH] = strides[0];
    p[ops::kConvStrideW] = strides[1];
    p[ops::kConvPadding] = static_cast<int64_t>(*pad);
    p[ops::kConvActivation] = static_cast<int64_t>(specs::Activation::kNone);
    p[ops::kConvGroup] = group > 1 && group == x.dims[1] && w.dims[1] == 1 ? specs::kDepthwiseGroup
                                                                            : group;
    bool bias = Present(n, 2);
    if (bias && (!FloatStatic(In(n, 2)) || In(n, 2).dims.size() != 1)) return Fail(r);
    int conv_out = bias ? r->NewValue(x.elem_type) : n.outputs[0];
    r->Add(OpKind::kConv2d, p, {n.inputs[0], n.inputs[1]}, {conv_out});
    if (bias) AddBias(r, conv_out, n.inputs[2], 1, n.outputs[0]);
  }

  void AddBias(Replacement* r, int x, int b, int axis, int out) {
    specs::Params p = Defaults(OpKind::kBiasAdd);
    p[ops::kBiasAxis] = axis;
    r->Add(OpKind::kBiasAdd, p, {x, b}, {out});
  }

  static void Fail(Replacement* r) { r->Fail(); }

  void MapGemm(const Node& n, const KernelContext& ctx, Replacement* r) {
    if (!InputsFloatStatic(n, 2) || SingleOutput(n) == kNoValue) return Fail(r);
    bool has_c = Present(n, 2);
    if (ctx.AttrFloat("alpha", 1.0f) != 1.0f || (has_c && ctx.AttrFloat("beta", 1.0f) != 1.0f))
      return Fail(r);
    int a = n.inputs[0], b = n.inputs[1];
    int32_t et = In(n, 0).elem_type;
    auto transpose = [&](int v) {
      specs::Params p = Defaults(OpKind::kTranspose);
      p[ops::kTransposePerm] = specs::EncodePerm({1, 0});
      int t = r->NewValue(et);
      r->Add(OpKind::kTranspose, p, {v}, {t});
      return t;
    };
    if (ctx.AttrInt("transA", 0)) a = transpose(a);
    if (ctx.AttrInt("transB", 0)) b = transpose(b);
    if (!has_c) return r->Add(OpKind::kMatmul, Defaults(OpKind::kMatmul), {a, b}, {n.outputs[0]});
    const Value& c = In(n, 2);
    const Value& y = g_->value(n.outputs[0]);
    if (!FloatStatic(c) || y.dims.size() != 2) return Fail(r);
    int mm = r->NewValue(et);
    r->Add(OpKind::kMatmul, Defaults(OpKind::kMatmul), {a, b}, {mm});
    if (c.dims == y.dims) {
      r->Add(OpKind::kEwAdd, Defaults(OpKind::kEwAdd), {mm, n.inputs[2]}, {n.outputs[0]});
    } else if (c.dims == std::vector<int64_t>{y.dims[1]}) {
      AddBias(r, mm, n.inputs[2], 1, n.outputs[0]);
    } else if (c.dims == std::vector<int64_t>{1, y.dims[1]}) {
      AddBias(r, mm, AsVector(r, n.inputs[2], y.dims[1]), 1, n.outputs[0]);
    } else {
      Fail(r);
    }
  }

  // A rank-1 view of a value with `size` elements: the weight itself reshaped (new weight
  // sharing nothing but small), or a reshape node.
  int AsVector(Replacement* r, int v, int64_t size) { return Reshaped(r, v, {size}); }

  int Reshaped(Replacement* r, int v, std::vector<int64_t> dims) {
    const Value& val = g_->value(v);
    if (val.dims == dims) return v;
    if (val.constant) {
      HostTensor t = *val.constant;
      t.dims = dims;
      return r->NewWeight(std::move(t));
    }
    specs::Params p = Defaults(OpKind::kReshape);
    p[ops::kReshapeShape] = static_cast<int64_t>(dims.size());
    for (size_t d = 0; d < dims.size(); ++d) p[ops::kReshapeShape + 1 + d] = dims[d];
    int out = r->NewValue(val.elem_type);
    r->Add(OpKind::kReshape, p, {v}, {out});
    return out;
  }

  void MapBinary(const Node& n, bool add, Replacement* r) {
    if (!InputsFloatStatic(n, 2) || SingleOutput(n) == kNoValue) return Fail(r);
    const Value& y = g_->value(n.outputs[0]);
    for (int side = 0; side < 2; ++side) {
      const Value& x = In(n, side);
      const Value& o = In(n, 1 - side);
      if (x.dims != y.dims) continue;
      if (o.dims == y.dims) {
        OpKind k = add ? OpKind::kEwAdd : OpKind::kEwMul;
        return r->Add(k, Defaults(k), {n.inputs[0], n.inputs[1]}, {n.outputs[0]});
      }
      if (o.dims.size() > y.dims.size()) continue;
      std::vector<int64_t> aligned(y.dims.size() - o.dims.size(), 1);
      aligned.insert(aligned.end(), o.dims.begin(), o.dims.end());
      if (!add && CountElements(o.dims) == 1)
        return r->Add(OpKind::kSmul, Defaults(OpKind::kSmul),
                      {n.inputs[side], Reshaped(r, n.inputs[1 - side], {})}, {n.outputs[0]});
      int axis = -1, count = 0;
      for (size_t d = 0; d < aligned.size(); ++d)
        if (aligned[d] != 1) axis = static_cast<int>(d), ++count;
      if (add && count == 1 && aligned[axis] == y.dims[axis])
        return AddBias(r, n.inputs[side], AsVector(r, n.inputs[1 - side], y.dims[axis]), axis,
                       n.outputs[0]);
    }
    Fail(r);
  }

  void MapConcat(const Node& n, const KernelContext& ctx, Replacement* r) {
    if (n.inputs.size() < 2 || !InputsFloatStatic(n, n.inputs.size()) ||
        SingleOutput(n) == kNoValue)
      return Fail(r);
    int64_t rank = static_cast<int64_t>(In(n, 0).dims.size());
    auto axis = NormalizeAxis(ctx.AttrInt("axis", 0), rank, "Concat");
    if (!axis.ok()) return Fail(r);
    specs::Params p = Defaults(OpKind::kConcat);
    p[ops::kConcatAxis] = *axis;
    int acc = n.inputs[0];
    for (size_t k = 1; k < n.inputs.size(); ++k) {
      int out = k + 1 == n.inputs.size() ? n.outputs[0] : r->NewValue(In(n, 0).elem_type);
      r->Add(OpKind::kConcat, p, {acc, n.inputs[k]}, {out});
      acc = out;
    }
  }

  void MapSplit(const Node& n, const KernelContext& ctx, Replacement* r) {
    if (!InputsFloatStatic(n, 1) || n.outputs.size() != 2 || n.outputs[0] == kNoValue ||
        n.outputs[1] == kNoValue)
      return Fail(r);
    const Value& x = In(n, 0);
    auto axis = NormalizeAxis(ctx.AttrInt("axis", 0), static_cast<int64_t>(x.dims.size()), "Split");
    if (!axis.ok()) return Fail(r);
    const specs::SplitTree& tree = x.spec_type->trees[*axis];
    int64_t first = g_->value(n.outputs[0]).dims[*axis];
    // The output shapes from ONNX shape inference already reflect the requested sizes.
    if (!tree || tree->conflict || tree->left_size != first) return Fail(r);
    specs::Params p = Defaults(OpKind::kSplit);
    p[ops::kSplitAxis] = *axis;
    r->Add(OpKind::kSplit, p, {n.inputs[0]}, {n.outputs[0], n.outputs[1]});
  }

  void MapPool(const Node& n, const KernelContext& ctx, bool max, Replacement* r) {
    if (!InputsFloatStatic(n, 1) || SingleOutput(n) == kNoValue) return Fail(r);
    const Value& x = In(n, 0);
    std::vector<int64_t> k = ctx.AttrInts("kernel_shape");
    if (x.dims.size() != 4 || k.size() != 2) return Fail(r);
    std::vector<int64_t> dil = ctx.AttrInts("dilations");
    if ((!dil.empty() && !AllOnes(dil)) || ctx.AttrInt("ceil_mode", 0) != 0) return Fail(r);
    std::vector<int64_t> strides = ctx.AttrInts("strides");
    if (strides.empty()) strides = {1, 1};
    if (strides.size() != 2) return Fail(r);
    auto pad = WindowPadding(ctx, {x.dims[2], x.dims[3]}, k, strides);
    if (!pad) return Fail(r);
    // The spec's average divides by the full window, as count_include_pad=1 does.
    if (!max && *pad == specs::Padding::kSame && (k[0] > 1 || k[1] > 1) &&
        ctx.AttrInt("count_include_pad", 0) == 0)
      return Fail(r);
    OpKind kind = max ? OpKind::kPoolMax : OpKind::kPoolAvg;
    specs::Params p = Defaults(kind);
    p[ops::kPoolKernelH] = k[0];
    p[ops::kPoolKernelW] = k[1];
    p[ops::kPoolStrideH] = strides[0];
    p[ops::kPoolStrideW] = strides[1];
    p[ops::kPoolPadding] = static_cast<int64_t>(*pad);
    p[ops::kPoolActivation] = static_cast<int64_t>(specs::Activation::kNone);
    r->Add(kind, p, {n.inputs[0]}, {n.outputs[0]});
  }

  Graph* g_;
  std::vector<std::pair<int, int>> renames_;
};

}  // namespace

Status MapToSpecOps(Graph* g) { return Mapper(g).Run(); }

}  // namespace verisub::runtime
