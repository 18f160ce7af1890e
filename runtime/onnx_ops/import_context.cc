// The replacement builder and helpers shared by the operators' ONNX importers.
#include "runtime/onnx_ops/import_context.h"

#include <algorithm>

#include "specs/evaluate.h"
#include "specs/ops/bias_add.h"
#include "specs/ops/channel_scale.h"
#include "specs/ops/pad.h"
#include "specs/ops/reshape.h"
#include "specs/ops/slice.h"
#include "specs/registry.h"

namespace verisub::runtime {

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

bool AllOnes(const std::vector<int64_t>& v) {
  for (int64_t x : v)
    if (x != 1) return false;
  return true;
}

std::optional<specs::Padding> WindowPadding(const KernelContext& attrs,
                                            const std::vector<int64_t>& in_hw,
                                            const std::vector<int64_t>& k,
                                            const std::vector<int64_t>& strides) {
  const std::optional<std::vector<int64_t>> pads = WindowPads(attrs, in_hw, k, strides);
  if (!pads) return std::nullopt;
  const size_t r = k.size();
  bool valid = true, same = true;
  for (size_t d = 0; d < r; ++d) {
    valid &= (*pads)[d] == 0 && (*pads)[d + r] == 0;
    same &= k[d] % 2 == 1 && (*pads)[d] == (k[d] - 1) / 2 && (*pads)[d + r] == (k[d] - 1) / 2;
  }
  if (valid) return specs::Padding::kValid;
  if (same) return specs::Padding::kSame;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> WindowPads(const KernelContext& attrs,
                                               const std::vector<int64_t>& in_hw,
                                               const std::vector<int64_t>& k,
                                               const std::vector<int64_t>& strides) {
  size_t r = k.size();
  constexpr int64_t kMaxWindow = int64_t{1} << 24;  // corrupt attributes must not overflow
  for (size_t d = 0; d < r; ++d)
    if (k[d] < 1 || k[d] > kMaxWindow || d >= strides.size() || strides[d] < 1 ||
        strides[d] > kMaxWindow)
      return std::nullopt;
  std::vector<int64_t> pads = attrs.AttrInts("pads");
  std::string auto_pad = attrs.AttrString("auto_pad", "NOTSET");
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
  for (int64_t v : pads)
    if (v < -kMaxWindow || v > kMaxWindow) return std::nullopt;
  return pads;
}

specs::Params Defaults(specs::OpKind kind) { return specs::GetOp(kind).DefaultParams(); }

bool ImportContext::InputsFloatStatic(size_t count) const {
  if (node_.inputs.size() < count) return false;
  for (size_t k = 0; k < count; ++k)
    if (!Present(k) || !FloatStatic(In(k))) return false;
  return true;
}

int ImportContext::SingleOutput() const {
  int count = 0, out = kNoValue;
  for (int o : node_.outputs)
    if (o != kNoValue) ++count, out = o;
  return count == 1 && node_.outputs[0] != kNoValue ? out : kNoValue;
}

int ImportContext::NewValue(int32_t elem_type) {
  Value v;
  v.name = g_->UniqueName(node_.name);
  v.elem_type = elem_type;
  return g_->AddValue(std::move(v));
}

int ImportContext::NewWeight(HostTensor t) {
  Value v;
  v.name = g_->UniqueName(node_.name + "_w");
  v.elem_type = t.elem_type;
  v.dims = t.dims;
  v.rank_known = true;
  v.spec_type = LeafTypeOf(v);
  v.constant = std::make_shared<const HostTensor>(std::move(t));
  return g_->AddValue(std::move(v));
}

void ImportContext::Add(specs::OpKind kind, const specs::Params& p, std::vector<int> inputs,
                        std::vector<int> outputs) {
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
  n.name = node_.name + (nodes_.empty() ? "" : "_" + std::to_string(nodes_.size()));
  n.op = kind;
  n.params = p;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  nodes_.push_back(std::make_shared<const Node>(std::move(n)));
}

void ImportContext::AddBias(int x, int b, int axis, int out) {
  specs::Params p = Defaults(specs::OpKind::kBiasAdd);
  p[specs::ops::kBiasAxis] = axis;
  Add(specs::OpKind::kBiasAdd, p, {x, b}, {out});
}

void ImportContext::AddChannelScale(int x, int s, int axis, int out) {
  specs::Params p = Defaults(specs::OpKind::kChannelScale);
  p[specs::ops::kChannelScaleAxis] = axis;
  Add(specs::OpKind::kChannelScale, p, {x, s}, {out});
}

void ImportContext::AddSlice(int x, int64_t axis, int64_t start, int64_t end, int out) {
  specs::Params p = Defaults(specs::OpKind::kSlice);
  p[specs::ops::kSliceAxis] = axis;
  p[specs::ops::kSliceStart] = start;
  p[specs::ops::kSliceEnd] = end;
  Add(specs::OpKind::kSlice, p, {x}, {out});
}

int ImportContext::AddPad(int x, const std::vector<int64_t>& pads, bool edge, int out) {
  if (pads.size() != 4) return kNoValue;
  for (int64_t v : pads)
    if (v < 0) return kNoValue;
  const specs::Params p =
      specs::ops::PadParams(pads, edge ? specs::ops::PadMode::kEdge : specs::ops::PadMode::kZero);
  const int y = out == kNoValue ? NewValue(g_->value(x).elem_type) : out;
  Add(specs::OpKind::kPad, p, {x}, {y});
  return y;
}

void ImportContext::AddReshape(int x, const std::vector<int64_t>& dims, int out) {
  specs::Params p = Defaults(specs::OpKind::kReshape);
  p[specs::ops::kReshapeShape] = static_cast<int64_t>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) p[specs::ops::kReshapeShape + 1 + d] = dims[d];
  Add(specs::OpKind::kReshape, p, {x}, {out});
}

int ImportContext::Reshaped(int v, std::vector<int64_t> dims) {
  const Value& val = g_->value(v);
  if (val.dims == dims) return v;
  if (val.constant) {
    HostTensor t = *val.constant;
    t.dims = dims;
    return NewWeight(std::move(t));
  }
  int out = NewValue(val.elem_type);
  AddReshape(v, dims, out);
  return out;
}

std::optional<std::vector<std::shared_ptr<const Node>>> ImportContext::Commit() {
  if (failed_ || nodes_.empty()) return std::nullopt;
  for (auto& [v, t] : pending_types_) g_->mutable_value(v).spec_type = t;
  return std::move(nodes_);
}

bool ImportContext::IsOriginalOutput(int v) const {
  return std::find(node_.outputs.begin(), node_.outputs.end(), v) != node_.outputs.end();
}

}  // namespace verisub::runtime
